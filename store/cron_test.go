package store

import (
	"encoding/json"
	"testing"
)

func TestCronJobsRoundTripAndSurviveReopen(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	ctx := t.Context()
	job := CronJob{ID: "daily", Spec: json.RawMessage(`{"name":"daily"}`), NextRunAt: 1000, CreatedAt: 5}
	if err := s.PutCronJob(ctx, job); err != nil {
		t.Fatal(err)
	}
	job.Spec = json.RawMessage(`{"name":"daily2"}`)
	job.CreatedAt = 99 // kept from the first put
	if err := s.PutCronJob(ctx, job); err != nil {
		t.Fatal(err)
	}
	if err := s.PutCronJob(ctx, CronJob{ID: "bad", Spec: json.RawMessage(`{`)}); err == nil {
		t.Error("invalid spec JSON accepted")
	}
	s.Close()
	s = openStore(t, dir)
	got, ok, err := s.CronJob(ctx, "daily")
	if err != nil || !ok {
		t.Fatalf("CronJob = %v %v", ok, err)
	}
	if string(got.Spec) != `{"name":"daily2"}` || got.CreatedAt != 5 || got.NextRunAt != 1000 || got.State != nil {
		t.Errorf("after reopen: %+v", got)
	}
	if deleted, _ := s.DeleteCronJob(ctx, "daily"); !deleted {
		t.Error("delete reported no job")
	}
	if jobs, _ := s.CronJobs(ctx); len(jobs) != 0 {
		t.Errorf("jobs after delete: %+v", jobs)
	}
}

func TestClaimCronRunOncePerInstant(t *testing.T) {
	s := openStore(t, t.TempDir())
	ctx := t.Context()
	if err := s.PutCronJob(ctx, CronJob{ID: "j", Spec: json.RawMessage(`{}`), NextRunAt: 60000}); err != nil {
		t.Fatal(err)
	}
	claim := CronClaim{JobID: "j", ExpectNextRunAt: 60000, NextRunAt: 120000, State: json.RawMessage(`{"n":1}`),
		Run: CronRun{RunID: "r1", ScheduledAt: 60000, Status: "running"}}
	if ok, err := s.ClaimCronRun(ctx, claim); !ok || err != nil {
		t.Fatalf("first claim = %v %v", ok, err)
	}
	// The same claim again (a second process, a restart that read the old
	// next run time): refused, nothing changes.
	claim.Run.RunID = "r2"
	if ok, err := s.ClaimCronRun(ctx, claim); ok || err != nil {
		t.Fatalf("second claim = %v %v, want refused", ok, err)
	}
	// Even with the right next run time, an instant already run is refused
	// and the job is left as it was.
	claim.ExpectNextRunAt, claim.NextRunAt = 120000, 180000
	claim.Run.ScheduledAt = 60000
	if ok, _ := s.ClaimCronRun(ctx, claim); ok {
		t.Fatal("a second run for the same instant was claimed")
	}
	j, _, _ := s.CronJob(ctx, "j")
	if j.NextRunAt != 120000 || string(j.State) != `{"n":1}` {
		t.Errorf("job after refused claims: %+v", j)
	}
	runs, _ := s.UnfinishedCronRuns(ctx)
	if len(runs) != 1 || runs[0].RunID != "r1" || runs[0].Status != "running" {
		t.Fatalf("unfinished = %+v", runs)
	}
	// A claim without a run only advances the schedule.
	if ok, _ := s.ClaimCronRun(ctx, CronClaim{JobID: "j", ExpectNextRunAt: 120000, NextRunAt: 180000}); !ok {
		t.Error("advance without a run refused")
	}
	if ok, _ := s.ClaimCronRun(ctx, CronClaim{JobID: "gone", ExpectNextRunAt: 0, NextRunAt: 1}); ok {
		t.Error("claimed a missing job")
	}
}

func TestFinishCronRun(t *testing.T) {
	s := openStore(t, t.TempDir())
	ctx := t.Context()
	for _, id := range []string{"keep", "once"} {
		if err := s.PutCronJob(ctx, CronJob{ID: id, Spec: json.RawMessage(`{}`), NextRunAt: 10}); err != nil {
			t.Fatal(err)
		}
		if ok, err := s.ClaimCronRun(ctx, CronClaim{JobID: id, ExpectNextRunAt: 10, NextRunAt: 20, Run: CronRun{RunID: id + "-r", ScheduledAt: 10, StartedAt: 11, Status: "running"}}); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	if err := s.FinishCronRun(ctx, CronFinish{RunID: "keep-r", JobID: "keep", FinishedAt: 15, Status: "error", Detail: json.RawMessage(`{"error":"boom"}`), State: json.RawMessage(`{"consecutiveErrors":1}`)}); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishCronRun(ctx, CronFinish{RunID: "once-r", JobID: "once", Status: "ok", DeleteJob: true}); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.CronJob(ctx, "once"); ok {
		t.Error("one-shot job not deleted")
	}
	j, _, _ := s.CronJob(ctx, "keep")
	if string(j.State) != `{"consecutiveErrors":1}` {
		t.Errorf("state = %s", j.State)
	}
	runs, err := s.CronRuns(ctx, "keep", 10)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs = %+v %v", runs, err)
	}
	if r := runs[0]; r.Status != "error" || r.FinishedAt != 15 || string(r.Detail) != `{"error":"boom"}` || r.StartedAt != 11 {
		t.Errorf("run = %+v", r)
	}
	if all, _ := s.CronRuns(ctx, "", 10); len(all) != 2 {
		t.Errorf("all runs = %d, want 2 (a deleted job's runs stay)", len(all))
	}
	if un, _ := s.UnfinishedCronRuns(ctx); len(un) != 0 {
		t.Errorf("unfinished = %+v", un)
	}
}

func TestSchedulerState(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	ctx := t.Context()
	if _, ok, err := s.SchedulerValue(ctx, "heartbeat:main"); ok || err != nil {
		t.Fatalf("fresh = %v %v", ok, err)
	}
	if err := s.PutSchedulerValue(ctx, "heartbeat:main", json.RawMessage(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.PutSchedulerValue(ctx, "heartbeat:main", json.RawMessage(`{"a":2}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.PutSchedulerValue(ctx, "x", json.RawMessage(`nope`)); err == nil {
		t.Error("invalid JSON accepted")
	}
	s.Close()
	s = openStore(t, dir)
	if v, ok, _ := s.SchedulerValue(ctx, "heartbeat:main"); !ok || string(v) != `{"a":2}` {
		t.Errorf("after reopen = %s %v", v, ok)
	}
}
