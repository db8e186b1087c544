package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/gateway/events"
	"github.com/switchboardhq/switchboard/gateway/protocol"
	"github.com/switchboardhq/switchboard/queue"
)

// The gateway watches every run of the dispatcher and turns it into chat
// and agent events for its clients.
var (
	_ queue.Observer           = (*Server)(nil)
	_ queue.CompactionObserver = (*Server)(nil)
	_ queue.Deliverer          = (*Server)(nil)
)

// RunStarted implements queue.Observer.
func (s *Server) RunStarted(info queue.RunInfo) {
	s.runs.started(info)
	s.relayOut(relayMsg{Kind: "start", Info: info})
}

// RunEvent implements queue.Observer.
func (s *Server) RunEvent(info queue.RunInfo, ev core.AgentEvent) {
	s.runEvent(info, ev)
	if s.relay != nil {
		if rev, ok := relayEvent(ev); ok {
			s.relayOut(relayMsg{Kind: "event", Info: info, Event: &rev})
		}
	}
}

// runEvent renders one event of a run, local or relayed.
func (s *Server) runEvent(info queue.RunInfo, ev core.AgentEvent) {
	if st := s.runs.get(info.RunID); st != nil {
		st.do(func(r *events.Run) []events.Out { return r.Event(ev) })
	}
}

// RunCompaction implements queue.CompactionObserver.
func (s *Server) RunCompaction(info queue.RunInfo, ev agent.CompactionEvent) {
	if st := s.runs.get(info.RunID); st != nil {
		st.do(func(r *events.Run) []events.Out { return r.Compaction(ev) })
	}
}

// RunEnded implements queue.Observer.
func (s *Server) RunEnded(info queue.RunInfo, res *agent.Result, err error) {
	s.runs.ended(info, res, err)
	if s.relay != nil {
		m := relayMsg{Kind: "end", Info: info, Result: relayResultOf(res)}
		if err != nil {
			m.Err = err.Error()
		}
		s.relayOut(m)
	}
}

// Deliver implements queue.Deliverer for the webchat route: a run's reply
// already reached its clients as the chat final event, and a notice (a
// queue directive's confirmation, "Stopped.") is sent as a chat final of
// its own. Other channels are the bridges' to deliver.
func (s *Server) Deliver(_ context.Context, d queue.Delivery) error {
	if d.Route.Channel != webchatChannel {
		return fmt.Errorf("gateway: cannot deliver to channel %q", d.Route.Channel)
	}
	if d.Kind != queue.DeliveryNotice {
		return nil
	}
	var texts []string
	for _, r := range d.Replies {
		if r.Text != "" {
			texts = append(texts, r.Text)
		}
	}
	if len(texts) == 0 {
		return nil
	}
	ev := events.ChatEvent{
		RunID: "notice-" + newUUID(), SessionKey: string(d.SessionKey), State: events.StateFinal,
		Message: &events.ChatMessage{Role: "assistant", Content: []events.ChatContent{{Type: "text", Text: strings.Join(texts, "\n\n")}}, Timestamp: s.now().UnixMilli()},
	}
	s.broadcastChat(ev, false)
	return nil
}

// webchatChannel is the route channel of messages from gateway clients.
const webchatChannel = "webchat"

// runTracker holds the state of the runs in progress and the outcomes of
// recent ones.
type runTracker struct {
	s *Server

	mu        sync.Mutex
	byRun     map[string]*runState          // run id and client run ids
	bySession map[core.SessionKey]*runState // the session's active run
	waiters   map[string][]chan *runOutcome
	outcomes  *dedupe // run id → *runOutcome, for agent.wait after the end
}

// runState is one run in progress. Its events.Run is used under mu, from
// the run's goroutine and the throttle timer.
type runState struct {
	s       *Server
	info    queue.RunInfo
	started time.Time

	mu         sync.Mutex
	run        *events.Run
	timer      *time.Timer
	ids        []string // run id first, then client run ids to re-address chat events to
	firstDelta bool
	ended      bool
}

// runOutcome is how a run ended, for agent and agent.wait.
type runOutcome struct {
	RunID     string
	Status    string // ok, error
	StartedAt int64
	EndedAt   int64
	Error     string
	Result    *agent.Result
}

func newRunTracker(s *Server) *runTracker {
	return &runTracker{
		s: s, byRun: map[string]*runState{}, bySession: map[core.SessionKey]*runState{},
		waiters: map[string][]chan *runOutcome{}, outcomes: newDedupe(s.now),
	}
}

