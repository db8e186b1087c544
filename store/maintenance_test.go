package store

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// jobClock is a maintenance job's fake time: Now reads a time the test
// sets, and After hands each wait to the test instead of starting a timer,
// so a test fires the next pass itself and never sleeps.
type jobClock struct {
	mu    sync.Mutex
	now   time.Time
	waits chan jobWait
}

// jobWait is one After call: the job waits for d, until the test sends on
// fire.
type jobWait struct {
	d    time.Duration
	fire chan time.Time
}

func newJobClock(now time.Time) *jobClock {
	// Buffered so the job never blocks on a wait the test does not take
	// (the one it arms just before Stop).
	return &jobClock{now: now, waits: make(chan jobWait, 16)}
}

func (c *jobClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *jobClock) Set(now time.Time) {
	c.mu.Lock()
	c.now = now
	c.mu.Unlock()
}

func (c *jobClock) After(d time.Duration) <-chan time.Time {
	w := jobWait{d: d, fire: make(chan time.Time, 1)}
	c.waits <- w
	return w.fire
}

// nextWait returns the job's next wait, which it arms only once the pass
// before it has finished.
func (c *jobClock) nextWait(t *testing.T) jobWait {
	t.Helper()
	select {
	case w := <-c.waits:
		return w
	case <-time.After(10 * time.Second):
		t.Fatal("the maintenance job did not finish a pass within 10s")
		return jobWait{}
	}
}

// seeded names the rows seed wrote.
type seeded struct {
	done, dropped, pending int64  // journal entries
	run                    string // the done entry's delivered outcome
	ledger                 string // an outbound ledger key
}

// seed writes, with the store's clock at at, a done entry with a delivered
// outcome, a dropped entry, a pending (accepted) entry and a ledger row.
// Each entry has a dedupe key "<tag>-<state>".
func seed(t *testing.T, s *SQLite, setClock func(int64), at time.Time, tag string) seeded {
	t.Helper()
	setClock(at.UnixMilli())
	acc := ids(apply(t, s, JournalBatch{Append: []JournalEntry{
		entry(sessA, tag+"-done", tag), entry(sessA, tag+"-dropped", tag), entry(sessB, tag+"-pending", tag),
	}}))
	sd := seeded{done: acc[0], dropped: acc[1], pending: acc[2], run: "r-" + tag, ledger: "r-" + tag + ":0:0"}
	apply(t, s, JournalBatch{
		Complete:  []Completion{{IDs: acc[:1], Outcome: outcome(sd.run, sessA, at.UnixMilli())}},
		Dropped:   []DropMark{{IDs: acc[1:2], Note: "drop:new"}},
		Delivered: []string{sd.run},
	})
	if err := s.Record(t.Context(), sd.ledger, "m-"+tag); err != nil {
		t.Fatal(err)
	}
	return sd
}

// left lists which of sd's rows are still stored, in the order done,
// dropped, pending, outcome, ledger.
func left(t *testing.T, s *SQLite, sd seeded) string {
	t.Helper()
	ctx := t.Context()
	es, err := s.JournalEntries(ctx, sd.done, sd.dropped, sd.pending)
	if err != nil {
		t.Fatal(err)
	}
	have := map[int64]bool{}
	for _, e := range es {
		have[e.ID] = true
	}
	var out []string
	for _, r := range []struct {
		id   int64
		name string
	}{{sd.done, "done"}, {sd.dropped, "dropped"}, {sd.pending, "pending"}} {
		if have[r.id] {
			out = append(out, r.name)
		}
	}
	var n int
	if err := s.reader.QueryRowContext(ctx, `SELECT count(*) FROM run_outcomes WHERE run_id = ?`, sd.run).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n > 0 {
		out = append(out, "outcome")
	}
	if _, ok, err := s.Sent(ctx, sd.ledger); err != nil {
		t.Fatal(err)
	} else if ok {
		out = append(out, "ledger")
	}
	return strings.Join(out, " ")
}

func checkLeft(t *testing.T, s *SQLite, sd seeded, name, want string) {
	t.Helper()
	if got := left(t, s, sd); got != want {
		t.Errorf("%s rows left: %q, want %q", name, got, want)
	}
}

var maintenanceNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// TestMaintenancePrune runs one pass with the default retentions: a day
// for the journal, a week for the ledger.
func TestMaintenancePrune(t *testing.T) {
	ctx := t.Context()
	s := openStore(t, t.TempDir())
	setClock := fixedClock(s, 0)
	old := seed(t, s, setClock, maintenanceNow.Add(-8*24*time.Hour), "old")
	mid := seed(t, s, setClock, maintenanceNow.Add(-48*time.Hour), "mid")
	recent := seed(t, s, setClock, maintenanceNow.Add(-time.Hour), "recent")

	m := NewMaintenance(s, MaintenanceOptions{Now: func() time.Time { return maintenanceNow }})
	res, err := m.Prune(ctx)
	// old and mid: two entries and an outcome each; old's ledger row.
	if want := (PruneResult{Journal: 6, Ledger: 1}); err != nil || res != want {
		t.Fatalf("Prune = %+v, %v; want %+v", res, err, want)
	}
	checkLeft(t, s, old, "old", "pending")
	checkLeft(t, s, mid, "mid", "pending ledger")
	checkLeft(t, s, recent, "recent", "done dropped pending outcome ledger")

	// A pruned entry's dedupe key is free again; a kept entry's is not.
	acc := apply(t, s, JournalBatch{Append: []JournalEntry{
		entry(sessA, "old-done", "again"), entry(sessA, "mid-dropped", "again"),
		entry(sessA, "recent-done", "again"), entry(sessB, "old-pending", "again"),
	}})
	for i, wantDup := range []bool{false, false, true, true} {
		if acc[i].Duplicate != wantDup {
			t.Errorf("append %d after prune: %+v, want duplicate %v", i, acc[i], wantDup)
		}
	}

	if res, err := m.Prune(ctx); err != nil || res != (PruneResult{}) {
		t.Errorf("second Prune = %+v, %v; want nothing deleted", res, err)
	}
}

// TestMaintenanceRunsPeriodically runs the first pass at Start and the
// next when the injected clock's wait fires, with cutoffs from its Now.
func TestMaintenanceRunsPeriodically(t *testing.T) {
	s := openStore(t, t.TempDir())
	setClock := fixedClock(s, 0)
	old := seed(t, s, setClock, maintenanceNow.Add(-25*time.Hour), "old")
	// Kept by the first pass, due an hour later.
	edge := seed(t, s, setClock, maintenanceNow.Add(-23*time.Hour-30*time.Minute), "edge")
	week := seed(t, s, setClock, maintenanceNow.Add(-7*24*time.Hour+30*time.Minute), "week")

	clock := newJobClock(maintenanceNow)
	m := NewMaintenance(s, MaintenanceOptions{Now: clock.Now, After: clock.After})
	if err := m.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Stop(context.Background()) }) // a second Stop is harmless

	w := clock.nextWait(t)
	if w.d != time.Hour {
		t.Errorf("wait between passes = %v, want the default 1h", w.d)
	}
	checkLeft(t, s, old, "old after the first pass", "pending ledger")
	checkLeft(t, s, edge, "edge after the first pass", "done dropped pending outcome ledger")
	checkLeft(t, s, week, "week after the first pass", "pending ledger")

	clock.Set(maintenanceNow.Add(time.Hour))
	w.fire <- clock.Now()
	clock.nextWait(t)
	checkLeft(t, s, edge, "edge after the second pass", "pending ledger")
	checkLeft(t, s, week, "week after the second pass", "pending")

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := m.Stop(ctx); err != nil {
		t.Errorf("Stop: %v", err)
	}
}

// flakyPruner fails its first journal prunes, as a full disk or a locked
// database would, and passes everything else to the real store.
type flakyPruner struct {
	Pruner
	fails atomic.Int32 // journal prunes still to fail
}

var errDiskFull = errors.New("disk I/O error: no space left on device")

func (f *flakyPruner) PruneJournal(ctx context.Context, before int64) (int64, error) {
	if f.fails.Add(-1) >= 0 {
		return 0, errDiskFull
	}
	return f.Pruner.PruneJournal(ctx, before)
}

