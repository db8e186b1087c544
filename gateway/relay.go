package gateway

import (
	"encoding/json"
	"errors"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/core/llm"
	"github.com/switchboardhq/switchboard/queue"
)

// Relay carries the runs of this instance to the other instances of a
// cluster, whose gateways show them to their clients (a client connected
// to any instance sees the chat and agent events of a run on any other).
// cluster.Relay implements it over PostgreSQL's LISTEN/NOTIFY.
type Relay interface {
	// Publish sends one encoded run observation to the other instances,
	// in order with the ones before it. It must not block: a relay that
	// falls behind drops, and the clients of other instances miss deltas
	// (the final event and chat.history still hold the answer).
	Publish(payload []byte)
}

// SetRelay makes the gateway publish the runs it observes to r. Call it
// before Start.
func (s *Server) SetRelay(r Relay) { s.relay = r }

// relayMsg is one run observation on the relay.
type relayMsg struct {
	Kind   string           `json:"k"` // start, event or end
	Info   queue.RunInfo    `json:"info"`
	Event  *core.AgentEvent `json:"ev,omitempty"`
	Result *relayResult     `json:"res,omitempty"`
	Err    string           `json:"err,omitempty"`
}

// relayResult is what a remote gateway needs of an agent.Result to end
// the run's events: the final answer, the replies, how it ended.
type relayResult struct {
	Final    *core.AssistantMessage `json:"final,omitempty"`
	Replies  []core.ReplyPayload    `json:"replies,omitempty"`
	Aborted  bool                   `json:"aborted,omitempty"`
	TimedOut bool                   `json:"timedOut,omitempty"`
	ErrKind  llm.ErrorKind          `json:"errKind,omitempty"`
	ErrMsg   string                 `json:"errMsg,omitempty"`
	HasErr   bool                   `json:"hasErr,omitempty"`
}

func (s *Server) relayOut(m relayMsg) {
	if s.relay == nil {
		return
	}
	b, err := json.Marshal(m)
	if err != nil {
		s.log.Warn("gateway: cannot relay a run observation", "run", m.Info.RunID, "err", err)
		return
	}
	s.relay.Publish(b)
}

func relayResultOf(res *agent.Result) *relayResult {
	if res == nil {
		return nil
	}
	rr := &relayResult{Final: res.Final, Replies: res.Replies, Aborted: res.Aborted, TimedOut: res.TimedOut}
	if res.Err != nil {
		rr.HasErr, rr.ErrKind, rr.ErrMsg = true, res.Err.Kind, res.Err.Message
	}
	return rr
}

func (rr *relayResult) result() *agent.Result {
	if rr == nil {
		return nil
	}
	res := &agent.Result{Final: rr.Final, Replies: rr.Replies, Aborted: rr.Aborted, TimedOut: rr.TimedOut}
	if rr.HasErr {
		res.Err = &llm.Error{Kind: rr.ErrKind, Message: rr.ErrMsg}
	}
	return res
}

// ReceiveRelay shows a run of another instance to this gateway's clients,
// as if this instance's dispatcher ran it; it is never relayed again.
// Called on the relay's goroutine, in publication order.
func (s *Server) ReceiveRelay(payload []byte) {
	var m relayMsg
	if err := json.Unmarshal(payload, &m); err != nil || m.Info.RunID == "" {
		s.log.Debug("gateway: unreadable relayed run observation", "err", err)
		return
	}
	switch m.Kind {
	case "start":
		s.runs.started(m.Info)
	case "event":
		if m.Event != nil {
			s.runEvent(m.Info, *m.Event)
		}
	case "end":
		var err error
		if m.Err != "" {
			err = errors.New(m.Err)
		}
		s.runs.ended(m.Info, m.Result.result(), err)
	}
}

// relayEvent is ev as the relay carries it, reporting whether it carries
// it at all: only the events a remote gateway renders (messages and tool
// executions), and a streamed delta without the message assembled so far
// (the receiver assembles it from the deltas, as it does locally), so a
// reply of n bytes costs the relay order n bytes, not n².
func relayEvent(ev core.AgentEvent) (core.AgentEvent, bool) {
	switch ev.Type {
	case core.AgentEventMessageStart, core.AgentEventMessageEnd,
		core.AgentEventToolExecutionStart, core.AgentEventToolExecutionUpdate, core.AgentEventToolExecutionEnd:
		return ev, true
	case core.AgentEventMessageUpdate:
		if ev.AssistantMessageEvent == nil {
			return ev, false
		}
		ev.Message = nil
		switch ev.AssistantMessageEvent.Type {
		case core.AssistantEventToolCallStart, core.AssistantEventToolCallDelta, core.AssistantEventToolCallEnd:
			// The partial message names the tool call being streamed.
		default:
			ame := *ev.AssistantMessageEvent
			ame.Partial = nil
			ev.AssistantMessageEvent = &ame
		}
		return ev, true
	}
	return ev, false
}
