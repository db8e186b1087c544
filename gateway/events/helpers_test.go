package events

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/queue"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// epoch is the fake clock's start.
var epoch = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// clock is a manual clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time            { return c.t }
func (c *clock) advance(d time.Duration)   { c.t = c.t.Add(d) }
func (c *clock) at(d time.Duration) *clock { c.t = epoch.Add(d); return c }
func newClock() *clock                     { return &clock{t: epoch} }
func ms(n int) time.Duration               { return time.Duration(n) * time.Millisecond }
func testInfo(kind core.InboundKind) queue.RunInfo {
	return queue.RunInfo{RunID: "run-1", SessionKey: "agent:main:main", Kind: kind}
}

// harness drives a Run and records everything it returned, checking the
// invariants after every call.
type harness struct {
	t   testing.TB
	clk *clock
	run *Run
	out []Out
}

func newHarness(t testing.TB, kind core.InboundKind) *harness {
	clk := newClock()
	return &harness{t: t, clk: clk, run: NewRun(testInfo(kind), Options{Now: clk.now})}
}

func (h *harness) record(outs []Out) []Out {
	h.t.Helper()
	h.out = append(h.out, outs...)
	if err := checkInvariants(h.out); err != nil {
		h.t.Fatalf("%v\n%s", err, dump(h.out))
	}
	return outs
}

func (h *harness) ev(evs ...core.AgentEvent) []Out {
	h.t.Helper()
	var outs []Out
	for _, ev := range evs {
		outs = append(outs, h.record(h.run.Event(ev))...)
	}
	return outs
}

func (h *harness) flush() []Out { h.t.Helper(); return h.record(h.run.Flush()) }

// Event builders: what the agent runner emits.

func assistantStart() core.AgentEvent {
	return core.AgentEvent{Type: core.AgentEventMessageStart, Message: &core.AssistantMessage{Provider: "anthropic", Model: "claude-test"}}
}

func update(typ core.AssistantEventType, idx int, delta string) core.AgentEvent {
	return core.AgentEvent{Type: core.AgentEventMessageUpdate, Message: &core.AssistantMessage{},
		AssistantMessageEvent: &core.AssistantMessageEvent{Type: typ, ContentIndex: idx, Delta: delta}}
}

func textStart(idx int) core.AgentEvent { return update(core.AssistantEventTextStart, idx, "") }
func textDelta(idx int, d string) core.AgentEvent {
	return update(core.AssistantEventTextDelta, idx, d)
}
func textEnd(idx int) core.AgentEvent { return update(core.AssistantEventTextEnd, idx, "") }

// toolCallStart carries the call in the partial message, as llm's builder
// does.
func toolCallStart(idx int, id, name string) core.AgentEvent {
	ev := update(core.AssistantEventToolCallStart, idx, "")
	content := make(core.Content, idx+1)
	for i := range content {
		content[i] = &core.TextContent{}
	}
	content[idx] = &core.ToolCall{ID: id, Name: name}
	ev.AssistantMessageEvent.Partial = &core.AssistantMessage{Content: content}
	return ev
}

func toolCallEnd(idx int, id, name string, args map[string]any) core.AgentEvent {
	ev := update(core.AssistantEventToolCallEnd, idx, "")
	ev.AssistantMessageEvent.ToolCall = &core.ToolCall{ID: id, Name: name, Arguments: args}
	return ev
}

func assistantEnd(reason core.StopReason, blocks ...core.ContentBlock) core.AgentEvent {
	return core.AgentEvent{Type: core.AgentEventMessageEnd, Message: &core.AssistantMessage{Content: blocks, StopReason: reason}}
}

func toolExecStart(id, name string, args map[string]any) core.AgentEvent {
	return core.AgentEvent{Type: core.AgentEventToolExecutionStart, ToolCallID: id, ToolName: name, Args: args}
}

func toolExecEnd(id, name string, result any, isError bool) core.AgentEvent {
	return core.AgentEvent{Type: core.AgentEventToolExecutionEnd, ToolCallID: id, ToolName: name, Result: result, IsError: isError}
}