// TestMaintenanceFailedPruneLogsAndGoesOn: a failing journal prune is
// logged as a warning, the ledger is still pruned, and the next pass runs
// and prunes the journal.
func TestMaintenanceFailedPruneLogsAndGoesOn(t *testing.T) {
	s := openStore(t, t.TempDir())
	setClock := fixedClock(s, 0)
	old := seed(t, s, setClock, maintenanceNow.Add(-8*24*time.Hour), "old")

	flaky := &flakyPruner{Pruner: s}
	flaky.fails.Store(1)
	// The job writes the log before it arms its next wait and the test
	// reads it after taking that wait, so a plain buffer is race-free.
	var logs bytes.Buffer
	clock := newJobClock(maintenanceNow)
	m := NewMaintenance(flaky, MaintenanceOptions{
		Now: clock.Now, After: clock.After,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err := m.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer m.Stop(context.Background())

	w := clock.nextWait(t)
	got := logs.String()
	if strings.Count(got, "level=WARN") != 1 || !strings.Contains(got, "prune failed") || !strings.Contains(got, "no space left") {
		t.Errorf("log after the failed pass:\n%s\nwant one warning naming the error", got)
	}
	checkLeft(t, s, old, "old after the failed pass", "done dropped pending outcome")

	w.fire <- clock.Now()
	clock.nextWait(t)
	checkLeft(t, s, old, "old after the next pass", "pending")
	if got := logs.String(); strings.Count(got, "level=WARN") != 1 {
		t.Errorf("log after the next pass:\n%s\nwant still one warning", got)
	}
}

// blockingPruner's journal prune runs until its ctx ends, like a prune of a
// large backlog at shutdown.
type blockingPruner struct {
	entered chan struct{}
}

func (b *blockingPruner) PruneJournal(ctx context.Context, _ int64) (int64, error) {
	close(b.entered)
	<-ctx.Done()
	return 3, ctx.Err()
}

func (b *blockingPruner) PruneLedger(ctx context.Context, _ int64) (int64, error) {
	return 0, ctx.Err()
}

// TestMaintenanceStop: Stop cancels a prune in flight and returns once the
// goroutine has ended; a stop is not logged as a failure, and the job
// cannot be started again.
func TestMaintenanceStop(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()

	bp := &blockingPruner{entered: make(chan struct{})}
	var logs bytes.Buffer
	opts := MaintenanceOptions{
		// Never fires: the test ends the job during its first pass.
		After:  func(time.Duration) <-chan time.Time { return nil },
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	if err := NewMaintenance(bp, opts).Stop(ctx); err != nil {
		t.Errorf("Stop before Start: %v", err)
	}
	m := NewMaintenance(bp, opts)
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ctx); err == nil {
		t.Error("a second Start succeeded")
	}
	select {
	case <-bp.entered:
	case <-ctx.Done():
		t.Fatal("the first pass did not start")
	}
	if err := m.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	// Stop has waited for the goroutine, so reading the log is race-free.
	if logs.Len() != 0 {
		t.Errorf("a stop was logged as a failure:\n%s", logs.String())
	}
	if err := m.Stop(ctx); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if err := m.Start(ctx); err == nil {
		t.Error("Start after Stop succeeded")
	}
}

// TestMaintenanceStopDeadline: a Stop whose ctx ends first returns its
// cause; the goroutine still ends when the prune does.
func TestMaintenanceStopDeadline(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	sp := stuckPruner{entered: make(chan struct{}), release: make(chan struct{})}
	m := NewMaintenance(sp, MaintenanceOptions{})
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sp.entered:
	case <-ctx.Done():
		t.Fatal("the first pass did not start")
	}
	expired, expire := context.WithCancelCause(ctx)
	errSlow := errors.New("shutdown deadline")
	expire(errSlow)
	if err := m.Stop(expired); !errors.Is(err, errSlow) {
		t.Errorf("Stop with an ended ctx = %v, want %v", err, errSlow)
	}
	close(sp.release)
	if err := m.Stop(ctx); err != nil {
		t.Errorf("Stop after the prune returned: %v", err)
	}
}

// stuckPruner's journal prune ignores its ctx until released, like a
// driver that cannot interrupt a statement.
type stuckPruner struct {
	entered, release chan struct{}
}

func (p stuckPruner) PruneJournal(context.Context, int64) (int64, error) {
	close(p.entered)
	<-p.release
	return 0, nil
}

func (p stuckPruner) PruneLedger(context.Context, int64) (int64, error) { return 0, nil }
