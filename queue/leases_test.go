package queue

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/store"
)

// storeLeases is this instance's SessionLeases over the store's real
// leases, as cluster.Sessions keeps them, recording what it forwards.
type storeLeases struct {
	st    *store.SQLite
	owner string

	mu        sync.Mutex
	forwarded []core.SessionKey
	signals   []string
	held      map[core.SessionKey]store.Lease
}

func newStoreLeases(st *store.SQLite) *storeLeases {
	return &storeLeases{st: st, owner: "here", held: map[core.SessionKey]store.Lease{}}
}

func (l *storeLeases) Acquire(ctx context.Context, key core.SessionKey) (store.Lease, bool, error) {
	got, ok, err := l.st.AcquireLease(ctx, "session:"+string(key), l.owner, time.Hour)
	if ok {
		l.mu.Lock()
		l.held[key] = got
		l.mu.Unlock()
	}
	return got, ok, err
}

func (l *storeLeases) Release(key core.SessionKey) {
	l.mu.Lock()
	got, ok := l.held[key]
	delete(l.held, key)
	l.mu.Unlock()
	if ok {
		_ = l.st.ReleaseLease(context.Background(), got)
	}
}

func (l *storeLeases) Forward(key core.SessionKey) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.forwarded = append(l.forwarded, key)
}

func (l *storeLeases) Signal(key core.SessionKey, kind string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.signals = append(l.signals, kind+" "+string(key))
}

func (l *storeLeases) forwards() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.forwarded)
}

func sessionLease(t *testing.T, st *store.SQLite, key core.SessionKey) store.Lease {
	t.Helper()
	list, err := st.ListLeases(context.Background(), "session:"+string(key))
	if err != nil || len(list) != 1 {
		t.Fatalf("session lease: %+v, %v", list, err)
	}
	return list[0]
}

// A message for a session another instance runs is journaled, handed over
// (Forward) and not run here; once that instance lets the lease go, the
// retry adopts the message from the journal and runs it here, under a new
// fence, and the lease is released when the session is idle again.
func TestASessionHeldElsewhereIsHandedOverThenAdopted(t *testing.T) {
	var leases *storeLeases
	h := newHarness(t, harnessOptions{config: Config{Mode: ModeFollowup}, leases: func(st *store.SQLite) SessionLeases {
		leases = newStoreLeases(st)
		return leases
	}})
	const key core.SessionKey = "agent:main:telegram:direct:42"
	other, ok, err := h.store.AcquireLease(context.Background(), "session:"+string(key), "elsewhere", time.Hour)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	rcpt := h.submit(dmIn(key, "m1", "hello"))
	eventually(t, "the message handed over", func() bool { return leases.forwards() == 1 })
	h.waitRunsIdle()
	if n := len(h.provider.Requests()); n != 0 {
		t.Fatalf("the model ran %d times for a session held elsewhere", n)
	}
	if e := h.entries(rcpt.EntryID)[0]; e.State != store.JournalAccepted {
		t.Fatalf("entry = %+v; want it still accepted for the holder", e)
	}

	if err := h.store.ReleaseLease(context.Background(), other); err != nil {
		t.Fatal(err)
	}
	h.provider.Push(llmtest.Text("answered here"))
	h.clock.Advance(maxAdoptRetry)
	got := h.rec.waitFor(t, 1)
	if len(got[0].Replies) != 1 || got[0].Replies[0].Text != "answered here" {
		t.Fatalf("delivery = %+v", got[0])
	}
	eventually(t, "the entry done", func() bool { return h.entries(rcpt.EntryID)[0].State == store.JournalDone })
	eventually(t, "the lease released", func() bool { return sessionLease(t, h.store, key).Owner == "" })
	if l := sessionLease(t, h.store, key); l.Fence != other.Fence+1 {
		t.Errorf("lease after adoption: %+v; want fence %d", l, other.Fence+1)
	}
}

// A turn whose session was taken over while it ran cannot record its
// outcome (the store refuses the fenced write) and delivers nothing: the
// message stays pending for the new holder.
func TestAFencedOutRunDeliversNothing(t *testing.T) {
	w := newWatcher()
	h := newHarness(t, harnessOptions{observers: []Observer{w}, leases: func(st *store.SQLite) SessionLeases { return newStoreLeases(st) }})
	const key core.SessionKey = "agent:main:telegram:direct:42"
	gate := make(chan struct{})
	h.provider.Push(llmtest.Text("too late").Gated(gate))
	rcpt := h.submit(dmIn(key, "m1", "hello"))
	w.waitTurn(t)
	mine := sessionLease(t, h.store, key)
	if mine.Owner != "here" {
		t.Fatalf("lease while running: %+v", mine)
	}
	// Another instance takes the session over (this one was paused past
	// its lease, say).
	if err := h.store.ReleaseLease(context.Background(), mine); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := h.store.AcquireLease(context.Background(), "session:"+string(key), "elsewhere", time.Hour); !ok || err != nil {
		t.Fatal(ok, err)
	}
	close(gate)
	h.waitRunsIdle()
	if got := h.rec.deliveries(); len(got) != 0 {
		t.Fatalf("a fenced-out run delivered %+v", got)
	}
	if e := h.entries(rcpt.EntryID)[0]; e.State == store.JournalDone {
		t.Fatalf("entry = %+v; the fenced-out run recorded it done", e)
	}
	if out, _ := h.store.UndeliveredOutcomes(context.Background()); len(out) != 0 {
		t.Fatalf("a fenced-out run stored an outcome: %+v", out)
	}
}

// A stop command taken where the session does not run is signalled to the
// instance that runs it, and the sender is told; the holder, signalled,
// aborts its turn and clears its queue, recording the cleared messages
// dropped.
func TestAStopForASessionRunningElsewhereIsSignalled(t *testing.T) {
	var leases *storeLeases
	h := newHarness(t, harnessOptions{config: Config{Mode: ModeFollowup}, leases: func(st *store.SQLite) SessionLeases {
		leases = newStoreLeases(st)
		return leases
	}})
	const key core.SessionKey = "agent:main:telegram:direct:42"
	h.submit(dmIn(key, "s1", "/stop"))
	got := h.rec.waitFor(t, 1)
	if got[0].Kind != DeliveryNotice || got[0].Replies[0].Text != "⏹️ Stopped." {
		t.Fatalf("notice = %+v", got[0])
	}
	leases.mu.Lock()
	signals := slices.Clone(leases.signals)
	leases.mu.Unlock()
	if len(signals) != 1 || signals[0] != SignalStop+" "+string(key) {
		t.Fatalf("signals = %v; want a stop for the session", signals)
	}

	// The holder's side: a turn running, a message queued behind it.
	w := newWatcher()
	h2 := newHarness(t, harnessOptions{config: Config{Mode: ModeFollowup}, observers: []Observer{w},
		leases: func(st *store.SQLite) SessionLeases { return newStoreLeases(st) }})
	gate := make(chan struct{})
	defer close(gate)
	h2.provider.Push(llmtest.Text("long answer").Gated(gate))
	h2.submit(dmIn(key, "m1", "first"))
	w.waitTurn(t)
	queued := h2.submit(dmIn(key, "m2", "second"))
	h2.d.Signal(key, SignalStop)
	h2.waitRunsIdle()
	eventually(t, "the queued message dropped", func() bool { return h2.entries(queued.EntryID)[0].State == store.JournalDropped })
	if n := len(h2.provider.Requests()); n != 1 {
		t.Fatalf("%d model requests; the cleared message ran", n)
	}
}
