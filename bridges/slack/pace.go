package slack

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	slackapi "github.com/slack-go/slack"
)

// maxAttempts bounds the tries of one Web API call Slack keeps rate
// limiting.
const maxAttempts = 5

// pacer keeps Slack's rate limits, which are per Web API method: after a
// 429 on a method, no call of that method is made before its Retry-After
// has passed (whoever makes it), while other methods go on. Safe for
// concurrent use.
type pacer struct {
	now   func() time.Time
	after func(time.Duration) <-chan time.Time

	mu        sync.Mutex
	notBefore map[string]time.Time // by method name; a fixed, small set
}

func newPacer(now func() time.Time, after func(time.Duration) <-chan time.Time) *pacer {
	return &pacer{now: now, after: after, notBefore: map[string]time.Time{}}
}

// call runs fn, a call of method, once method may be called; a 429
// (*slackapi.RateLimitedError) holds the method for its Retry-After and
// fn runs again, at most maxAttempts times in all. It returns fn's last
// error, or ctx's if ctx ends while waiting.
func (p *pacer) call(ctx context.Context, method string, fn func() error) error {
	for attempt := 1; ; attempt++ {
		if err := p.wait(ctx, method); err != nil {
			return err
		}
		err := fn()
		var rl *slackapi.RateLimitedError
		if !errors.As(err, &rl) || attempt >= maxAttempts {
			return err
		}
		p.hold(method, rl.RetryAfter)
	}
}

// wait returns once method may be called, or ctx's error. It looks again
// after each wait, as another 429 may have moved the time.
func (p *pacer) wait(ctx context.Context, method string) error {
	for {
		p.mu.Lock()
		d := p.notBefore[method].Sub(p.now())
		p.mu.Unlock()
		if d <= 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("slack: waiting out the rate limit of %s: %w", method, ctx.Err())
		case <-p.after(d):
		}
	}
}

// hold keeps method from being called for d (at least a second: Slack
// sends whole seconds, and a zero would retry at once).
func (p *pacer) hold(method string, d time.Duration) {
	d = max(d, time.Second)
	p.mu.Lock()
	defer p.mu.Unlock()
	if t := p.now().Add(d); t.After(p.notBefore[method]) {
		p.notBefore[method] = t
	}
}
