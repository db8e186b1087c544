package events

// Cases ported from OpenClaw's src/gateway/server-chat.agent-events.test.ts.
// OpenClaw's handler consumes cumulative {text} snapshots from its runner;
// ours consumes seed-000 text deltas, so each snapshot sequence becomes the
// deltas between the snapshots. Where Switchboard differs on purpose, the
// test says so.

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/core/llm"
)

// at sets the clock to OpenClaw's Date.now() value.
func (h *harness) at(unixMs int64) { h.clk.t = time.UnixMilli(unixMs) }

func (h *harness) end(res *agent.Result) []Out {
	h.t.Helper()
	return h.record(h.run.End(res, nil))
}

func TestOpenClawEmitsChatDeltaForAssistantText(t *testing.T) {
	h := newHarness(t, core.InboundUser)
	h.at(1_000)
	h.ev(assistantStart(), textStart(0), textDelta(0, "Hello world"))
	ds := deltas(h.out)
	if len(ds) != 1 || ds[0].State != StateDelta || ds[0].Message.Text() != "Hello world" || ds[0].Message.Role != "assistant" || ds[0].Message.Timestamp != 1_000 {
		t.Fatalf("got %s", dump(h.out))
	}
}

func TestOpenClawStripsInlineDirectives(t *testing.T) {
	h := newHarness(t, core.InboundUser)
	h.ev(assistantStart(), textStart(0), textDelta(0, "Hello [[reply_to_current]] world [[audio_as_voice]]"))
	ds := deltas(h.out)
	// OpenClaw keeps the spaces around a removed tag ("Hello  world ");
	// reply.ParseTags takes the spaces after a tag with it.
	if len(ds) != 1 || ds[0].Message.Text() != "Hello world" {
		t.Fatalf("got %s", dump(h.out))
	}
}

func TestOpenClawSuppressedControlTextEmitsNoDelta(t *testing.T) {
	h := newHarness(t, core.InboundUser)
	h.at(1_000)
	h.ev(assistantStart(), textStart(0), textDelta(0, " NO_REPLY  "))
	if cs := chats(h.out); len(cs) != 0 {
		t.Fatalf("got %s", dump(h.out))
	}
}

func TestOpenClawNoReplyNotInFinal(t *testing.T) {
	h := newHarness(t, core.InboundUser)
	h.at(2_000)
	h.ev(streamText("NO_REPLY")...)
	h.end(&agent.Result{Final: &core.AssistantMessage{StopReason: core.StopReasonStop}})
	cs := chats(h.out)
	if len(cs) != 1 || cs[0].State != StateFinal || cs[0].Message != nil {
		t.Fatalf("want a single final without message, got %s", dump(h.out))
	}
}

func TestOpenClawNoReplyLeadFragmentsSuppressed(t *testing.T) {
	h := newHarness(t, core.InboundUser)
	h.at(2_100)
	// The snapshots "NO", "NO_", "NO_RE", "NO_REPLY".
	h.ev(streamText("NO", "_", "RE", "PLY")...)
	h.end(&agent.Result{})
	cs := chats(h.out)
	if len(cs) != 1 || cs[0].State != StateFinal || cs[0].Message != nil {
		t.Fatalf("want a single final without message, got %s", dump(h.out))
	}
}

func TestOpenClawKeepsShortNoReply(t *testing.T) {
	h := newHarness(t, core.InboundUser)
	h.at(2_200)
	h.ev(streamText("No")...)
	h.end(finalResult("No"))
	// reply.StreamFilter holds back only upper-case fragments of NO_REPLY,
	// so "No" also streams as a delta (OpenClaw holds it back). The final
	// keeps it either way.
	fin := terminal(t, h.out)
	if fin.State != StateFinal || fin.Message.Text() != "No" {
		t.Fatalf("final %+v", fin)
	}
	for _, c := range deltas(h.out) {
		if c.Message.Text() != "No" {
			t.Fatalf("delta %q", c.Message.Text())
		}
	}
}

