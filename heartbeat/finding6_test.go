package heartbeat_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/slack"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/heartbeat"
	"github.com/switchboardhq/switchboard/queue"
)

// oneShot is a disabled-or-not "at" job with a system event, the shape
// of the example job that "Run now" deleted (issue 26, finding 6).
func oneShot(id string, enabled bool) heartbeat.JobSpec {
	return heartbeat.JobSpec{ID: id, Enabled: boolp(enabled), DeleteAfterRun: boolp(true),
		Schedule: heartbeat.Schedule{Kind: heartbeat.ScheduleAt, At: epoch.Add(24 * time.Hour).Format(time.RFC3339)},
		Payload:  heartbeat.Payload{Kind: heartbeat.PayloadSystemEvent, Text: "Dentist at 10."}}
}

// Issue 26, finding 6a: running a disabled one-shot job by hand ran it
// and deleted it. A disabled job is kept (and stays disabled) whatever its
// run does; an enabled one-shot run by hand is still deleted after it
// succeeds, as in OpenClaw, and DeletesAfterRun says which is which.
func TestFinding6ManualRunKeepsADisabledOneShot(t *testing.T) {
	r := cronRig(t, rigOptions{}, oneShot("dentist", false), oneShot("tea", true))
	ctx := context.Background()
	for _, tt := range []struct {
		id      string
		deletes bool
	}{{"dentist", false}, {"tea", true}} {
		j, ok := r.cron.Get(tt.id)
		if !ok {
			t.Fatalf("job %s missing before its run", tt.id)
		}
		if got := j.DeletesAfterRun(); got != tt.deletes {
			t.Errorf("%s: DeletesAfterRun() = %v, want %v", tt.id, got, tt.deletes)
		}
		id, err := r.cron.Run(ctx, tt.id, "force")
		if err != nil || id == "" {
			t.Fatalf("run %s = %q, %v", tt.id, id, err)
		}
		if runs := r.waitRuns(tt.id, 1); runs[0].Status != "ok" {
			t.Fatalf("%s: run = %+v", tt.id, runs[0])
		}
		after, ok := r.cron.Get(tt.id)
		if ok == tt.deletes {
			t.Errorf("%s: after a successful manual run the job exists = %v, want %v", tt.id, ok, !tt.deletes)
		}
		if ok && (after.IsEnabled() || after.State.NextRunAtMs != 0 || after.State.LastStatus != "ok") {
			t.Errorf("%s: the disabled job after its run = %+v, want it still disabled with the run recorded", tt.id, after)
		}
	}
	// And the store agrees: a restart still has the disabled job.
	jobs, err := r.store.CronJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || jobs[0].ID != "dentist" {
		t.Errorf("stored jobs = %+v, want only the disabled dentist job", jobs)
	}
}

// failingDeliverer fails every delivery as the daemon's router does for a
// channel whose bridge is not running.
type failingDeliverer struct{ err error }

func (f failingDeliverer) Deliver(context.Context, queue.Delivery) error { return f.err }

