package events

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/core/llm"
)

func finalResult(text string) *agent.Result {
	res := &agent.Result{
		Final: &core.AssistantMessage{StopReason: core.StopReasonStop, Content: core.Content{&core.TextContent{Text: text}}},
		Usage: core.Usage{Input: 10, Output: 5, TotalTokens: 15},
	}
	if text != "" {
		res.Replies = []core.ReplyPayload{{Text: text}}
	}
	return res
}

func TestLifecycleStartIsSeqOne(t *testing.T) {
	h := newHarness(t, core.InboundUser)
	h.record(h.run.Start())
	if got := h.run.Start(); got != nil {
		t.Fatalf("second Start returned %v", lines(got))
	}
	h.ev(core.AgentEvent{Type: core.AgentEventAgentStart})
	as := agents(h.out, "")
	if len(as) != 1 || as[0].Seq != 1 || as[0].Data["phase"] != "start" || as[0].Data["startedAt"] != epoch.UnixMilli() || as[0].Data["kind"] != "user" {
		t.Fatalf("got %s", dump(h.out))
	}

	// Without Start, the first event brings the lifecycle start.
	h2 := newHarness(t, core.InboundUser)
	h2.ev(streamText("Hi")...)
	if first := agents(h2.out, "")[0]; first.Stream != StreamLifecycle || first.Seq != 1 {
		t.Fatalf("first event %s", line(h2.out[0]))
	}
}

func TestPlainTextThrottle(t *testing.T) {
	h := newHarness(t, core.InboundUser)
	h.ev(assistantStart(), textStart(0))
	want := ""
	for i := range 10 { // 10 deltas in 100 ms
		h.clk.at(ms(10 * i))
		d := fmt.Sprintf("w%d ", i)
		want += d
		h.ev(textDelta(0, d))
	}
	ds := deltas(h.out)
	if len(ds) != 1 || ds[0].Message.Text() != "w0 " || ds[0].DeltaText != "w0 " {
		t.Fatalf("want one delta now, got %s", dump(h.out))
	}
	due, ok := h.run.NextFlush()
	if !ok || !due.Equal(epoch.Add(ms(150))) {
		t.Fatalf("NextFlush = %v, %v; want +150ms", due.Sub(epoch), ok)
	}
	h.clk.at(ms(149))
	if got := h.flush(); len(got) != 0 {
		t.Fatalf("early Flush sent %s", dump(got))
	}
	h.clk.at(ms(150))
	got := h.flush()
	// The nine held text deltas go as one agent delta, and the chat delta
	// with its seq.
	if len(got) != 2 || got[0].Agent == nil || got[0].Agent.Data["delta"] != want[len("w0 "):] || !got[0].Structured ||
		got[1].Chat == nil || got[1].Chat.Message.Text() != want || got[1].Chat.DeltaText != want[len("w0 "):] || !got[1].DropIfSlow {
		t.Fatalf("Flush at +150ms: %s", dump(got))
	}
	if got[1].Chat.Seq != got[0].Agent.Seq || got[1].Chat.Seq != h.run.seq {
		t.Fatalf("flushed chat delta seq %d, want the agent delta's %d", got[1].Chat.Seq, got[0].Agent.Seq)
	}
	if _, ok := h.run.NextFlush(); ok {
		t.Fatal("NextFlush still set after the flush")
	}
	if got := h.flush(); len(got) != 0 {
		t.Fatalf("second Flush sent %s", dump(got))
	}

	// The chat delta goes with the agent text delta that carried the text.
	first := deltas(h.out)[0]
	for _, a := range agents(h.out, StreamAssistant) {
		if a.Seq == first.Seq && (a.Data["phase"] != PhaseDelta || a.Data["delta"] != "w0 ") {
			t.Fatalf("chat seq %d is %v", first.Seq, a.Data)
		}
	}

	h.ev(textEnd(0), assistantEnd(core.StopReasonStop, &core.TextContent{Text: want}))
	end := h.record(h.run.End(finalResult(want), nil))
	if lines(end)[0] != "lifecycle end stopReason=stop" {
		t.Fatalf("End: %s", dump(end))
	}
	fin := terminal(t, h.out)
	if fin.State != StateFinal || fin.Message.Text() != strings.TrimSpace(want) || fin.StopReason != "stop" || fin.Usage == nil || fin.Seq != agents(end, "")[0].Seq {
		t.Fatalf("final %+v", fin)
	}
	if len(deltas(end)) != 0 {
		t.Fatalf("nothing grew, yet End flushed: %s", dump(end))
	}
}

