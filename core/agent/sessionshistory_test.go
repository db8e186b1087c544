package agent_test

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/core/tools"
)

// The model reads another session's recent messages with sessions_history;
// another agent's session is refused.
func TestSessionsHistoryToolEndToEnd(t *testing.T) {
	hist := &tools.SessionsHistory{}
	h := newHarness(t, harnessOptions{tools: []tools.Tool{hist}, script: []llmtest.Response{
		llmtest.Text("Noted: the launch is on Friday."),
		llmtest.ToolCalls(llmtest.Call("sessions_history", `{"sessionKey":"agent:main:telegram:direct:42","limit":5}`)),
		llmtest.ToolCalls(llmtest.Call("sessions_history", `{"sessionKey":"agent:ops:main"}`)),
		llmtest.Text("Ada said the launch is on Friday."),
	}})
	hist.Sessions = h.runner
	h.run(dm("the launch is on Friday"), nil)
	other := core.Inbound{SessionKey: "agent:main:slack:channel:c1", Route: core.Route{Channel: "slack", To: "C1"}, ChatType: core.ChatGroup,
		Body: "what did Ada say?", MessageID: "s1", WasMentioned: true}
	res := h.runTurn(agent.Turn{Inbound: other, SenderIsOwner: true}, nil)
	if got := res.Replies[0].Text; got != "Ada said the launch is on Friday." {
		t.Fatalf("reply = %q", got)
	}
	var results []string
	for _, m := range res.Messages {
		if tr, ok := m.(*core.ToolResultMessage); ok {
			results = append(results, tr.Content.Text())
		}
	}
	if len(results) != 2 {
		t.Fatalf("tool results = %q", results)
	}
	if !strings.Contains(results[0], "the launch is on Friday") || !strings.Contains(results[0], "assistant: Noted: the launch is on Friday.") {
		t.Errorf("history = %q", results[0])
	}
	if !strings.Contains(results[1], "belongs to another agent") {
		t.Errorf("other agent's session: %q", results[1])
	}
}
