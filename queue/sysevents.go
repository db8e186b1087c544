package queue

import (
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/prompt"
)

// MaxSystemEvents is how many system events a session keeps queued; when
// another arrives the oldest is dropped (openclaw-facts §6.4).
const MaxSystemEvents = 20

// EventOptions describes a system event being queued.
type EventOptions struct {
	// TS is when the event happened, in Unix ms; zero means when it is
	// queued.
	TS int64
	// ContextKey names what the event is about (for example "model:<ref>"),
	// so producers can tell whether the context changed since the last event
	// (ContextChanged). It is stored trimmed and lower-cased.
	ContextKey string
	// Trusted marks an event Switchboard produced itself. The zero value is
	// untrusted, and its lines read "System (untrusted): …": OpenClaw
	// defaults to trusted, but failing closed is the safer zero value (see
	// prompt.SystemEvent).
	Trusted bool
	// FromOwner marks an untrusted event an owner sent (the gateway's wake
	// and system-event methods): it keeps its untrusted label in the
	// prompt, but does not take the turn's owner-only tools away as
	// channel-sourced events do.
	FromOwner bool
}

// SystemEvents is the in-memory queue of system events per session key
// (openclaw-facts §6.4, OpenClaw's infra/system-events.ts): cron results,
// channel notices and the like, drained into the session's next prompt.
// Nothing is persisted. Events are trimmed and empty ones ignored, an event
// with the same text as the one queued before it is dropped, and a session
// keeps at most MaxSystemEvents, dropping the oldest. A session with no
// events holds no state at all.
//
// It is safe for concurrent use. The zero value is ready to use.
type SystemEvents struct {
	// Now supplies the time of events queued without a TS; nil means
	// time.Now.
	Now func() time.Time

	mu     sync.Mutex
	queues map[core.SessionKey]*eventQueue
}

// eventQueue is one session's events.
type eventQueue struct {
	events []prompt.SystemEvent
	// lastText is the text of the newest event queued, for the consecutive
	// duplicate check; lastContextKey the context key of the newest event
	// offered (queued or not), for ContextChanged.
	lastText       string
	lastContextKey string
	// base counts the events ever removed from the front, so base+i is the
	// position of events[i] in the session's history. peekBase and peekLen
	// record the positions the last Peek returned, which lets Consume remove
	// exactly those.
	base     uint64
	peekBase uint64
	peekLen  int
}

// NewSystemEvents returns an empty queue that stamps events with time.Now.
func NewSystemEvents() *SystemEvents { return &SystemEvents{} }

// Enqueue queues a system event for the session key and reports whether it
// was queued. It is not when the key or the trimmed text is empty, or when
// the text equals that of the event queued just before it for this key
// (non-consecutive repeats are kept). When the key already holds
// MaxSystemEvents events the oldest is dropped.
func (q *SystemEvents) Enqueue(key core.SessionKey, text string, opts EventOptions) bool {
	key = core.SessionKey(strings.TrimSpace(string(key)))
	text = trimJS(text)
	if key == "" || text == "" {
		return false
	}
	ts := opts.TS
	if ts == 0 {
		ts = q.now().UnixMilli()
	}
	contextKey := strings.ToLower(strings.TrimSpace(opts.ContextKey))

	q.mu.Lock()
	defer q.mu.Unlock()
	e := q.queues[key]
	if e == nil {
		if q.queues == nil {
			q.queues = map[core.SessionKey]*eventQueue{}
		}
		e = &eventQueue{events: make([]prompt.SystemEvent, 0, 4)}
		q.queues[key] = e
	}
	e.lastContextKey = contextKey
	if e.lastText == text {
		return false
	}
	e.lastText = text
	if len(e.events) == MaxSystemEvents {
		copy(e.events, e.events[1:])
		e.events = e.events[:len(e.events)-1]
		e.base++
	}
	e.events = append(e.events, prompt.SystemEvent{Text: text, TS: ts, Trusted: opts.Trusted, FromOwner: opts.FromOwner})
	return true
}

// Drain removes and returns every queued event of the key, oldest first,
// and forgets the key, so duplicate tracking starts afresh: the next event
// is queued even if its text repeats the last one drained.
func (q *SystemEvents) Drain(key core.SessionKey) []prompt.SystemEvent {
	key = core.SessionKey(strings.TrimSpace(string(key)))
	q.mu.Lock()
	defer q.mu.Unlock()
	e := q.queues[key]
	if e == nil {
		return nil
	}
	delete(q.queues, key)
	return e.events
}

// Peek returns a copy of the key's queued events, oldest first, leaving
// them queued. A later Consume removes what this Peek returned.
func (q *SystemEvents) Peek(key core.SessionKey) []prompt.SystemEvent {
	key = core.SessionKey(strings.TrimSpace(string(key)))
	q.mu.Lock()
	defer q.mu.Unlock()
	e := q.queues[key]
	if e == nil {
		return nil
	}
	e.peekBase, e.peekLen = e.base, len(e.events)
	return append([]prompt.SystemEvent(nil), e.events...)
}

// Consume removes the first n of the events the key's last Peek returned,
// once they have been used (written into a prompt that was sent), and
// returns how many it removed. Consume removes exactly that inspected
// prefix (OpenClaw's consumeSystemEventEntries) and never an event the Peek
// did not show: events queued since stay queued, inspected events already
// gone (dropped by the MaxSystemEvents limit, or by a Drain or an earlier
// Consume) are not replaced by others, and n beyond what the Peek returned
// counts as all of it. When the key is left empty it is forgotten, as by
// Drain.
func (q *SystemEvents) Consume(key core.SessionKey, n int) int {
	key = core.SessionKey(strings.TrimSpace(string(key)))
	q.mu.Lock()
	defer q.mu.Unlock()
	e := q.queues[key]
	if e == nil || n <= 0 {
		return 0
	}
	end := e.peekBase + uint64(min(n, e.peekLen)) // one past the last position to remove
	if end <= e.base {
		return 0
	}
	k := min(int(end-e.base), len(e.events))
	clear(e.events[:k])
	e.events = e.events[k:]
	e.base += uint64(k)
	if len(e.events) == 0 {
		delete(q.queues, key)
	}
	return k
}

// Len returns how many events are queued for the key.
func (q *SystemEvents) Len(key core.SessionKey) int {
	key = core.SessionKey(strings.TrimSpace(string(key)))
	q.mu.Lock()
	defer q.mu.Unlock()
	if e := q.queues[key]; e != nil {
		return len(e.events)
	}
	return 0
}

// ContextChanged reports whether contextKey (trimmed, lower-cased) differs
// from the context key of the last event offered for the key, as OpenClaw's
// isSystemEventContextChanged does; with no events queued the last context
// key is "". Producers use it to announce a change (a model switch, say)
// once.
func (q *SystemEvents) ContextChanged(key core.SessionKey, contextKey string) bool {
	key = core.SessionKey(strings.TrimSpace(string(key)))
	contextKey = strings.ToLower(strings.TrimSpace(contextKey))
	q.mu.Lock()
	defer q.mu.Unlock()
	last := ""
	if e := q.queues[key]; e != nil {
		last = e.lastContextKey
	}
	return contextKey != last
}

func (q *SystemEvents) now() time.Time {
	if q.Now != nil {
		return q.Now()
	}
	return time.Now()
}
