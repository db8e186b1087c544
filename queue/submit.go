package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/store"
)

// Submit accepts one inbound message. It returns once the message is
// durable in the journal (or, for directives, stop commands and heartbeats,
// once it was handled); only then may the caller acknowledge it to the
// platform. An error means the message was NOT accepted: the caller must
// not acknowledge it, so the platform delivers it again.
func (d *Dispatcher) Submit(ctx context.Context, in core.Inbound) (Receipt, error) {
	return d.SubmitWith(ctx, in, SubmitOptions{})
}

// SubmitWith is Submit with per-message options.
func (d *Dispatcher) SubmitWith(ctx context.Context, in core.Inbound, opts SubmitOptions) (Receipt, error) {
	if in.SessionKey == "" {
		return Receipt{}, fmt.Errorf("queue: inbound has no session key")
	}
	if in.Kind == "" {
		in.Kind = core.InboundUser
	}
	d.mu.Lock()
	stopped := d.stopping || !d.started
	d.mu.Unlock()
	if stopped {
		return Receipt{}, ErrStopped
	}

	rec := record{Inbound: in, ClientRunID: opts.RunID, Lane: opts.Lane, Model: opts.Model, TimeoutMs: opts.Timeout.Milliseconds(), NoDeliver: opts.NoDeliver}
	if opts.Mode != "" {
		m := opts.Mode
		rec.Override.Mode = &m
	}
	if in.Kind == core.InboundUser {
		if IsStopCommand(in.Body) {
			return d.stop(ctx, in), nil
		}
		dir := ParseDirective(in.Body)
		if dir.Found {
			if dir.Standalone {
				return d.applyDirective(ctx, in, dir)
			}
			rec.Override = mergeOverride(rec.Override, dir.Override)
			rec.Inbound.Body = dir.Rest
		}
	}
	settings := d.settings(&rec)

	if in.Kind == core.InboundHeartbeat {
		// A heartbeat is never queued and never interrupts a user turn; it
		// is not journaled either: the next tick replaces a lost one.
		if d.Busy(in.SessionKey) {
			return Receipt{Disposition: Dropped}, nil
		}
		it := &item{rec: rec, settings: settings, queuedAt: d.clock.Now()}
		return d.accept(it, true), nil
	}

	dedupe := opts.DedupeKey
	if dedupe == "" {
		dedupe = DedupeKey(in.Route, in.MessageID)
	}
	// The recent-id cache answers redeliveries without a database round
	// trip; it learns an id only once the id is durable, so two racing
	// copies both reach the journal, whose unique dedupe key settles it.
	// A client's retry with its own run id (the gateway's idempotency key)
	// goes to the journal, which also says what became of the message: a
	// client that retries after a restart must learn the outcome, not wait
	// for a final that was sent before it reconnected.
	if dedupe != "" && opts.RunID == "" && d.recent.Contains(dedupe, d.clock.Now()) {
		return Receipt{Disposition: Duplicate}, nil
	}
	raw, err := json.Marshal(rec)
	if err != nil {
		return Receipt{}, fmt.Errorf("queue: encode inbound: %w", err)
	}
	accepts, err := d.commit.apply(ctx, store.JournalBatch{Append: []store.JournalEntry{{
		SessionKey: in.SessionKey,
		DedupeKey:  dedupe,
		Inbound:    raw,
		CreatedAt:  d.clock.Now().UnixMilli(),
	}}})
	if err != nil {
		return Receipt{}, fmt.Errorf("queue: journal the message: %w", err)
	}
	if dedupe != "" {
		d.recent.Seen(dedupe, d.clock.Now())
	}
	if accepts[0].Duplicate {
		return Receipt{EntryID: accepts[0].ID, Disposition: Duplicate, State: accepts[0].State}, nil
	}
	it := &item{id: accepts[0].ID, rec: rec, settings: settings, queuedAt: d.clock.Now()}
	r := d.accept(it, true)
	r.EntryID = it.id
	return r, nil
}

