package transcript

import (
	"fmt"

	"github.com/switchboardhq/switchboard/core"
)

// MissingToolResultError is the error text of the synthetic result
// RepairToolPairing inserts for a tool call that has none.
const MissingToolResultError = "tool result missing (interrupted)"

// RepairToolPairing makes every tool call answered, and only once, as
// providers require (OpenClaw's sanitizeToolUseResultPairing, seed 004
// phase C steps 3 and 6). For each assistant message with tool calls, the
// tool results that follow it before the next assistant message are put
// directly after it, one per call, in call order; messages of other roles
// found among them (a user message injected while the tools ran) come
// after the results. Then:
//
//   - a call without a result gets a synthetic error result, whose text is
//     the seed 002 envelope {"status":"error","tool":"<name>","error":"tool
//     result missing (interrupted)"}, isError true, with the assistant
//     message's timestamp, so the output does not depend on the clock;
//   - a second result for the same call is dropped (the first is kept);
//   - a result whose id no preceding call in that span has (an orphan, as
//     history truncation leaves them) is dropped;
//   - a second call with the same id in one assistant message is dropped
//     from a copy of that message, since providers reject duplicate ids.
//
// Ids are matched per assistant message, so a provider reusing an id in a
// later turn is not mistaken for a duplicate. Assistant messages that
// ended in an error or were aborted are repaired like the others: their
// calls never ran, and the synthetic result says so.
func RepairToolPairing(msgs []core.Message) []core.Message {
	out, _ := repairToolPairing(msgs)
	return out
}

// pairingStats counts what repairToolPairing changed.
type pairingStats struct {
	synthetic, orphans, duplicates, duplicateCalls, moved int
}

func repairToolPairing(msgs []core.Message) ([]core.Message, pairingStats) {
	var st pairingStats
	out := make([]core.Message, 0, len(msgs))
	var results map[string]*core.ToolResultMessage
	var want map[string]bool
	var rest []core.Message
	for i := 0; i < len(msgs); {
		m := msgs[i]
		if tr, ok := m.(*core.ToolResultMessage); ok && tr != nil {
			st.orphans++
			i++
			continue
		}
		a, ok := m.(*core.AssistantMessage)
		if !ok || a == nil {
			out = append(out, m)
			i++
			continue
		}
		calls := a.ToolCalls()
		if len(calls) == 0 {
			out = append(out, m)
			i++
			continue
		}
		if a2, kept := dedupeCalls(a, calls); a2 != a {
			st.duplicateCalls += len(calls) - len(kept)
			a, calls = a2, kept
		}

		// Collect the span up to the next assistant message.
		if results == nil {
			results = make(map[string]*core.ToolResultMessage, len(calls))
			want = make(map[string]bool, len(calls))
		}
		clear(results)
		clear(want)
		for _, c := range calls {
			want[c.ID] = true
		}
		rest = rest[:0]
		j := i + 1
		for ; j < len(msgs); j++ {
			n := msgs[j]
			if na, ok := n.(*core.AssistantMessage); ok && na != nil {
				break
			}
			tr, ok := n.(*core.ToolResultMessage)
			if !ok || tr == nil {
				rest = append(rest, n)
				continue
			}
			switch {
			case !want[tr.ToolCallID]:
				st.orphans++
			case results[tr.ToolCallID] != nil:
				st.duplicates++
			default:
				if len(rest) > 0 {
					st.moved++
				}
				results[tr.ToolCallID] = tr
			}
		}

		out = append(out, a)
		for _, c := range calls {
			if r := results[c.ID]; r != nil {
				out = append(out, r)
			} else {
				st.synthetic++
				out = append(out, missingResult(c, a.Timestamp))
			}
		}
		out = append(out, rest...)
		i = j
	}
	clear(rest)
	return out, st
}

// dedupeCalls returns a (or a copy without the repeated calls, when two
// calls share an id) and its calls with unique ids, in order.
func dedupeCalls(a *core.AssistantMessage, calls []*core.ToolCall) (*core.AssistantMessage, []*core.ToolCall) {
	seen := make(map[string]bool, len(calls))
	dup := false
	for _, c := range calls {
		if seen[c.ID] {
			dup = true
			break
		}
		seen[c.ID] = true
	}
	if !dup {
		return a, calls
	}
	clear(seen)
	cp := *a
	cp.Content = make(core.Content, 0, len(a.Content))
	kept := calls[:0:0]
	for _, b := range a.Content {
		if c, ok := b.(*core.ToolCall); ok && c != nil {
			if seen[c.ID] {
				continue
			}
			seen[c.ID] = true
			kept = append(kept, c)
		}
		cp.Content = append(cp.Content, b)
	}
	return &cp, kept
}

// missingResult is the synthetic error result for a call that has none.
func missingResult(c *core.ToolCall, ts int64) *core.ToolResultMessage {
	return &core.ToolResultMessage{
		ToolCallID: c.ID,
		ToolName:   c.Name,
		Content:    core.Content{&core.TextContent{Text: core.ErrorEnvelope(c.Name, MissingToolResultError).String()}},
		IsError:    true,
		Timestamp:  ts,
	}
}

// CheckToolPairing reports the first place where msgs breaks the shape
// RepairToolPairing produces: each assistant message's tool calls have
// distinct ids and are followed directly by exactly one result each, in
// call order, and no tool result appears anywhere else. It returns nil for
// a well-paired history.
func CheckToolPairing(msgs []core.Message) error {
	for i := 0; i < len(msgs); i++ {
		switch m := msgs[i].(type) {
		case *core.ToolResultMessage:
			if m != nil {
				return fmt.Errorf("transcript: message %d: tool result %q does not follow its call", i, m.ToolCallID)
			}
		case *core.AssistantMessage:
			if m == nil {
				continue
			}
			calls := m.ToolCalls()
			seen := make(map[string]bool, len(calls))
			for k, c := range calls {
				if seen[c.ID] {
					return fmt.Errorf("transcript: message %d: tool call id %q repeats", i, c.ID)
				}
				seen[c.ID] = true
				j := i + 1 + k
				if j >= len(msgs) {
					return fmt.Errorf("transcript: message %d: tool call %q has no result", i, c.ID)
				}
				tr, ok := msgs[j].(*core.ToolResultMessage)
				if !ok || tr == nil || tr.ToolCallID != c.ID {
					return fmt.Errorf("transcript: message %d: tool call %q is not answered by message %d", i, c.ID, j)
				}
			}
			i += len(calls)
		}
	}
	return nil
}
