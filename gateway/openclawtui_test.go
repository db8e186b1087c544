package gateway

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// Issue 25: OpenClaw 2026.9.6's TUI sends every line as chat.send
// {sessionKey, agentId, sessionId, message, thinking, deliver, timeoutMs,
// idempotencyKey} and aborts with chat.abort {sessionKey, agentId, runId};
// Switchboard refused "sessionId" as an unknown member, so no line went
// through. The members its schema has are accepted; an agentId that is not
// this gateway's agent, or an empty one, is refused by name.
func TestChatSendTakesWhatOpenClawsTUISends(t *testing.T) {
	r := newRig(t, rigOptions{})
	r.provider.Push(llmtest.Text("hello from the model"))
	c := r.dial(r.opts(protocol.ScopeRead, protocol.ScopeWrite))
	res := call[map[string]any](t, c, "chat.send", map[string]any{
		"sessionKey": "main", "agentId": "main", "sessionId": "0b7c8d9e-aaaa-bbbb-cccc-123456789abc",
		"message": "hi", "thinking": "off", "deliver": false, "timeoutMs": 60000, "idempotencyKey": "tui-1",
	})
	if res["runId"] != "tui-1" {
		t.Fatalf("chat.send = %v", res)
	}
	evs := chatEvents(t, c, "tui-1")
	if final := evs[len(evs)-1]; final.State != "final" || final.text() != "hello from the model" {
		t.Fatalf("final = %+v", final)
	}
	abort := call[map[string]any](t, c, "chat.abort", map[string]any{"sessionKey": "main", "agentId": "MAIN", "runId": "tui-1", "preserveSideRuns": true})
	if abort["ok"] != true {
		t.Fatalf("chat.abort = %v", abort)
	}

	for _, tc := range []struct {
		method string
		params map[string]any
		want   string
	}{
		{"chat.send", map[string]any{"sessionKey": "main", "agentId": "ops", "message": "x", "idempotencyKey": "tui-2"}, `unknown agentId "ops": this gateway runs agent "main"`},
		{"chat.send", map[string]any{"sessionKey": "main", "agentId": "", "message": "x", "idempotencyKey": "tui-3"}, "agentId, when given, must not be empty"},
		{"chat.send", map[string]any{"sessionKey": "main", "sessionId": "", "message": "x", "idempotencyKey": "tui-4"}, "sessionId, when given, must be 1 to 512 characters"},
		{"chat.abort", map[string]any{"sessionKey": "main", "agentId": "ops"}, `unknown agentId "ops"`},
		{"chat.send", map[string]any{"sessionKey": "main", "message": "x", "idempotencyKey": "tui-5", "workspace": "/"}, `unknown member "workspace"`},
	} {
		e := callErr(t, c, tc.method, tc.params)
		if e.Code != protocol.CodeInvalidRequest || !strings.Contains(e.Message, tc.want) {
			t.Errorf("%s %v: %s %q, want INVALID_REQUEST containing %q", tc.method, tc.params, e.Code, e.Message, tc.want)
		}
	}
}
