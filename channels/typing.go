package channels

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/bridges"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/queue"
)

// Typing indicator timing (openclaw-facts §5.4).
const (
	// TypingInterval is how often the indicator is refreshed; platforms
	// clear it after about five seconds.
	TypingInterval = 6 * time.Second
	// TypingTTL stops the indicator of a run that takes longer, so a stuck
	// run does not type forever.
	TypingTTL = 2 * time.Minute
)

// Typing is a queue.Observer that shows a typing indicator in the chat of
// every user run whose bridge can (Typer), from the run's start until it
// ends or TypingTTL passes. Close stops every indicator. Safe for
// concurrent use.
type Typing struct {
	// Router finds the bridge of a run's route.
	Router *Router
	// Interval and TTL override TypingInterval and TypingTTL (tests).
	Interval, TTL time.Duration
	// Log receives indicator failures at debug level; nil discards them.
	Log *slog.Logger

	mu     sync.Mutex
	active map[string]context.CancelFunc // by run id
	closed bool
	wg     sync.WaitGroup
}

var _ queue.Observer = (*Typing)(nil)

// RunStarted implements queue.Observer.
func (t *Typing) RunStarted(info queue.RunInfo) {
	if info.Kind != "" && info.Kind != core.InboundUser {
		return // heartbeats and cron runs do not type
	}
	b, ok := t.Router.Bridge(string(info.Route.Channel), string(info.Route.AccountID))
	if !ok {
		return
	}
	typer, ok := b.(bridges.Typer)
	if !ok {
		return
	}
	interval, ttl := t.Interval, t.TTL
	if interval <= 0 {
		interval = TypingInterval
	}
	if ttl <= 0 {
		ttl = TypingTTL
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	if t.active == nil {
		t.active = map[string]context.CancelFunc{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), ttl)
	if old := t.active[info.RunID]; old != nil {
		old()
	}
	t.active[info.RunID] = cancel
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		defer cancel()
		if stopper, ok := typer.(bridges.TypingStopper); ok {
			defer func() {
				sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer scancel()
				if err := stopper.StopTyping(sctx, info.Route); err != nil && t.Log != nil {
					t.Log.Debug("clearing the typing indicator failed", "channel", info.Route.Channel, "err", err)
				}
			}()
		}
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			if err := typer.Typing(ctx, info.Route); err != nil && ctx.Err() == nil && t.Log != nil {
				t.Log.Debug("typing indicator failed", "channel", info.Route.Channel, "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
}

// RunEvent implements queue.Observer.
func (t *Typing) RunEvent(queue.RunInfo, core.AgentEvent) {}

// RunEnded implements queue.Observer: the run's indicator stops.
func (t *Typing) RunEnded(info queue.RunInfo, _ *agent.Result, _ error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if cancel := t.active[info.RunID]; cancel != nil {
		cancel()
		delete(t.active, info.RunID)
	}
}

// Close stops every indicator and waits for them; later runs get none.
func (t *Typing) Close() {
	t.mu.Lock()
	t.closed = true
	for id, cancel := range t.active {
		cancel()
		delete(t.active, id)
	}
	t.mu.Unlock()
	t.wg.Wait()
}
