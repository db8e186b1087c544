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

// OpenClaw's TUI asks sessions.describe {key} for the session it shows,
// at start and after every run, and printed "session description failed:
// unknown method" when it was missing. The answer is {session}: the
// sessions.list row, or null for a session that has no entry yet.
func TestSessionsDescribeAnswersTheTUI(t *testing.T) {
	r := newRig(t, rigOptions{})
	c := r.dial(r.opts(protocol.ScopeRead, protocol.ScopeWrite))
	if res := call[map[string]any](t, c, "sessions.describe", map[string]any{"key": "agent:main:fresh"}); res["session"] != nil {
		t.Fatalf("sessions.describe of a session with no entry = %v, want session: null", res)
	}

	r.provider.Push(llmtest.Text("described"))
	call[map[string]any](t, c, "chat.send", map[string]any{"sessionKey": "main", "message": "hi", "idempotencyKey": "d-1"})
	chatEvents(t, c, "d-1")
	res := call[map[string]any](t, c, "sessions.describe", map[string]any{"key": "main", "agentId": "main", "includeDerivedTitles": true, "includeLastMessage": true})
	row, _ := res["session"].(map[string]any)
	if row["key"] != "agent:main:main" || row["kind"] != "direct" || row["sessionId"] == "" || row["updatedAt"] == nil {
		t.Fatalf("sessions.describe = %v, want the row of agent:main:main", res)
	}
	list := call[map[string]any](t, c, "sessions.list", map[string]any{"limit": 1})
	if first := list["sessions"].([]any)[0].(map[string]any); first["sessionId"] != row["sessionId"] {
		t.Fatalf("describe's row %v differs from sessions.list's %v", row, first)
	}

	for _, tc := range []struct {
		params map[string]any
		want   string
	}{
		{map[string]any{}, "key is required"},
		{map[string]any{"key": "main", "agentId": "ops"}, `unknown agentId "ops"`},
		{map[string]any{"key": "main", "limit": 3}, `unknown member "limit"`},
	} {
		e := callErr(t, c, "sessions.describe", tc.params)
		if e.Code != protocol.CodeInvalidRequest || !strings.Contains(e.Message, tc.want) {
			t.Errorf("sessions.describe %v: %s %q, want INVALID_REQUEST containing %q", tc.params, e.Code, e.Message, tc.want)
		}
	}
}

// OpenClaw's TUI starts a new chat with sessions.create {key: "tui-<uuid>",
// agentId, parentSessionKey, succeedsParent, emitCommandHooks} and switches
// to the key it is answered; without the method /new printed "new session
// failed". Members naming what Switchboard lacks are refused by name.
func TestSessionsCreateAnswersTheTUIsNew(t *testing.T) {
	r := newRig(t, rigOptions{})
	c := r.dial(r.opts(protocol.ScopeRead, protocol.ScopeWrite))
	res := call[map[string]any](t, c, "sessions.create", map[string]any{
		"key": "tui-0b7c8d9e", "agentId": "main", "parentSessionKey": "agent:main:main",
		"succeedsParent": true, "emitCommandHooks": true, "label": "Side chat",
	})
	if res["ok"] != true || res["key"] != "agent:main:tui-0b7c8d9e" || res["sessionId"] == "" {
		t.Fatalf("sessions.create = %v", res)
	}
	desc := call[map[string]any](t, c, "sessions.describe", map[string]any{"key": "agent:main:tui-0b7c8d9e"})
	if row, _ := desc["session"].(map[string]any); row["label"] != "Side chat" || row["sessionId"] != res["sessionId"] {
		t.Fatalf("the created session is described as %v", desc)
	}
	again := call[map[string]any](t, c, "sessions.create", map[string]any{"key": "tui-0b7c8d9e"})
	if again["sessionId"] != res["sessionId"] {
		t.Errorf("creating an existing key = %v, want it adopted with sessionId %v", again, res["sessionId"])
	}
	if fresh := call[map[string]any](t, c, "sessions.create", nil); fresh["key"] == "" || fresh["key"] == res["key"] {
		t.Errorf("sessions.create without a key = %v", fresh)
	}

	for _, tc := range []struct {
		params map[string]any
		want   string
	}{
		{map[string]any{"key": "x", "worktree": true}, `"worktree" is not supported by Switchboard`},
		{map[string]any{"key": "x", "message": "hi"}, `"message" is not supported`},
		{map[string]any{"key": "x", "agentId": "ops"}, `unknown agentId "ops"`},
		{map[string]any{"key": "y", "label": "Side chat"}, `label "Side chat" is already used`},
		{map[string]any{"key": "x", "succeedsParent": true}, "succeedsParent requires parentSessionKey"},
		{map[string]any{"key": "x", "colour": "red"}, `unknown member "colour"`},
	} {
		e := callErr(t, c, "sessions.create", tc.params)
		if e.Code != protocol.CodeInvalidRequest || !strings.Contains(e.Message, tc.want) {
			t.Errorf("sessions.create %v: %s %q, want INVALID_REQUEST containing %q", tc.params, e.Code, e.Message, tc.want)
		}
	}
}

