package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboardhq/switchboard/cluster"
	"github.com/switchboardhq/switchboard/internal/pgtest"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// openStores opens n handles (separate pools, as n instances have) on one
// fresh database.
func openStores(t *testing.T, n int) []*postgres.Store {
	t.Helper()
	url := pgtest.Database(t)
	var out []*postgres.Store
	for range n {
		s, err := postgres.Open(t.Context(), url, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		out = append(out, s)
	}
	return out
}

// work records which members run the guarded work, and any moment two
// did at once.
type work struct {
	mu       sync.Mutex
	running  map[string]bool
	overlaps []string
	acquired map[string]int
	changed  chan struct{}
}

func newWork() *work {
	return &work{running: map[string]bool{}, acquired: map[string]int{}, changed: make(chan struct{}, 100)}
}

type holder struct {
	w  *work
	id string
}

func (h holder) Acquired(l store.Lease) {
	h.w.mu.Lock()
	for other := range h.w.running {
		h.w.overlaps = append(h.w.overlaps, fmt.Sprintf("%s started at fence %d while %s ran", h.id, l.Fence, other))
	}
	h.w.running[h.id] = true
	h.w.acquired[h.id]++
	h.w.mu.Unlock()
	h.w.changed <- struct{}{}
}

func (h holder) Lost(context.Context) {
	h.w.mu.Lock()
	delete(h.w.running, h.id)
	h.w.mu.Unlock()
	h.w.changed <- struct{}{}
}

// waitRunner waits until exactly one member runs the work and returns it.
func (w *work) waitRunner(t *testing.T, not string) string {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		w.mu.Lock()
		var ids []string
		for id := range w.running {
			ids = append(ids, id)
		}
		w.mu.Unlock()
		if len(ids) == 1 && ids[0] != not {
			return ids[0]
		}
		select {
		case <-w.changed:
		case <-deadline:
			t.Fatalf("no single runner other than %q after 20s: %v", not, ids)
		}
	}
}

// waitNoRunner waits until no member runs the work.
func (w *work) waitNoRunner(t *testing.T) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		w.mu.Lock()
		n := len(w.running)
		w.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-w.changed:
		case <-deadline:
			t.Fatalf("%d members still run the work after 20s", n)
		}
	}
}

func (w *work) checkNoOverlap(t *testing.T) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.overlaps) > 0 {
		t.Fatalf("two members ran the work at once: %v", w.overlaps)
	}
}

// startMember runs a member wanting lease name until the test ends.
func startMember(t *testing.T, s cluster.Store, name string, w *work, ttl time.Duration) *cluster.Member {
	t.Helper()
	m := cluster.New(cluster.Options{Store: s, Name: "node", TTL: ttl, Interval: 20 * time.Millisecond})
	m.Want(name, holder{w: w, id: m.ID()})
	if err := m.Register(t.Context()); err != nil {
		t.Fatal(err)
	}
	go m.Run(context.Background())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := m.Drain(ctx); err != nil {
			t.Error(err)
		}
	})
	return m
}

func TestExactlyOneOfThreeMembersHoldsEachConnection(t *testing.T) {
	stores := openStores(t, 3)
	var works []*work
	for c := range 4 {
		w := newWork()
		works = append(works, w)
		for _, s := range stores {
			startMember(t, s, fmt.Sprintf("conn:chan-%d/default", c), w, time.Minute)
		}
	}
	for c, w := range works {
		w.waitRunner(t, "")
		w.checkNoOverlap(t)
		leases, err := stores[0].ListLeases(t.Context(), fmt.Sprintf("conn:chan-%d/", c))
		if err != nil || len(leases) != 1 || leases[0].Fence != 1 {
			t.Fatalf("lease %d: %+v, %v; want one holding at fence 1", c, leases, err)
		}
		w.mu.Lock()
		if !w.running[leases[0].Owner] || len(w.acquired) != 1 {
			t.Errorf("lease %d owned by %s, work run by %v", c, leases[0].Owner, w.acquired)
		}
		w.mu.Unlock()
	}
	instances, err := stores[1].ListInstances(t.Context())
	if err != nil || len(instances) != 12 {
		t.Fatalf("registry: %d instances, %v; want the 12 members", len(instances), err)
	}
}

