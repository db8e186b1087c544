package gateway

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/gateway/protocol"
	"github.com/switchboardhq/switchboard/heartbeat"
)

func TestHeartbeatMethodsAndEvent(t *testing.T) {
	r := newRig(t, rigOptions{heartbeat: &core.HeartbeatConfig{Every: "1h", Target: "webchat", To: "ops"}})
	admin := r.dial(r.opts(protocol.ScopeAdmin))
	if last := call[any](t, admin, "last-heartbeat", nil); last != nil {
		t.Errorf("last-heartbeat before any = %v", last)
	}
	// wake now: the text reaches the heartbeat prompt, the reply is an
	// alert, and the heartbeat event goes to every reader.
	r.provider.Push(llmtest.Text("Your 3pm meeting moved to 4pm."))
	w := call[map[string]any](t, admin, "wake", map[string]any{"mode": "now", "text": "Calendar changed"})
	if w["woke"] != true || w["queued"] != true {
		t.Fatalf("wake = %v", w)
	}
	ev := next(t, admin, "heartbeat", nil)
	got := decode[heartbeat.Event](t, ev.Payload)
	if got.Status != heartbeat.StatusSent || got.Trigger != "wake" || !strings.Contains(got.Preview, "4pm") || got.Channel != "webchat" {
		t.Errorf("heartbeat event = %s", ev.Payload)
	}
	if req := r.provider.Requests(); len(req) != 1 || !strings.Contains(toJSON(req[0].Messages), "Calendar changed") {
		t.Errorf("the wake text did not reach the heartbeat turn")
	}
	last := call[heartbeat.Event](t, admin, "last-heartbeat", nil)
	if last.Status != heartbeat.StatusSent || last.TS != got.TS {
		t.Errorf("last-heartbeat = %+v, want the event %+v", last, got)
	}
	off := call[map[string]any](t, admin, "set-heartbeats", map[string]any{"enabled": false})
	if off["enabled"] != false || r.hb.Enabled() {
		t.Errorf("set-heartbeats false = %v", off)
	}
	if e := callErr(t, admin, "set-heartbeats", map[string]any{}); e.Code != protocol.CodeInvalidRequest || !strings.Contains(e.Message, "enabled") {
		t.Errorf("set-heartbeats without enabled: %+v", e)
	}
	reader := r.dial(r.opts(protocol.ScopeRead))
	if e := callErr(t, reader, "set-heartbeats", map[string]any{"enabled": true}); e.Code == "" {
		t.Error("a reader switched heartbeats")
	}
}

func TestHeartbeatMethodsWithoutRunner(t *testing.T) {
	r := newRig(t, rigOptions{})
	c := r.dial(r.opts(protocol.ScopeAdmin))
	if e := callErr(t, c, "last-heartbeat", nil); e.Code != protocol.CodeUnavailable {
		t.Errorf("last-heartbeat without a runner: %+v", e)
	}
}
