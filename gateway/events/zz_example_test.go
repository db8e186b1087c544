package events

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
)

func TestZZPrint(t *testing.T) {
	h := newHarness(t, core.InboundUser)
	args := map[string]any{"row": 0.0}
	h.record(h.run.Start())
	h.record(h.run.Compaction(agent.CompactionEvent{Phase: "end", Reason: "threshold", TokensBefore: 180000, TokensAfter: 40000}))
	h.ev(assistantStart(), update(core.AssistantEventThinkingStart, 0, ""), update(core.AssistantEventThinkingDelta, 0, "hmm"), update(core.AssistantEventThinkingEnd, 0, ""),
		textStart(1), textDelta(1, "I'll check."), textEnd(1),
		toolCallStart(2, "toolu_1", "get_cell"), update(core.AssistantEventToolCallDelta, 2, `{"row":0}`), toolCallEnd(2, "toolu_1", "get_cell", args),
		assistantEnd(core.StopReasonToolUse), toolExecStart("toolu_1", "get_cell", args),
		core.AgentEvent{Type: core.AgentEventToolExecutionUpdate, ToolCallID: "toolu_1", ToolName: "get_cell", PartialResult: "50%"},
		toolExecEnd("toolu_1", "get_cell", map[string]any{"content": []any{map[string]any{"type": "text", "text": "42"}}}, false))
	h.clk.advance(ms(300))
	h.ev(streamText("The value", " is 42.")...)
	h.record(h.run.End(finalResult("The value is 42."), nil))
	for _, o := range h.out {
		if o.Agent != nil {
			b, _ := json.Marshal(o.Agent)
			fmt.Printf("agent ts=%v %s\n", o.ToolStream, b)
		} else {
			b3, _ := o.Chat.MarshalFor(3)
			b4, _ := o.Chat.MarshalFor(4)
			fmt.Printf("chat v3 %s\nchat v4 %s\n", b3, b4)
		}
	}
}
