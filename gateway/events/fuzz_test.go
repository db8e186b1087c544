package events

import (
	"errors"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/core/llm"
)

// fragments are the text the fuzzer streams: pieces of the silent token in
// both cases, tags, white space, multi-byte text.
var fragments = []string{"NO", "_RE", "PLY", "no", "_reply", "NO_REPLY", "Hello", " ", "\n", "[[reply_to_current]]", "[[", "é世", "HEARTBEAT_OK", "x"}

var kinds = []core.InboundKind{core.InboundUser, core.InboundHeartbeat, core.InboundCron, ""}

// FuzzRun feeds a Run random callback sequences: it must never panic, and
// what it returns must satisfy checkInvariants (agent seqs strictly
// increasing from 1, chat seqs those of agent events, no chat event after
// the terminal one, consistent deltaText/replace, well-formed block
// structure). After End it must return nothing.
func FuzzRun(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
	f.Add([]byte{1, 2, 3, 0, 3, 1, 3, 2, 4, 11, 14, 15, 1, 2, 3, 5, 4, 22})
	f.Add([]byte{1, 2, 3, 3, 3, 3, 19, 200, 3, 18, 3, 4, 11, 23})
	f.Add([]byte{1, 8, 9, 9, 10, 11, 12, 13, 14, 1, 2, 3, 4, 11, 21})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		pos := 0
		next := func() int {
			if pos >= len(data) {
				return 0
			}
			b := int(data[pos])
			pos++
			return b
		}
		clk := newClock()
		run := NewRun(testInfo(kinds[next()%len(kinds)]), Options{Now: clk.now})
		var outs []Out
		feed := func(o []Out) { outs = append(outs, o...) }
		ended := false
		for pos < len(data) && !ended {
			op, idx := next()%25, next()%4
			frag := fragments[next()%len(fragments)]
			id := string(rune('a' + idx))
			var ev *core.AgentEvent
			switch op {
			case 0:
				feed(run.Start())
			case 1:
				e := assistantStart()
				ev = &e
			case 2:
				e := textStart(idx)
				ev = &e
			case 3, 4:
				e := textDelta(idx, frag)
				ev = &e
			case 5:
				e := textEnd(idx)
				ev = &e
			case 6:
				e := update(core.AssistantEventThinkingStart, idx, "")
				ev = &e
			case 7:
				e := update(core.AssistantEventThinkingDelta, idx, frag)
				ev = &e
			case 8:
				e := update(core.AssistantEventThinkingEnd, idx, "")
				ev = &e
			case 9:
				e := toolCallStart(idx, id, "read")
				ev = &e
			case 10:
				e := update(core.AssistantEventToolCallDelta, idx, frag)
				ev = &e
			case 11:
				e := toolCallEnd(idx, id, "read", map[string]any{"p": frag})
				ev = &e
			case 12:
				e := assistantEnd(core.StopReasonToolUse, &core.TextContent{Text: frag}, &core.ToolCall{ID: id, Name: "read"})
				ev = &e
			case 13:
				e := toolExecStart(id, "read", map[string]any{"p": frag})
				ev = &e
			case 14:
				e := core.AgentEvent{Type: core.AgentEventToolExecutionUpdate, ToolCallID: id, ToolName: "read", PartialResult: frag}
				ev = &e
			case 15:
				e := toolExecEnd(id, "read", frag, idx == 0)
				ev = &e
			case 16:
				feed(run.Compaction(agent.CompactionEvent{Phase: []string{"start", "end"}[idx%2], Reason: "threshold", Err: map[bool]error{true: errors.New("x")}[idx == 3]}))
			case 17:
				clk.advance(ms(next()))
			case 18:
				if due, ok := run.NextFlush(); ok {
					if clk.now().Before(due) {
						clk.t = due
					}
					feed(run.Flush())
					// A Flush at NextFlush resolves what was held.
					if _, ok := run.NextFlush(); ok {
						t.Fatalf("still held after Flush at %v", due)
					}
				}
				feed(run.Flush())
			case 19:
				clk.advance(ms(next() * 4))
				feed(run.Flush())
			case 20:
				e := core.AgentEvent{Type: []core.AgentEventType{core.AgentEventAgentStart, core.AgentEventTurnStart, core.AgentEventTurnEnd, core.AgentEventAgentEnd}[idx]}
				ev = &e
			case 21:
				e := core.AgentEvent{Type: core.AgentEventMessageStart, Message: core.NewUserText(frag, 0)}
				ev = &e
			default: // 22, 23, 24: End
				feed(run.End(fuzzResult(op, idx, frag)))
				ended = true
			}
			if ev != nil {
				feed(run.Event(*ev))
			}
		}
		if !ended {
			feed(run.End(&agent.Result{Replies: []core.ReplyPayload{{Text: "bye"}}}, nil))
		}
		if err := checkInvariants(outs); err != nil {
			t.Fatalf("%v\n%s", err, dump(outs))
		}
		if c := chats(outs); len(c) == 0 || c[len(c)-1].State == StateDelta {
			t.Fatalf("no terminal chat event:\n%s", dump(outs))
		}
		if got := append(append(run.Event(textDelta(0, "late")), run.Flush()...), run.End(nil, nil)...); len(got) != 0 {
			t.Fatalf("output after End: %s", dump(got))
		}
	})
}

func fuzzResult(op, idx int, frag string) (*agent.Result, error) {
	switch op {
	case 22:
		return &agent.Result{Aborted: true}, nil
	case 23:
		if idx == 0 {
			return nil, errors.New("busy")
		}
		return &agent.Result{Err: &llm.Error{Kind: []llm.ErrorKind{llm.ErrorRateLimit, llm.ErrorTimeout, "odd"}[idx-1]}}, nil
	}
	res := &agent.Result{Final: &core.AssistantMessage{StopReason: core.StopReasonStop}}
	if idx > 0 {
		res.Replies = []core.ReplyPayload{{Text: frag}}
	}
	return res, nil
}
