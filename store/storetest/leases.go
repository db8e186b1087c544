package storetest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/store"
)

// LeaseStore is what the lease suite needs: leases, and a journal to
// fence writes of.
type LeaseStore interface {
	store.Leases
	store.Journal
}

// Leases asserts store.Leases: a free lease goes to the first owner at
// fence 1 and is refused to others, who learn the holder; the holder
// acquiring again extends it and keeps the fence; an expired or released
// lease goes to the next owner with the fence one higher; a renew by a
// holder that was taken over fails, while an expiry nobody took over is
// forgiven; releasing a lost lease does nothing; a journal batch fenced on
// a lease applies only while the lease is at that fence and otherwise
// applies nothing and wraps ErrFenced; of many owners racing for a lease
// exactly one wins; ListLeases filters by literal prefix; bad names, owners
// and ttls are refused. open's store takes its time from now.
func Leases(t *testing.T, open func(t *testing.T, now func() time.Time) LeaseStore) {
	t.Run("lifecycle", func(t *testing.T) { leasesLifecycle(t, open) })
	t.Run("fenced journal", func(t *testing.T) { leasesFencedJournal(t, open) })
	t.Run("race", func(t *testing.T) { leasesRace(t, open(t, nil)) })
	t.Run("list and validation", func(t *testing.T) { leasesListAndValidation(t, open(t, nil)) })
}

func acquire(t *testing.T, s store.Leases, name, owner string, ttl time.Duration) (store.Lease, bool) {
	t.Helper()
	l, ok, err := s.AcquireLease(t.Context(), name, owner, ttl)
	if err != nil {
		t.Fatalf("AcquireLease(%s, %s): %v", name, owner, err)
	}
	return l, ok
}

func wantLease(t *testing.T, got store.Lease, ok, wantOK bool, owner string, fence, acquired, expires int64) {
	t.Helper()
	if ok != wantOK || got.Owner != owner || got.Fence != fence || got.AcquiredAt != acquired || got.ExpiresAt != expires {
		t.Fatalf("lease = %+v ok=%v; want owner %q fence %d acquired %d expires %d ok=%v", got, ok, owner, fence, acquired, expires, wantOK)
	}
}