func (t *runTracker) get(runID string) *runState {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byRun[runID]
}

func (t *runTracker) started(info queue.RunInfo) {
	st := &runState{s: t.s, info: info, started: t.s.now(), run: events.NewRun(info, events.Options{Now: t.s.now})}
	st.ids = append(st.ids, info.RunID)
	for _, id := range info.ClientRunIDs {
		if id != info.RunID && id != "" {
			st.ids = append(st.ids, id)
		}
	}
	t.mu.Lock()
	for _, id := range st.ids {
		t.byRun[id] = st
	}
	t.bySession[info.SessionKey] = st
	t.mu.Unlock()
	st.do(func(r *events.Run) []events.Out { return r.Start() })
	t.s.sessionsChanged(info, "start")
}

// alias re-addresses the chat events of the session's active run to
// clientRunID too: a message steered into a running turn is answered by it.
func (t *runTracker) alias(key core.SessionKey, clientRunID string) bool {
	t.mu.Lock()
	st := t.bySession[key]
	if st != nil {
		t.byRun[clientRunID] = st
	}
	t.mu.Unlock()
	if st == nil {
		return false
	}
	st.mu.Lock()
	st.ids = append(st.ids, clientRunID)
	st.mu.Unlock()
	return true
}

// active returns the ids of the session's active run (its own and the
// client run ids it answers), or nil.
func (t *runTracker) active(key core.SessionKey) []string {
	t.mu.Lock()
	st := t.bySession[key]
	t.mu.Unlock()
	if st == nil {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return append([]string(nil), st.ids...)
}

// sessionOf returns the session of an active run or client run id.
func (t *runTracker) sessionOf(runID string) (core.SessionKey, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.byRun[runID]
	if st == nil {
		return "", false
	}
	return st.info.SessionKey, true
}

// wait returns the outcome of runID if it has ended, else a channel that
// receives it when it does.
func (t *runTracker) wait(runID string) (*runOutcome, <-chan *runOutcome) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if o, ok := t.outcomes.get(runID); ok {
		return o.(*runOutcome), nil
	}
	ch := make(chan *runOutcome, 1)
	t.waiters[runID] = append(t.waiters[runID], ch)
	return nil, ch
}

// unwait removes a waiter that gave up.
func (t *runTracker) unwait(runID string, ch <-chan *runOutcome) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ws := t.waiters[runID]
	for i, w := range ws {
		if w == ch {
			ws = append(ws[:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) == 0 {
		delete(t.waiters, runID)
	} else {
		t.waiters[runID] = ws
	}
}

func (t *runTracker) ended(info queue.RunInfo, res *agent.Result, err error) {
	st := t.get(info.RunID)
	if st == nil {
		// A run that started before the gateway was observing.
		t.started(info)
		st = t.get(info.RunID)
	}
	o := &runOutcome{RunID: info.RunID, Status: "ok", StartedAt: st.started.UnixMilli(), EndedAt: t.s.now().UnixMilli(), Result: res}
	switch {
	case err != nil:
		o.Status, o.Error = "error", err.Error()
	case res == nil:
		o.Status, o.Error = "error", "the run produced no result"
	case res.Aborted:
		o.Status, o.Error = "error", "aborted"
	case res.Err != nil:
		o.Status, o.Error = "error", res.Err.Error()
	}
	st.mu.Lock()
	ids := append([]string(nil), st.ids...)
	// A retried chat.send that arrives after the final must see the
	// outcome, so it is stored before the final goes out.
	for _, id := range ids {
		chat := map[string]any{"runId": id, "status": o.Status}
		if o.Error != "" {
			chat["summary"] = o.Error
		}
		t.s.dedupe.update("chat:"+id, chat)
	}
	outs := st.run.End(res, err)
	if st.timer != nil {
		st.timer.Stop()
	}
	st.ended = true
	st.emit(outs)
	st.mu.Unlock()

	t.s.metrics.runs.WithLabelValues(o.Status).Inc()
	t.s.metrics.runSeconds.Observe(t.s.now().Sub(st.started).Seconds())

	t.mu.Lock()
	if t.bySession[info.SessionKey] == st {
		delete(t.bySession, info.SessionKey)
	}
	var notify []chan *runOutcome
	for _, id := range ids {
		if t.byRun[id] == st {
			delete(t.byRun, id)
		}
		t.outcomes.put(id, o)
		notify = append(notify, t.waiters[id]...)
		delete(t.waiters, id)
	}
	t.mu.Unlock()
	for _, ch := range notify {
		ch <- o
	}
	t.s.sessionsChanged(info, "end")
}

// stop stops the throttle timers of runs still in progress.
func (t *runTracker) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, st := range t.bySession {
		st.mu.Lock()
		if st.timer != nil {
			st.timer.Stop()
		}
		st.ended = true
		st.mu.Unlock()
	}
}

// do runs fn on the run's translator and sends what it returns, then arms
// the throttle timer for a held chat delta.
func (st *runState) do(fn func(r *events.Run) []events.Out) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.ended {
		return
	}
	st.emit(fn(st.run))
	st.armFlush()
}

