package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/gateway/client"
	"github.com/switchboardhq/switchboard/gateway/protocol"
	"github.com/switchboardhq/switchboard/heartbeat"
)

// Issue 26, finding 6a: "Run now" (cron.run, mode force) on a disabled
// one-shot job ran it and deleted it without a word. The answer says what
// the run does to the job: a disabled job is kept and stays disabled; an
// enabled one-shot is deleted when the run succeeds. OpenClaw's params
// (jobId, mode) and {ok, ran} stay as they were.
func TestFinding6CronRunSaysWhatHappensToTheJob(t *testing.T) {
	r := newRig(t, rigOptions{cron: true})
	c := r.dial(r.opts(protocol.ScopeAdmin))
	at := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	for _, id := range []string{"dentist", "tea"} {
		job := map[string]any{"id": id, "name": id, "enabled": id == "tea",
			"schedule": map[string]any{"kind": "at", "at": at},
			"payload":  map[string]any{"kind": "systemEvent", "text": "Dentist at 10."}}
		call[heartbeat.Job](t, c, "cron.add", job)
	}

	ran := call[map[string]any](t, c, "cron.run", map[string]any{"jobId": "dentist", "mode": "force"})
	if ran["ok"] != true || ran["ran"] != true || ran["disabled"] != true || ran["deletesJob"] != nil {
		t.Errorf("cron.run of the disabled one-shot = %v, want ran, disabled, not deleted", ran)
	}
	next(t, c, "cron", func(e client.Event) bool {
		return strings.Contains(string(e.Payload), `"action":"finished"`) && strings.Contains(string(e.Payload), `"jobId":"dentist"`)
	})
	list := call[struct{ Jobs []heartbeat.Job }](t, c, "cron.list", map[string]any{"includeDisabled": true})
	if len(list.Jobs) != 2 || list.Jobs[0].ID != "dentist" || list.Jobs[0].IsEnabled() || list.Jobs[0].State.LastStatus != "ok" {
		t.Errorf("cron.list after the run = %+v, want the disabled job kept with its run", list.Jobs)
	}

	ran = call[map[string]any](t, c, "cron.run", map[string]any{"id": "tea"})
	if ran["ran"] != true || ran["disabled"] != nil || ran["deletesJob"] != true {
		t.Errorf("cron.run of the enabled one-shot = %v, want ran and deletesJob", ran)
	}
	next(t, c, "cron", func(e client.Event) bool {
		return strings.Contains(string(e.Payload), `"action":"removed"`) && strings.Contains(string(e.Payload), `"jobId":"tea"`)
	})

	due := call[map[string]any](t, c, "cron.run", map[string]any{"id": "dentist", "mode": "due"})
	if due["ran"] != false || due["reason"] != "not-due" {
		t.Errorf("cron.run mode due of a disabled job = %v, want not run, not-due", due)
	}
}