func leasesLifecycle(t *testing.T, open func(t *testing.T, now func() time.Time) LeaseStore) {
	ctx := t.Context()
	clock := &Clock{}
	clock.Set(10_000)
	s := open(t, clock.Now)
	const name = "session:agent:main:chan-a:direct:111"

	l, ok := acquire(t, s, name, "inst-a", 5*time.Second)
	wantLease(t, l, ok, true, "inst-a", 1, 10_000, 15_000)
	if !l.Held(14_999) || l.Held(15_000) {
		t.Errorf("Held around expiry 15000: %v %v", l.Held(14_999), l.Held(15_000))
	}
	got, ok := acquire(t, s, name, "inst-b", 5*time.Second)
	wantLease(t, got, ok, false, "inst-a", 1, 10_000, 15_000)

	clock.Set(12_000)
	l, ok = acquire(t, s, name, "inst-a", 5*time.Second) // the holder again: extended, same fence
	wantLease(t, l, ok, true, "inst-a", 1, 10_000, 17_000)

	clock.Set(13_000)
	l, ok, err := s.RenewLease(ctx, l, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	wantLease(t, l, ok, true, "inst-a", 1, 10_000, 23_000)

	// Expired and not taken: the holder's renew is forgiven.
	clock.Set(30_000)
	l, ok, err = s.RenewLease(ctx, l, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	wantLease(t, l, ok, true, "inst-a", 1, 10_000, 31_000)

	// Expired and taken: fence 2; the old holder's renew and release fail
	// quietly and leave the new holder alone.
	clock.Set(31_000)
	b, ok := acquire(t, s, name, "inst-b", 5*time.Second)
	wantLease(t, b, ok, true, "inst-b", 2, 31_000, 36_000)
	got, ok, err = s.RenewLease(ctx, l, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	wantLease(t, got, ok, false, "inst-b", 2, 31_000, 36_000)
	if err := s.ReleaseLease(ctx, l); err != nil {
		t.Fatalf("releasing a lost lease: %v", err)
	}
	got, ok = acquire(t, s, name, "inst-c", time.Second)
	wantLease(t, got, ok, false, "inst-b", 2, 31_000, 36_000)

	// Released: free at once, and taken at fence 3 even by its last owner.
	clock.Set(32_000)
	if err := s.ReleaseLease(ctx, b); err != nil {
		t.Fatal(err)
	}
	list, err := s.ListLeases(ctx, name)
	if err != nil || len(list) != 1 || list[0].Owner != "" || list[0].Held(32_000) {
		t.Fatalf("after release: %+v, %v", list, err)
	}
	got, ok = acquire(t, s, name, "inst-b", time.Second)
	wantLease(t, got, ok, true, "inst-b", 3, 32_000, 33_000)
}

func leasesFencedJournal(t *testing.T, open func(t *testing.T, now func() time.Time) LeaseStore) {
	ctx := t.Context()
	clock := &Clock{}
	clock.Set(50_000)
	s := open(t, clock.Now)
	const name = "session:" + string(sessA)
	a, _ := acquire(t, s, name, "inst-a", 5*time.Second)
	fenceA := []store.Fence{{Name: name, Fence: a.Fence}}

	acc := applyJournal(t, s, store.JournalBatch{Append: []store.JournalEntry{journalEntry(sessA, "d1", "one")}, Fences: fenceA})
	first := acc[0].ID
	applyJournal(t, s, store.JournalBatch{Running: []store.RunMark{{IDs: []int64{first}, RunID: "run-a"}}, Fences: fenceA})

	// Taken over after expiry: every write fenced on fence 1 is refused
	// whole, the append of another session in the same batch included.
	clock.Set(60_000)
	b, ok := acquire(t, s, name, "inst-b", 5*time.Second)
	if !ok || b.Fence != a.Fence+1 {
		t.Fatalf("take-over: %+v %v", b, ok)
	}
	refused := []store.JournalBatch{
		{Append: []store.JournalEntry{journalEntry(sessA, "d2", "two"), journalEntry(sessB, "d3", "three")}, Fences: fenceA},
		{Complete: []store.Completion{{IDs: []int64{first}, Outcome: runOutcome("run-a", sessA, 0)}}, Fences: fenceA},
		{Dropped: []store.DropMark{{IDs: []int64{first}, Note: "late"}}, Fences: fenceA},
		{Running: []store.RunMark{{IDs: []int64{first}, RunID: "run-a2"}}, Fences: []store.Fence{{Name: "session:never-taken", Fence: 1}}},
	}
	for i, bt := range refused {
		_, err := s.ApplyJournal(ctx, &bt)
		if !errors.Is(err, store.ErrFenced) || !strings.Contains(err.Error(), name[:8]) {
			t.Errorf("batch %d under a lost lease: err = %v; want ErrFenced naming the lease", i, err)
		}
	}
	if got := pendingIDs(t, s); len(got) != 1 || got[0] != first {
		t.Fatalf("refused batches changed the journal: pending %v", got)
	}
	e := journalEntries(t, s, first)[0]
	if e.State != store.JournalRunning || e.RunID != "run-a" {
		t.Fatalf("entry after refused marks: %+v", e)
	}
	if _, err := s.UndeliveredOutcomes(ctx); err != nil {
		t.Fatal(err)
	}
	assertNoOutcome(t, s, "run-a")

	// The new holder's fence is good; after its release, it is not.
	fenceB := []store.Fence{{Name: name, Fence: b.Fence}}
	applyJournal(t, s, store.JournalBatch{Complete: []store.Completion{{IDs: []int64{first}, Outcome: runOutcome("run-b", sessA, 0)}}, Fences: fenceB})
	assertOutcomeStored(t, s, "run-b", "the new holder's completion")
	if err := s.ReleaseLease(ctx, b); err != nil {
		t.Fatal(err)
	}
	_, err := s.ApplyJournal(ctx, &store.JournalBatch{Delivered: []string{"run-b"}, Fences: fenceB})
	if !errors.Is(err, store.ErrFenced) || !strings.Contains(err.Error(), "released") {
		t.Errorf("write under a released lease: %v", err)
	}
	// Without fences nothing is checked.
	applyJournal(t, s, store.JournalBatch{Delivered: []string{"run-b"}})
}

func assertNoOutcome(t *testing.T, s store.Journal, runID string) {
	t.Helper()
	out, err := s.UndeliveredOutcomes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range out {
		if o.RunID == runID {
			t.Fatalf("outcome %s was stored by a fenced-out writer", runID)
		}
	}
}

func leasesRace(t *testing.T, s LeaseStore) {
	const owners, names = 6, 15
	for n := range names {
		name := fmt.Sprintf("conn:chan-%d/default", n)
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			winners []string
			seen    = map[string]bool{}
		)
		start := make(chan struct{})
		for o := range owners {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				owner := fmt.Sprintf("inst-%d", o)
				l, ok, err := s.AcquireLease(t.Context(), name, owner, time.Minute)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					t.Errorf("%s by %s: %v", name, owner, err)
					return
				}
				seen[l.Owner] = true
				if ok {
					winners = append(winners, owner)
				}
			}()
		}
		close(start)
		wg.Wait()
		if len(winners) != 1 || len(seen) != 1 || !seen[winners[0]] {
			t.Fatalf("%s: winners %v, holders reported %v; want exactly one winner everyone agrees on", name, winners, seen)
		}
	}
}

