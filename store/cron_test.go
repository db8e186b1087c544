package store

import (
	"encoding/json"
	"testing"
)

// Jobs and scheduler values survive a reopen of the state directory. (What
// the store promises about them is in the conformance suite,
// store/storetest.)
func TestCronJobsAndSchedulerStateSurviveReopen(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	ctx := t.Context()
	if err := s.PutCronJob(ctx, CronJob{ID: "daily", Spec: json.RawMessage(`{"name":"daily"}`), NextRunAt: 1000, CreatedAt: 5}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutSchedulerValue(ctx, "heartbeat:main", json.RawMessage(`{"a":2}`)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openStore(t, dir)
	got, ok, err := s.CronJob(ctx, "daily")
	if err != nil || !ok || string(got.Spec) != `{"name":"daily"}` || got.CreatedAt != 5 || got.NextRunAt != 1000 {
		t.Errorf("after reopen: %+v, %v, %v", got, ok, err)
	}
	if v, ok, _ := s.SchedulerValue(ctx, "heartbeat:main"); !ok || string(v) != `{"a":2}` {
		t.Errorf("scheduler value after reopen = %s %v", v, ok)
	}
}