func TestOpenClawStripsGluedLeadingNoReply(t *testing.T) {
	h := newHarness(t, core.InboundUser)
	h.at(2_250)
	h.ev(assistantStart(), textStart(0), textDelta(0, "NO_REPLYThe user"))
	h.at(2_500)
	h.ev(textDelta(0, " is saying hello"), textEnd(0),
		assistantEnd(core.StopReasonStop, &core.TextContent{Text: "NO_REPLYThe user is saying hello"}))
	h.end(finalResult("The user is saying hello"))
	cs := chats(h.out)
	if fin := cs[len(cs)-1]; fin.State != StateFinal || fin.Message.Text() != "The user is saying hello" {
		t.Fatalf("final %+v", fin)
	}
	for _, c := range cs {
		if strings.Contains(c.Message.Text(), "NO_REPLY") {
			t.Fatalf("chat shows the token: %q", c.Message.Text())
		}
	}
	for _, a := range agents(h.out, StreamAssistant) {
		if s, _ := a.Data["text"].(string); strings.Contains(s, "NO_REPLY") {
			t.Fatalf("agent stream shows the token: %q", s)
		}
	}
	if got := deltas(h.out); len(got) != 2 || got[1].Message.Text() != "The user is saying hello" {
		t.Fatalf("deltas %s", dump(h.out))
	}
}

func TestOpenClawFlushesThrottledTextBeforeFinal(t *testing.T) {
	h := newHarness(t, core.InboundUser)
	h.at(10_000)
	h.ev(assistantStart(), textStart(0), textDelta(0, "Hello"))
	h.at(10_100)
	h.ev(textDelta(0, " world"), textEnd(0), assistantEnd(core.StopReasonStop, &core.TextContent{Text: "Hello world"}))
	h.end(finalResult("Hello world"))
	cs := chats(h.out)
	if len(cs) != 3 || cs[0].State != StateDelta || cs[1].State != StateDelta || cs[1].Message.Text() != "Hello world" || cs[2].State != StateFinal {
		t.Fatalf("got %s", dump(h.out))
	}
	if cs[1].Seq != cs[2].Seq {
		t.Fatalf("the pre-final flush has seq %d, the final %d", cs[1].Seq, cs[2].Seq)
	}
}

func TestOpenClawPreservesPreToolTextAcrossSegments(t *testing.T) {
	h := newHarness(t, core.InboundUser)
	h.at(10_500)
	h.ev(streamText("Before tool call")...)
	h.at(10_700)
	h.ev(streamText("After tool call")...)
	h.end(finalResult("After tool call"))
	cs := chats(h.out)
	// Switchboard separates responses with a blank line (OpenClaw: whatever
	// its runner put in the delta). The final is what the chat receives, the
	// last response's reply; the earlier one is in chat.history.
	if len(cs) != 3 || cs[1].Message.Text() != "Before tool call\n\nAfter tool call" || cs[2].State != StateFinal || cs[2].Message.Text() != "After tool call" {
		t.Fatalf("got %s", dump(h.out))
	}
	if cs[1].DeltaText != "\n\nAfter tool call" || cs[1].Replace {
		t.Fatalf("delta %+v", cs[1])
	}
}

func TestOpenClawFlushesMergedSegmentsBeforeFinal(t *testing.T) {
	h := newHarness(t, core.InboundUser)
	h.at(10_800)
	h.ev(streamText("Before tool call")...)
	h.at(10_860)
	h.ev(streamText("After tool call")...)
	h.end(finalResult("After tool call"))
	cs := chats(h.out)
	if len(cs) != 3 || cs[1].State != StateDelta || cs[1].Message.Text() != "Before tool call\n\nAfter tool call" || cs[2].State != StateFinal {
		t.Fatalf("got %s", dump(h.out))
	}
}

func TestOpenClawNoExtraFlushWhenLatestTextSent(t *testing.T) {
	h := newHarness(t, core.InboundUser)
	h.at(11_000)
	h.ev(assistantStart(), textStart(0), textDelta(0, "Hello"))
	h.at(11_200)
	h.ev(textDelta(0, " world"), textEnd(0), assistantEnd(core.StopReasonStop))
	h.end(finalResult("Hello world"))
	var states []string
	for _, c := range chats(h.out) {
		states = append(states, c.State)
	}
	if strings.Join(states, ",") != "delta,delta,final" {
		t.Fatalf("states %v", states)
	}
}

func TestOpenClawDropsStaleEventsAfterLifecycleEnd(t *testing.T) {
	h := newHarness(t, core.InboundUser)
	h.at(2_500)
	h.ev(streamText("done")...)
	h.end(finalResult("done"))
	if got := h.run.Event(textDelta(0, "late tail")); got != nil {
		t.Fatalf("stale event produced %s", dump(got))
	}
}

