package events

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/core/llm"
	"github.com/switchboardhq/switchboard/queue"
)

// DefaultThrottle is the shortest interval between two chat deltas of one
// run (openclaw-facts §1.11), and between two of its agent deltas.
const DefaultThrottle = 150 * time.Millisecond

// Options tune a Run. The zero value is ready to use.
type Options struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Throttle is the shortest interval between two chat deltas, and
	// between two agent deltas; zero means DefaultThrottle, a negative
	// value sends every change at once.
	Throttle time.Duration
}

// Run translates one run's callbacks (queue.Observer and
// queue.CompactionObserver) into gateway event payloads. It does no IO,
// starts no goroutine and arms no timer: when a delta is held back by the
// throttle, NextFlush says when it is due and the caller calls Flush
// then.
//
// A Run is not safe for concurrent use; the server serialises the calls
// of one run (the dispatcher already calls the observer from the run's
// goroutine, never concurrently).
type Run struct {
	runID      string
	sessionKey string
	kind       core.InboundKind
	now        func() time.Time
	throttle   time.Duration
	// hideChat suppresses chat deltas: heartbeat output is hidden from
	// interactive chat (OpenClaw's shouldHideHeartbeatChatOutput with the
	// default showOk false); the final still says whether there was an
	// alert.
	hideChat bool

	seq       int64
	started   bool
	ended     bool
	startedAt int64

	// out collects what the call in progress returns; take hands it over.
	out []Out
	// pend is the delta held back by the throttle (see hold).
	pend pending
	// lastTick is when the last delta, agent or chat, was sent; ticked
	// says one was. Both kinds share the throttle, so a client gets one
	// agent delta and one chat delta per interval at most.
	lastTick time.Time
	ticked   bool

	// Structured stream state.
	msgCount int
	msg      *message          // the assistant message streaming, if any
	calls    map[string]blkRef // tool call id → where the call is

	// Chat state: buf is all visible assistant text of the run, as it is
	// streamed; sent is the display text of the last delta.
	buf       []byte
	dirty     bool
	sent      string
	sentBytes int // the text bytes of every chat delta sent (see withinBudget)
}

// blkRef locates a content block: a response and an index in it.
type blkRef struct {
	messageID string
	index     int
}

// NewRun starts translating the run info describes; call it from
// Observer.RunStarted and Start right after. Every event carries
// info.RunID and info.SessionKey; when the run answers messages sent under
// other client run ids (info.ClientRunIDs of a collected batch), the
// caller re-addresses copies of the chat events it wants those clients to
// see.
func NewRun(info queue.RunInfo, opts Options) *Run {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Throttle == 0 {
		opts.Throttle = DefaultThrottle
	}
	return &Run{
		runID:      info.RunID,
		sessionKey: string(info.SessionKey),
		kind:       info.Kind,
		now:        opts.Now,
		throttle:   opts.Throttle,
		hideChat:   info.Kind == core.InboundHeartbeat,
	}
}

// Start returns the lifecycle start event (Observer.RunStarted). It is
// optional: the first call of any other method emits it when Start was not
// called, so it always has seq 1.
func (r *Run) Start() []Out {
	if r.ended || r.started {
		return nil
	}
	r.ensureStarted()
	return r.take()
}

// Event translates one agent event (Observer.RunEvent) and returns what to
// send now, in order. Events after End are stale and dropped.
func (r *Run) Event(ev core.AgentEvent) []Out {
	if r.ended {
		return nil
	}
	r.ensureStarted()
	switch ev.Type {
	case core.AgentEventMessageStart:
		if am, ok := ev.Message.(*core.AssistantMessage); ok && am != nil {
			r.closeMessage(nil)
			r.openMessage(am)
		}
	case core.AgentEventMessageUpdate:
		if ev.AssistantMessageEvent != nil {
			if r.msg == nil {
				am, _ := ev.Message.(*core.AssistantMessage)
				r.openMessage(am)
			}
			r.streamEvent(ev.AssistantMessageEvent)
		}
	case core.AgentEventMessageEnd:
		if am, ok := ev.Message.(*core.AssistantMessage); ok && am != nil {
			if r.msg == nil {
				r.openMessage(am)
			}
			r.closeMessage(am)
		}
	case core.AgentEventToolExecutionStart:
		r.toolEvent("start", ev)
	case core.AgentEventToolExecutionUpdate:
		r.toolEvent("update", ev)
	case core.AgentEventToolExecutionEnd:
		r.toolEvent("result", ev)
	}
	r.tick()
	return r.take()
}

