package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/cluster"
	"github.com/switchboardhq/switchboard/core"
)

// adoptions records the sessions a Sessions asked to adopt.
type adoptions chan core.SessionKey

func (a adoptions) adopt(_ context.Context, key core.SessionKey) error {
	a <- key
	return nil
}

func (a adoptions) want(t *testing.T, key core.SessionKey, why string) {
	t.Helper()
	select {
	case got := <-a:
		if got != key {
			t.Fatalf("%s: adopted %s, want %s", why, got, key)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: no adoption of %s within 20s", why, key)
	}
}

func startSessions(t *testing.T, m *cluster.Member, bus cluster.Bus, a adoptions) *cluster.Sessions {
	t.Helper()
	s := cluster.NewSessions(m, bus, a.adopt)
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(context.Background()) })
	return s
}

// One instance holds a session; the other's Forward reaches it over
// LISTEN/NOTIFY and it adopts; the other cannot take the lease; when the
// holder stops with the session still held, it releases the lease and
// hands the session back, and the other adopts it and can take it.
func TestSessionsForwardToTheHolderAndHandBackOnStop(t *testing.T) {
	stores := openStores(t, 2)
	ma := cluster.New(cluster.Options{Store: stores[0], Name: "a", TTL: time.Hour})
	mb := cluster.New(cluster.Options{Store: stores[1], Name: "b", TTL: time.Hour})
	adoptA, adoptB := make(adoptions, 8), make(adoptions, 8)
	sa := startSessions(t, ma, stores[0], adoptA)
	sb := startSessions(t, mb, stores[1], adoptB)
	const key core.SessionKey = "agent:main:main"

	la, ok, err := sa.Acquire(t.Context(), key)
	if err != nil || !ok || la.Fence != 1 {
		t.Fatalf("a's acquire: %+v %v %v", la, ok, err)
	}
	lb, ok, err := sb.Acquire(t.Context(), key)
	if err != nil || ok || lb.Owner != ma.ID() {
		t.Fatalf("b's acquire: %+v %v %v; want a named as holder", lb, ok, err)
	}
	sb.Forward(key)
	adoptA.want(t, key, "forwarded")
	sb.Forward("agent:main:other") // a holds no such session: nobody adopts
	sa.Stop(t.Context())
	adoptB.want(t, key, "handed back")
	select {
	case got := <-adoptA:
		t.Fatalf("a adopted %s after stopping", got)
	default:
	}
	lb, ok, err = sb.Acquire(t.Context(), key)
	if err != nil || !ok || lb.Fence != 2 {
		t.Fatalf("b's acquire after the hand-back: %+v %v %v", lb, ok, err)
	}
	// Won from another instance: b adopts what may be left.
	adoptB.want(t, key, "taken over")
	sb.Release(key)
	if !eventuallyTrue(func() bool {
		l, _ := stores[0].ListLeases(t.Context(), cluster.SessionLeasePrefix)
		return len(l) == 1 && l[0].Owner == ""
	}) {
		t.Fatal("the released lease still has an owner")
	}
	if len(sb.Held()) != 0 {
		t.Fatalf("b still lists %+v", sb.Held())
	}
}

func eventuallyTrue(cond func() bool) bool {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(20 * time.Second)
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			return cond()
		}
	}
	return true
}

// A stop or abort signalled for a session reaches the instance holding
// it, and only that one.
func TestSessionsSignalReachesTheHolder(t *testing.T) {
	stores := openStores(t, 2)
	ma := cluster.New(cluster.Options{Store: stores[0], Name: "a", TTL: time.Hour})
	mb := cluster.New(cluster.Options{Store: stores[1], Name: "b", TTL: time.Hour})
	got := make(chan string, 8)
	on := func(who string) func(core.SessionKey, string) {
		return func(key core.SessionKey, kind string) { got <- who + " " + kind + " " + string(key) }
	}
	sa := cluster.NewSessions(ma, stores[0], make(adoptions, 8).adopt)
	sa.OnSignal(on("a"))
	sb := cluster.NewSessions(mb, stores[1], make(adoptions, 8).adopt)
	sb.OnSignal(on("b"))
	for _, s := range []*cluster.Sessions{sa, sb} {
		if err := s.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Stop(context.Background()) })
	}
	const key core.SessionKey = "agent:main:main"
	if _, ok, err := sa.Acquire(t.Context(), key); !ok || err != nil {
		t.Fatal(ok, err)
	}
	sb.Signal(key, "stop")
	select {
	case s := <-got:
		if s != "a stop "+string(key) {
			t.Fatalf("signal = %q; want a to stop the session", s)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the holder never got the signal")
	}
	sa.Signal("agent:main:nobody", "abort") // held by nobody: nobody acts
	sb.Signal(key, "abort")
	select {
	case s := <-got:
		if s != "a abort "+string(key) {
			t.Fatalf("signal = %q; want a to abort the session, and nothing for the session nobody holds", s)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the holder never got the abort")
	}
}
