package bridges

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff computes reconnect delays: exponential from Initial by Factor up
// to Max, with "full jitter" (a uniform draw between half the step and the
// step), so many bridges or processes restarting together do not retry in
// lockstep. The zero value uses 1 s, ×2, 60 s.
type Backoff struct {
	// Initial is the first step; zero means 1 s.
	Initial time.Duration
	// Max caps every delay; zero means 60 s.
	Max time.Duration
	// Factor multiplies the step after each failure; below 1 means 2.
	Factor float64
	// Rand returns a float in [0, 1); nil means math/rand/v2. Tests pin it.
	Rand func() float64
}

// Delay returns the wait before retry number attempt (0 for the first
// retry): a value in [step/2, step], step = min(Max, Initial × Factor^attempt).
func (b Backoff) Delay(attempt int) time.Duration {
	initial, max, factor := b.Initial, b.Max, b.Factor
	if initial <= 0 {
		initial = time.Second
	}
	if max <= 0 {
		max = time.Minute
	}
	if factor < 1 {
		factor = 2
	}
	step := float64(initial)
	for i := 0; i < attempt && step < float64(max); i++ {
		step *= factor
	}
	if step > float64(max) {
		step = float64(max)
	}
	r := rand.Float64
	if b.Rand != nil {
		r = b.Rand
	}
	return time.Duration(step/2 + r()*step/2)
}

// NarrowJitter is a Backoff.Rand that draws in [0.6, 1): each delay lands
// in the top fifth of its step, so a long outage costs fewer attempts
// while bridges restarting together still spread out.
func NarrowJitter() float64 { return 0.6 + 0.4*rand.Float64() }

// Sleep waits d or until ctx ends, and reports whether the full wait
// passed (the reconnect loops' default; tests inject a virtual one).
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
