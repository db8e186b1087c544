package queue

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/store"
)

// SessionLeases decides which instance of a cluster runs a session's
// turns; cluster.Sessions implements it over the store's leases. With
// Deps.Leases nil (one instance), every session runs here.
//
// The dispatcher asks for the lease when a run gets its lane slot, holds it
// while the session has work here, and releases it when the session goes
// idle. A message accepted here for a session another instance runs is
// already in the journal: the dispatcher forgets it, Forwards the session
// so the holder adopts it (Dispatcher.Adopt), and, should the holder die,
// adopts it itself once the lease has expired.
type SessionLeases interface {
	// Acquire takes the lease on key for this instance, or extends it if
	// held already; one store round trip, bounded by ctx, safe from any
	// goroutine. ok false: another instance holds it, and the returned
	// lease is theirs (its ExpiresAt says when to try again).
	Acquire(ctx context.Context, key core.SessionKey) (l store.Lease, ok bool, err error)
	// Release gives the lease on key up; called with the dispatcher's lock
	// held, so it must not block (the store write happens in the
	// background, ordered before a later Acquire of the same key).
	Release(key core.SessionKey)
	// Forward tells the instance holding key's lease that messages for the
	// session were accepted here; it must not block.
	Forward(key core.SessionKey)
	// Signal asks the instance holding key's lease to stop the session
	// (SignalStop: abort its turn, clear its queue) or to abort its turn
	// (SignalAbort), for a stop command or chat.abort that reached an
	// instance where the session does not run. It must not block; the
	// holder acts through Dispatcher.Signal.
	Signal(key core.SessionKey, kind string)
}

// The signals one instance sends the holder of a session.
const (
	SignalStop  = "stop"
	SignalAbort = "abort"
)

// finishedIDs remembers the journal entries this dispatcher finished
// (completed or dropped) most recently, so that Adopt, whose read of the
// pending journal may be a moment old, does not take one of them up again.
// A ring: entries older than its size are long out of the pending journal.
type finishedIDs struct {
	ring []int64
	next int
	set  map[int64]struct{}
}

const finishedRing = 8192

func (f *finishedIDs) add(ids ...int64) {
	if f.set == nil {
		f.ring, f.set = make([]int64, finishedRing), make(map[int64]struct{}, finishedRing)
	}
	for _, id := range ids {
		if _, ok := f.set[id]; ok || id == 0 {
			continue
		}
		if old := f.ring[f.next]; old != 0 {
			delete(f.set, old)
		}
		f.ring[f.next] = id
		f.set[id] = struct{}{}
		f.next = (f.next + 1) % finishedRing
	}
}

func (f *finishedIDs) has(id int64) bool {
	_, ok := f.set[id]
	return ok
}

// noteFinished records the entries a journal batch finishes. Called when
// the batch is handed to the writer, before the items leave memory.
func (d *Dispatcher) noteFinished(b *store.JournalBatch) {
	if d.deps.Leases == nil || (len(b.Complete) == 0 && len(b.Dropped) == 0) {
		return
	}
	d.finMu.Lock()
	defer d.finMu.Unlock()
	for _, c := range b.Complete {
		d.finished.add(c.IDs...)
	}
	for _, m := range b.Dropped {
		d.finished.add(m.IDs...)
	}
}

func (d *Dispatcher) isFinished(id int64) bool {
	d.finMu.Lock()
	defer d.finMu.Unlock()
	return d.finished.has(id)
}

// leaseRun takes the session's lease for r, reporting whether r may run
// here. When another instance holds it, r and the session's other
// journaled messages are handed to that instance (yield).
func (d *Dispatcher) leaseRun(s *session, r *run) (bool, error) {
	if d.deps.Leases == nil {
		return true, nil
	}
	l, ok, err := d.deps.Leases.Acquire(r.ctx, r.key)
	if err != nil {
		return false, err
	}
	if ok {
		r.fence = store.Fence{Name: l.Name, Fence: l.Fence}
		d.mu.Lock()
		s.leased = true
		d.mu.Unlock()
		return true, nil
	}
	d.yield(s, r, time.UnixMilli(l.ExpiresAt))
	return false, nil
}

