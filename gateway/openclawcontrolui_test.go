package gateway

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/gateway/client"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// What OpenClaw 2026.9.6's Control UI sends on every load, which
// Switchboard refused: connect's client.buildId and client.timeZone (it
// never connected), sessions.list's configuredAgentsOnly (an empty session
// list), cron.list's agentId, chat.startup (its first read of a chat); and
// what it reads: agents.list's model.primary (without it, the chat asked
// to "Connect an AI provider").
func TestWhatOpenClawsControlUISends(t *testing.T) {
	r := newRig(t, rigOptions{cron: true})
	o := r.opts(protocol.ScopeAdmin, protocol.ScopeRead, protocol.ScopeWrite, "operator.questions", protocol.ScopePairing)
	o.Client = protocol.ClientInfo{
		ID: "openclaw-control-ui", Version: "2026.9.6", BuildID: "2026.9.6-release-eb377ac59e6c-2026-09-23T16-33-12.144Z",
		Platform: "Linux x86_64", Mode: "webchat", InstanceID: "ea446b72-e5d9-42c7-9064-649468822a6b", TimeZone: "UTC",
	}
	c := r.dial(o)

	agents := call[map[string]any](t, c, "agents.list", nil)
	if a := agents["agents"].([]any)[0].(map[string]any); a["id"] != "main" || a["model"].(map[string]any)["primary"] != "scripted/m" {
		t.Errorf("agents.list = %v, want main with model.primary scripted/m", agents)
	}

	r.provider.Push(llmtest.Text("started"))
	call[map[string]any](t, c, "chat.send", map[string]any{"sessionKey": "main", "message": "hi", "idempotencyKey": "cui-1"})
	chatEvents(t, c, "cui-1")

	list := call[map[string]any](t, c, "sessions.list", map[string]any{
		"includeGlobal": true, "includeUnknown": true, "configuredAgentsOnly": true, "limit": 200,
		"includeDerivedTitles": true, "includeLastMessage": true, "agentId": "main",
	})
	if n := len(list["sessions"].([]any)); n != 1 {
		t.Errorf("sessions.list as the Control UI asks = %v, want the one session", list)
	}
	if sub := call[map[string]any](t, c, "sessions.list", map[string]any{"spawnedBy": "agent:main:main", "limit": 10000}); len(sub["sessions"].([]any)) != 0 {
		t.Errorf("sessions spawned by main = %v, want none (no session here is spawned by another)", sub)
	}

	st := call[map[string]any](t, c, "chat.startup", map[string]any{"sessionKey": "agent:main:main", "limit": 100, "maxBytes": 65536})
	if msgs, _ := st["messages"].([]any); len(msgs) != 2 || st["sessionKey"] != "agent:main:main" {
		t.Errorf("chat.startup = %v, want chat.history's answer", st)
	}
	if res := call[map[string]any](t, c, "chat.startup", map[string]any{"shortId": "ab12", "agentId": "main"}); res["resolution"].(map[string]any)["ok"] != false {
		t.Errorf("chat.startup by shortId = %v, want an unresolved resolution", res)
	}

	call[map[string]any](t, c, "cron.add", map[string]any{
		"name": "Daily", "schedule": map[string]any{"kind": "every", "everyMs": 86400000},
		"payload": map[string]any{"kind": "agentTurn", "message": "Report."},
	})
	if l := call[map[string]any](t, c, "cron.list", map[string]any{"agentId": "main", "limit": 50, "sortBy": "nextRunAtMs", "includeDisabled": true}); len(l["jobs"].([]any)) != 1 {
		t.Errorf("cron.list for agent main = %v", l)
	}
	if l := call[map[string]any](t, c, "cron.list", map[string]any{"agentId": "ops"}); len(l["jobs"].([]any)) != 0 {
		t.Errorf("cron.list for another agent = %v, want none", l)
	}

	for _, tc := range []struct {
		method string
		params map[string]any
		want   string
	}{
		{"sessions.list", map[string]any{"colour": "red"}, `unknown member "colour"`},
		{"chat.history", map[string]any{"sessionKey": "main", "shortId": "ab12"}, "shortId and slugHint are chat.startup's"},
		{"chat.startup", map[string]any{"sessionKey": "main", "agentId": "ops"}, `unknown agentId "ops"`},
		{"cron.list", map[string]any{"page": 2}, `unknown member "page"`},
	} {
		if e := callErr(t, c, tc.method, tc.params); e.Code != protocol.CodeInvalidRequest || !strings.Contains(e.Message, tc.want) {
			t.Errorf("%s %v: %s %q, want INVALID_REQUEST containing %q", tc.method, tc.params, e.Code, e.Message, tc.want)
		}
	}
}

// client.buildId and client.timeZone have OpenClaw's bounds.
func TestConnectClientBuildIDAndTimeZoneBounds(t *testing.T) {
	r := newRig(t, rigOptions{})
	o := r.opts(protocol.ScopeRead)
	o.Client = protocol.ClientInfo{ID: "openclaw-control-ui", Version: "1", Platform: "p", Mode: "webchat", BuildID: strings.Repeat("b", 97)}
	_, err := client.Dial(t.Context(), o)
	if err == nil || !strings.Contains(err.Error(), "at /client/buildId: must NOT have more than 96 characters") {
		t.Fatalf("connect with a 97-character buildId: %v", err)
	}
}