func leasesListAndValidation(t *testing.T, s LeaseStore) {
	ctx := t.Context()
	for _, n := range []string{"session:b", "conn:x/default", "session:a", "session%:c", "conn:y/default"} {
		acquire(t, s, n, "inst-a", time.Minute)
	}
	names := func(prefix string) string {
		t.Helper()
		list, err := s.ListLeases(ctx, prefix)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, l := range list {
			out = append(out, l.Name)
		}
		return strings.Join(out, ",")
	}
	if got := names("session:"); got != "session:a,session:b" {
		t.Errorf("session: leases = %s", got)
	}
	if got := names("session%"); got != "session%:c" {
		t.Errorf("prefix with a wildcard = %s; want it literal", got)
	}
	if got := names(""); got != "conn:x/default,conn:y/default,session%:c,session:a,session:b" {
		t.Errorf("all leases = %s", got)
	}
	for _, c := range []struct {
		name, owner string
		ttl         time.Duration
		want        string
	}{
		{"", "inst-a", time.Second, "lease name"},
		{strings.Repeat("n", 513), "inst-a", time.Second, "lease name"},
		{"session:a", "", time.Second, "owner"},
		{"session:a", "inst-a", 0, "ttl"},
	} {
		if _, _, err := s.AcquireLease(ctx, c.name, c.owner, c.ttl); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("AcquireLease(%.10q, %q, %s): %v; want an error naming the %s", c.name, c.owner, c.ttl, err, c.want)
		}
	}
}

// Instances asserts store.Instances: PutInstance creates a record with
// the store's clock as start and heartbeat, and later puts move only the
// heartbeat (and name, info, stop time); ListInstances orders by start;
// PruneInstances deletes those not heard from since a cutoff; a record
// without id or name is refused.
func Instances(t *testing.T, open func(t *testing.T, now func() time.Time) store.Instances) {
	ctx := t.Context()
	clock := &Clock{}
	clock.Set(1_000)
	s := open(t, clock.Now)
	put := func(in store.Instance) store.Instance {
		t.Helper()
		got, err := s.PutInstance(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	a := put(store.Instance{ID: "a-1", Name: "alpha", Info: []byte(`{"pid":1}`)})
	if a.StartedAt != 1_000 || a.HeartbeatAt != 1_000 {
		t.Fatalf("new instance: %+v", a)
	}
	clock.Set(2_000)
	put(store.Instance{ID: "b-1", Name: "beta", Info: []byte(`{}`)})
	clock.Set(3_000)
	a = put(store.Instance{ID: "a-1", Name: "alpha", Info: []byte(`{"pid":2}`), StoppedAt: 3_000})
	if a.StartedAt != 1_000 || a.HeartbeatAt != 3_000 {
		t.Fatalf("heartbeat: %+v", a)
	}
	list, err := s.ListInstances(ctx)
	if err != nil || len(list) != 2 || list[0].ID != "a-1" || string(list[0].Info) != `{"pid":2}` || list[0].StoppedAt != 3_000 ||
		list[1].ID != "b-1" || list[1].HeartbeatAt != 2_000 {
		t.Fatalf("ListInstances = %+v, %v", list, err)
	}
	if n, err := s.PruneInstances(ctx, 2_500); n != 1 || err != nil {
		t.Fatalf("PruneInstances = %d, %v; want b-1 pruned", n, err)
	}
	if list, _ := s.ListInstances(ctx); len(list) != 1 || list[0].ID != "a-1" {
		t.Fatalf("after prune: %+v", list)
	}
	for _, bad := range []store.Instance{{Name: "x"}, {ID: "x"}, {ID: strings.Repeat("x", 257), Name: "x"}} {
		if _, err := s.PutInstance(ctx, bad); err == nil || !strings.Contains(err.Error(), "id and name") {
			t.Errorf("PutInstance(%+v) = %v", bad, err)
		}
	}
}