func TestTextToolText(t *testing.T) {
	h := newHarness(t, core.InboundUser)
	h.record(h.run.Start())
	args := map[string]any{"row": 0.0, "col": 0.0}
	h.ev(assistantStart(), textStart(0), textDelta(0, "I'll check"))
	h.clk.at(ms(10))
	h.ev(textDelta(0, " that."), textEnd(0),
		toolCallStart(1, "toolu_1", "get_cell"),
		update(core.AssistantEventToolCallDelta, 1, `{"row":0,`),
		update(core.AssistantEventToolCallDelta, 1, `"col":0}`),
		toolCallEnd(1, "toolu_1", "get_cell", args),
		assistantEnd(core.StopReasonToolUse, &core.TextContent{Text: "I'll check that."}, &core.ToolCall{ID: "toolu_1", Name: "get_cell", Arguments: args}))
	h.clk.at(ms(20))
	toolStart := h.ev(toolExecStart("toolu_1", "get_cell", args))
	h.ev(toolExecEnd("toolu_1", "get_cell", map[string]any{"value": 42.0}, false))
	h.clk.at(ms(400))
	h.ev(streamText("The value", " is 42.")...)
	h.clk.at(ms(410))
	h.record(h.run.End(finalResult("The value is 42."), nil))

	want := []string{
		"lifecycle start",
		"assistant message_start messageId=run-1:1",
		"assistant block_start messageId=run-1:1 contentIndex=0 blockType=text",
		"assistant delta messageId=run-1:1 contentIndex=0 blockType=text delta=I'll check",
		`chat delta #4 "I'll check"`,
		"assistant delta messageId=run-1:1 contentIndex=0 blockType=text delta= that.",
		"assistant block_stop messageId=run-1:1 contentIndex=0 blockType=text",
		"assistant block_start messageId=run-1:1 contentIndex=1 blockType=toolCall toolName=get_cell toolCallId=toolu_1",
		// Both pieces of the arguments came within the throttle: one delta.
		`assistant delta messageId=run-1:1 contentIndex=1 blockType=toolCall toolName=get_cell toolCallId=toolu_1 argsDelta={"row":0,"col":0}`,
		"assistant block_stop messageId=run-1:1 contentIndex=1 blockType=toolCall toolName=get_cell toolCallId=toolu_1",
		"assistant message_stop messageId=run-1:1 stopReason=toolUse",
		`chat delta #11 "I'll check that."`, // the flush before the tool start, with its seq
		"tool start messageId=run-1:1 contentIndex=1 toolCallId=toolu_1 name=get_cell",
		"tool result messageId=run-1:1 contentIndex=1 toolCallId=toolu_1 name=get_cell",
		"assistant message_start messageId=run-1:2",
		"assistant block_start messageId=run-1:2 contentIndex=0 blockType=text",
		"assistant delta messageId=run-1:2 contentIndex=0 blockType=text delta=The value",
		`chat delta #15 "I'll check that.\n\nThe value"`,
		"assistant delta messageId=run-1:2 contentIndex=0 blockType=text delta= is 42.",
		"assistant block_stop messageId=run-1:2 contentIndex=0 blockType=text",
		"assistant message_stop messageId=run-1:2 stopReason=stop",
		"lifecycle end stopReason=stop",
		`chat delta #19 "I'll check that.\n\nThe value is 42."`, // flushed before the final
		`chat final #19 "The value is 42."`,
	}
	if got := lines(h.out); !reflect.DeepEqual(got, want) {
		t.Fatalf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(toolStart) != 2 || toolStart[0].Chat == nil || toolStart[1].Agent == nil || toolStart[0].Chat.Seq != toolStart[1].Agent.Seq {
		t.Fatalf("tool start: %s", dump(toolStart))
	}
	// A text delta carries what it adds, never the text so far (issue 22,
	// finding 2): a client rebuilds each block by appending.
	var texts []any
	for _, a := range agents(h.out, StreamAssistant) {
		if a.Data["blockType"] == BlockText && a.Data["phase"] == PhaseDelta {
			if _, ok := a.Data["text"]; ok {
				t.Fatalf("text delta repeats the text so far: %s", line(Out{Agent: a}))
			}
			texts = append(texts, a.Data["delta"])
		}
	}
	if want := []any{"I'll check", " that.", "The value", " is 42."}; !reflect.DeepEqual(texts, want) {
		t.Fatalf("text deltas = %q, want %q", texts, want)
	}
	for _, o := range h.out {
		if o.Agent != nil && (o.Agent.Stream == StreamTool || o.Agent.Data["blockType"] == BlockToolCall) && !o.ToolStream {
			t.Fatalf("tool detail not ToolStream: %s", line(o))
		}
		if o.Agent != nil && o.Agent.Data["blockType"] == BlockToolCall {
			if _, ok := o.Agent.Data["delta"]; ok {
				t.Fatalf("toolCall event carries delta: %s", line(o))
			}
		}
	}
	if tool := agents(h.out, StreamTool)[0]; !reflect.DeepEqual(tool.Data["args"], args) {
		t.Fatalf("tool start args %v", tool.Data["args"])
	}
}

func TestToolCallWithoutStreamEventsIsLocatedAtMessageEnd(t *testing.T) {
	h := newHarness(t, core.InboundUser)
	call := &core.ToolCall{ID: "c9", Name: "exec"}
	h.ev(assistantStart(), assistantEnd(core.StopReasonToolUse, &core.TextContent{Text: ""}, call),
		toolExecStart("c9", "exec", map[string]any{}))
	tool := agents(h.out, StreamTool)[0]
	if tool.Data["messageId"] != "run-1:1" || tool.Data["contentIndex"] != 1 {
		t.Fatalf("tool start %v", tool.Data)
	}
}

func TestThinkingStream(t *testing.T) {
	h := newHarness(t, core.InboundUser)
	h.ev(assistantStart(),
		update(core.AssistantEventThinkingStart, 0, ""),
		update(core.AssistantEventThinkingDelta, 0, "weighing"),
		update(core.AssistantEventThinkingDelta, 0, " options"),
		update(core.AssistantEventThinkingEnd, 0, ""),
		textStart(1), textDelta(1, "Answer"), textEnd(1),
		assistantEnd(core.StopReasonStop))
	th := agents(h.out, StreamThinking)
	if len(th) != 2 {
		t.Fatalf("thinking events: %s", dump(h.out))
	}
	if _, cumulative := th[1].Data["text"]; cumulative || th[0].Data["delta"] != "weighing" || th[1].Data["delta"] != " options" || th[1].Data["blockType"] != BlockThinking || th[1].Data["contentIndex"] != 0 {
		t.Fatalf("thinking events: %s", dump(h.out))
	}
	for _, c := range deltas(h.out) {
		if strings.Contains(c.Message.Text(), "weighing") {
			t.Fatalf("reasoning in chat: %q", c.Message.Text())
		}
	}
	for _, a := range agents(h.out, StreamAssistant) {
		if d, ok := a.Data["delta"]; ok && d != "Answer" {
			t.Fatalf("assistant delta %q", d)
		}
	}
}

func TestSilentReply(t *testing.T) {
	for _, frags := range [][]string{{"NO_REPLY"}, {"NO", "_RE", "PLY"}, {" NO_REPLY  "}, {"N", "O"}} {
		t.Run(strings.Join(frags, "|"), func(t *testing.T) {
			h := newHarness(t, core.InboundUser)
			h.ev(streamText(frags...)...)
			h.record(h.run.End(&agent.Result{Final: &core.AssistantMessage{StopReason: core.StopReasonStop}}, nil))
			if ds := deltas(h.out); len(ds) != 0 {
				t.Fatalf("silent reply streamed: %s", dump(h.out))
			}
			for _, a := range agents(h.out, StreamAssistant) {
				if p := a.Data["phase"]; p != PhaseMessageStart && p != PhaseMessageStop {
					t.Fatalf("silent reply has a block: %s", dump(h.out))
				}
			}
			if fin := terminal(t, h.out); fin.State != StateFinal || fin.Message != nil {
				t.Fatalf("final %+v", fin)
			}
		})
	}
}

func TestSilentAfterAllIsWithdrawn(t *testing.T) {
	// Lower case is not held back, but the whole reply is still silent.
	h := newHarness(t, core.InboundUser)
	h.ev(assistantStart(), textStart(0), textDelta(0, "no"))
	h.clk.at(ms(200))
	h.ev(textDelta(0, "_reply"))
	h.clk.at(ms(400))
	out := h.ev(textEnd(0), assistantEnd(core.StopReasonStop, &core.TextContent{Text: "no_reply"}))
	var withdraw *AgentEvent
	for _, a := range agents(out, StreamAssistant) {
		if a.Data["replace"] == true {
			withdraw = a
		}
	}
	if withdraw == nil || withdraw.Data["text"] != "" {
		t.Fatalf("no withdrawal: %s", dump(out))
	}
	ds := deltas(out)
	if len(ds) != 1 || !ds[0].Replace || ds[0].Message.Text() != "" || ds[0].DeltaText != "" {
		t.Fatalf("chat withdrawal: %s", dump(out))
	}
	b, _ := ds[0].MarshalFor(4)
	if !strings.Contains(string(b), `"deltaText":"","replace":true`) {
		t.Fatalf("v4: %s", b)
	}
	h.record(h.run.End(&agent.Result{}, nil))
	if fin := terminal(t, h.out); fin.Message != nil {
		t.Fatalf("final %+v", fin)
	}
}

func TestHeartbeat(t *testing.T) {
	tests := []struct {
		name, text string
		replies    []core.ReplyPayload
		want       string
	}{
		{"ack", "HEARTBEAT_OK", nil, ""},
		{"alert", "HEARTBEAT_OK Disk usage crossed 95 percent.", []core.ReplyPayload{{Text: "Disk usage crossed 95 percent."}}, "Disk usage crossed 95 percent."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, core.InboundHeartbeat)
			h.ev(streamText(tt.text)...)
			if _, ok := h.run.NextFlush(); ok {
				t.Fatal("heartbeat run holds a chat delta")
			}
			h.record(h.run.End(&agent.Result{Replies: tt.replies}, nil))
			if ds := deltas(h.out); len(ds) != 0 {
				t.Fatalf("heartbeat streamed to chat: %s", dump(h.out))
			}
			if fin := terminal(t, h.out); fin.State != StateFinal || fin.Message.Text() != tt.want {
				t.Fatalf("final %+v", fin)
			}
			if len(agents(h.out, StreamAssistant)) == 0 {
				t.Fatal("the agent stream of a heartbeat run should still be sent")
			}
		})
	}
}

