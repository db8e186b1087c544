package bridgetest_test

import (
	"context"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/bridges/bridgetest"
)

func TestChangesZeroValueIsReady(t *testing.T) {
	var c bridgetest.Changes
	c.Changed() // nobody waits: nothing to wake, no panic
	c.Changed()
	if err := c.WaitFor(t.Context(), func() bool { return true }); err != nil {
		t.Fatalf("WaitFor on a condition that holds = %v", err)
	}
}

func TestChangesNextIsClosedByTheNextChange(t *testing.T) {
	var c bridgetest.Changes
	first := c.Next()
	if again := c.Next(); again != first {
		t.Error("Next before any change returned a new channel; a waiter would miss the change")
	}
	select {
	case <-first:
		t.Fatal("closed before any change")
	default:
	}
	c.Changed()
	select {
	case <-first:
	default:
		t.Fatal("Changed did not close the channel Next returned")
	}
	second := c.Next()
	select {
	case <-second:
		t.Fatal("the channel after a change is already closed")
	default:
	}
	c.Changed()
	<-second
}

func TestChangesWaitForEndsWithTheContext(t *testing.T) {
	var c bridgetest.Changes
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	calls := 0
	err := c.WaitFor(ctx, func() bool { calls++; return false })
	if err != ctx.Err() {
		t.Errorf("WaitFor = %v, want the context's own error %v", err, ctx.Err())
	}
	if calls != 1 {
		t.Errorf("cond ran %d times, want once before giving up", calls)
	}
}

// owner is a fake's shape: state under its own mutex, Changed called with
// that mutex held, and a condition that takes it.
type owner struct {
	mu      sync.Mutex
	n       int
	changes bridgetest.Changes
}

func (o *owner) add() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.n++
	o.changes.Changed()
}

func (o *owner) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.n
}

// Many waiters, each for a different count, against several writers: every
// waiter sees its count without a lost wakeup (it would hang until the
// deadline) and the race detector sees no unsynchronised access.
func TestChangesWakesEveryWaiter(t *testing.T) {
	const writers, perWriter = 4, 250
	o := &owner{}
	ctx, cancel := context.WithTimeout(t.Context(), bridgetest.WaitFor)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, writers*perWriter)
	for want := 1; want <= writers*perWriter; want += 37 {
		wg.Go(func() {
			if err := o.changes.WaitFor(ctx, func() bool { return o.count() >= want }); err != nil {
				errs <- err
			}
		})
	}
	for range writers {
		wg.Go(func() {
			for range perWriter {
				o.add()
				_ = o.changes.Next() // a channel taken between changes, as a waiter would
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a waiter gave up: %v", err)
	}
	if n := o.count(); n != writers*perWriter {
		t.Errorf("count %d, want %d", n, writers*perWriter)
	}
}

// A loop that waits on more than a change takes Next under the owner's
// mutex, as the fakes' long polls do, and still sees every change.
func TestChangesNextInALoop(t *testing.T) {
	o := &owner{}
	ctx, cancel := context.WithTimeout(t.Context(), bridgetest.WaitFor)
	defer cancel()
	done := make(chan int, 1)
	go func() {
		for {
			o.mu.Lock()
			n, next := o.n, o.changes.Next()
			o.mu.Unlock()
			if n == 3 {
				done <- n
				return
			}
			select {
			case <-next:
			case <-ctx.Done():
				done <- n
				return
			}
		}
	}()
	for range 3 {
		o.add()
	}
	if n := <-done; n != 3 {
		t.Errorf("the loop stopped at %d changes, want 3", n)
	}
}
