// Package queuetest holds test helpers for code built on the queue
// package: a manual clock for queue.Clock.
package queuetest

import (
	"sort"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/queue"
)

// Clock is a queue.Clock whose time moves only when the test advances it.
// Timers fire on the goroutine that calls Advance, in time order.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*timer
}

type timer struct {
	c       *Clock
	at      time.Time
	f       func()
	stopped bool
}

// NewClock returns a clock reading start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc arms f to run when the clock reaches Now()+d.
func (c *Clock) AfterFunc(d time.Duration, f func()) queue.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &timer{c: c, at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return t
}

// Stop disarms the timer, reporting whether it was armed.
func (t *timer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.stopped
	t.stopped = true
	for i, x := range t.c.timers {
		if x == t {
			t.c.timers = append(t.c.timers[:i], t.c.timers[i+1:]...)
			return was
		}
	}
	return false
}

// Pending returns how many timers are armed.
func (c *Clock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// NextAt returns when the earliest armed timer fires; false when none is.
func (c *Clock) NextAt() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.timers) == 0 {
		return time.Time{}, false
	}
	next := c.timers[0].at
	for _, t := range c.timers[1:] {
		if t.at.Before(next) {
			next = t.at
		}
	}
	return next, true
}

// Advance moves time forward by d, firing due timers in time order on the
// calling goroutine (a fired timer may arm new ones, which fire too when
// due before the end).
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	c.mu.Unlock()
	c.AdvanceTo(end)
}

// AdvanceTo moves time forward to end (never backwards), firing due
// timers as Advance does.
func (c *Clock) AdvanceTo(end time.Time) {
	for {
		c.mu.Lock()
		sort.SliceStable(c.timers, func(i, j int) bool { return c.timers[i].at.Before(c.timers[j].at) })
		if len(c.timers) == 0 || c.timers[0].at.After(end) {
			if end.After(c.now) {
				c.now = end
			}
			c.mu.Unlock()
			return
		}
		t := c.timers[0]
		c.timers = c.timers[1:]
		t.stopped = true
		if t.at.After(c.now) {
			c.now = t.at
		}
		c.mu.Unlock()
		t.f()
	}
}