// yield gives up run r, which did not start: another instance holds the
// session's lease. Its journaled messages, and those queued behind it, are
// forgotten here (the holder adopts them from the journal); messages that
// are not journaled (a heartbeat) wait here. The session is adopted again
// here once the holder's lease, as last seen, has expired.
func (d *Dispatcher) yield(s *session, r *run, retryAt time.Time) {
	r.cancel(nil)
	d.mu.Lock()
	delete(d.runs, r)
	s.active = nil
	var keep []*item
	forget := func(items []*item) {
		for _, it := range items {
			if it == nil {
				continue
			}
			if it.id == 0 {
				keep = append(keep, it)
				continue
			}
			delete(s.ids, it.id)
		}
	}
	forget(r.items)
	for _, st := range r.steered {
		forget([]*item{st.it})
	}
	forget(s.items)
	forget([]*item{s.priority})
	for _, id := range append(r.overflow.ids, s.overflow.ids...) {
		delete(s.ids, id)
	}
	s.items, s.priority, s.overflow = keep, nil, overflowState{}
	s.stopTimersLocked()
	d.scheduleAdoptLocked(r.key, retryAt)
	d.evictLocked(s)
	d.mu.Unlock()
	d.log.Debug("session runs on another instance; handed over", "session", r.key)
	d.deps.Leases.Forward(r.key)
}

// minAdoptRetry and maxAdoptRetry bound the wait before trying again for a
// session another instance held.
const (
	minAdoptRetry = 100 * time.Millisecond
	maxAdoptRetry = time.Minute
)

// scheduleAdoptLocked arranges an Adopt of key at retryAt (just after the
// other instance's lease would expire). d.mu is held.
func (d *Dispatcher) scheduleAdoptLocked(key core.SessionKey, retryAt time.Time) {
	if d.stopping {
		return
	}
	wait := min(max(retryAt.Sub(d.clock.Now())+minAdoptRetry, minAdoptRetry), maxAdoptRetry)
	if t := d.adoptTimers[key]; t != nil {
		t.Stop()
	}
	d.adoptTimers[key] = d.clock.AfterFunc(wait, func() {
		d.mu.Lock()
		delete(d.adoptTimers, key)
		stopping := d.stopping
		d.mu.Unlock()
		if !stopping {
			if err := d.Adopt(d.baseCtx, key); err != nil && !errors.Is(err, context.Canceled) {
				d.log.Warn("could not adopt a session's pending messages; retrying", "session", key, "err", err)
				d.mu.Lock()
				d.scheduleAdoptLocked(key, d.clock.Now().Add(time.Second))
				d.mu.Unlock()
			}
		}
	})
}

// Adopt takes up the session's messages that are pending in the journal
// and not handled here yet: those another instance accepted and forwarded,
// or left when it died or drained. Each is placed as if just submitted, so
// its queue mode applies to the run going on here (steer, collect,
// followup, interrupt). With nothing to adopt, Adopt starts the session's
// local queue if it waits. Safe from any goroutine; it reads the journal.
func (d *Dispatcher) Adopt(ctx context.Context, key core.SessionKey) error {
	d.adoptMu.Lock()
	defer d.adoptMu.Unlock()
	pending, err := d.deps.Journal.PendingJournal(ctx)
	if err != nil {
		return err
	}
	var fresh []*item
	d.mu.Lock()
	if d.stopping || !d.started {
		d.mu.Unlock()
		return nil
	}
	s := d.sessions[key]
	for _, e := range pending {
		if e.SessionKey != key || (s != nil && s.has(e.ID)) {
			continue
		}
		var rec record
		if err := json.Unmarshal(e.Inbound, &rec); err != nil {
			continue // the instance that accepted it reports it at its next start
		}
		fresh = append(fresh, &item{id: e.ID, rec: rec, queuedAt: d.clock.Now()})
	}
	d.mu.Unlock()
	n := 0
	for _, it := range fresh {
		if d.isFinished(it.id) {
			continue
		}
		it.settings = d.settings(&it.rec)
		if d.accept(it, true).Disposition != Duplicate {
			n++
		}
	}
	if n > 0 {
		d.log.Info("adopted messages accepted by another instance", "session", key, "count", n)
		return nil
	}
	d.mu.Lock()
	if s := d.sessions[key]; s != nil && s.active == nil && len(s.items) > 0 {
		d.scheduleDrainLocked(s)
	}
	d.mu.Unlock()
	return nil
}

// has reports whether the session took up journal entry id.
func (s *session) has(id int64) bool {
	_, ok := s.ids[id]
	return ok
}

// entryReader is the journal read dropFinished needs; *store.SQLite and
// store/postgres's Store have it.
type entryReader interface {
	JournalEntries(ctx context.Context, ids ...int64) ([]store.JournalEntry, error)
}