// Compaction translates a compaction report (CompactionObserver) into a
// compaction-stream event.
func (r *Run) Compaction(ev agent.CompactionEvent) []Out {
	if r.ended {
		return nil
	}
	r.ensureStarted()
	data := map[string]any{"phase": ev.Phase, "reason": ev.Reason, "tokensBefore": ev.TokensBefore}
	if ev.Phase != "start" {
		data["tokensAfter"] = ev.TokensAfter
		// OpenClaw's UI shows "compacted" only when completed is true.
		data["completed"] = ev.Err == nil
		if ev.Err != nil {
			data["error"] = ev.Err.Error()
		}
	}
	r.push(r.agentOut(r.next(), StreamCompaction, data))
	r.tick()
	return r.take()
}

// NextFlush reports when a delta held back by the throttle, an agent delta
// or a chat delta, becomes due; ok is false when nothing is held. Arm a
// timer for it and call Flush.
//
// A chat delta held by the byte budget rather than the throttle needs no
// timer: it waits for the text to grow, and the final flushes it in any
// case.
func (r *Run) NextFlush() (due time.Time, ok bool) {
	if r.ended || (r.pend.b == nil && !r.chatWaiting()) {
		return time.Time{}, false
	}
	if !r.ticked {
		return r.now(), true
	}
	return r.lastTick.Add(r.throttle), true
}

// Flush returns the held deltas if they are due (see NextFlush), else
// nothing. Calling it early or twice is harmless.
func (r *Run) Flush() []Out {
	if r.ended {
		return nil
	}
	r.tick()
	return r.take()
}

// End translates the end of the run (Observer.RunEnded): the lifecycle
// end or error event, then the chat final, aborted or error event. It
// decides in this order:
//
//   - err != nil (the run could not run at all): error;
//   - res.Aborted: aborted, with the partial text as message when any;
//   - res.Err != nil (a model failure or the run's timeout): error, with
//     errorKind from res.Err.Kind;
//   - otherwise final, whose message is the text of res.Replies (what the
//     chat receives) and is absent when the reply was silent or a
//     heartbeat ack; a throttled delta is flushed first.
//
// Every later call returns nothing.
func (r *Run) End(res *agent.Result, err error) []Out {
	if r.ended {
		return nil
	}
	r.ensureStarted()
	r.closeMessage(nil)
	now := r.now()
	ts := now.UnixMilli()
	seq := r.next()
	life := map[string]any{"startedAt": r.startedAt, "endedAt": ts}
	chat := &ChatEvent{RunID: r.runID, SessionKey: r.sessionKey, Seq: seq}

	switch {
	case err != nil:
		chat.State, chat.ErrorMessage, chat.ErrorKind = StateError, err.Error(), errorKindOf(err)
	case res != nil && res.Aborted:
		chat.State, chat.StopReason = StateAborted, "stop"
		if !r.hideChat {
			chat.Message = r.chatMessage(r.display(), ts)
		}
	case res != nil && res.Err != nil:
		chat.State, chat.ErrorMessage, chat.ErrorKind = StateError, res.Err.Error(), kindName(res.Err.Kind)
		chat.Usage = usageOf(res)
		if res.Final != nil {
			chat.StopReason = string(res.Final.StopReason)
		}
	default:
		chat.State = StateFinal
		if res != nil {
			chat.Message = r.chatMessage(replyText(res.Replies), ts)
			chat.Usage = usageOf(res)
			if res.Final != nil {
				chat.StopReason = string(res.Final.StopReason)
			}
		}
	}

	if chat.State == StateError && chat.ErrorMessage == "" {
		chat.ErrorMessage = "the run failed (" + chat.ErrorKind + ")"
	}
	switch chat.State {
	case StateError:
		life["phase"], life["error"], life["errorKind"] = "error", chat.ErrorMessage, chat.ErrorKind
	case StateAborted:
		life["phase"], life["aborted"], life["stopReason"] = "end", true, chat.StopReason
	default:
		life["phase"] = "end"
		if chat.StopReason != "" {
			life["stopReason"] = chat.StopReason
		}
	}
	r.push(r.agentOutAt(seq, ts, StreamLifecycle, life))
	if chat.State == StateFinal {
		// Streaming clients get the complete text before the final.
		r.chatDelta(seq, now)
	}
	r.push(Out{Event: EventChat, Chat: chat})

	r.ended = true
	r.msg, r.calls, r.buf, r.sent = nil, nil, nil, ""
	r.dirty = false
	return r.take()
}

