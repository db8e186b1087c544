package queue

import (
	"context"

	"github.com/switchboardhq/switchboard/core"
)

// Stop stops intake (Submit returns ErrStopped), lets active runs finish
// until ctx ends, then cancels the rest, and flushes the journal. Messages
// that did not finish stay pending in the journal and run at the next
// Start; nothing accepted is lost.
func (d *Dispatcher) Stop(ctx context.Context) error {
	d.mu.Lock()
	if d.stopping || !d.started {
		d.stopping = true
		d.mu.Unlock()
		return nil
	}
	d.stopping = true
	for _, s := range d.sessions {
		s.stopTimersLocked()
	}
	for key, t := range d.adoptTimers {
		t.Stop()
		delete(d.adoptTimers, key)
	}
	d.mu.Unlock()

	done := make(chan struct{})
	go func() {
		d.runsWG.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = context.Cause(ctx)
		d.log.Warn("shutdown deadline passed; cancelling running turns (they run again at the next start)")
		d.cancel(errShutdown)
		<-done
	}
	d.cancel(errShutdown) // ends notice deliveries still in flight
	d.commit.close()
	d.bgWG.Wait()
	return err
}

// Busy reports whether the session has an active run or queued messages:
// a heartbeat is skipped then (requests-in-flight).
func (d *Dispatcher) Busy(key core.SessionKey) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.sessions[key]
	return s != nil && (s.active != nil || len(s.items) > 0 || s.priority != nil)
}

// LaneWaiting reports how many runs wait for a slot of the lane; the
// heartbeat skips its turn while the main lane has queued work.
func (d *Dispatcher) LaneWaiting(name string) int {
	if l := d.lanes[name]; l != nil {
		return int(l.waiting.Load())
	}
	return 0
}

// Abort aborts the session's active run (chat.abort, /stop), reporting
// whether one was running. Queued messages stay queued. With several
// instances, a session that does not run here is aborted where it runs,
// and Abort reports true.
func (d *Dispatcher) Abort(key core.SessionKey) bool {
	_, ok := d.deps.Runner.Abort(key)
	if !ok && d.deps.Leases != nil && !d.isLocal(key) {
		d.deps.Leases.Signal(key, SignalAbort)
		return true
	}
	return ok
}

// EnqueueSystemEvent queues a system event line for the session's next
// turn (openclaw-facts §6.4), reporting whether it was queued.
func (d *Dispatcher) EnqueueSystemEvent(key core.SessionKey, text string, opts EventOptions) bool {
	return d.events.Enqueue(key, text, opts)
}

// PendingSystemEvents returns how many system events wait for the
// session's next turn; a heartbeat with nothing else to do still runs for
// them.
func (d *Dispatcher) PendingSystemEvents(key core.SessionKey) int {
	return d.events.Len(key)
}

// Stats is a snapshot of the dispatcher for metrics and tests.
type Stats struct {
	// Sessions counts sessions with dispatcher state (busy or queued);
	// idle sessions hold none.
	Sessions int
	// Active counts running turns.
	Active int
	// Queued counts messages waiting in session queues.
	Queued int
}

// Stats returns a snapshot.
func (d *Dispatcher) Stats() Stats {
	d.mu.Lock()
	defer d.mu.Unlock()
	st := Stats{Sessions: len(d.sessions), Active: len(d.runs)}
	for _, s := range d.sessions {
		st.Queued += len(s.items)
		if s.priority != nil {
			st.Queued++
		}
	}
	return st
}
