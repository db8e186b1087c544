package queue

import (
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// session is a session's dispatcher state. It exists only while the session
// has an active run, queued messages, pending overflow or a timer; an idle
// session is removed (no memory, no goroutine).
type session struct {
	key core.SessionKey
	// active is the running turn, nil when idle.
	active *run
	// items are the followup queue, oldest first.
	items []*item
	// priority is an interrupting message waiting for the aborted run to end.
	priority *item
	// overflow collects what the cap dropped, for the model to see.
	overflow overflowState
	// lastEnqueued is when the newest item arrived (debounce).
	lastEnqueued time.Time
	// drainTimer fires when the queue has been quiet for its debounce.
	drainTimer Timer
	// interruptTimer fires when an interrupted run takes too long to end.
	interruptTimer Timer
	// forceIndividual makes a collect drain run items one by one after it
	// met items bound for different chats, until the queue empties.
	forceIndividual bool
	// failures counts consecutive runs that failed to run at all.
	failures int
	// ids are the journal entries the session took up (Deps.Leases only),
	// so Adopt does not take one up twice.
	ids map[int64]struct{}
	// leased: this instance holds the session's lease (Deps.Leases).
	leased bool
	// startNext: a message arrived after the active turn ended, into an
	// empty queue; it runs as soon as the turn's bookkeeping is done, not
	// after a debounce.
	startNext bool
}

// overflowState is the cap's dropped items: their journal ids (completed
// with the run that carries their summary) and the summary for the model.
type overflowState struct {
	Overflow
	ids    []int64
	policy DropPolicy
}

func (s *session) idle() bool {
	return s.active == nil && len(s.items) == 0 && s.priority == nil && s.overflow.Dropped == 0 &&
		s.drainTimer == nil && s.interruptTimer == nil
}

func (s *session) stopTimersLocked() {
	if s.drainTimer != nil {
		s.drainTimer.Stop()
		s.drainTimer = nil
	}
	if s.interruptTimer != nil {
		s.interruptTimer.Stop()
		s.interruptTimer = nil
	}
}

func (d *Dispatcher) sessionLocked(key core.SessionKey) *session {
	s := d.sessions[key]
	if s == nil {
		s = &session{key: key}
		d.sessions[key] = s
	}
	return s
}

// evictLocked forgets an idle session.
func (d *Dispatcher) evictLocked(s *session) {
	if s.idle() && d.sessions[s.key] == s {
		delete(d.sessions, s.key)
		if s.leased {
			s.leased = false
			d.deps.Leases.Release(s.key)
		}
	}
}

// enqueueLocked appends a message to the followup queue, applying the cap
// and drop policy (openclaw-facts §3.2): drop:new refuses the newcomer
// (its sender is told); old and summarize drop the oldest and keep a note
// of them for the model, so nothing goes silently.
func (d *Dispatcher) enqueueLocked(s *session, it *item) Receipt {
	st := it.settings
	dropOldest, rejectNew := ApplyDrop(len(s.items), st.Cap, st.Drop)
	if rejectNew {
		if it.id != 0 {
			d.commit.applyAsync(storeDrop([]int64{it.id}, "queue full (drop: new)"))
		}
		return Receipt{Disposition: Dropped}
	}
	if dropOldest > 0 {
		dropped := s.items[:dropOldest]
		s.items = append([]*item(nil), s.items[dropOldest:]...)
		s.overflow.policy = st.Drop
		for _, old := range dropped {
			if old.id != 0 {
				s.overflow.ids = append(s.overflow.ids, old.id)
			}
			line := ""
			if st.Drop == DropSummarize {
				line = SummaryLine(old.rec.Inbound.Body)
			}
			s.overflow.Add(line, st.Cap)
		}
	}
	s.items = append(s.items, it)
	s.lastEnqueued = d.clock.Now()
	if s.active == nil {
		d.scheduleDrainLocked(s)
	}
	return Receipt{Disposition: Queued}
}

// scheduleDrainLocked arms the drain timer for when the queue has been
// quiet for its debounce (openclaw-facts §3.3 "wait for quiet").
func (d *Dispatcher) scheduleDrainLocked(s *session) {
	if d.stopping || s.active != nil || (len(s.items) == 0 && s.overflow.Dropped == 0) {
		return
	}
	if s.drainTimer != nil {
		s.drainTimer.Stop()
	}
	wait := d.queueSettings(s).Debounce - d.clock.Now().Sub(s.lastEnqueued)
	if wait < 0 {
		wait = 0
	}
	if s.failures > 0 {
		wait = max(wait, retryBackoff(s.failures))
	}
	s.drainTimer = d.clock.AfterFunc(wait, func() { d.drain(s) })
}

// queueSettings are the settings of the newest queued message, which set
// the queue's mode and debounce (OpenClaw updates the queue's settings on
// each enqueue).
func (d *Dispatcher) queueSettings(s *session) Settings {
	if n := len(s.items); n > 0 {
		return s.items[n-1].settings
	}
	return Resolve(Override{}, d.overrides[s.key], d.opts.Config, "")
}

// drain runs the next step of the followup queue (openclaw-facts §3.3):
// collect merges compatible items into one turn, other modes run the head
// item; a pending overflow summary is run as its own prompt (collect puts
// it at the top of the merged prompt).
func (d *Dispatcher) drain(s *session) {
	d.mu.Lock()
	defer d.mu.Unlock()
	s.drainTimer = nil
	d.drainLocked(s, false)
}

// drainLocked is drain under d.mu; now skips the wait for a quiet queue.
func (d *Dispatcher) drainLocked(s *session, now bool) {
	if d.stopping || s.active != nil || d.sessions[s.key] != s {
		return
	}
	if len(s.items) == 0 && s.overflow.Dropped == 0 {
		s.forceIndividual = false
		d.evictLocked(s)
		return
	}
	st := d.queueSettings(s)
	if quiet := d.clock.Now().Sub(s.lastEnqueued); quiet < st.Debounce && !now {
		d.scheduleDrainLocked(s)
		return
	}
	if st.Mode == ModeCollect && len(s.items) > 0 {
		if !s.forceIndividual {
			routes := make([]core.Route, len(s.items))
			for i, it := range s.items {
				routes[i] = it.rec.Inbound.Route
			}
			s.forceIndividual = CrossChannel(routes)
		}
		if !s.forceIndividual {
			items := s.items
			s.items = nil
			d.startRunLocked(s, items, &s.overflow)
			return
		}
	}
	if s.overflow.Dropped > 0 {
		// The summary runs as its own followup, routed like the head item;
		// the head item itself stays queued (OpenClaw consumes it here,
		// which would lose its text).
		d.startRunLocked(s, nil, &s.overflow)
		return
	}
	head := s.items[0]
	s.items = s.items[1:]
	d.startRunLocked(s, []*item{head}, nil)
}

// retryBackoff is the wait before retrying a session whose last run could
// not run at all: 1s, 2s, 4s… up to a minute.
func retryBackoff(failures int) time.Duration {
	d := time.Second
	for i := 1; i < failures && d < time.Minute; i++ {
		d *= 2
	}
	return min(d, time.Minute)
}