func TestDrainHandsTheLeaseOverWithoutWaitingForExpiry(t *testing.T) {
	stores := openStores(t, 2)
	w := newWork()
	const name = "conn:chan-a/default"
	a := startMember(t, stores[0], name, w, time.Hour)
	if got := w.waitRunner(t, ""); got != a.ID() {
		t.Fatalf("runner %s, want the first member %s", got, a.ID())
	}
	b := startMember(t, stores[1], name, w, time.Hour)
	if err := a.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := w.waitRunner(t, a.ID()); got != b.ID() {
		t.Fatalf("after drain the runner is %s, want %s", got, b.ID())
	}
	w.checkNoOverlap(t)
	if l := b.Leases(); len(l) != 1 || l[0].Fence != 2 {
		t.Fatalf("b holds %+v; want the lease at fence 2", l)
	}
	instances, _ := stores[1].ListInstances(t.Context())
	for _, in := range instances {
		if (in.ID == a.ID()) != (in.StoppedAt != 0) {
			t.Errorf("instance %s stoppedAt %d", in.ID, in.StoppedAt)
		}
	}
}

// flaky fails every call while down is set, as a database behind a
// partition does.
type flaky struct {
	cluster.Store
	down atomic.Bool
}

var errPartition = errors.New("connection refused")

func (f *flaky) RenewLease(ctx context.Context, l store.Lease, ttl time.Duration) (store.Lease, bool, error) {
	if f.down.Load() {
		return store.Lease{}, false, errPartition
	}
	return f.Store.RenewLease(ctx, l, ttl)
}

func (f *flaky) AcquireLease(ctx context.Context, name, owner string, ttl time.Duration) (store.Lease, bool, error) {
	if f.down.Load() {
		return store.Lease{}, false, errPartition
	}
	return f.Store.AcquireLease(ctx, name, owner, ttl)
}

func (f *flaky) PutInstance(ctx context.Context, in store.Instance) (store.Instance, error) {
	if f.down.Load() {
		return store.Instance{}, errPartition
	}
	return f.Store.PutInstance(ctx, in)
}

func TestAPartitionedMemberStopsBeforeItsLeaseCanBeTaken(t *testing.T) {
	stores := openStores(t, 2)
	w := newWork()
	const name = "conn:chan-a/default"
	const ttl = 900 * time.Millisecond
	fa := &flaky{Store: stores[0]}
	a := startMember(t, fa, name, w, ttl)
	w.waitRunner(t, "")
	b := startMember(t, stores[1], name, w, ttl)
	fa.down.Store(true)
	if got := w.waitRunner(t, a.ID()); got != b.ID() {
		t.Fatalf("runner %s, want %s", got, b.ID())
	}
	w.checkNoOverlap(t)
	// Back from the partition, a finds the lease taken and stays out.
	fa.down.Store(false)
	l, ok, err := stores[0].AcquireLease(t.Context(), name, a.ID(), ttl)
	if err != nil || ok || l.Owner != b.ID() {
		t.Fatalf("a's acquire after the partition: %+v %v %v; want b's lease", l, ok, err)
	}
}

func TestATakenOverLeaseStopsTheWork(t *testing.T) {
	stores := openStores(t, 2)
	w := newWork()
	const name = "conn:chan-a/default"
	a := startMember(t, stores[0], name, w, time.Hour)
	w.waitRunner(t, "")
	held := a.Leases()
	if len(held) != 1 {
		t.Fatalf("a holds %+v", held)
	}
	// An operator (or an expiry a paused process did not see) hands the
	// lease to someone else: a's next renewal finds out and stops.
	if err := stores[1].ReleaseLease(t.Context(), held[0]); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := stores[1].AcquireLease(t.Context(), name, "someone-else", time.Hour); !ok || err != nil {
		t.Fatalf("take-over: %v %v", ok, err)
	}
	w.waitNoRunner(t)
	if len(a.Leases()) != 0 {
		t.Fatalf("a still lists %+v", a.Leases())
	}
}

func TestUnwantStopsTheWorkAndReleasesAtOnce(t *testing.T) {
	stores := openStores(t, 2)
	w := newWork()
	const name = "conn:chan-a/default"
	a := startMember(t, stores[0], name, w, time.Hour)
	w.waitRunner(t, "")
	b := startMember(t, stores[1], name, w, time.Hour)
	a.Unwant(t.Context(), name)
	if got := w.waitRunner(t, a.ID()); got != b.ID() {
		t.Fatalf("after Unwant the runner is %s, want %s", got, b.ID())
	}
	w.checkNoOverlap(t)
	if len(a.Leases()) != 0 {
		t.Fatalf("a still holds %+v", a.Leases())
	}
	a.Unwant(t.Context(), name) // again: nothing to do
}