// streamText is one text response: start, a block with the deltas, end.
func streamText(deltas ...string) []core.AgentEvent {
	evs := []core.AgentEvent{assistantStart(), textStart(0)}
	for _, d := range deltas {
		evs = append(evs, textDelta(0, d))
	}
	return append(evs, textEnd(0), assistantEnd(core.StopReasonStop, &core.TextContent{Text: strings.Join(deltas, "")}))
}

// Selectors.

func chats(outs []Out) []*ChatEvent {
	var cs []*ChatEvent
	for _, o := range outs {
		if o.Chat != nil {
			cs = append(cs, o.Chat)
		}
	}
	return cs
}

func deltas(outs []Out) []*ChatEvent {
	var cs []*ChatEvent
	for _, c := range chats(outs) {
		if c.State == StateDelta {
			cs = append(cs, c)
		}
	}
	return cs
}

func agents(outs []Out, stream string) []*AgentEvent {
	var as []*AgentEvent
	for _, o := range outs {
		if o.Agent != nil && (stream == "" || o.Agent.Stream == stream) {
			as = append(as, o.Agent)
		}
	}
	return as
}

func terminal(t testing.TB, outs []Out) *ChatEvent {
	t.Helper()
	cs := chats(outs)
	if len(cs) == 0 || cs[len(cs)-1].State == StateDelta {
		t.Fatalf("no terminal chat event:\n%s", dump(outs))
	}
	return cs[len(cs)-1]
}

// line is a compact description of an event, for order assertions.
func line(o Out) string {
	if o.Chat != nil {
		return fmt.Sprintf("chat %s #%d %q", o.Chat.State, o.Chat.Seq, o.Chat.Message.Text())
	}
	a := o.Agent
	d := a.Data
	s := fmt.Sprintf("%s %v", a.Stream, d["phase"])
	for _, k := range []string{"messageId", "contentIndex", "blockType", "toolName", "toolCallId", "name", "delta", "argsDelta", "stopReason"} {
		if v, ok := d[k]; ok {
			s += fmt.Sprintf(" %s=%v", k, v)
		}
	}
	return s
}

func lines(outs []Out) []string {
	ls := make([]string, len(outs))
	for i, o := range outs {
		ls[i] = line(o)
	}
	return ls
}

func dump(outs []Out) string { return strings.Join(lines(outs), "\n") }