func TestOpenClawFlushesBeforeToolStart(t *testing.T) {
	h := newHarness(t, core.InboundUser)
	h.at(12_000)
	h.ev(assistantStart(), textStart(0), textDelta(0, "Before tool"))
	h.at(12_050) // inside the throttle window
	h.ev(textDelta(0, " expanded"))
	if n := len(deltas(h.out)); n != 1 {
		t.Fatalf("%d deltas before the tool", n)
	}
	out := h.ev(textEnd(0), assistantEnd(core.StopReasonToolUse, &core.TextContent{Text: "Before tool expanded"}, &core.ToolCall{ID: "tool-flush-1", Name: "read"}),
		toolExecStart("tool-flush-1", "read", map[string]any{}))
	cs := chats(h.out)
	if len(cs) != 2 || cs[1].Message.Text() != "Before tool expanded" {
		t.Fatalf("got %s", dump(h.out))
	}
	last := out[len(out)-2:]
	if last[0].Chat != cs[1] || last[1].Agent == nil || last[1].Agent.Stream != StreamTool || !last[1].ToolStream || last[0].Chat.Seq != last[1].Agent.Seq {
		t.Fatalf("the flush must come just before the tool start, with its seq: %s", dump(out))
	}
}

func TestOpenClawToolOutputStripping(t *testing.T) {
	h := newHarness(t, core.InboundUser)
	result := map[string]any{"content": []any{map[string]any{"type": "text", "text": "secret"}}}
	out := h.ev(toolExecEnd("t3", "exec", result, false))
	tool := out[len(out)-1]
	// verbose "full": as given.
	if got := tool.Agent.Data["result"]; got == nil {
		t.Fatal("result missing")
	}
	// verbose on/off: stripped by the server.
	if _, ok := StripToolResults(tool).Agent.Data["result"]; ok {
		t.Fatal("result kept")
	}
}

func TestOpenClawHeartbeatAckHidden(t *testing.T) {
	h := newHarness(t, core.InboundHeartbeat)
	h.at(2_000)
	h.ev(streamText("HEARTBEAT_OK Read HEARTBEAT.md if it exists (workspace context). Follow it strictly.")...)
	if cs := chats(h.out); len(cs) != 0 {
		t.Fatalf("got %s", dump(h.out))
	}
	h.end(&agent.Result{}) // reply.Build found an ack: no replies
	cs := chats(h.out)
	if len(cs) != 1 || cs[0].State != StateFinal || cs[0].Message != nil {
		t.Fatalf("got %s", dump(h.out))
	}
}

func TestOpenClawHeartbeatAlertKept(t *testing.T) {
	h := newHarness(t, core.InboundHeartbeat)
	h.at(3_000)
	h.ev(streamText("HEARTBEAT_OK Disk usage crossed 95 percent on /data and needs cleanup now.")...)
	h.end(&agent.Result{Replies: []core.ReplyPayload{{Text: "Disk usage crossed 95 percent on /data and needs cleanup now."}}})
	cs := chats(h.out)
	if len(cs) != 1 || cs[0].Message.Text() != "Disk usage crossed 95 percent on /data and needs cleanup now." {
		t.Fatalf("got %s", dump(h.out))
	}
}

func TestOpenClawErrorKind(t *testing.T) {
	h := newHarness(t, core.InboundUser)
	h.record(h.run.Start())
	h.end(&agent.Result{Err: &llm.Error{Kind: llm.ErrorRateLimit, StatusCode: 429, Message: "Too many requests"}})
	c := terminal(t, h.out)
	if c.State != StateError || c.ErrorKind != ErrorKindRateLimit || !strings.Contains(c.ErrorMessage, "Too many requests") {
		t.Fatalf("got %+v", c)
	}
}

func TestOpenClawSeqTracksAgentEvents(t *testing.T) {
	h := newHarness(t, core.InboundUser)
	h.at(2_500)
	h.ev(assistantStart(), textStart(0), textDelta(0, "done"))
	// The delta goes with the assistant event that carried its text.
	d := deltas(h.out)[0]
	a := agents(h.out, StreamAssistant)
	if last := a[len(a)-1]; d.Seq != last.Seq || last.Data["delta"] != "done" {
		t.Fatalf("delta seq %d, assistant event %d", d.Seq, last.Seq)
	}
}
