package transcript_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/transcript"
)

// words100 is a text of exactly 100 tokens by the 4-chars estimate.
var words100 = strings.Repeat("abcd", 100)

func TestSplitForCompaction(t *testing.T) {
	u := func(ts int64) core.Message { return user(words100, ts) }
	a := func(ts int64, blocks ...core.ContentBlock) core.Message {
		if len(blocks) == 0 {
			blocks = []core.ContentBlock{text(words100)}
		}
		return assistant(ts, blocks...)
	}
	raw := &core.RawMessage{JSON: json.RawMessage(`{"role":"custom","timestamp":0}`)}
	entry := &core.CompactionSummaryMessage{Summary: "earlier", FirstKeptIndex: 2, Timestamp: 50}

	for _, tc := range []struct {
		name        string
		msgs        []core.Message
		keep        int
		wantCut     int
		olderLen    int
		olderFirst  string // "summary" when older starts with the previous summary
		recentFirst string // role recent starts with
	}{
		{name: "empty", msgs: nil, keep: 100, wantCut: 0},
		{name: "simple", msgs: []core.Message{u(1), a(2), u(3), a(4)}, keep: 150, wantCut: 2, olderLen: 2, recentFirst: core.RoleUser},
		{name: "cut at an assistant", msgs: []core.Message{u(1), a(2), u(3), a(4), a(5)}, keep: 150, wantCut: 3, olderLen: 3, recentFirst: core.RoleAssistant},
		{
			// The budget is reached at the tool result; there is no cut
			// point at or after it, so the cut moves back to its call.
			name:    "never starts with a tool result",
			msgs:    []core.Message{u(1), a(2, call("x", "read")), result("x", "read", words100+words100, 3)},
			keep:    50,
			wantCut: 1, olderLen: 1, recentFirst: core.RoleAssistant,
		},
		{
			// A user message came in while the tool ran: cutting there
			// would separate call and result.
			name:    "never splits a call from its result",
			msgs:    []core.Message{u(1), a(2, call("x", "exec")), u(3), result("x", "exec", words100, 4), a(5)},
			keep:    150,
			wantCut: 4, olderLen: 4, recentFirst: core.RoleAssistant,
		},
		{name: "nothing to compact", msgs: []core.Message{u(1), a(2)}, keep: 10_000, wantCut: 0},
		{name: "everything", msgs: []core.Message{u(1), a(2), raw}, keep: 0, wantCut: 3, olderLen: 2},
		{
			name:    "after an earlier compaction",
			msgs:    []core.Message{u(1), a(2), u(3), a(4), entry, u(6), a(7), u(8), a(9)},
			keep:    150,
			wantCut: 7, olderLen: 5, olderFirst: "summary", recentFirst: core.RoleUser,
		},
		{
			name:    "never before the earlier FirstKeptIndex",
			msgs:    []core.Message{u(1), a(2), u(3), a(4), entry, u(6)},
			keep:    10_000,
			wantCut: 2,
		},
		{name: "unknown roles left out", msgs: []core.Message{u(1), raw, a(2), u(3), raw, a(4)}, keep: 150, wantCut: 3, olderLen: 2, recentFirst: core.RoleUser},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := encode(t, tc.msgs)
			older, recent, cut := transcript.SplitForCompaction(tc.msgs, tc.keep)
			if cut != tc.wantCut {
				t.Fatalf("cut = %d, want %d", cut, tc.wantCut)
			}
			if len(older) != tc.olderLen {
				t.Errorf("older has %d messages, want %d: %s", len(older), tc.olderLen, encode(t, older))
			}
			if tc.olderFirst == "summary" && !strings.HasPrefix(older[0].(*core.UserMessage).Text(), transcript.CompactionSummaryPrefix+"earlier") {
				t.Errorf("older does not start with the previous summary: %s", encode(t, older))
			}
			if tc.recentFirst != "" && (len(recent) == 0 || recent[0].Role() != tc.recentFirst) {
				t.Errorf("recent starts with %s, want %s", encode(t, recent), tc.recentFirst)
			}
			if encode(t, tc.msgs) != before {
				t.Error("input modified")
			}
			if len(older) == 0 {
				return
			}
			// After the agent appends the entry, the context is the new
			// summary followed by recent.
			all := append(append([]core.Message{}, tc.msgs...), &core.CompactionSummaryMessage{Summary: "new", FirstKeptIndex: cut, Timestamp: 99})
			ctx := transcript.ContextMessages(all)
			if got, want := encode(t, ctx[1:]), encode(t, recent); got != want {
				t.Errorf("context after compaction:\n got %s\nwant %s", got, want)
			}
		})
	}
}

