package events

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
)

// plain is what a client without the structured-stream and tool-events
// capabilities receives of outs.
func plain(outs []Out) []Out {
	var ps []Out
	for _, o := range outs {
		if !o.Structured && !o.ToolStream {
			ps = append(ps, o)
		}
	}
	return ps
}

// A model that streams a short reply in one instant (twenty tokens) costs
// a client one agent delta and one chat delta at the first token, and one
// of each for the rest before the end: not one agent event per token. A
// client without the structured stream gets five events, six frames with
// chat.send's response (issue 24: at most six).
func TestFastModelShortReplyIsFiveEvents(t *testing.T) {
	h := newHarness(t, core.InboundUser)
	h.record(h.run.Start())
	var tokens []string
	for i := range 20 {
		tokens = append(tokens, fmt.Sprintf("t%d ", i))
	}
	want := strings.Join(tokens, "")
	h.ev(streamText(tokens...)...)
	h.record(h.run.End(finalResult(want), nil))

	var texts []any
	for _, a := range agents(h.out, StreamAssistant) {
		if a.Data["phase"] == PhaseDelta {
			texts = append(texts, a.Data["delta"])
		}
	}
	if wantTexts := []any{"t0 ", want[len("t0 "):]}; !reflect.DeepEqual(texts, wantTexts) {
		t.Fatalf("agent text deltas %q, want %q\n%s", texts, wantTexts, dump(h.out))
	}
	got := lines(plain(h.out))
	wantPlain := []string{
		"lifecycle start",
		`chat delta #4 "t0 "`,
		"lifecycle end stopReason=stop",
		fmt.Sprintf("chat delta #8 %q", want),
		fmt.Sprintf("chat final #8 %q", strings.TrimSpace(want)),
	}
	if !reflect.DeepEqual(got, wantPlain) {
		t.Fatalf("a plain client gets:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantPlain, "\n"))
	}
}

// A held delta is sent before whatever follows it, whichever event that
// is: the next block's start, a compaction report, a tool's start, the
// end of a run that never closed its response. checkInvariants (run by
// the harness after every call) fails on a delta after its block's stop or
// a seq out of order; the test also checks that no held text is lost.
func TestHeldDeltaGoesBeforeTheNextEvent(t *testing.T) {
	cases := map[string]func(h *harness){
		"next block": func(h *harness) {
			h.ev(textStart(1), textDelta(1, "text"), textEnd(1), assistantEnd(core.StopReasonStop, &core.ThinkingContent{}, &core.TextContent{Text: "text"}))
		},
		"compaction": func(h *harness) {
			h.record(h.run.Compaction(agent.CompactionEvent{Phase: "start", Reason: "threshold"}))
		},
		"tool start": func(h *harness) {
			h.ev(toolExecStart("c1", "exec", map[string]any{}))
		},
		"end": func(h *harness) {},
	}
	for name, next := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, core.InboundUser)
			h.ev(assistantStart(), update(core.AssistantEventThinkingStart, 0, ""),
				update(core.AssistantEventThinkingDelta, 0, "a"),
				update(core.AssistantEventThinkingDelta, 0, "b"),
				update(core.AssistantEventThinkingDelta, 0, "c"))
			if _, ok := h.run.NextFlush(); !ok {
				t.Fatalf("thinking held, yet NextFlush says nothing is:\n%s", dump(h.out))
			}
			next(h)
			h.record(h.run.End(finalResult("text"), nil))
			var thought string
			for _, a := range agents(h.out, StreamThinking) {
				thought += a.Data["delta"].(string)
			}
			if thought != "abc" {
				t.Fatalf("thinking deltas say %q, want abc:\n%s", thought, dump(h.out))
			}
		})
	}
}

// A heartbeat shows no chat, but its agent deltas are still held and
// flushed on the throttle: NextFlush reports them.
func TestHeartbeatAgentDeltaIsFlushed(t *testing.T) {
	h := newHarness(t, core.InboundHeartbeat)
	h.ev(assistantStart(), textStart(0), textDelta(0, "all "))
	h.ev(textDelta(0, "good"))
	due, ok := h.run.NextFlush()
	if !ok || !due.Equal(epoch.Add(DefaultThrottle)) {
		t.Fatalf("NextFlush = %v, %v; want +150ms", due.Sub(epoch), ok)
	}
	h.clk.at(DefaultThrottle)
	got := h.flush()
	if len(got) != 1 || got[0].Agent == nil || got[0].Agent.Data["delta"] != "good" {
		t.Fatalf("Flush: %s", dump(got))
	}
	if len(deltas(h.out)) != 0 {
		t.Fatalf("a heartbeat streamed chat: %s", dump(h.out))
	}
	if _, ok := h.run.NextFlush(); ok {
		t.Fatal("NextFlush still set after the flush")
	}
}