func (st *runState) armFlush() {
	due, ok := st.run.NextFlush()
	if !ok {
		return
	}
	d := due.Sub(st.s.now())
	if d < 0 {
		d = 0
	}
	if st.timer == nil {
		st.timer = time.AfterFunc(d, func() {
			st.do(func(r *events.Run) []events.Out { return r.Flush() })
		})
		return
	}
	st.timer.Reset(d)
}

// emit sends a run's events, called with st.mu held so they leave in order.
func (st *runState) emit(outs []events.Out) {
	s := st.s
	for _, out := range outs {
		switch {
		case out.Chat != nil:
			if out.Chat.State == events.StateDelta && !st.firstDelta {
				st.firstDelta = true
				s.metrics.firstDelta.Observe(s.now().Sub(st.started).Seconds())
			}
			for _, id := range st.ids {
				ev := *out.Chat
				ev.RunID = id
				s.broadcastChat(ev, out.DropIfSlow)
			}
		case out.Agent != nil:
			if out.ToolStream {
				out = events.StripToolResults(out)
			}
			// Encoded when the first client needs it (broadcast calls
			// payload synchronously): with nobody connected, a turn's
			// agent events cost nothing.
			agent := out.Agent
			var payload []byte
			encode := func(int) []byte {
				if payload == nil {
					var err error
					if payload, err = json.Marshal(agent); err != nil {
						s.log.Error("gateway: agent event could not be encoded", "err", err)
						payload = []byte("{}")
					}
				}
				return payload
			}
			ev := outEvent{name: events.EventAgent, payload: encode, dropIfSlow: out.DropIfSlow, session: st.info.SessionKey}
			switch structured := out.Structured; {
			case out.ToolStream:
				ids := st.ids
				ev.to = func(c *conn) bool {
					if !c.params.HasCap(protocol.CapToolEvents) || structured && !c.params.HasCap(protocol.CapStructuredStream) {
						return false
					}
					for _, id := range ids {
						if c.startedRun(id) {
							return true
						}
					}
					return false
				}
			case structured:
				ev.to = func(c *conn) bool { return c.params.HasCap(protocol.CapStructuredStream) }
			}
			s.hub.broadcast(ev)
		}
	}
}

// broadcastChat sends a chat event in each client's protocol version, to
// the clients following its session. A delta (droppable) coalesces with
// the run's delta still queued for a client.
func (s *Server) broadcastChat(ev events.ChatEvent, dropIfSlow bool) {
	encode := func(ev events.ChatEvent) func(int) []byte {
		return func(p int) []byte {
			b, err := ev.MarshalFor(p)
			if err != nil {
				s.log.Error("gateway: chat event could not be encoded", "err", err)
				return []byte("{}")
			}
			return b
		}
	}
	out := outEvent{name: events.EventChat, dropIfSlow: dropIfSlow, session: core.SessionKey(ev.SessionKey), payload: encode(ev)}
	if dropIfSlow && ev.State == events.StateDelta {
		// Folded into a delta the client has not read yet, this one
		// carries the whole text as a replacement.
		whole := ev
		whole.DeltaText, whole.Replace = ev.Message.Text(), true
		out.coalesce, out.whole = "chat\x00"+ev.RunID, encode(whole)
	}
	s.hub.broadcast(out)
}

// sessionsChanged tells clients that subscribed with sessions.subscribe that
// a session's run started or ended.
func (s *Server) sessionsChanged(info queue.RunInfo, phase string) {
	payload, _ := json.Marshal(map[string]any{
		"sessionKey": info.SessionKey, "phase": phase, "runId": info.RunID, "ts": s.now().UnixMilli(),
	})
	s.hub.broadcast(outEvent{name: "sessions.changed", payload: func(int) []byte { return payload }, dropIfSlow: true,
		to: func(c *conn) bool { return c.isSubscribed() }})
}
