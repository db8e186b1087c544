package heartbeat_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/heartbeat"
	"github.com/switchboardhq/switchboard/store"
)

func everyMinute(id string) heartbeat.JobSpec {
	return heartbeat.JobSpec{ID: id, Schedule: heartbeat.Schedule{Kind: heartbeat.ScheduleEvery, EveryMs: 60000, AnchorMs: epoch.UnixMilli()},
		Payload:  heartbeat.Payload{Kind: heartbeat.PayloadAgentTurn, Message: "Summarize the news"},
		Delivery: &heartbeat.Delivery{Mode: heartbeat.DeliveryAnnounce, Channel: "telegram", To: "42"}}
}

func cronRig(t *testing.T, o rigOptions, jobs ...heartbeat.JobSpec) *rig {
	t.Helper()
	cfg := heartbeat.DefaultCronConfig()
	cfg.Jobs = jobs
	o.cron = &cfg
	if o.cfg.Every == "" {
		o.cfg.Every = "0m" // no heartbeats unless a test wants them
	}
	return newRig(t, o)
}

// runs returns the job's runs, oldest first.
func (r *rig) runs(id string) []heartbeat.RunRecord {
	r.t.Helper()
	got, err := r.cron.Runs(context.Background(), id, 100)
	if err != nil {
		r.t.Fatal(err)
	}
	for i, j := 0, len(got)-1; i < j; i, j = i+1, j-1 {
		got[i], got[j] = got[j], got[i]
	}
	return got
}