// accept places an accepted message: a run now, the queue, a steer, or an
// interrupt (openclaw-facts §3.1). fresh is false for messages replayed
// from the journal at start, which are never steered into a run.
func (d *Dispatcher) accept(it *item, fresh bool) Receipt {
	key := it.rec.Inbound.SessionKey
	d.mu.Lock()
	if d.stopping {
		d.mu.Unlock()
		return Receipt{Disposition: Queued} // journaled; replays at the next start
	}
	s := d.sessionLocked(key)
	if it.id != 0 && d.deps.Leases != nil {
		// Adopt and Submit may both reach an entry; the first takes it.
		if s.has(it.id) || d.isFinished(it.id) {
			d.evictLocked(s)
			d.mu.Unlock()
			return Receipt{Disposition: Duplicate}
		}
		if s.ids == nil {
			s.ids = map[int64]struct{}{}
		}
		s.ids[it.id] = struct{}{}
	}
	heartbeat := it.rec.Inbound.Kind == core.InboundHeartbeat
	nothingWaits := len(s.items) == 0 && s.priority == nil && s.overflow.Dropped == 0
	if s.active == nil && nothingWaits {
		r := d.startRunLocked(s, []*item{it}, nil)
		d.mu.Unlock()
		return Receipt{Disposition: Running, RunID: r.id}
	}
	if s.active != nil && s.active.ended && nothingWaits && fresh {
		// The turn is over (its sender may already have the final): the
		// message is not one that arrived during a turn, so no mode
		// applies; it runs the moment the turn's bookkeeping is done.
		s.startNext = true
		rcpt := d.enqueueLocked(s, it)
		d.mu.Unlock()
		return rcpt
	}
	if s.active == nil || !fresh {
		// Idle with a queue waiting for its debounce, or a replay: keep
		// the order.
		rcpt := d.enqueueLocked(s, it)
		d.mu.Unlock()
		d.afterEnqueue(it, rcpt)
		return rcpt
	}

	mode := it.settings.Mode
	switch {
	case heartbeat:
		d.mu.Unlock()
		return Receipt{Disposition: Dropped}
	case mode == ModeSteer || mode == ModeSteerBacklog:
		active := s.active
		in := it.rec.Inbound
		// A non-owner's words never join an owner's turn, whose tools
		// they could then steer.
		if (!active.turn.SenderIsOwner || d.isOwner(in)) && d.deps.Runner.Steer(key, &in) {
			active.steered = append(active.steered, steeredItem{in: &in, it: it})
			if mode == ModeSteerBacklog {
				// Steer now and also answer it as a followup; OpenClaw's
				// steer-backlog can look like a duplicate reply.
				backlog := *it
				d.enqueueLocked(s, &backlog)
			}
			d.mu.Unlock()
			d.commit.applyAsync(store.JournalBatch{Running: []store.RunMark{{IDs: []int64{it.id}, RunID: active.id}}})
			return Receipt{Disposition: Steered}
		}
		rcpt := d.enqueueLocked(s, it)
		d.mu.Unlock()
		d.afterEnqueue(it, rcpt)
		return rcpt
	case mode == ModeInterrupt:
		if s.priority != nil {
			// A second interrupt while the first waits: the first goes back
			// to the queue front, nothing is lost.
			s.items = append([]*item{s.priority}, s.items...)
		}
		s.priority = it
		d.mu.Unlock()
		d.interrupt(key)
		return Receipt{Disposition: Interrupting}
	default:
		rcpt := d.enqueueLocked(s, it)
		d.mu.Unlock()
		d.afterEnqueue(it, rcpt)
		return rcpt
	}
}

// afterEnqueue tells the chat a message is waiting (typing, ack reaction)
// or, when drop:new refused it, that it was dropped.
func (d *Dispatcher) afterEnqueue(it *item, r Receipt) {
	in := it.rec.Inbound
	switch r.Disposition {
	case Dropped:
		d.notice(in.SessionKey, in.Route, in.MessageID,
			"⚠️ Too many messages are waiting, so this one was dropped. Please send it again once I have caught up.")
	case Queued:
		if sig, ok := d.deps.Deliverer.(Signals); ok && in.Kind == core.InboundUser {
			d.bgWG.Add(1)
			go func() {
				defer d.bgWG.Done()
				sig.Queued(d.baseCtx, in, d.opts.Config.Ack)
			}()
		}
	}
}

// interrupt aborts the session's active run so its priority message runs
// next; if the run has not ended after InterruptWait, the sender is told
// it is still shutting down (the message stays first in line).
func (d *Dispatcher) interrupt(key core.SessionKey) {
	ended, ok := d.deps.Runner.Abort(key)
	if !ok {
		return // it ended on its own; afterRun starts the priority message
	}
	select {
	case <-ended:
		return
	default:
	}
	d.mu.Lock()
	s := d.sessions[key]
	if s == nil || s.priority == nil {
		d.mu.Unlock()
		return
	}
	waiting := s.priority
	s.interruptTimer = d.clock.AfterFunc(d.opts.InterruptWait, func() {
		d.mu.Lock()
		still := s.active != nil && s.priority == waiting
		s.interruptTimer = nil
		d.mu.Unlock()
		if still {
			in := waiting.rec.Inbound
			d.notice(key, in.Route, in.MessageID,
				"⚠️ Previous run is still shutting down. Your message will run as soon as it ends.")
		}
	})
	d.mu.Unlock()
}