func TestAborted(t *testing.T) {
	h := newHarness(t, core.InboundUser)
	h.ev(assistantStart(), textStart(0), textDelta(0, "Partial"))
	h.clk.at(ms(50))
	h.ev(textDelta(0, " answer")) // held by the throttle
	h.ev(assistantEnd(core.StopReasonAborted, &core.TextContent{Text: "Partial answer"}))
	last := h.run.seq
	end := h.record(h.run.End(&agent.Result{Aborted: true}, nil))
	if len(end) != 2 {
		t.Fatalf("End: %s", dump(end))
	}
	life, ab := end[0].Agent, end[1].Chat
	if life.Seq != last+1 || life.Data["phase"] != "end" || life.Data["aborted"] != true {
		t.Fatalf("lifecycle %+v", life)
	}
	if ab.State != StateAborted || ab.Seq != last+1 || ab.StopReason != "stop" || ab.Message.Text() != "Partial answer" || end[1].DropIfSlow {
		t.Fatalf("aborted %+v", ab)
	}
	b, _ := ab.MarshalFor(4)
	if strings.Contains(string(b), "usage") || strings.Contains(string(b), "deltaText") {
		t.Fatalf("aborted carries members it may not: %s", b)
	}

	// Nothing said: no message.
	h2 := newHarness(t, core.InboundUser)
	h2.record(h2.run.Start())
	h2.record(h2.run.End(&agent.Result{Aborted: true}, nil))
	if ab := terminal(t, h2.out); ab.State != StateAborted || ab.Message != nil || ab.Seq != 2 {
		t.Fatalf("aborted %+v", ab)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name     string
		res      *agent.Result
		err      error
		wantKind string
	}{
		{"refusal", &agent.Result{Err: &llm.Error{Kind: llm.ErrorRefusal, Message: "declined"}}, nil, "refusal"},
		{"timeout", &agent.Result{TimedOut: true, Err: &llm.Error{Kind: llm.ErrorTimeout, Message: "the turn exceeded its 10m0s timeout"}}, nil, "timeout"},
		{"rate_limit", &agent.Result{Err: &llm.Error{Kind: llm.ErrorRateLimit, Provider: "anthropic", Model: "m", Message: "429"}}, nil, "rate_limit"},
		{"context_length", &agent.Result{Err: &llm.Error{Kind: llm.ErrorContextLength, Message: "too long"}}, nil, "context_length"},
		{"unknown", &agent.Result{Err: &llm.Error{Kind: llm.ErrorUnknown, Message: "boom"}}, nil, "unknown"},
		{"no message", &agent.Result{Err: &llm.Error{Kind: llm.ErrorRefusal}}, nil, "refusal"},
		{"unlisted kind", &agent.Result{Err: &llm.Error{Kind: "overloaded", Message: "busy"}}, nil, "unknown"},
		{"run error", nil, errors.New("agent: session busy"), "unknown"},
		{"wrapped llm error", nil, fmt.Errorf("run: %w", &llm.Error{Kind: llm.ErrorRateLimit, Message: "slow down"}), "rate_limit"},
		{"deadline", nil, fmt.Errorf("open: %w", context.DeadlineExceeded), "timeout"},
		{"agent timeout", nil, agent.ErrTimeout, "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, core.InboundUser)
			h.ev(streamText("partial")...)
			end := h.record(h.run.End(tt.res, tt.err))
			life, ce := end[0].Agent, terminal(t, h.out)
			if len(end) != 2 || ce.State != StateError || ce.ErrorKind != tt.wantKind || ce.ErrorMessage == "" || ce.Message != nil {
				t.Fatalf("End: %s / %+v", dump(end), ce)
			}
			if life.Data["phase"] != "error" || life.Data["error"] != ce.ErrorMessage || life.Data["errorKind"] != tt.wantKind || life.Seq != ce.Seq {
				t.Fatalf("lifecycle %+v", life.Data)
			}
			if tt.res != nil && tt.res.Err.Error() != "" && ce.ErrorMessage != tt.res.Err.Error() {
				t.Fatalf("errorMessage %q", ce.ErrorMessage)
			}
			b, _ := ce.MarshalFor(3)
			if !strings.Contains(string(b), `"errorKind":"`+tt.wantKind+`"`) {
				t.Fatalf("v3: %s", b)
			}
		})
	}
}