// Every member of OpenClaw 2026.9.6's ChatSendParamsSchema is accepted
// (mentions, workContext, fastMode, replyToId, … change nothing here), or
// refused by name when it asks for what Switchboard does not have.
func TestChatSendTakesEveryMemberOfOpenClawsSchema(t *testing.T) {
	r := newRig(t, rigOptions{})
	r.provider.Push(llmtest.Text("all members"))
	c := r.dial(r.opts(protocol.ScopeRead, protocol.ScopeWrite))
	res := call[map[string]any](t, c, "chat.send", map[string]any{
		"sessionKey": "main", "message": "hi", "idempotencyKey": "all-1", "thinking": "low", "deliver": false, "timeoutMs": 30000,
		"mentions":    []any{map[string]any{"profileId": "p1", "displayName": "Ann"}},
		"workContext": map[string]any{"page": "chat", "title": "Chat"}, "fastMode": "auto", "fastAutoOnSeconds": 30,
		"queueMode": "collect", "replyToId": "m-1", "expectedSessionRoutingContract": "v1",
		"suppressCommandInterpretation": false, "expectedLeafEntryId": nil, "expectedPermissionMode": nil, "expectedToolOverrides": nil,
	})
	if res["runId"] != "all-1" {
		t.Fatalf("chat.send = %v", res)
	}
	if final := chatEvents(t, c, "all-1"); final[len(final)-1].text() != "all members" {
		t.Fatalf("final = %+v", final[len(final)-1])
	}
	for _, tc := range []struct {
		extra map[string]any
		want  string
	}{
		{map[string]any{"intent": map[string]any{"kind": "session-goal-start", "version": 1, "issuedAtMs": 1}}, "intent (a session goal) is not supported"},
		{map[string]any{"toolBindings": map[string]any{}}, "toolBindings is not supported"},
		{map[string]any{"suppressCommandInterpretation": true}, "suppressCommandInterpretation is not supported"},
		{map[string]any{"expectedLeafEntryId": "e-1"}, "expectedLeafEntryId must be null or absent"},
		{map[string]any{"expectedPermissionMode": "full"}, "expectedPermissionMode must be null or absent"},
		{map[string]any{"expectedToolOverrides": map[string]any{}}, "expectedToolOverrides must be null or absent"},
		{map[string]any{"fastMode": "fast"}, `fastMode must be true, false or "auto"`},
		{map[string]any{"workContext": map[string]any{"title": "x"}}, "workContext must be an object with a page"},
		{map[string]any{"mentions": "ann"}, "mentions must be a list"},
	} {
		params := map[string]any{"sessionKey": "main", "message": "x", "idempotencyKey": "refused"}
		for k, v := range tc.extra {
			params[k] = v
		}
		if e := callErr(t, c, "chat.send", params); e.Code != protocol.CodeInvalidRequest || !strings.Contains(e.Message, tc.want) {
			t.Errorf("chat.send with %v: %s %q, want INVALID_REQUEST containing %q", tc.extra, e.Code, e.Message, tc.want)
		}
	}
}

// OpenClaw's TUI sends agentId with /reset (sessions.reset) and its
// session settings (sessions.patch) when the key is not agent-prefixed;
// the session methods and chat.inject take it as chat.send does.
func TestSessionMethodsTakeAgentID(t *testing.T) {
	r := newRig(t, rigOptions{})
	c := r.dial(r.opts(protocol.ScopeAdmin))
	if res := call[map[string]any](t, c, "sessions.reset", map[string]any{"key": "main", "agentId": "main", "reason": "reset"}); res["ok"] != true {
		t.Fatalf("sessions.reset with agentId = %v", res)
	}
	if res := call[map[string]any](t, c, "sessions.patch", map[string]any{"key": "main", "agentId": "Main", "label": "Mine"}); res["ok"] != true {
		t.Fatalf("sessions.patch with agentId = %v", res)
	}
	for _, method := range []string{"sessions.reset", "sessions.patch", "sessions.delete", "sessions.compact"} {
		if e := callErr(t, c, method, map[string]any{"key": "main", "agentId": "ops"}); e.Code != protocol.CodeInvalidRequest || !strings.Contains(e.Message, `unknown agentId "ops"`) {
			t.Errorf("%s with another agent: %s %q", method, e.Code, e.Message)
		}
	}
	if e := callErr(t, c, "chat.inject", map[string]any{"sessionKey": "main", "agentId": "ops", "message": "x"}); !strings.Contains(e.Message, `unknown agentId "ops"`) {
		t.Errorf("chat.inject with another agent: %q", e.Message)
	}
}