// waitRuns waits until the job has n finished runs.
func (r *rig) waitRuns(id string, n int) []heartbeat.RunRecord {
	r.t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		runs := r.runs(id)
		done := 0
		for _, x := range runs {
			if x.FinishedAtMs != 0 {
				done++
			}
		}
		if done >= n {
			return runs
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("job %s: %d finished runs, want %d: %+v", id, done, n, runs)
		}
		select {
		case <-r.rec.changed:
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func TestCronEveryRunsAndAnnounces(t *testing.T) {
	r := cronRig(t, rigOptions{}, everyMinute("news"))
	j, ok := r.cron.Get("news")
	if !ok || j.State.NextRunAtMs != epoch.Add(time.Minute).UnixMilli() || j.SessionTarget != heartbeat.TargetIsolated {
		t.Fatalf("job = %+v", j)
	}
	r.provider.Push(llmtest.Text("Three things happened."))
	r.clock.Advance(time.Minute)
	runs := r.waitRuns("news", 1)
	got := r.rec.deliveries()
	if len(got) != 1 || got[0].Route != (core.Route{Channel: "telegram", To: "42"}) || got[0].Replies[0].Text != "Three things happened." {
		t.Fatalf("announce = %+v", got)
	}
	run := runs[0]
	if run.Status != "ok" || run.ScheduledAtMs != epoch.Add(time.Minute).UnixMilli() || run.DeliveryStatus != "delivered" ||
		!strings.HasPrefix(run.SessionKey, "agent:main:cron:news:run:") {
		t.Errorf("run = %+v", run)
	}
	j, _ = r.cron.Get("news")
	if j.State.LastStatus != "ok" || j.State.NextRunAtMs != epoch.Add(2*time.Minute).UnixMilli() || j.State.LastDelivered == nil || !*j.State.LastDelivered {
		t.Errorf("state = %+v", j.State)
	}
}

// A restart between two instants neither repeats the last run nor skips
// the next one.
func TestCronRestartNoDoubleNoSkip(t *testing.T) {
	dir := t.TempDir()
	r := cronRig(t, rigOptions{dir: dir}, everyMinute("news"))
	r.provider.Push(llmtest.Text("one"))
	r.clock.Advance(time.Minute)
	r.waitRuns("news", 1)
	waitIdle(t, r)
	r.close()

	again := cronRig(t, rigOptions{dir: dir, start: epoch.Add(90 * time.Second)}, everyMinute("news"))
	again.provider.Push(llmtest.Text("two"))
	if n := again.modelCalls(); n != 0 {
		t.Fatalf("the restart ran the job again at once (%d calls)", n)
	}
	again.clock.AdvanceTo(epoch.Add(2 * time.Minute))
	runs := again.waitRuns("news", 2)
	if len(runs) != 2 || runs[0].ScheduledAtMs == runs[1].ScheduledAtMs || runs[1].Status != "ok" {
		t.Errorf("runs = %+v", runs)
	}
	if n := again.modelCalls(); n != 1 {
		t.Errorf("model calls after restart = %d, want 1", n)
	}
}

// A crash after the run was claimed but before its turn reached the
// journal: the next start runs it, once.
func TestCronCrashAfterClaimResumesOnce(t *testing.T) {
	dir := t.TempDir()
	r := cronRig(t, rigOptions{dir: dir}, everyMinute("news"))
	r.close()
	st, err := store.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	instant := epoch.Add(time.Minute).UnixMilli()
	ok, err := st.ClaimCronRun(context.Background(), store.CronClaim{JobID: "news", ExpectNextRunAt: instant, NextRunAt: instant + 60000,
		Run: store.CronRun{RunID: "cron-crashed", ScheduledAt: instant, StartedAt: instant, Status: "running"}})
	st.Close()
	if !ok || err != nil {
		t.Fatalf("claim = %v %v", ok, err)
	}
	again := cronRig(t, rigOptions{dir: dir, start: epoch.Add(70 * time.Second), script: []llmtest.Response{llmtest.Text("resumed")}}, everyMinute("news"))
	runs := again.waitRuns("news", 1)
	if len(runs) != 1 || runs[0].RunID != "cron-crashed" || runs[0].Status != "ok" {
		t.Fatalf("runs = %+v", runs)
	}
	waitIdle(t, again)
	if n := again.modelCalls(); n != 1 {
		t.Errorf("model calls = %d, want 1", n)
	}
}

// A crash while the turn runs: the dispatcher replays it from its journal
// and the run finishes once, for its one instant.
func TestCronCrashMidTurnFinishesOnce(t *testing.T) {
	dir := t.TempDir()
	r := cronRig(t, rigOptions{dir: dir}, everyMinute("news"))
	gate := make(chan struct{})
	r.provider.Push(llmtest.Text("never finished").Gated(gate))
	r.clock.Advance(time.Minute)
	deadline := time.Now().Add(waitFor)
	for r.modelCalls() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the turn did not start")
		}
		runtime.Gosched()
	}
	r.crash()
	// The crashed process's turn never completes: a real crash leaves no
	// goroutine behind to finish it while the new process resumes.
	t.Cleanup(func() { close(gate) })

	again := cronRig(t, rigOptions{dir: dir, start: epoch.Add(70 * time.Second), script: []llmtest.Response{llmtest.Text("finished after restart")}}, everyMinute("news"))
	runs := again.waitRuns("news", 1)
	if len(runs) != 1 || runs[0].Status != "ok" || runs[0].Summary != "finished after restart" {
		t.Fatalf("runs = %+v", runs)
	}
	waitIdle(t, again)
	again.clock.AdvanceTo(epoch.Add(119 * time.Second))
	if n := len(again.runs("news")); n != 1 {
		t.Errorf("the instant ran again: %d runs", n)
	}
	if got := again.rec.deliveries(); len(got) != 1 {
		t.Errorf("deliveries = %+v, want the one answer", got)
	}
}