func TestCompaction(t *testing.T) {
	h := newHarness(t, core.InboundUser)
	h.record(h.run.Compaction(agent.CompactionEvent{Phase: "start", Reason: "threshold", TokensBefore: 180000}))
	h.record(h.run.Compaction(agent.CompactionEvent{Phase: "end", Reason: "threshold", TokensBefore: 180000, TokensAfter: 40000}))
	h.record(h.run.Compaction(agent.CompactionEvent{Phase: "end", Reason: "overflow", TokensBefore: 9, Err: errors.New("summary failed")}))
	as := agents(h.out, "")
	if len(as) != 4 || as[0].Stream != StreamLifecycle {
		t.Fatalf("got %s", dump(h.out))
	}
	want := []map[string]any{
		{"phase": "start", "reason": "threshold", "tokensBefore": 180000},
		{"phase": "end", "reason": "threshold", "tokensBefore": 180000, "tokensAfter": 40000, "completed": true},
		{"phase": "end", "reason": "overflow", "tokensBefore": 9, "tokensAfter": 0, "completed": false, "error": "summary failed"},
	}
	for i, w := range want {
		if a := as[i+1]; a.Stream != StreamCompaction || !reflect.DeepEqual(a.Data, w) || a.Seq != int64(i+2) {
			t.Fatalf("compaction %d: %+v", i, a)
		}
	}
}