// dropFinished takes out of r, which is about to run under its session's
// lease, the messages whose journal entries are already done or dropped:
// another instance ran them while this one had them queued (a replay at
// start, an adoption racing a hand-over). It reports whether anything is
// left to run. One journal read, with Deps.Leases only.
func (d *Dispatcher) dropFinished(r *run) (bool, error) {
	er, ok := d.deps.Journal.(entryReader)
	if d.deps.Leases == nil || !ok {
		return true, nil
	}
	ids := r.entryIDs()
	if len(ids) == 0 {
		return true, nil
	}
	entries, err := er.JournalEntries(r.ctx, ids...)
	if err != nil {
		return false, err
	}
	final := map[int64]bool{}
	for _, e := range entries {
		if e.State == store.JournalDone || e.State == store.JournalDropped {
			final[e.ID] = true
		}
	}
	if len(final) == 0 {
		return true, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	kept := r.items[:0:0]
	for _, it := range r.items {
		if it.id == 0 || !final[it.id] {
			kept = append(kept, it)
		}
	}
	d.log.Info("skipping messages another instance already answered", "session", r.key, "count", len(r.items)-len(kept))
	r.items = kept
	return len(r.items) > 0 || r.overflow.Dropped > 0, nil
}

// Sweep takes up what instances that died left behind, for the sessions
// nobody runs now: replies stored but not delivered for longer than age
// are delivered under the session's lease, and messages pending in the
// journal for longer than age are adopted (Adopt). cluster.Sessions calls
// it every lease length. With Deps.Leases nil it does nothing.
func (d *Dispatcher) Sweep(ctx context.Context, age time.Duration) error {
	if d.deps.Leases == nil {
		return nil
	}
	cutoff := d.clock.Now().Add(-age).UnixMilli()
	local := func(key core.SessionKey) bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.stopping || !d.started || d.sessions[key] != nil
	}
	outcomes, err := d.deps.Journal.UndeliveredOutcomes(ctx)
	if err != nil {
		return err
	}
	for _, o := range outcomes {
		if o.CreatedAt > cutoff || local(o.SessionKey) {
			continue
		}
		d.redeliverLeased(ctx, o)
	}
	pending, err := d.deps.Journal.PendingJournal(ctx)
	if err != nil {
		return err
	}
	seen := map[core.SessionKey]bool{}
	for _, e := range pending {
		if e.CreatedAt > cutoff || seen[e.SessionKey] || local(e.SessionKey) {
			continue
		}
		seen[e.SessionKey] = true
		if err := d.Adopt(ctx, e.SessionKey); err != nil {
			return err
		}
	}
	return nil
}

// redeliverLeased delivers one stored outcome while holding its session's
// lease, if it is free and the outcome still undelivered, and marks it
// delivered under that lease.
func (d *Dispatcher) redeliverLeased(ctx context.Context, o store.RunOutcome) {
	l, ok, err := d.deps.Leases.Acquire(ctx, o.SessionKey)
	if err != nil || !ok {
		return
	}
	defer func() {
		if !d.isLocal(o.SessionKey) {
			d.deps.Leases.Release(o.SessionKey)
		}
	}()
	still, err := d.deps.Journal.UndeliveredOutcomes(ctx)
	if err != nil || !slices.ContainsFunc(still, func(s store.RunOutcome) bool { return s.RunID == o.RunID }) {
		return
	}
	var del Delivery
	if err := json.Unmarshal(o.Delivery, &del); err != nil {
		d.log.Error("stored delivery unreadable; skipping it", "run", o.RunID, "err", err)
		return
	}
	d.log.Info("delivering a reply another instance stored but did not send", "run", o.RunID, "session", o.SessionKey)
	if d.deliver(del) {
		d.commit.applyAsync(store.JournalBatch{Delivered: []string{o.RunID}, Fences: []store.Fence{{Name: l.Name, Fence: l.Fence}}})
	}
}

// isLocal reports whether the session has state in this dispatcher.
func (d *Dispatcher) isLocal(key core.SessionKey) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.sessions[key] != nil
}

// Signal acts on a signal another instance sent for a session this one
// runs (SessionLeases.Signal): stop aborts the turn and clears the queue,
// recording the cleared messages dropped, as a stop command does here;
// abort aborts the turn. The instance that took the command told the
// sender. Safe from any goroutine.
func (d *Dispatcher) Signal(key core.SessionKey, kind string) {
	switch kind {
	case SignalStop:
		cleared, aborted := d.clearAndAbort(key)
		d.log.Info("stopped a session at another instance's request", "session", key, "cleared", len(cleared), "aborted", aborted)
	case SignalAbort:
		d.deps.Runner.Abort(key)
	}
}
