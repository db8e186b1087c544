package heartbeat

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/queue"
	"github.com/switchboardhq/switchboard/queue/queuetest"
	"github.com/switchboardhq/switchboard/store"
)

// benchDispatcher queues system events for real and refuses turns: the
// benchmarks schedule systemEvent jobs only.
type benchDispatcher struct{ events queue.SystemEvents }

func (d *benchDispatcher) SubmitWith(context.Context, core.Inbound, queue.SubmitOptions) (queue.Receipt, error) {
	return queue.Receipt{}, errors.New("benchmark: no turns")
}

func (d *benchDispatcher) EnqueueSystemEvent(key core.SessionKey, text string, opts queue.EventOptions) bool {
	d.events.Drain(key) // keep the queue from filling
	return d.events.Enqueue(key, text, opts)
}

// benchCron starts a cron service with n every-hour jobs spread over the
// hour, in a real store.
func benchCron(b *testing.B, n int) (*Cron, *queuetest.Clock, func()) {
	b.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	start := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	clock := queuetest.NewClock(start)
	cfg := DefaultCronConfig()
	for i := range n {
		cfg.Jobs = append(cfg.Jobs, JobSpec{ID: fmt.Sprintf("job-%05d", i),
			Schedule: Schedule{Kind: ScheduleEvery, EveryMs: 3600000, AnchorMs: start.UnixMilli() + int64(i)*3600000/int64(n) + 1},
			Payload:  Payload{Kind: PayloadSystemEvent, Text: "tick"}})
	}
	c, err := NewCron(CronOptions{Config: cfg, Clock: clock}, CronDeps{Store: st, Dispatcher: &benchDispatcher{}})
	if err != nil {
		b.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	return c, clock, func() {
		c.Stop(ctx)
		st.Close()
	}
}

// BenchmarkCronIdleTick10k is the cost of one scheduler pass over 10,000
// jobs when none is due: the scan for due jobs and re-arming the timer.
func BenchmarkCronIdleTick10k(b *testing.B) {
	c, _, done := benchCron(b, 10000)
	defer done()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		c.tick()
	}
}

// BenchmarkCronDueTick10k runs the scheduler through an hour of 10,000
// every-hour jobs, one due job per tick on average: each tick claims the
// run in SQLite (next run time and run row in one transaction), queues
// the system event and records the finish.
func BenchmarkCronDueTick10k(b *testing.B) {
	c, clock, done := benchCron(b, 10000)
	defer done()
	step := time.Hour / 10000
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		clock.Advance(step)
	}
	b.StopTimer()
	st := c.Status()
	if st.Jobs != 10000 {
		b.Fatalf("jobs = %d", st.Jobs)
	}
}

// BenchmarkCronMemory10k reports the heap 10,000 loaded jobs hold.
func BenchmarkCronMemory10k(b *testing.B) {
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		c, _, done := benchCron(b, 10000)
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/10000, "heap-B/job")
		runtime.KeepAlive(c)
		done()
	}
}