func TestSplitForCompactionKeepsPairs(t *testing.T) {
	msgs := benchMessages(400)
	total := transcript.EstimateTokens(msgs)
	for keep := 1; keep < total; keep += total / 37 {
		older, recent, cut := transcript.SplitForCompaction(msgs, keep)
		if len(older)+len(recent) != len(msgs) || cut != len(older) {
			t.Fatalf("keep %d: %d + %d messages, cut %d", keep, len(older), len(recent), cut)
		}
		if err := transcript.CheckToolPairing(recent); err != nil {
			t.Fatalf("keep %d: recent: %v", keep, err)
		}
		if err := transcript.CheckToolPairing(older); err != nil {
			t.Fatalf("keep %d: older: %v", keep, err)
		}
		if len(older) > 0 {
			// The cut lands at the nearest valid point once the budget is
			// reached, so recent holds about keep tokens: never more than
			// keep plus the turn the budget ran out in.
			if got, limit := transcript.EstimateTokens(recent), keep+transcript.EstimateTokens(msgs[max(cut-4, 0):cut]); got > limit {
				t.Errorf("keep %d: recent has %d tokens, more than %d", keep, got, limit)
			}
		}
	}
}

func TestEstimateTokens(t *testing.T) {
	img := &core.ImageContent{Data: "AAAA", MimeType: "image/png"}
	for _, tc := range []struct {
		name string
		msgs []core.Message
		want int
	}{
		{"empty", nil, 0},
		{"user string", []core.Message{user("abcde", 1)}, 2},
		{"per message rounding", []core.Message{user("a", 1), user("b", 2)}, 2},
		{"unicode counts code points", []core.Message{user("héllo wörld", 1)}, 3},
		{"image", []core.Message{&core.UserMessage{Content: core.UserContent{Blocks: core.Content{text("abcd"), img}}}}, 1201},
		{"assistant", []core.Message{assistant(1, &core.ThinkingContent{Thinking: "abcd"}, text("abcd"),
			&core.ToolCall{ID: "x", Name: "ls", Arguments: map[string]any{"p": "/", "n": float64(2), "ok": true, "l": []any{"a", nil}}})},
			(4 + 4 + 2 + len(`{"l":["a",null],"n":2,"ok":true,"p":"/"}`) + 3) / 4},
		{"tool result", []core.Message{result("x", "ls", "abcdefgh", 1)}, 2},
		{"raw and nil", []core.Message{&core.RawMessage{JSON: json.RawMessage(`{"role":"x","text":"aaaaaaaa"}`)}, nil}, 0},
		{"compaction entry", []core.Message{&core.CompactionSummaryMessage{Summary: "abcdefgh"}}, 2},
	} {
		if got := transcript.EstimateTokens(tc.msgs); got != tc.want {
			t.Errorf("%s: EstimateTokens = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestHistoryFunctionsTolerateNil(t *testing.T) {
	msgs := []core.Message{nil, user("q", 1), (*core.AssistantMessage)(nil), (*core.ToolResultMessage)(nil), (*core.UserMessage)(nil), assistant(2, text("a"))}
	_ = transcript.DropThinking(msgs)
	_ = transcript.RepairToolPairing(msgs)
	_ = transcript.LimitHistoryTurns(msgs, 1)
	_, _ = transcript.HideOrphanTrailingUser(msgs)
	_ = transcript.MergeConsecutive(msgs)
	_ = transcript.FilterHeartbeatPairs(msgs, testIsHeartbeatPrompt, testIsHeartbeatAck)
	_ = transcript.Prune(msgs, transcript.PruneOptions{SoftLimitTokens: 1, HardLimitTokens: 1, KeepLastAssistants: -1})
	_ = transcript.EstimateTokens(msgs)
	_, _, _ = transcript.SplitForCompaction(msgs, 1)
	out, _ := transcript.Pipeline(msgs, transcript.PipelineOptions{StrictAlternation: true})
	if err := transcript.CheckToolPairing(out); err != nil {
		t.Error(err)
	}
	if got := encode(t, out); got != encode(t, []core.Message{user("q", 1), assistant(2, text("a"))}) {
		t.Errorf("Pipeline = %s", got)
	}
}

func TestCharCount(t *testing.T) {
	for _, s := range []string{"", "a", "abcdefg", "abcdefgh", "abcdefghi", "héllo", "abcdefghé", "abcdefgh\x80", "日本語のテキスト and ascii after", strings.Repeat("x", 100) + "ü" + strings.Repeat("y", 9), "\xff\xfe"} {
		if got, want := transcript.CharCount(s), utf8.RuneCountInString(s); got != want {
			t.Errorf("CharCount(%q) = %d, want %d", s, got, want)
		}
	}
}