func TestStaleEventsAfterEndAreDropped(t *testing.T) {
	h := newHarness(t, core.InboundUser)
	h.ev(streamText("done")...)
	h.record(h.run.End(finalResult("done"), nil))
	for name, got := range map[string][]Out{
		"Event":      h.run.Event(textDelta(0, "late tail")),
		"Start":      h.run.Start(),
		"Flush":      h.run.Flush(),
		"Compaction": h.run.Compaction(agent.CompactionEvent{Phase: "start"}),
		"End":        h.run.End(finalResult("again"), nil),
	} {
		if got != nil {
			t.Errorf("%s after End: %s", name, dump(got))
		}
	}
	if _, ok := h.run.NextFlush(); ok {
		t.Error("NextFlush after End")
	}
}

func TestEndClosesAnOpenResponse(t *testing.T) {
	h := newHarness(t, core.InboundUser)
	h.ev(assistantStart(), textStart(0), textDelta(0, "cut"))
	end := h.record(h.run.End(&agent.Result{Aborted: true}, nil))
	want := []string{
		"assistant block_stop messageId=run-1:1 contentIndex=0 blockType=text",
		"assistant message_stop messageId=run-1:1",
		"lifecycle end stopReason=stop",
		`chat aborted #7 "cut"`,
	}
	if got := lines(end); !reflect.DeepEqual(got, want) {
		t.Fatalf("got:\n%s", strings.Join(got, "\n"))
	}
}

