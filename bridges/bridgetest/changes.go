package bridgetest

import (
	"context"
	"sync"
)

// Changes wakes whoever waits for a fake's (or a recorder's) state to
// change: the owner calls Changed after every change, and waiters re-check
// their condition each time. Because a condition is checked only after the
// channel it then waits on was taken, a change can never slip between the
// check and the wait. Safe for concurrent use; the zero value is ready. It
// takes no lock of its owner, so Changed and Next may be called with the
// owner's mutex held.
type Changes struct {
	mu sync.Mutex
	ch chan struct{} // nil until someone waits: a change nobody waits for allocates nothing
}

// Changed wakes everything waiting in WaitFor and every channel Next
// returned so far.
func (c *Changes) Changed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch != nil {
		close(c.ch)
		c.ch = nil
	}
}

// Next returns a channel that is closed at the next Changed. Take it before
// looking at the state it guards, for loops that wait on more than a
// change (a timer, a context, a shutdown) and so cannot use WaitFor.
func (c *Changes) Next() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch == nil {
		c.ch = make(chan struct{})
	}
	return c.ch
}

// WaitFor blocks until cond returns true or ctx ends, returning ctx.Err()
// unwrapped so callers can add their own context. cond is evaluated now and
// again after every Changed; it runs without Changes' lock, so it may take
// the owner's.
func (c *Changes) WaitFor(ctx context.Context, cond func() bool) error {
	for {
		next := c.Next()
		if cond() {
			return nil
		}
		select {
		case <-next:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