func TestCronMissedRunsPolicy(t *testing.T) {
	dir := t.TempDir()
	r := cronRig(t, rigOptions{dir: dir}, everyMinute("news"))
	r.close()
	// Down for 10 minutes: the latest instant (10:00 after epoch) is within
	// its 1-minute grace: it runs; the nine before are one skipped record.
	again := cronRig(t, rigOptions{dir: dir, start: epoch.Add(10*time.Minute + 20*time.Second)}, everyMinute("news"))
	again.provider.Push(llmtest.Text("caught up"))
	again.clock.Advance(0) // the catch-up timer is due at once
	runs := again.waitRuns("news", 2)
	if len(runs) != 2 || runs[0].Status != "skipped" || !strings.Contains(runs[0].Error, "missed 9 earlier runs") ||
		runs[1].Status != "ok" || runs[1].ScheduledAtMs != epoch.Add(10*time.Minute).UnixMilli() {
		t.Fatalf("runs = %+v", runs)
	}
	again.close()

	// A daily job missed by three hours is beyond its 1 h grace: recorded
	// as skipped with the reason, not run, next run tomorrow.
	daily := heartbeat.JobSpec{ID: "daily", Schedule: heartbeat.Schedule{Kind: heartbeat.ScheduleCron, Expr: "0 9 * * *", TZ: "UTC"},
		Payload: heartbeat.Payload{Kind: heartbeat.PayloadAgentTurn, Message: "Morning report"}}
	dir2 := t.TempDir()
	morning := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	d := cronRig(t, rigOptions{dir: dir2, start: morning}, daily)
	d.close()
	late := cronRig(t, rigOptions{dir: dir2, start: morning.Add(4 * time.Hour)}, daily)
	late.clock.Advance(0)
	runs = late.waitRuns("daily", 1)
	if len(runs) != 1 || runs[0].Status != "skipped" || !strings.Contains(runs[0].Error, "grace") {
		t.Fatalf("daily runs = %+v", runs)
	}
	j, _ := late.cron.Get("daily")
	if j.State.NextRunAtMs != time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC).UnixMilli() || j.State.LastStatus != "skipped" {
		t.Errorf("daily state = %+v", j.State)
	}
	if late.modelCalls() != 0 {
		t.Error("a skipped run called the model")
	}
}

func TestCronMainSystemEventWakesHeartbeat(t *testing.T) {
	job := heartbeat.JobSpec{ID: "remind", Schedule: heartbeat.Schedule{Kind: heartbeat.ScheduleAt, At: "5m"},
		Payload: heartbeat.Payload{Kind: heartbeat.PayloadSystemEvent, Text: "Reminder: stand-up in 10 minutes"}}
	r := cronRig(t, rigOptions{cfg: core.HeartbeatConfig{Every: "1h", Target: "telegram", To: "7"}})
	added, err := r.cron.Add(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	if added.SessionTarget != heartbeat.TargetMain || added.Schedule.At == "5m" {
		t.Fatalf("added = %+v", added)
	}
	r.provider.Push(llmtest.Text("Stand-up in 10 minutes!"))
	r.clock.Advance(5 * time.Minute)
	r.clock.Advance(heartbeat.WakeCoalesce)
	ev := r.nextEvent()
	if ev.Trigger != "cron:remind" || ev.Status != heartbeat.StatusSent {
		t.Fatalf("heartbeat = %+v", ev)
	}
	if got := lastUserText(r.provider.Requests()[0]); !strings.Contains(got, "Reminder: stand-up in 10 minutes") {
		t.Errorf("prompt = %q", got)
	}
	if _, ok := r.cron.Get("remind"); ok {
		t.Error("the one-shot job was not deleted after it succeeded")
	}
	if runs := r.runs("remind"); len(runs) != 1 || runs[0].Status != "ok" {
		t.Errorf("runs = %+v", runs)
	}
}

func TestCronWebhookDelivery(t *testing.T) {
	var mu sync.Mutex
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		mu.Lock()
		bodies = append(bodies, m)
		mu.Unlock()
		if strings.Contains(string(b), "fail me") {
			w.WriteHeader(http.StatusBadGateway)
		}
	}))
	defer srv.Close()
	job := everyMinute("hook")
	job.Delivery = &heartbeat.Delivery{Mode: heartbeat.DeliveryWebhook, To: strings.Replace(srv.URL, "127.0.0.1", "hook.test", 1) + "/cron"}
	r := cronRig(t, rigOptions{}, job)
	r.provider.Push(llmtest.Text("weekly numbers are up"))
	r.clock.Advance(time.Minute)
	runs := r.waitRuns("hook", 1)
	mu.Lock()
	if len(bodies) != 1 || bodies[0]["jobId"] != "hook" || bodies[0]["summary"] != "weekly numbers are up" || bodies[0]["status"] != "ok" {
		t.Errorf("webhook bodies = %+v", bodies)
	}
	mu.Unlock()
	if runs[0].DeliveryStatus != "delivered" || runs[0].Status != "ok" {
		t.Errorf("run = %+v", runs[0])
	}
	waitIdle(t, r)
	r.provider.Push(llmtest.Text("fail me"))
	r.clock.Advance(time.Minute)
	runs = r.waitRuns("hook", 2)
	if runs[1].Status != "error" || runs[1].DeliveryStatus != "not-delivered" || !strings.Contains(runs[1].Error, "webhook: ") || !strings.Contains(runs[1].Error, "502") {
		t.Errorf("failed webhook run = %+v", runs[1])
	}
	if j, _ := r.cron.Get("hook"); j.State.ConsecutiveErrors != 1 || j.State.LastError == "" {
		t.Errorf("state after a failed delivery = %+v", j.State)
	}
}

