package gateway

import (
	"context"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/gateway/client"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// Every method the gateway answers has a declared scope; a handler added
// without one fails here.
func TestEveryRegisteredMethodHasAScope(t *testing.T) {
	s := New(DefaultConfig(), Deps{})
	if len(s.methods) < 40 {
		t.Fatalf("only %d methods registered", len(s.methods))
	}
	for name := range s.methods {
		if !protocol.Classified(name) {
			t.Errorf("method %s has no scope in protocol's policy table", name)
		}
	}
	for _, name := range s.advertisedMethods() {
		if _, ok := s.methods[name]; !ok {
			t.Errorf("advertised method %s has no handler", name)
		}
	}
}

func methodNames(s *Server) []string {
	var names []string
	for n := range s.methods {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Every method refuses a caller without its scope, in each protocol
// version's words, and lets one with exactly that scope through.
func TestEveryMethodChecksItsScope(t *testing.T) {
	r := newRig(t, rigOptions{})
	v4 := r.dial(r.opts())
	o3 := r.opts()
	o3.MaxProtocol = 3
	v3 := r.dial(o3)
	holders := map[string]*client.Client{}
	for _, sc := range []string{protocol.ScopeRead, protocol.ScopeWrite, protocol.ScopeAdmin, protocol.ScopePairing, protocol.ScopeApprovals} {
		holders[sc] = r.dial(r.opts(sc))
	}
	for _, name := range methodNames(r.gw) {
		req, _ := protocol.ScopeOf(name)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err4 := v4.Call(ctx, name, map[string]any{})
		_, err3 := v3.Call(ctx, name, map[string]any{})
		if name == "health" {
			if err4 != nil || err3 != nil {
				t.Errorf("health without scopes: %v / %v", err4, err3)
			}
			cancel()
			continue
		}
		want := "missing scope: " + req.Scope()
		if e := asShape(err4); e == nil || e.Code != protocol.CodeForbidden || e.Message != want {
			t.Errorf("v4 %s without scopes: %v, want FORBIDDEN %q", name, err4, want)
		}
		if e := asShape(err3); e == nil || e.Code != protocol.CodeInvalidRequest || e.Message != want {
			t.Errorf("v3 %s without scopes: %v, want INVALID_REQUEST %q", name, err3, want)
		}
		_, err := holders[req.Scope()].Call(ctx, name, map[string]any{})
		if e := asShape(err); e != nil && (strings.HasPrefix(e.Message, "missing scope") || strings.HasPrefix(e.Message, "unauthorized role")) {
			t.Errorf("%s with %s: %s", name, req.Scope(), e.Message)
		}
		cancel()
	}
}

func asShape(err error) *protocol.ErrorShape {
	e, _ := err.(*protocol.ErrorShape)
	return e
}

func TestUnknownMethodAndFloodGuard(t *testing.T) {
	r := newRig(t, rigOptions{})
	admin := r.dial(r.opts(protocol.ScopeAdmin))
	if e := callErr(t, admin, "no.such.method", nil); e.Message != "unknown method: no.such.method" {
		t.Errorf("unknown method: %+v", e)
	}
	// A non-admin cannot probe which methods exist.
	reader := r.dial(r.opts(protocol.ScopeRead))
	if e := callErr(t, reader, "no.such.method", nil); !strings.HasPrefix(e.Message, "missing scope: operator.admin") {
		t.Errorf("unknown method for a reader: %+v", e)
	}
	// An operator calling node methods over and over is cut off.
	for range protocol.UnauthorizedFloodLimit {
		if e := callErr(t, reader, "node.event", nil); e.Message != "unauthorized role: operator" {
			t.Fatalf("node.event as operator: %+v", e)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _ = reader.Call(ctx, "node.event", nil)
	if code, reason := waitClosed(t, reader); code != 1008 || reason != protocol.ReasonRepeatedUnauthorized {
		t.Errorf("close = %d %q", code, reason)
	}
}

// Without a scheduler attached (an embedding program that wires none) the
// scheduler's methods answer UNAVAILABLE, naming what is missing.
func TestSchedulerMethodsAnswerUnavailable(t *testing.T) {
	r := newRig(t, rigOptions{})
	admin := r.dial(r.opts(protocol.ScopeAdmin))
	for m, params := range map[string]any{"cron.list": nil, "cron.add": nil, "cron.status": nil, "last-heartbeat": nil,
		"set-heartbeats": map[string]any{"enabled": true}, "cron.run": map[string]any{"id": "x"}} {
		if e := callErr(t, admin, m, params); e.Code != protocol.CodeUnavailable {
			t.Errorf("%s: %+v, want UNAVAILABLE", m, e)
		}
	}
	if e := callErr(t, admin, "config.get", nil); e.Code != protocol.CodeUnavailable {
		t.Errorf("config.get without a config service: %+v", e)
	}
}

func TestSessionMethods(t *testing.T) {
	r := newRig(t, rigOptions{})
	r.provider.Push(llmtest.Text("first reply"), llmtest.Text("NO_REPLY"))
	c := r.dial(r.opts(protocol.ScopeAdmin))
	call[map[string]any](t, c, "sessions.subscribe", nil)
	sendChat(t, c, "work", "hello", "s-1")
	chatEvents(t, c, "s-1")
	changed := next(t, c, "sessions.changed", func(e client.Event) bool { return strings.Contains(string(e.Payload), `"end"`) })
	if !strings.Contains(string(changed.Payload), "agent:main:work") {
		t.Errorf("sessions.changed = %s", changed.Payload)
	}
	sendChat(t, c, "work", "quiet please", "s-2")
	final := chatEvents(t, c, "s-2")
	if f := final[len(final)-1]; f.State != "final" || f.Message != nil {
		t.Errorf("NO_REPLY final = %+v, want no message", f)
	}
	h := call[map[string]any](t, c, "chat.history", map[string]any{"sessionKey": "work", "limit": 10})
	for _, m := range h["messages"].([]any) {
		if strings.Contains(toJSON(m), "NO_REPLY") {
			t.Errorf("chat.history shows a silent reply: %v", m)
		}
	}

	list := call[map[string]any](t, c, "sessions.list", map[string]any{"limit": 10})
	rows := list["sessions"].([]any)
	if len(rows) != 1 || rows[0].(map[string]any)["key"] != "agent:main:work" || rows[0].(map[string]any)["kind"] != "direct" {
		t.Fatalf("sessions.list = %v", list)
	}
	p := call[map[string]any](t, c, "sessions.patch", map[string]any{"key": "work", "label": "Work chat"})
	if p["entry"].(map[string]any)["label"] != "Work chat" {
		t.Errorf("sessions.patch = %v", p)
	}
	if e := callErr(t, c, "sessions.patch", map[string]any{"key": "work", "color": "red"}); !strings.Contains(e.Message, `unknown member "color"`) {
		t.Errorf("patch with an unknown member: %s", e.Message)
	}
	pre := call[map[string]any](t, c, "sessions.preview", map[string]any{"keys": []string{"work", "missing"}})
	previews := pre["previews"].([]any)
	if previews[0].(map[string]any)["status"] != "ok" || previews[1].(map[string]any)["status"] != "missing" {
		t.Errorf("sessions.preview = %v", pre)
	}
	res := call[map[string]any](t, c, "sessions.resolve", map[string]any{"label": "Work chat"})
	if res["key"] != "agent:main:work" {
		t.Errorf("sessions.resolve = %v", res)
	}
	before := h["sessionId"]
	reset := call[map[string]any](t, c, "sessions.reset", map[string]any{"key": "work"})
	if reset["entry"].(map[string]any)["sessionId"] == before {
		t.Errorf("sessions.reset kept the transcript %v", before)
	}
	if e := callErr(t, c, "sessions.delete", map[string]any{"key": "main"}); !strings.Contains(e.Message, "main session cannot be deleted") {
		t.Errorf("deleting main: %s", e.Message)
	}
	call[map[string]any](t, c, "sessions.delete", map[string]any{"key": "work"})
	if list := call[map[string]any](t, c, "sessions.list", nil); len(list["sessions"].([]any)) != 0 {
		t.Errorf("after delete sessions.list = %v", list)
	}
	inj := call[map[string]any](t, c, "chat.inject", map[string]any{"sessionKey": "notes", "message": "remember this"})
	ev := next(t, c, "chat", func(e client.Event) bool { return strings.Contains(string(e.Payload), inj["runId"].(string)) })
	if !strings.Contains(string(ev.Payload), "remember this") {
		t.Errorf("chat.inject event = %s", ev.Payload)
	}
	models := call[map[string]any](t, c, "models.list", nil)
	if !strings.Contains(toJSON(models), "scripted/m") {
		t.Errorf("models.list = %v", models)
	}
	if a := call[map[string]any](t, c, "agents.list", nil); a["defaultId"] != "main" {
		t.Errorf("agents.list = %v", a)
	}
	if w := call[map[string]any](t, c, "wake", map[string]any{"mode": "next-heartbeat", "text": "check mail"}); w["queued"] != true {
		t.Errorf("wake = %v", w)
	}
	if e := callErr(t, c, "send", map[string]any{"to": "42", "channel": "telegram", "message": "hi", "idempotencyKey": "x"}); e.Code != protocol.CodeUnavailable {
		t.Errorf("send without a bridge: %+v", e)
	}
}

func TestTicksPresenceAndShutdown(t *testing.T) {
	r := newRig(t, rigOptions{cfg: func(c *Config) { c.Policy.TickIntervalMs = 50 }})
	c := r.dial(r.opts(protocol.ScopeRead))
	tick := next(t, c, protocol.EventTick, nil)
	if decode[protocol.TickPayload](t, tick.Payload).Ts == 0 || tick.Seq == nil {
		t.Errorf("tick = %s", tick.Raw)
	}
	other := r.dial(r.opts(protocol.ScopeRead))
	pres := next(t, c, protocol.EventPresence, func(e client.Event) bool {
		return strings.Count(string(e.Payload), `"ts"`) == 2
	})
	if pres.StateVersion == nil || pres.StateVersion.Presence == 0 {
		t.Errorf("presence without stateVersion: %s", pres.Raw)
	}
	other.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.gw.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	next(t, c, protocol.EventShutdown, nil)
	if code, _ := waitClosed(t, c); code != 1000 {
		t.Errorf("close on stop = %d, want 1000", code)
	}
}

func TestMetricsEndpoint(t *testing.T) {
	r := newRig(t, rigOptions{})
	r.dial(r.opts(protocol.ScopeRead))
	resp, err := http.Get("http://" + r.gw.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, want := range []string{"switchboard_gateway_connections 1", `switchboard_gateway_handshakes_total{outcome="ok"} 1`, `switchboard_state{name="queue_depth"} 0`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
