package transcript

import (
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// FilterHeartbeatPairs drops each heartbeat exchange that carried no
// information, as OpenClaw's filterHeartbeatPairs does when it builds the
// context (openclaw-facts §6.3): a user message whose text, trimmed, is a
// heartbeat prompt, directly followed by an assistant message that is only
// an acknowledgement. The transcript keeps them; heartbeat turns are
// append-only. The rules for what counts belong to the heartbeat and reply
// packages, so they are passed in:
//
//   - isHeartbeatPrompt gets the user message's text (string content, or
//     its text blocks joined) trimmed of white space, and is not called for
//     an empty one; OpenClaw matches a prefix of the configured prompt, or
//     the periodic-tasks prompt;
//   - isAck gets the assistant message's text blocks joined, and is not
//     called when the message has any other block (thinking, tool call,
//     image): such a turn did something. OpenClaw asks stripHeartbeatToken
//     in heartbeat mode whether the reply would be skipped.
//
// A heartbeat turn whose reply said something (an alert) is kept whole.
// With either predicate nil, nothing is dropped.
func FilterHeartbeatPairs(msgs []core.Message, isHeartbeatPrompt func(text string) bool, isAck func(text string) bool) []core.Message {
	out, _ := filterHeartbeatPairs(msgs, isHeartbeatPrompt, isAck)
	return out
}

func filterHeartbeatPairs(msgs []core.Message, isHeartbeatPrompt, isAck func(string) bool) ([]core.Message, int) {
	out := make([]core.Message, 0, len(msgs))
	if isHeartbeatPrompt == nil || isAck == nil {
		return append(out, msgs...), 0
	}
	pairs := 0
	for i := 0; i < len(msgs); i++ {
		if i+1 < len(msgs) && isHeartbeatUser(msgs[i], isHeartbeatPrompt) && isAckOnly(msgs[i+1], isAck) {
			pairs++
			i++
			continue
		}
		out = append(out, msgs[i])
	}
	return out, pairs
}

func isHeartbeatUser(m core.Message, isHeartbeatPrompt func(string) bool) bool {
	u, ok := m.(*core.UserMessage)
	if !ok || u == nil {
		return false
	}
	t := strings.TrimSpace(userText(u))
	return t != "" && isHeartbeatPrompt(t)
}

func isAckOnly(m core.Message, isAck func(string) bool) bool {
	a, ok := m.(*core.AssistantMessage)
	if !ok || a == nil {
		return false
	}
	for _, b := range a.Content {
		if t, ok := b.(*core.TextContent); !ok || t == nil {
			return false
		}
	}
	return isAck(a.Content.Text())
}
