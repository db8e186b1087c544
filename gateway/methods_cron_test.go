package gateway

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/gateway/client"
	"github.com/switchboardhq/switchboard/gateway/protocol"
	"github.com/switchboardhq/switchboard/heartbeat"
)

func TestCronMethodsAndEvents(t *testing.T) {
	r := newRig(t, rigOptions{cron: true})
	c := r.dial(r.opts(protocol.ScopeAdmin))
	job := map[string]any{
		"id": "weekly", "name": "Weekly report",
		"schedule": map[string]any{"kind": "cron", "expr": "0 9 * * 1", "tz": "Europe/Berlin"},
		"payload":  map[string]any{"kind": "agentTurn", "message": "Write the weekly report"},
	}
	added := call[heartbeat.Job](t, c, "cron.add", job)
	if added.ID != "weekly" || added.State.NextRunAtMs == 0 || added.SessionTarget != "isolated" {
		t.Fatalf("cron.add = %+v", added)
	}
	if ev := next(t, c, "cron", nil); !strings.Contains(string(ev.Payload), `"action":"added"`) {
		t.Errorf("cron event = %s", ev.Payload)
	}
	list := call[struct{ Jobs []heartbeat.Job }](t, c, "cron.list", nil)
	if len(list.Jobs) != 1 || list.Jobs[0].Name != "Weekly report" {
		t.Errorf("cron.list = %+v", list)
	}
	if st := call[heartbeat.CronStatus](t, c, "cron.status", nil); st.Jobs != 1 || st.NextWakeAtMs != added.State.NextRunAtMs {
		t.Errorf("cron.status = %+v", st)
	}

	r.provider.Push(llmtest.Text("Report: all good."))
	ran := call[map[string]any](t, c, "cron.run", map[string]any{"id": "weekly", "mode": "force"})
	if ran["ran"] != true {
		t.Fatalf("cron.run = %v", ran)
	}
	fin := next(t, c, "cron", func(e client.Event) bool { return strings.Contains(string(e.Payload), `"action":"finished"`) })
	if !strings.Contains(string(fin.Payload), `"status":"ok"`) || !strings.Contains(string(fin.Payload), "all good") {
		t.Errorf("finished event = %s", fin.Payload)
	}
	runs := call[struct{ Entries []heartbeat.RunRecord }](t, c, "cron.runs", map[string]any{"id": "weekly"})
	if len(runs.Entries) != 1 || runs.Entries[0].Status != "ok" || runs.Entries[0].RunID != ran["runId"] {
		t.Errorf("cron.runs = %+v", runs)
	}

	up := call[heartbeat.Job](t, c, "cron.update", map[string]any{"id": "weekly", "patch": map[string]any{"enabled": false}})
	if up.IsEnabled() {
		t.Errorf("cron.update = %+v", up)
	}
	if l := call[struct{ Jobs []heartbeat.Job }](t, c, "cron.list", map[string]any{"includeDisabled": false}); len(l.Jobs) != 0 {
		t.Errorf("disabled job listed: %+v", l)
	}
	if rm := call[map[string]any](t, c, "cron.remove", map[string]any{"id": "weekly"}); rm["removed"] != true {
		t.Errorf("cron.remove = %v", rm)
	}

	bad := map[string]any{"schedule": map[string]any{"kind": "cron", "expr": "0 9 * *"}, "payload": map[string]any{"kind": "agentTurn", "message": "x"}}
	if e := callErr(t, c, "cron.add", bad); e.Code != protocol.CodeInvalidRequest || !strings.Contains(e.Message, "schedule") {
		t.Errorf("bad cron.add: %+v", e)
	}
	reader := r.dial(r.opts(protocol.ScopeRead))
	if e := callErr(t, reader, "cron.add", job); e.Code == "" {
		t.Error("a reader added a job")
	}
}

func TestCronMethodsWithoutService(t *testing.T) {
	r := newRig(t, rigOptions{})
	c := r.dial(r.opts(protocol.ScopeAdmin))
	if e := callErr(t, c, "cron.list", nil); e.Code != protocol.CodeUnavailable {
		t.Errorf("cron.list without cron: %+v", e)
	}
}
