package transcript

import (
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// The text around a compaction summary when it is sent to the model, as pi
// writes it (COMPACTION_SUMMARY_PREFIX and COMPACTION_SUMMARY_SUFFIX in
// pi-coding-agent's messages.ts, whose convertToLlm turns a
// compactionSummary message into a user message with this text).
const (
	// CompactionSummaryPrefix comes before the summary.
	CompactionSummaryPrefix = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
	// CompactionSummarySuffix comes after the summary.
	CompactionSummarySuffix = "\n</summary>"
)

// ContextMessages returns the messages of a transcript that are sent to
// the model. all is the transcript as loaded (File.Messages). With a
// core.CompactionSummaryMessage in it, the latest one applies: the result
// is a synthetic user message holding its summary (CompactionSummaryPrefix
// + Summary + CompactionSummarySuffix, one text block, the entry's
// timestamp), then the messages from its FirstKeptIndex up to the entry,
// then everything after it. Only user, assistant and tool-result messages
// are sent: core.RawMessage (unknown roles), compaction entries, nil
// messages and message types of an embedding program are left out.
// FirstKeptIndex is clamped to the transcript, so a bad index never fails
// a turn.
func ContextMessages(all []core.Message) []core.Message {
	c := -1
	for i := len(all) - 1; i >= 0; i-- {
		if e, ok := all[i].(*core.CompactionSummaryMessage); ok && e != nil {
			c = i
			break
		}
	}
	if c < 0 {
		return appendModelMessages(make([]core.Message, 0, len(all)), all)
	}
	entry := all[c].(*core.CompactionSummaryMessage)
	k := min(max(entry.FirstKeptIndex, 0), c)
	out := make([]core.Message, 0, 1+len(all)-k)
	out = append(out, compactionSummaryUser(entry))
	out = appendModelMessages(out, all[k:c])
	return appendModelMessages(out, all[c+1:])
}

// compactionSummaryUser is how a compaction entry reaches the model.
func compactionSummaryUser(e *core.CompactionSummaryMessage) *core.UserMessage {
	text := CompactionSummaryPrefix + e.Summary + CompactionSummarySuffix
	return &core.UserMessage{
		Content:   core.UserContent{Blocks: core.Content{&core.TextContent{Text: text}}},
		Timestamp: e.Timestamp,
	}
}

// isCompactionSummaryUser reports whether m is the user message
// ContextMessages makes from a compaction entry, which stands for history
// and is never an orphaned prompt.
func isCompactionSummaryUser(m core.Message) bool {
	u, ok := m.(*core.UserMessage)
	if !ok || u == nil {
		return false
	}
	t := userText(u)
	return strings.HasPrefix(t, CompactionSummaryPrefix) && strings.HasSuffix(t, CompactionSummarySuffix)
}

// appendModelMessages appends the messages of src a model is sent.
func appendModelMessages(dst, src []core.Message) []core.Message {
	for _, m := range src {
		if isModelMessage(m) {
			dst = append(dst, m)
		}
	}
	return dst
}

// isModelMessage reports whether m is one of the three messages a provider
// knows how to send.
func isModelMessage(m core.Message) bool {
	switch v := m.(type) {
	case *core.UserMessage:
		return v != nil
	case *core.AssistantMessage:
		return v != nil
	case *core.ToolResultMessage:
		return v != nil
	}
	return false
}

// userText returns a user message's text: the string content, or its text
// blocks joined without separator (core.UserMessage.Text).
func userText(u *core.UserMessage) string { return u.Text() }