func TestInlineDirectivesAreNotShown(t *testing.T) {
	h := newHarness(t, core.InboundUser)
	h.ev(streamText("[[reply_to_current]] Hello [[audio_as_voice]] world")...)
	ds := deltas(h.out)
	if len(ds) != 1 || strings.Contains(ds[0].Message.Text(), "[[") || ds[0].Message.Text() != "Hello world" {
		t.Fatalf("got %s", dump(h.out))
	}
}

func TestPartialTagIsReplaced(t *testing.T) {
	h := newHarness(t, core.InboundUser)
	h.ev(assistantStart(), textStart(0), textDelta(0, "Hi [[reply_"))
	h.clk.at(ms(200))
	h.ev(textDelta(0, "to_current]] there"))
	ds := deltas(h.out)
	if len(ds) != 2 || ds[0].Message.Text() != "Hi [[reply_" || !ds[1].Replace || ds[1].Message.Text() != "Hi there" || ds[1].DeltaText != "Hi there" {
		t.Fatalf("got %s", dump(h.out))
	}
	v4, _ := ds[1].MarshalFor(4)
	v3, _ := ds[1].MarshalFor(3)
	if !strings.Contains(string(v4), `"deltaText":"Hi there","replace":true`) || strings.Contains(string(v3), "replace") || strings.Contains(string(v3), "deltaText") {
		t.Fatalf("v4 %s\nv3 %s", v4, v3)
	}
}

func TestNoThrottle(t *testing.T) {
	clk := newClock()
	r := NewRun(testInfo(core.InboundUser), Options{Now: clk.now, Throttle: -1})
	var outs []Out
	for _, ev := range streamText("a", "b", "c") {
		outs = append(outs, r.Event(ev)...)
	}
	if ds := deltas(outs); len(ds) != 3 {
		t.Fatalf("got %s", dump(outs))
	}
}

func TestStripToolResults(t *testing.T) {
	h := newHarness(t, core.InboundUser)
	out := h.ev(toolExecEnd("t3", "exec", map[string]any{"content": "secret"}, true))
	tool := out[len(out)-1]
	stripped := StripToolResults(tool)
	if _, ok := stripped.Agent.Data["result"]; ok {
		t.Fatalf("result kept: %v", stripped.Agent.Data)
	}
	if stripped.Agent.Data["isError"] != true || stripped.Agent.Data["name"] != "exec" || !stripped.ToolStream {
		t.Fatalf("stripped too much: %+v", stripped)
	}
	if _, ok := tool.Agent.Data["result"]; !ok {
		t.Fatal("StripToolResults changed its argument")
	}
	upd := h.ev(core.AgentEvent{Type: core.AgentEventToolExecutionUpdate, ToolCallID: "t4", ToolName: "exec", PartialResult: "partial"})
	if _, ok := StripToolResults(upd[0]).Agent.Data["partialResult"]; ok {
		t.Fatal("partialResult kept")
	}
	life := out[0]
	if got := StripToolResults(life); got.Agent != life.Agent {
		t.Fatal("a non-tool event was copied")
	}
}