// applyDirective stores a standalone /queue directive as the session's
// queue setting and confirms it.
func (d *Dispatcher) applyDirective(ctx context.Context, in core.Inbound, dir Directive) (Receipt, error) {
	key := in.SessionKey
	d.mu.Lock()
	o := d.overrides[key]
	d.mu.Unlock()
	if len(dir.Invalid) > 0 || (!dir.Reset && dir.Override.IsZero()) {
		// A bad token changes nothing (OpenClaw answers with the error
		// alone); a bare /queue shows the current settings.
		d.notice(key, in.Route, in.MessageID, dir.Describe(Resolve(Override{}, o, d.opts.Config, string(in.Route.Channel))))
		return Receipt{Disposition: DirectiveApplied}, nil
	}
	if dir.Reset {
		o = Override{}
	}
	o = mergeOverride(o, dir.Override)
	var raw json.RawMessage
	if !o.IsZero() {
		b, err := json.Marshal(o)
		if err != nil {
			return Receipt{}, fmt.Errorf("queue: encode queue settings: %w", err)
		}
		raw = b
	}
	if err := d.deps.Journal.PutQueueSettings(ctx, key, raw); err != nil {
		return Receipt{}, fmt.Errorf("queue: store queue settings: %w", err)
	}
	d.mu.Lock()
	if o.IsZero() {
		delete(d.overrides, key)
	} else {
		d.overrides[key] = o
	}
	d.mu.Unlock()
	settings := Resolve(Override{}, o, d.opts.Config, string(in.Route.Channel))
	d.notice(key, in.Route, in.MessageID, dir.Describe(settings))
	return Receipt{Disposition: DirectiveApplied}, nil
}

// stop handles a stop command: the active run is aborted and the queued
// messages are cleared, each recorded as dropped; the sender is told.
func (d *Dispatcher) stop(ctx context.Context, in core.Inbound) Receipt {
	key := in.SessionKey
	if d.deps.Leases != nil && !d.isLocal(key) {
		// The session runs on another instance, if anywhere: it stops
		// there. How much it cleared is not known here.
		d.deps.Leases.Signal(key, SignalStop)
		d.notice(key, in.Route, in.MessageID, "⏹️ Stopped.")
		return Receipt{Disposition: Stopped}
	}
	cleared, aborted := d.clearAndAbort(key)
	text := "⏹️ Stopped."
	switch {
	case len(cleared) == 1:
		text += " 1 queued message was cleared."
	case len(cleared) > 1:
		text += fmt.Sprintf(" %d queued messages were cleared.", len(cleared))
	case !aborted:
		text = "Nothing is running."
	}
	d.notice(key, in.Route, in.MessageID, text)
	return Receipt{Disposition: Stopped}
}

// clearAndAbort clears the session's queue, recording the cleared messages
// dropped, and aborts its turn.
func (d *Dispatcher) clearAndAbort(key core.SessionKey) (cleared []int64, aborted bool) {
	d.mu.Lock()
	if s := d.sessions[key]; s != nil {
		for _, it := range s.items {
			if it.id != 0 {
				cleared = append(cleared, it.id)
			}
		}
		if s.priority != nil && s.priority.id != 0 {
			cleared = append(cleared, s.priority.id)
		}
		cleared = append(cleared, s.overflow.ids...)
		s.items, s.priority = nil, nil
		s.overflow = overflowState{}
		s.stopTimersLocked()
	}
	d.mu.Unlock()
	_, aborted = d.deps.Runner.Abort(key)
	if len(cleared) > 0 {
		d.commit.applyAsync(storeDrop(cleared, "cleared by a stop command"))
	}
	return cleared, aborted
}

// stopWords are whole messages that stop a session's work, as OpenClaw's
// abort primitives (the English ones).
var stopWords = map[string]bool{
	"/stop": true, "stop": true, "abort": true, "wait": true, "exit": true,
	"interrupt": true, "halt": true, "please stop": true, "stop please": true,
}

// IsStopCommand reports whether a message is nothing but a stop command
// ("/stop", "stop", "please stop", …), which aborts the session's run and
// clears its queue instead of being answered.
func IsStopCommand(body string) bool {
	s := strings.ToLower(strings.TrimSpace(body))
	s = strings.TrimRight(s, ".!?…")
	return stopWords[strings.Join(strings.Fields(s), " ")]
}

// mergeOverride lays b over a: the fields b sets win.
func mergeOverride(a, b Override) Override {
	if b.Mode != nil {
		a.Mode = b.Mode
	}
	if b.DebounceMs != nil {
		a.DebounceMs = b.DebounceMs
	}
	if b.Cap != nil {
		a.Cap = b.Cap
	}
	if b.Drop != nil {
		a.Drop = b.Drop
	}
	return a
}

func storeDrop(ids []int64, note string) store.JournalBatch {
	return store.JournalBatch{Dropped: []store.DropMark{{IDs: ids, Note: note}}}
}
