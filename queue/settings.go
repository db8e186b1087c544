package queue

import (
	"strings"
	"time"
)

// The defaults of openclaw-facts §3.2 (OpenClaw's queue/state.ts).
const (
	// DefaultMode is the mode when nothing else sets one.
	DefaultMode = ModeCollect
	// DefaultDebounce is how long a queue waits for quiet before it drains.
	DefaultDebounce = 1000 * time.Millisecond
	// DefaultCap is how many messages a session's queue holds.
	DefaultCap = 20
	// DefaultDrop is the drop policy of a full queue.
	DefaultDrop = DropSummarize
)

// Settings are the queue settings in effect for one message: what Resolve
// returns. Every field is set.
type Settings struct {
	// Mode is the queue mode, canonical.
	Mode Mode
	// Debounce is how long the queue must be quiet (no message queued)
	// before it drains; at least 0.
	Debounce time.Duration
	// Cap is how many messages the queue holds; at least 1.
	Cap int
	// Drop is what a full queue does, canonical.
	Drop DropPolicy
}

// Override is a partial set of queue settings: an inline /queue directive
// for one message, or the session's stored setting (from a standalone
// directive). A nil field is not set and leaves the decision to the next
// source in Resolve's order. It is stored as JSON in the sessions' queue
// settings, with OpenClaw's session-entry meaning (queueMode,
// queueDebounceMs, queueCap, queueDrop).
type Override struct {
	// Mode is the queue mode.
	Mode *Mode `json:"mode,omitempty"`
	// DebounceMs is the debounce in milliseconds; negative values count as 0.
	DebounceMs *int `json:"debounceMs,omitempty"`
	// Cap is the queue capacity; values below 1 count as 1.
	Cap *int `json:"cap,omitempty"`
	// Drop is the drop policy.
	Drop *DropPolicy `json:"drop,omitempty"`
}

// IsZero reports whether o sets nothing.
func (o Override) IsZero() bool {
	return o.Mode == nil && o.DebounceMs == nil && o.Cap == nil && o.Drop == nil
}

// Resolve returns the settings in effect for a message on channel, with
// OpenClaw's precedence (resolveQueueSettings, openclaw-facts §3.2):
//
//   - mode: inline, then session, then cfg.ByChannel[channel], then cfg.Mode,
//     then collect;
//   - debounce: inline, then session, then cfg.DebounceMsByChannel[channel],
//     then cfg.DebounceMs, then 1000 ms (OpenClaw also consults a channel
//     plugin's default between the last two; Switchboard's bridges have
//     none);
//   - cap and drop: inline, then session, then cfg.Cap / cfg.Drop, then 20 and
//     summarize. These are not per channel.
//
// channel is matched trimmed and lower-cased. A mode or drop policy that is
// not a known spelling counts as not set, and so does a zero cfg.Cap.
// Debounce is clamped to at least 0 and cap to at least 1.
func Resolve(inline, session Override, cfg Config, channel string) Settings {
	channel = strings.ToLower(strings.TrimSpace(channel))
	s := Settings{Mode: DefaultMode, Debounce: DefaultDebounce, Cap: DefaultCap, Drop: DefaultDrop}

	if m, ok := firstMode(inline.Mode, session.Mode); ok {
		s.Mode = m
	} else if m := cfg.ByChannel[channel].canonical(); channel != "" && m != "" {
		s.Mode = m
	} else if m := cfg.Mode.canonical(); m != "" {
		s.Mode = m
	}

	ms := -1
	switch {
	case inline.DebounceMs != nil:
		ms = *inline.DebounceMs
	case session.DebounceMs != nil:
		ms = *session.DebounceMs
	default:
		if v, ok := cfg.DebounceMsByChannel[channel]; ok && channel != "" {
			ms = v
		} else if cfg.DebounceMs != nil {
			ms = *cfg.DebounceMs
		} else {
			ms = int(DefaultDebounce / time.Millisecond)
		}
	}
	s.Debounce = time.Duration(min(max(int64(ms), 0), maxDebounceMs)) * time.Millisecond

	switch {
	case inline.Cap != nil:
		s.Cap = max(*inline.Cap, 1)
	case session.Cap != nil:
		s.Cap = max(*session.Cap, 1)
	case cfg.Cap != 0:
		s.Cap = max(cfg.Cap, 1)
	}

	if d, ok := firstDrop(inline.Drop, session.Drop, &cfg.Drop); ok {
		s.Drop = d
	}
	return s
}

// maxDebounceMs is the longest debounce a time.Duration can hold.
const maxDebounceMs = int64(1<<63-1) / int64(time.Millisecond)

// firstDrop returns the first set, known drop policy of ps.
func firstDrop(ps ...*DropPolicy) (DropPolicy, bool) {
	for _, p := range ps {
		if p == nil {
			continue
		}
		if c := p.canonical(); c != "" {
			return c, true
		}
	}
	return "", false
}

// firstMode returns the first set, known mode of ms.
func firstMode(ms ...*Mode) (Mode, bool) {
	for _, m := range ms {
		if m == nil {
			continue
		}
		if c := m.canonical(); c != "" {
			return c, true
		}
	}
	return "", false
}