func TestCronAddUpdateRemoveEmitEvents(t *testing.T) {
	events := make(chan heartbeat.CronEvent, 64)
	r := cronRig(t, rigOptions{cronEvents: events})
	ctx := context.Background()
	if _, err := r.cron.Add(ctx, heartbeat.JobSpec{ID: "bad", Schedule: heartbeat.Schedule{Kind: heartbeat.ScheduleCron, Expr: "61 * * * *"},
		Payload: heartbeat.Payload{Kind: heartbeat.PayloadAgentTurn, Message: "x"}}); err == nil || !strings.Contains(err.Error(), "schedule") {
		t.Errorf("bad expression accepted: %v", err)
	}
	j, err := r.cron.Add(ctx, everyMinute(""))
	if err != nil || j.ID == "" {
		t.Fatalf("add = %+v %v", j, err)
	}
	if ev := <-events; ev.Action != "added" || ev.JobID != j.ID {
		t.Errorf("event = %+v", ev)
	}
	up, err := r.cron.Update(ctx, j.ID, json.RawMessage(`{"enabled":false}`))
	if err != nil || up.IsEnabled() || up.State.NextRunAtMs != 0 {
		t.Fatalf("disable = %+v %v", up, err)
	}
	if ev := <-events; ev.Action != "updated" {
		t.Errorf("event = %+v", ev)
	}
	r.clock.Advance(5 * time.Minute)
	if r.modelCalls() != 0 {
		t.Error("a disabled job ran")
	}
	if ok, err := r.cron.Remove(ctx, j.ID); !ok || err != nil {
		t.Fatalf("remove = %v %v", ok, err)
	}
	if ev := <-events; ev.Action != "removed" {
		t.Errorf("event = %+v", ev)
	}
	if st := r.cron.Status(); st.Jobs != 0 || !st.Enabled {
		t.Errorf("status = %+v", st)
	}
	if _, err := r.cron.Update(ctx, "nope", json.RawMessage(`{}`)); err == nil {
		t.Error("updated a missing job")
	}
}

func TestCronManualRun(t *testing.T) {
	r := cronRig(t, rigOptions{}, everyMinute("news"))
	r.provider.Push(llmtest.Text("forced"))
	id, err := r.cron.Run(context.Background(), "news", "force")
	if err != nil || id == "" {
		t.Fatalf("run = %q %v", id, err)
	}
	runs := r.waitRuns("news", 1)
	if runs[0].ScheduledAtMs != 0 || runs[0].Status != "ok" {
		t.Errorf("manual run = %+v", runs[0])
	}
	if id, _ := r.cron.Run(context.Background(), "news", "due"); id != "" {
		t.Errorf("due mode ran a job that is not due: %q", id)
	}
	if j, _ := r.cron.Get("news"); j.State.NextRunAtMs != epoch.Add(time.Minute).UnixMilli() {
		t.Errorf("a manual run moved the schedule: %+v", j.State)
	}
}

func TestCronConfigJobsSync(t *testing.T) {
	dir := t.TempDir()
	a, b := everyMinute("a"), everyMinute("b")
	r := cronRig(t, rigOptions{dir: dir}, a, b)
	r.close()
	// b leaves the file; a changes its schedule.
	a.Schedule = heartbeat.Schedule{Kind: heartbeat.ScheduleEvery, EveryMs: 3600000, AnchorMs: epoch.UnixMilli()}
	again := cronRig(t, rigOptions{dir: dir, start: epoch.Add(10 * time.Second)}, a)
	if _, ok := again.cron.Get("b"); ok {
		t.Error("a job removed from the configuration is still scheduled")
	}
	j, ok := again.cron.Get("a")
	if !ok || j.State.NextRunAtMs != epoch.Add(time.Hour).UnixMilli() || j.Source != "config" {
		t.Errorf("a = %+v", j)
	}
}
