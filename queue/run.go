package queue

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/core/prompt"
	"github.com/switchboardhq/switchboard/store"
)

// maxRunFailures is how many times in a row a session's messages may fail
// to run at all (a transcript that cannot be written, say) before they are
// answered with an error notice instead of retried forever.
const maxRunFailures = 5

// runningMarkDelay is how long a run goes before its entries are marked
// running in the journal.
const runningMarkDelay = 500 * time.Millisecond

// deliveryTimeout bounds one delivery attempt.
const deliveryTimeout = 2 * time.Minute

// run is one turn the dispatcher started.
type run struct {
	id       string
	key      core.SessionKey
	items    []*item       // the messages this run answers
	overflow overflowState // the dropped messages whose summary it carries
	steered  []steeredItem // messages steered into it while it ran
	turn     agent.Turn
	route    core.Route
	replyTo  core.MessageID
	lane     *lane
	// noDeliver: the replies go to the Observers only (SubmitOptions).
	noDeliver bool
	// fence is the session lease the run holds (Deps.Leases); its
	// outcome is written only while the lease holds.
	fence store.Fence
	// ended: the model turn is over and only its bookkeeping (the
	// outcome's commit, the observers' final events, delivery) is left.
	// Guarded by Dispatcher.mu.
	ended  bool
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// steeredItem pairs a steered message with the pointer the runner got.
type steeredItem struct {
	in *core.Inbound
	it *item
}

func (r *run) entryIDs() []int64 {
	ids := make([]int64, 0, len(r.items)+len(r.overflow.ids))
	for _, it := range r.items {
		if it.id != 0 {
			ids = append(ids, it.id)
		}
	}
	return append(ids, r.overflow.ids...)
}

func (r *run) info() RunInfo {
	info := RunInfo{RunID: r.id, SessionKey: r.key, Route: r.route, Kind: r.turn.Inbound.Kind, EntryIDs: r.entryIDs()}
	for _, it := range r.items {
		if it.rec.ClientRunID != "" {
			info.ClientRunIDs = append(info.ClientRunIDs, it.rec.ClientRunID)
		}
	}
	return info
}

// startRunLocked starts a run of items (and, with ov, the overflow
// summary), marking the session active. It builds the turn: one message as
// it came, or several merged into the collect prompt of openclaw-facts §3.4.
func (d *Dispatcher) startRunLocked(s *session, items []*item, ov *overflowState) *run {
	r := &run{key: s.key, items: items}
	if ov != nil && ov.Dropped > 0 {
		r.overflow = *ov
		*ov = overflowState{}
	}
	var base *item // whose inbound gives the run its settings and kind
	switch {
	case len(items) > 0:
		base = items[len(items)-1]
	case len(s.items) > 0:
		base = s.items[0] // an overflow summary is routed like the head item
	}
	var in core.Inbound
	if base != nil {
		in = base.rec.Inbound
	} else {
		in = core.Inbound{SessionKey: s.key, Kind: core.InboundSystem}
	}
	r.route = in.Route
	r.replyTo = in.MessageID

	switch {
	case len(items) == 1 && r.overflow.Dropped == 0:
		r.turn.Inbound = in
		r.id = items[0].rec.ClientRunID
		r.turn.Model = items[0].rec.Model
		r.turn.Timeout = time.Duration(items[0].rec.TimeoutMs) * time.Millisecond
		r.noDeliver = items[0].rec.NoDeliver
	case len(items) == 0:
		r.turn.Inbound = in
		r.turn.Inbound.Kind = core.InboundSystem
		r.turn.Prompt = OverflowPrompt(r.overflow.promptOverflow())
	default:
		routes := make([]core.Route, len(items))
		bodies := make([]string, len(items))
		for i, it := range items {
			routes[i] = it.rec.Inbound.Route
			iin := it.rec.Inbound
			bodies[i] = prompt.Body(&iin, prompt.State{Now: d.clock.Now}).Text
		}
		r.route = firstRouting(routes)
		r.turn.Inbound = in
		r.turn.Inbound.Route = r.route
		r.turn.Inbound.Body = ""
		r.turn.Prompt = CollectPrompt(bodies, r.overflow.promptOverflow())
	}
	// The summary of dropped messages carries lines of anyone's.
	r.turn.SenderIsOwner = len(items) > 0 && r.overflow.Dropped == 0
	for _, it := range items {
		if !d.isOwner(it.rec.Inbound) {
			r.turn.SenderIsOwner = false
		}
	}
	if r.id == "" {
		r.id = d.newID()
	}
	r.turn.RunID = r.id
	laneName := LaneMain
	if base != nil && base.rec.Lane != "" {
		laneName = base.rec.Lane
	} else if in.Kind == core.InboundCron {
		laneName = LaneCron
	}
	r.lane = d.lanes[laneName]
	if r.lane == nil {
		r.lane = d.lanes[LaneMain]
	}
	r.ctx, r.cancel = context.WithCancelCause(d.baseCtx)
	s.active = r
	if s.drainTimer != nil {
		s.drainTimer.Stop()
		s.drainTimer = nil
	}
	d.runs[r] = struct{}{}
	d.runsWG.Add(1)
	go d.execute(s, r)
	return r
}

// promptOverflow is the overflow as the prompt shows it: with summary
// lines for summarize, the count alone for old.
func (o overflowState) promptOverflow() Overflow {
	if o.policy == DropOld {
		return Overflow{Dropped: o.Dropped}
	}
	return o.Overflow
}

// firstRouting takes each routing field from the first route that has it
// (OpenClaw's resolveOriginRoutingMetadata).
func firstRouting(routes []core.Route) core.Route {
	var out core.Route
	for _, r := range routes {
		if out.Channel == "" {
			out.Channel = r.Channel
		}
		if out.To == "" {
			out.To = r.To
		}
		if out.AccountID == "" {
			out.AccountID = r.AccountID
		}
		if out.ThreadID == "" {
			out.ThreadID = r.ThreadID
		}
	}
	return out
}

// execute runs one turn on its own goroutine: lane slot, running mark,
// the agent, then the outcome made durable before it is delivered.
func (d *Dispatcher) execute(s *session, r *run) {
	defer d.runsWG.Done()
	if err := r.lane.acquire(r.ctx, d.clock, d.log, string(r.key)); err != nil {
		d.afterRun(s, r, nil, err)
		return
	}
	// The slot bounds model turns, not deliveries: it is given back as soon
	// as the turn ends, so a reply waiting out a platform's pacing (one
	// message a second per Telegram chat) does not hold up other sessions.
	release := sync.OnceFunc(r.lane.release)
	defer release()
	if ok, err := d.leaseRun(s, r); err != nil {
		d.afterRun(s, r, nil, err)
		return
	} else if !ok {
		return // handed to the instance that holds the session
	}
	if left, err := d.dropFinished(r); err != nil {
		d.afterRun(s, r, nil, err)
		return
	} else if !left {
		d.afterRun(s, r, nil, nil) // all run by another instance meanwhile
		return
	}

	r.turn.SystemEvents = d.events.Drain(r.key)
	for _, ev := range r.turn.SystemEvents {
		if !ev.Trusted && !ev.FromOwner {
			// Channel-sourced events (an edited Slack message) are someone
			// else's words: the turn that reads them is not the owner's.
			// Under d.mu: Submit reads it to decide on steering.
			d.mu.Lock()
			r.turn.SenderIsOwner = false
			d.mu.Unlock()
			break
		}
	}
	if ids := r.entryIDs(); len(ids) > 0 {
		// The running mark is informational (a restart replays accepted and
		// running entries alike), so a run that finishes quickly skips it
		// and goes from accepted to done in one write.
		mark := d.clock.AfterFunc(runningMarkDelay, func() {
			d.commit.applyAsync(store.JournalBatch{Running: []store.RunMark{{IDs: ids, RunID: r.id}}})
		})
		defer mark.Stop()
	}
	info := r.info()
	for _, o := range d.deps.Observers {
		o.RunStarted(info)
	}
	if len(d.deps.Observers) > 0 {
		r.turn.Sink = func(ev core.AgentEvent) {
			for _, o := range d.deps.Observers {
				o.RunEvent(info, ev)
			}
		}
		r.turn.OnCompaction = func(ev agent.CompactionEvent) {
			for _, o := range d.deps.Observers {
				if co, ok := o.(CompactionObserver); ok {
					co.RunCompaction(info, ev)
				}
			}
		}
	}
	res, err := d.deps.Runner.Run(r.ctx, r.turn)
	release()
	// From here a client may have its final (the observers send it below):
	// a message it sends straight back finds the session free.
	d.mu.Lock()
	r.ended = true
	d.mu.Unlock()
	if err == nil && !errors.Is(context.Cause(r.ctx), errShutdown) {
		d.complete(r, res)
	}
	for _, o := range d.deps.Observers {
		o.RunEnded(info, res, err)
	}
	d.afterRun(s, r, res, err)
}

// complete makes the run's outcome durable (its entries done, its replies
// stored) and then delivers the replies. A crash between the two
// redelivers the stored replies at the next start; the model does not run
// again.
func (d *Dispatcher) complete(r *run, res *agent.Result) {
	ids := r.entryIDs()
	d.mu.Lock()
	unsteered := map[*core.Inbound]bool{}
	for _, in := range res.Unsteered {
		unsteered[in] = true
	}
	for _, st := range r.steered {
		if !unsteered[st.in] && st.it.id != 0 {
			ids = append(ids, st.it.id)
		}
	}
	d.mu.Unlock()
	delivery := Delivery{
		Kind: DeliveryReply, RunID: r.id, SessionKey: r.key, Route: r.route,
		ReplyToMessageID: r.replyTo, Batched: len(r.items) > 1,
		Replies: res.Replies, EntryIDs: ids,
	}
	if len(ids) > 0 {
		raw, err := json.Marshal(delivery)
		if err == nil {
			b := store.JournalBatch{Complete: []store.Completion{{
				IDs: ids,
				Outcome: store.RunOutcome{
					RunID: r.id, SessionKey: r.key, Delivery: raw,
					Delivered: len(res.Replies) == 0 || r.noDeliver, CreatedAt: d.clock.Now().UnixMilli(),
				},
			}}}
			if r.fence.Name != "" {
				b.Fences = []store.Fence{r.fence}
			}
			_, err = d.commit.apply(context.WithoutCancel(r.ctx), b)
		}
		if errors.Is(err, store.ErrFenced) {
			// Another instance took the session over while this turn ran:
			// its answer is not ours to give. The messages are still
			// pending; the new holder runs them.
			d.log.Warn("session taken over by another instance during a turn; its answer is dropped", "run", r.id, "session", r.key, "err", err)
			return
		}
		if err != nil {
			// The answer still goes out; a restart may answer these entries
			// again, which beats leaving the user waiting.
			d.log.Error("could not record a finished run; a restart may answer it again", "run", r.id, "session", r.key, "err", err)
		}
	}
	if len(res.Replies) == 0 || r.noDeliver {
		return
	}
	if d.deliver(delivery) && len(ids) > 0 {
		d.commit.applyAsync(store.JournalBatch{Delivered: []string{r.id}})
	}
}

// deliver sends one delivery, reporting success.
func (d *Dispatcher) deliver(del Delivery) bool {
	if d.deps.Deliverer == nil {
		return true
	}
	ctx, cancel := context.WithTimeout(d.baseCtx, deliveryTimeout)
	defer cancel()
	if err := d.deps.Deliverer.Deliver(ctx, del); err != nil {
		d.log.Error("delivery failed", "kind", del.Kind, "run", del.RunID, "session", del.SessionKey, "channel", del.Route.Channel, "err", err)
		return false
	}
	return true
}

// notice tells a chat something on Switchboard's behalf, without blocking
// the caller.
func (d *Dispatcher) notice(key core.SessionKey, route core.Route, replyTo core.MessageID, text string) {
	del := Delivery{Kind: DeliveryNotice, SessionKey: key, Route: route, ReplyToMessageID: replyTo, Replies: []core.ReplyPayload{{Text: text}}}
	d.bgWG.Add(1)
	go func() {
		defer d.bgWG.Done()
		d.deliver(del)
	}()
}

// redeliver sends outcomes a crash left undelivered.
func (d *Dispatcher) redeliver(outcomes []store.RunOutcome) {
	for _, o := range outcomes {
		var del Delivery
		if err := json.Unmarshal(o.Delivery, &del); err != nil {
			d.log.Error("stored delivery unreadable; skipping it", "run", o.RunID, "err", err)
			continue
		}
		if d.deliver(del) {
			d.commit.applyAsync(store.JournalBatch{Delivered: []string{o.RunID}})
		}
	}
}

// afterRun clears the session's active run and starts what comes next: an
// interrupting message, else the queue after its debounce. A run that could
// not run at all (err) gives its messages back to the queue with a backoff.
func (d *Dispatcher) afterRun(s *session, r *run, res *agent.Result, err error) {
	shutdown := errors.Is(context.Cause(r.ctx), errShutdown)
	r.cancel(nil)
	var giveUp []*item
	d.mu.Lock()
	delete(d.runs, r)
	s.active = nil
	switch {
	case shutdown:
		// Left pending in the journal; the next start runs them.
	case err != nil:
		s.failures++
		back := slices.Clone(r.items)
		for _, st := range r.steered {
			back = append(back, st.it)
		}
		if s.failures >= maxRunFailures {
			giveUp = back
			s.failures = 0
		} else {
			d.log.Error("run failed to start; will retry", "session", r.key, "attempt", s.failures, "err", err)
			s.items = mergeByID(back, s.items)
			if r.overflow.Dropped > 0 {
				r.overflow.Overflow.Lines = append(r.overflow.Lines, s.overflow.Lines...)
				r.overflow.Dropped += s.overflow.Dropped
				r.overflow.ids = append(r.overflow.ids, s.overflow.ids...)
				s.overflow = r.overflow
			}
		}
	default:
		s.failures = 0
		if res != nil && len(res.Unsteered) > 0 {
			left := map[*core.Inbound]bool{}
			for _, in := range res.Unsteered {
				left[in] = true
			}
			var back []*item
			for _, st := range r.steered {
				if left[st.in] {
					back = append(back, st.it)
				}
			}
			s.items = mergeByID(back, s.items)
		}
	}
	next := s.startNext && s.failures == 0
	s.startNext = false
	if !d.stopping {
		switch {
		case s.priority != nil:
			it := s.priority
			s.priority = nil
			if s.interruptTimer != nil {
				s.interruptTimer.Stop()
				s.interruptTimer = nil
			}
			d.startRunLocked(s, []*item{it}, nil)
		case next:
			// A message came after the turn ended: it runs now.
			if s.drainTimer != nil {
				s.drainTimer.Stop()
				s.drainTimer = nil
			}
			d.drainLocked(s, true)
		default:
			d.scheduleDrainLocked(s)
		}
	}
	d.evictLocked(s)
	d.mu.Unlock()

	if len(giveUp) > 0 {
		d.log.Error("giving up on messages that repeatedly failed to run", "session", r.key, "count", len(giveUp), "err", err)
		d.failItems(r.key, giveUp, err)
	}
}

// failItems answers messages that cannot be run with an error notice and
// records them done, so they are not retried forever.
func (d *Dispatcher) failItems(key core.SessionKey, items []*item, cause error) {
	var ids []int64
	for _, it := range items {
		if it.id != 0 {
			ids = append(ids, it.id)
		}
	}
	last := items[len(items)-1].rec.Inbound
	del := Delivery{
		Kind: DeliveryNotice, RunID: d.newID(), SessionKey: key, Route: last.Route, ReplyToMessageID: last.MessageID,
		Replies:  []core.ReplyPayload{{Text: "⚠️ Sorry, I could not process your message, so it was not answered. Please try again later.", IsError: true}},
		EntryIDs: ids,
	}
	if len(ids) > 0 {
		raw, _ := json.Marshal(del)
		_, err := d.commit.apply(d.baseCtx, store.JournalBatch{Complete: []store.Completion{{
			IDs: ids, Outcome: store.RunOutcome{RunID: del.RunID, SessionKey: key, Delivery: raw, CreatedAt: d.clock.Now().UnixMilli()},
		}}})
		if err != nil {
			d.log.Error("could not record failed messages", "session", key, "err", err, "cause", cause)
		}
	}
	if d.deliver(del) && len(ids) > 0 {
		d.commit.applyAsync(store.JournalBatch{Delivered: []string{del.RunID}})
	}
}

// mergeByID merges two lists of items, each in journal order, into one in
// journal order (messages that arrived first run first).
func mergeByID(a, b []*item) []*item {
	out := append(slices.Clone(a), b...)
	slices.SortStableFunc(out, func(x, y *item) int {
		switch {
		case x.id == 0 || y.id == 0:
			return 0
		case x.id < y.id:
			return -1
		case x.id > y.id:
			return 1
		}
		return 0
	})
	return out
}

// isOwner applies Deps.IsOwner.
func (d *Dispatcher) isOwner(in core.Inbound) bool {
	return d.deps.IsOwner != nil && d.deps.IsOwner(in)
}
