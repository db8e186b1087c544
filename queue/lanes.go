package queue

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"
)

// Lane names. A run waits for its session (one run per session), then for
// a slot in its lane (openclaw-facts §3.6).
const (
	// LaneMain runs inbound messages and heartbeats;
	// agents.defaults.maxConcurrent slots (default 4).
	LaneMain = "main"
	// LaneCron runs scheduled jobs; one slot unless configured.
	LaneCron = "cron"
	// LaneSubagent runs subagents; 8 slots.
	LaneSubagent = "subagent"
	// LaneNested runs work started inside a cron run, which already holds
	// the cron slot; waiting for another cron slot would deadlock.
	LaneNested = "nested"
)

// laneWaitWarning is how long a run may wait for a lane slot before the
// wait is logged.
const laneWaitWarning = 2 * time.Second

// lane is a counting semaphore with a count of waiters, for the
// heartbeat's "requests in flight" check.
type lane struct {
	name    string
	slots   chan struct{}
	waiting atomic.Int64
	running atomic.Int64
}

func newLane(name string, n int) *lane {
	if n < 1 {
		n = 1
	}
	return &lane{name: name, slots: make(chan struct{}, n)}
}

// acquire waits for a slot, logging a wait longer than laneWaitWarning.
func (l *lane) acquire(ctx context.Context, clock Clock, log *slog.Logger, key string) error {
	select {
	case l.slots <- struct{}{}:
		l.running.Add(1)
		return nil
	default:
	}
	l.waiting.Add(1)
	defer l.waiting.Add(-1)
	start := clock.Now()
	warn := clock.AfterFunc(laneWaitWarning, func() {
		log.Warn("run is waiting for a lane slot", "lane", l.name, "session", key, "waited", laneWaitWarning, "slots", cap(l.slots))
	})
	defer warn.Stop()
	select {
	case l.slots <- struct{}{}:
		l.running.Add(1)
		if waited := clock.Now().Sub(start); waited > laneWaitWarning {
			log.Info("run got a lane slot", "lane", l.name, "session", key, "waited", waited)
		}
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (l *lane) release() {
	l.running.Add(-1)
	<-l.slots
}