// Issue 26, finding 6b: a job announcing to a channel that is not
// enabled showed "last ok" while the answer went nowhere. The run is an
// error with the reason in words; so is a delivery the router could not
// hand to a bridge. With bestEffort the run stays ok but its delivery is
// recorded as failed, with the reason.
func TestFinding6AnnounceThatWentNowhereIsAnError(t *testing.T) {
	off := bridges.Enabled{All: targets} // no channel enabled
	r := cronRig(t, rigOptions{cronTargets: off, script: []llmtest.Response{llmtest.Text("Three things happened.")}}, everyMinute("news"))
	if _, err := r.cron.Run(context.Background(), "news", "force"); err != nil {
		t.Fatal(err)
	}
	run := r.waitRuns("news", 1)[0]
	if run.Status != "error" || run.DeliveryStatus != "not-delivered" ||
		!strings.Contains(run.Error, `delivery failed: channel "telegram" is not enabled`) || !strings.Contains(run.DeliveryError, "channels.telegram") {
		t.Errorf("run announcing to a channel that is off = %+v, want an error naming the channel and how to enable it", run)
	}
	j, _ := r.cron.Get("news")
	if j.State.LastStatus != "error" || j.State.LastDeliveryStatus != "not-delivered" || !strings.Contains(j.State.LastError, "not enabled") {
		t.Errorf("job state = %+v, want the last run an error", j.State)
	}
	if got := r.rec.deliveries(); len(got) != 0 {
		t.Errorf("deliveries = %+v, want none", got)
	}

	noBridge := errors.New(`channels: no bridge runs for telegram account "work"`)
	best := everyMinute("best")
	best.Delivery.BestEffort = true
	r = cronRig(t, rigOptions{cronDeliverer: failingDeliverer{noBridge},
		script: []llmtest.Response{llmtest.Text("one"), llmtest.Text("two")}}, everyMinute("news"), best)
	for _, id := range []string{"news", "best"} {
		if _, err := r.cron.Run(context.Background(), id, "force"); err != nil {
			t.Fatal(err)
		}
		r.waitRuns(id, 1)
		waitIdle(t, r)
	}
	if run := r.runs("news")[0]; run.Status != "error" || !strings.Contains(run.Error, noBridge.Error()) || run.DeliveryError != noBridge.Error() {
		t.Errorf("run whose bridge is not running = %+v, want an error with the router's reason", run)
	}
	if run := r.runs("best")[0]; run.Status != "ok" || run.DeliveryStatus != "not-delivered" || run.DeliveryError != noBridge.Error() {
		t.Errorf("best-effort run = %+v, want ok with the failed delivery and its reason", run)
	}
}

// Issue 26, finding 6c: a job announcing to a channel that is not enabled
// was accepted. Add refuses it, naming the channel and the enabled ones (a
// misspelt name gets the closest); Update refuses to point a job there
// but leaves other edits of a job from the file alone; the web chat is
// always a destination.
func TestFinding6AddRefusesAnnounceToAChannelThatIsOff(t *testing.T) {
	on := bridges.Enabled{All: targets, On: bridges.Registry{slack.Descriptor()}}
	fileJob := everyMinute("from-file") // announces to telegram, which is off
	r := cronRig(t, rigOptions{cronTargets: on}, fileJob)
	ctx := context.Background()
	for _, tt := range []struct{ channel, want string }{
		{"telegram", `delivery: channel "telegram" is not enabled (enabled: slack); turn it on under channels.telegram and restart`},
		{"Telgram", `delivery: no channel "Telgram" (did you mean "telegram"?); enabled: slack`},
	} {
		spec := everyMinute("")
		spec.Delivery.Channel = tt.channel
		if _, err := r.cron.Add(ctx, spec); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("add announcing to %s: %v, want %q", tt.channel, err, tt.want)
		}
	}
	if n := len(r.cron.List()); n != 1 {
		t.Errorf("%d jobs after the refused adds, want the file's one", n)
	}
	ok := everyMinute("to-slack")
	ok.Delivery = &heartbeat.Delivery{Mode: heartbeat.DeliveryAnnounce, Channel: "slack", To: "channel:C123"}
	if _, err := r.cron.Add(ctx, ok); err != nil {
		t.Errorf("add announcing to an enabled channel: %v", err)
	}
	web := everyMinute("to-web")
	web.Delivery = &heartbeat.Delivery{Mode: heartbeat.DeliveryAnnounce, Channel: "webchat", To: "agent:main:main"}
	if _, err := r.cron.Add(ctx, web); err != nil {
		t.Errorf("add announcing to the web chat: %v", err)
	}
	if _, err := r.cron.Update(ctx, "to-slack", json.RawMessage(`{"delivery":{"mode":"announce","channel":"telegram","to":"42"}}`)); err == nil ||
		!strings.Contains(err.Error(), `"telegram" is not enabled`) {
		t.Errorf("update pointing a job at a channel that is off: %v", err)
	}
	if _, err := r.cron.Update(ctx, "from-file", json.RawMessage(`{"enabled":false}`)); err != nil {
		t.Errorf("disabling a job whose channel is off: %v", err)
	}
}