// checkInvariants checks what must hold of any output sequence:
//   - agent seqs count 1, 2, 3... without gaps;
//   - every chat seq is the seq of an agent event, and chat seqs never go
//     down;
//   - chat deltas are DropIfSlow, nothing else is; the assistant and
//     thinking streams are Structured, nothing else is; nothing follows the
//     terminal chat event, and at most one exists;
//   - a delta's DeltaText/Replace describe the change from the previous
//     delta's text;
//   - structured events: one message_start per messageId, nothing for a
//     response after its message_stop, block events of a block after its
//     block_start and not after its block_stop;
//   - every payload encodes, v3 without deltaText or replace.
func checkInvariants(outs []Out) error {
	agentSeqs := map[int64]bool{}
	var seq int64
	for _, o := range outs {
		if o.Agent != nil {
			seq++
			if o.Agent.Seq != seq {
				return fmt.Errorf("agent seq %d, want %d", o.Agent.Seq, seq)
			}
			agentSeqs[o.Agent.Seq] = true
		}
	}
	var lastChat int64
	prev := ""
	ended := false
	open := map[string]bool{}    // messageId → started and not stopped
	stopped := map[string]bool{} // messageId stopped
	blocks := map[string]string{}
	for i, o := range outs {
		if (o.Chat == nil) == (o.Agent == nil) {
			return fmt.Errorf("out %d: want exactly one payload", i)
		}
		if o.Chat != nil && (o.Structured || o.ToolStream) {
			return fmt.Errorf("out %d: chat event marked Structured or ToolStream", i)
		}
		if ended && o.Chat != nil {
			return fmt.Errorf("out %d: chat event after the terminal one", i)
		}
		if c := o.Chat; c != nil {
			if o.Event != EventChat {
				return fmt.Errorf("out %d: event %q for a chat payload", i, o.Event)
			}
			if !agentSeqs[c.Seq] {
				return fmt.Errorf("out %d: chat seq %d is no agent event's", i, c.Seq)
			}
			if c.Seq < lastChat {
				return fmt.Errorf("out %d: chat seq %d after %d", i, c.Seq, lastChat)
			}
			lastChat = c.Seq
			if o.DropIfSlow != (c.State == StateDelta) {
				return fmt.Errorf("out %d: DropIfSlow %v for %s", i, o.DropIfSlow, c.State)
			}
			if c.State == StateDelta {
				text := c.Message.Text()
				if c.Message == nil {
					return fmt.Errorf("out %d: delta without message", i)
				}
				if c.Replace {
					if c.DeltaText != text || strings.HasPrefix(text, prev) {
						return fmt.Errorf("out %d: replace delta %q after %q", i, c.DeltaText, prev)
					}
				} else if prev+c.DeltaText != text {
					return fmt.Errorf("out %d: %q + %q != %q", i, prev, c.DeltaText, text)
				}
				if text == prev {
					return fmt.Errorf("out %d: delta repeats %q", i, text)
				}
				prev = text
			} else {
				ended = true
			}
			for _, proto := range []int{3, 4} {
				b, err := c.MarshalFor(proto)
				if err != nil {
					return fmt.Errorf("out %d: marshal v%d: %w", i, proto, err)
				}
				var m map[string]any
				if err := json.Unmarshal(b, &m); err != nil {
					return fmt.Errorf("out %d: v%d: %w", i, proto, err)
				}
				_, hasDT := m["deltaText"]
				_, hasRep := m["replace"]
				if proto == 3 && (hasDT || hasRep) {
					return fmt.Errorf("out %d: v3 has deltaText/replace: %s", i, b)
				}
				if proto == 4 && hasDT != (c.State == StateDelta) {
					return fmt.Errorf("out %d: v4 deltaText presence wrong: %s", i, b)
				}
			}
			continue
		}
		a := o.Agent
		if o.Event != EventAgent || o.DropIfSlow || a.Data == nil || a.RunID == "" || a.SessionKey == "" {
			return fmt.Errorf("out %d: bad agent event %+v", i, o)
		}
		if _, err := json.Marshal(a); err != nil {
			return fmt.Errorf("out %d: %w", i, err)
		}
		if o.ToolStream != (a.Stream == StreamTool || a.Data["blockType"] == BlockToolCall) {
			return fmt.Errorf("out %d: ToolStream %v for %s", i, o.ToolStream, line(o))
		}
		if o.Structured != (a.Stream == StreamAssistant || a.Stream == StreamThinking) {
			return fmt.Errorf("out %d: Structured %v for %s", i, o.Structured, line(o))
		}
		id, _ := a.Data["messageId"].(string)
		if a.Stream != StreamAssistant && a.Stream != StreamThinking || id == "" {
			continue
		}
		phase := a.Data["phase"]
		if phase == PhaseMessageStart {
			if open[id] || stopped[id] {
				return fmt.Errorf("out %d: second message_start for %s", i, id)
			}
			open[id] = true
			continue
		}
		if !open[id] {
			return fmt.Errorf("out %d: %s outside its message", i, line(o))
		}
		if phase == PhaseMessageStop {
			open[id], stopped[id] = false, true
			continue
		}
		key := fmt.Sprintf("%s/%v/%v", id, a.Data["contentIndex"], a.Data["blockType"])
		switch phase {
		case PhaseBlockStart:
			if blocks[key] == "open" {
				return fmt.Errorf("out %d: block %s started twice", i, key)
			}
			blocks[key] = "open"
		case PhaseDelta, PhaseBlockStop:
			if blocks[key] != "open" {
				return fmt.Errorf("out %d: %s on block %s that is %q", i, phase, key, blocks[key])
			}
			if phase == PhaseBlockStop {
				blocks[key] = "stopped"
			}
		default:
			return fmt.Errorf("out %d: unknown phase %v", i, phase)
		}
	}
	return nil
}