// push adds o to what the call in progress returns.
func (r *Run) push(o Out) { r.out = append(r.out, o) }

// take returns what the call in progress produced and starts afresh.
func (r *Run) take() []Out {
	out := r.out
	r.out = nil
	return out
}

// ensureStarted emits the lifecycle start event once.
func (r *Run) ensureStarted() {
	if r.started {
		return
	}
	r.started = true
	ts := r.now().UnixMilli()
	r.startedAt = ts
	data := map[string]any{"phase": "start", "startedAt": ts}
	if r.kind != "" {
		data["kind"] = string(r.kind)
	}
	r.push(r.agentOutAt(r.next(), ts, StreamLifecycle, data))
}

// next allocates the run's next agent seq for an event about to be
// pushed. A held delta is sent first, so it keeps its place before that
// event.
func (r *Run) next() int64 {
	r.flushHeld()
	r.seq++
	return r.seq
}

func (r *Run) agentOut(seq int64, stream string, data map[string]any) Out {
	return r.agentOutAt(seq, r.now().UnixMilli(), stream, data)
}

func (r *Run) agentOutAt(seq, ts int64, stream string, data map[string]any) Out {
	return Out{Event: EventAgent, Structured: stream == StreamAssistant || stream == StreamThinking, Agent: &AgentEvent{
		RunID: r.runID, Seq: seq, Stream: stream, TS: ts, SessionKey: r.sessionKey, Data: data,
	}}
}

// replyText is the text the chat receives: the replies' texts, one
// paragraph each.
func replyText(replies []core.ReplyPayload) string {
	var parts []string
	for _, p := range replies {
		if t := strings.TrimSpace(p.Text); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, paragraph)
}

// usageOf returns the run's usage, nil when nothing was counted.
func usageOf(res *agent.Result) any {
	if res == nil || res.Usage == (core.Usage{}) {
		return nil
	}
	return res.Usage
}

// errorKindOf classifies an error that kept a run from running.
func errorKindOf(err error) string {
	var lerr *llm.Error
	switch {
	case errors.As(err, &lerr):
		return kindName(lerr.Kind)
	case errors.Is(err, agent.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return ErrorKindTimeout
	}
	return ErrorKindUnknown
}

// kindName maps an llm.ErrorKind to a chat errorKind.
func kindName(k llm.ErrorKind) string {
	switch k {
	case llm.ErrorRefusal:
		return ErrorKindRefusal
	case llm.ErrorTimeout:
		return ErrorKindTimeout
	case llm.ErrorRateLimit:
		return ErrorKindRateLimit
	case llm.ErrorContextLength:
		return ErrorKindContextLength
	}
	return ErrorKindUnknown
}
