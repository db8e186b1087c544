package transcript

import (
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// The history functions below are pure: they never modify their input
// slice or the messages in it. The returned slice is always new; messages
// that a function does not change are shared with the input, and a message
// it changes is a copy (copy-on-write), so both slices must be treated as
// read-only views of the same messages.

// DropThinking removes every thinking block from the assistant messages,
// for a provider that rejects thinking it did not produce (OpenClaw's
// dropThinkingBlocks, seed 004 phase C step 3). An assistant message that
// is left with no text and no tool call is dropped whole: a turn that was
// only thinking tells the next model nothing, and an empty text block is
// rejected by Anthropic. Run MergeConsecutive afterwards when the provider
// needs strict alternation, since the dropped turn can leave two user
// messages side by side.
func DropThinking(msgs []core.Message) []core.Message {
	out, _ := dropThinking(msgs, false)
	return out
}

// DropUnsignedThinking is DropThinking limited to thinking blocks without a
// signature, for Anthropic, which requires the signature on every thinking
// block it is sent back (unsigned ones come from another provider after a
// model switch).
func DropUnsignedThinking(msgs []core.Message) []core.Message {
	out, _ := dropThinking(msgs, true)
	return out
}

// thinkingStats counts what dropThinking removed.
type thinkingStats struct {
	blocks, messages int
}

func dropThinking(msgs []core.Message, onlyUnsigned bool) ([]core.Message, thinkingStats) {
	var st thinkingStats
	out := make([]core.Message, 0, len(msgs))
	for _, m := range msgs {
		a, ok := m.(*core.AssistantMessage)
		if !ok || a == nil {
			out = append(out, m)
			continue
		}
		drop := func(b core.ContentBlock) bool {
			t, ok := b.(*core.ThinkingContent)
			return ok && t != nil && (!onlyUnsigned || t.ThinkingSignature == "")
		}
		n := 0
		for _, b := range a.Content {
			if drop(b) {
				n++
			}
		}
		if n == 0 {
			out = append(out, m)
			continue
		}
		st.blocks += n
		content := make(core.Content, 0, len(a.Content)-n)
		for _, b := range a.Content {
			if !drop(b) {
				content = append(content, b)
			}
		}
		if !hasTextOrToolCall(content) {
			st.messages++
			continue
		}
		cp := *a
		cp.Content = content
		out = append(out, &cp)
	}
	return out, st
}

// hasTextOrToolCall reports whether c holds non-blank text or a tool call.
func hasTextOrToolCall(c core.Content) bool {
	for _, b := range c {
		switch v := b.(type) {
		case *core.TextContent:
			if v != nil && strings.TrimSpace(v.Text) != "" {
				return true
			}
		case *core.ToolCall:
			if v != nil {
				return true
			}
		}
	}
	return false
}

// HideOrphanTrailingUser removes the user messages at the end of msgs and
// reports whether there were any (seed 004 phase C step 8). Call it on the
// history before the new prompt is added: a trailing user message is then
// one whose run crashed before any reply, and the dispatcher redelivers
// that inbound from its journal, so keeping it would send the prompt twice
// and put two user turns side by side. The messages stay in the transcript
// file; only this context loses them. OpenClaw hides one message by
// branching its session tree; our transcript is a line, so every trailing
// user message is hidden (two crashes in a row leave two). The user
// message standing for a compaction summary is history, not a prompt, and
// is kept.
func HideOrphanTrailingUser(msgs []core.Message) ([]core.Message, bool) {
	n := len(msgs)
	for n > 0 {
		u, ok := msgs[n-1].(*core.UserMessage)
		if !ok || u == nil || isCompactionSummaryUser(u) {
			break
		}
		n--
	}
	out := make([]core.Message, n)
	copy(out, msgs[:n])
	return out, n < len(msgs)
}

// MergeConsecutive merges each run of consecutive user messages into one,
// for providers that need user and assistant turns to alternate (seed 004
// phase C step 4). The merged message has the texts of the run joined with
// a blank line ("\n\n"; empty texts are left out) and keeps every image
// (and other non-text) block after the text, in order. It is plain string
// content when the whole run was, else one text block followed by the
// other blocks. Its timestamp is the last message's, and it has no Extra.
// Runs of tool results are left as they are: they answer one assistant
// message together.
func MergeConsecutive(msgs []core.Message) []core.Message {
	out, _ := mergeConsecutive(msgs)
	return out
}

func mergeConsecutive(msgs []core.Message) ([]core.Message, int) {
	merged := 0
	out := make([]core.Message, 0, len(msgs))
	for i := 0; i < len(msgs); {
		j := i
		for j < len(msgs) {
			if u, ok := msgs[j].(*core.UserMessage); !ok || u == nil {
				break
			}
			j++
		}
		switch {
		case j == i:
			out = append(out, msgs[i])
			i++
		case j == i+1:
			out = append(out, msgs[i])
			i = j
		default:
			out = append(out, mergeUsers(msgs[i:j]))
			merged += j - i - 1
			i = j
		}
	}
	return out, merged
}

// mergeUsers merges a run of two or more user messages.
func mergeUsers(run []core.Message) *core.UserMessage {
	var texts []string
	var other core.Content
	blocks := false
	for _, m := range run {
		u := m.(*core.UserMessage)
		if t := userText(u); t != "" {
			texts = append(texts, t)
		}
		if u.Content.Blocks != nil {
			blocks = true
			for _, b := range u.Content.Blocks {
				if _, ok := b.(*core.TextContent); !ok && b != nil {
					other = append(other, b)
				}
			}
		}
	}
	text := strings.Join(texts, "\n\n")
	merged := &core.UserMessage{Timestamp: run[len(run)-1].(*core.UserMessage).Timestamp}
	if !blocks {
		merged.Content.Text = text
		return merged
	}
	content := make(core.Content, 0, 1+len(other))
	if text != "" {
		content = append(content, &core.TextContent{Text: text})
	}
	merged.Content.Blocks = append(content, other...)
	return merged
}
