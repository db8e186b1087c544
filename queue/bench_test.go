package queue

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/store"
)

// noopRunner returns at once.
type noopRunner struct{}

func (noopRunner) Run(_ context.Context, t agent.Turn) (*agent.Result, error) {
	return &agent.Result{RunID: t.RunID}, nil
}
func (noopRunner) Steer(core.SessionKey, *core.Inbound) bool     { return false }
func (noopRunner) Abort(core.SessionKey) (<-chan struct{}, bool) { return nil, false }

// starts is an Observer recording when the run of each journal entry
// started (a collect run starts several entries at once).
type starts struct {
	mu sync.Mutex
	at map[int64]time.Time
}

func (s *starts) RunStarted(info RunInfo) {
	now := time.Now()
	s.mu.Lock()
	for _, id := range info.EntryIDs {
		s.at[id] = now
	}
	s.mu.Unlock()
}
func (s *starts) RunEvent(RunInfo, core.AgentEvent)      {}
func (s *starts) RunEnded(RunInfo, *agent.Result, error) {}
func (s *starts) count() int                             { s.mu.Lock(); defer s.mu.Unlock(); return len(s.at) }
func (s *starts) get(id int64) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.at[id]
	return t, ok
}

func newBenchDispatcher(b *testing.B) (*Dispatcher, *starts, func()) {
	b.Helper()
	st, err := store.Open(context.Background(), b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	r := &starts{at: map[int64]time.Time{}}
	cfg := DefaultConfig()
	zero := 0
	cfg.DebounceMs = &zero
	d, err := New(Options{Config: cfg, Lanes: map[string]int{LaneMain: 64}}, Deps{Runner: noopRunner{}, Journal: st, Observers: []Observer{r}})
	if err != nil {
		b.Fatal(err)
	}
	if err := d.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	return d, r, func() {
		d.Stop(context.Background())
		st.Close()
	}
}

func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[min(len(ds)-1, int(float64(len(ds))*p))]
}

// BenchmarkSubmitThroughput submits messages for 10,000 sessions from many
// goroutines with the durable journal on, and a runner that returns at
// once. It reports messages/s and the latency from Submit to the run's
// start.
func BenchmarkSubmitThroughput(b *testing.B) {
	d, r, done := newBenchDispatcher(b)
	defer done()
	var seq atomic.Int64
	submitted := sync.Map{} // entry id → submit time
	b.ReportAllocs()
	b.SetParallelism(32)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n := seq.Add(1)
			id := fmt.Sprintf("m%d", n)
			key := core.SessionKey(fmt.Sprintf("agent:main:bench:direct:%d", n%10000))
			t0 := time.Now()
			rc, err := d.Submit(context.Background(), core.Inbound{
				SessionKey: key, Route: core.Route{Channel: "bench", To: core.ChatID(string(key))}, Body: "hi", MessageID: core.MessageID(id),
			})
			if err != nil {
				b.Error(err)
				return
			}
			submitted.Store(rc.EntryID, t0)
		}
	})
	for r.count() < int(seq.Load()) {
		<-time.After(time.Millisecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	var lat []time.Duration
	submitted.Range(func(k, v any) bool {
		if s, ok := r.get(k.(int64)); ok {
			lat = append(lat, s.Sub(v.(time.Time)))
		}
		return true
	})
	b.ReportMetric(float64(seq.Load())/elapsed.Seconds(), "msgs/s")
	b.ReportMetric(float64(percentile(lat, 0.50).Microseconds()), "p50-µs")
	b.ReportMetric(float64(percentile(lat, 0.99).Microseconds()), "p99-µs")
}

// BenchmarkSubmitLatencyAt5k submits at a steady 5,000 messages/s across
// 10,000 sessions and reports Submit's own latency (journal write
// included): the time a bridge waits before it may ack the platform.
func BenchmarkSubmitLatencyAt5k(b *testing.B) {
	d, _, done := newBenchDispatcher(b)
	defer done()
	const rate = 5000
	lat := make([]time.Duration, b.N)
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Second / rate)
	defer tick.Stop()
	b.ResetTimer()
	for i := range b.N {
		<-tick.C
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := core.SessionKey(fmt.Sprintf("agent:main:bench:direct:%d", i%10000))
			t0 := time.Now()
			if _, err := d.Submit(context.Background(), core.Inbound{
				SessionKey: key, Route: core.Route{Channel: "bench", To: core.ChatID(string(key))}, Body: "hi", MessageID: core.MessageID(fmt.Sprintf("m%d", i)),
			}); err != nil {
				b.Error(err)
			}
			lat[i] = time.Since(t0)
		}()
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(percentile(lat, 0.50).Microseconds()), "p50-µs")
	b.ReportMetric(float64(percentile(lat, 0.99).Microseconds()), "p99-µs")
}

// BenchmarkIdleSessionFootprint answers one message in each of many
// sessions, then measures what the idle sessions still hold: heap bytes
// and goroutines per session (both should be zero: idle sessions are
// forgotten).
func BenchmarkIdleSessionFootprint(b *testing.B) {
	d, r, done := newBenchDispatcher(b)
	defer done()
	const sessions = 100_000
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	goroutines := runtime.NumGoroutine()
	b.ResetTimer()
	for i := range sessions {
		key := core.SessionKey(fmt.Sprintf("agent:main:bench:direct:%d", i))
		if _, err := d.Submit(context.Background(), core.Inbound{SessionKey: key, Route: core.Route{Channel: "bench", To: core.ChatID(string(key))}, Body: "hi"}); err != nil {
			b.Fatal(err)
		}
	}
	for r.count() < sessions || d.Stats().Sessions > 0 || d.Stats().Active > 0 {
		<-time.After(time.Millisecond)
	}
	b.StopTimer()
	r.mu.Lock()
	r.at = map[int64]time.Time{} // the benchmark's own record is not the dispatcher's
	r.mu.Unlock()
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/sessions, "heap-B/idle-session")
	b.ReportMetric(float64(runtime.NumGoroutine()-goroutines)/sessions, "goroutines/idle-session")
}
