package bridges

import (
	"errors"
	"sync"
	"time"
)

// State is a bridge's connection state.
type State string

// The connection states. Terminal states stop reconnecting; the others
// keep the bridge running.
const (
	// StateStarting: connecting for the first time.
	StateStarting State = "starting"
	// StateConnected: receiving messages.
	StateConnected State = "connected"
	// StateTransientDisconnect: the connection was lost or the platform
	// failed; the bridge backs off and reconnects by itself.
	StateTransientDisconnect State = "transient-disconnect"
	// StateConflict: another client holds the platform session (Telegram's
	// 409, WhatsApp's stream replaced on some platforms); the bridge backs
	// off and keeps trying.
	StateConflict State = "conflict"
	// StateBadCredentials: the platform refused the token (terminal).
	StateBadCredentials State = "bad-credentials"
	// StateLoggedOut: the account was unlinked (terminal).
	StateLoggedOut State = "logged-out"
	// StateFailed: the platform refused the session for a reason the
	// owner must act on (a ban, an outdated client, another client taking
	// the session over); LastError says which (terminal).
	StateFailed State = "failed"
	// StateStopped: the bridge was stopped (terminal).
	StateStopped State = "stopped"
	// StateStandby: the connection is unique per account and another
	// instance of a cluster holds it (its lease); this one takes it over
	// when that one stops or dies. Set by the supervisor, never by a
	// bridge.
	StateStandby State = "standby"
)

// Terminal reports whether the bridge stays down in state s until the
// owner acts (new credentials, relinking, a restart).
func (s State) Terminal() bool {
	switch s {
	case StateBadCredentials, StateLoggedOut, StateFailed, StateStopped:
		return true
	}
	return false
}

// Status is a bridge's state as channels.status and /readyz show it.
type Status struct {
	// Channel and AccountID name the bridge.
	Channel, AccountID string
	// State is the connection state.
	State State
	// LastError is the last failure, without secrets ("" when none).
	LastError string
	// Summary says LastError in a few words ("cannot reach
	// api.telegram.org", "token refused"; see Summarize).
	Summary string
	// RetryAt is when the bridge next tries to connect, as its last
	// failure said (RetryIn); zero when none is due.
	RetryAt time.Time
	// Since is when State was entered.
	Since time.Time
	// LastInboundAt and LastOutboundAt are when a message last arrived and
	// was last sent (zero: never).
	LastInboundAt, LastOutboundAt time.Time
}

// Tracker keeps a bridge's Status; bridges embed or hold one. Safe for
// concurrent use. The zero value is not ready: use NewTracker.
type Tracker struct {
	mu  sync.Mutex
	st  Status
	now func() time.Time
	on  func(Status)
}

// NewTracker returns a tracker in StateStarting. now is the clock (nil:
// time.Now); onChange, when set, is called after each state change
// (outside the tracker's lock).
func NewTracker(channel, accountID string, now func() time.Time, onChange func(Status)) *Tracker {
	if now == nil {
		now = time.Now
	}
	return &Tracker{st: Status{Channel: channel, AccountID: accountID, State: StateStarting, Since: now()}, now: now, on: onChange}
}

// Set enters state s. err, when not nil, becomes LastError, with its
// Summary; a connected state keeps the previous LastError for the record.
// RetryAt comes from err (RetryIn), and is cleared by a report without
// one. Setting the current state again only updates LastError, Summary
// and RetryAt.
func (t *Tracker) Set(s State, err error) {
	t.mu.Lock()
	now := t.now()
	changed := t.st.State != s
	if changed {
		t.st.State, t.st.Since = s, now
	}
	if err != nil {
		t.st.LastError, t.st.Summary = err.Error(), Summarize(s, err)
	}
	t.st.RetryAt = time.Time{}
	var re *RetryError
	if errors.As(err, &re) {
		t.st.RetryAt = now.Add(re.Delay)
	}
	st := t.st
	t.mu.Unlock()
	if changed && t.on != nil {
		t.on(st)
	}
}

// Inbound records that a message arrived now.
func (t *Tracker) Inbound() {
	t.mu.Lock()
	t.st.LastInboundAt = t.now()
	t.mu.Unlock()
}

// Outbound records that a message was sent now.
func (t *Tracker) Outbound() {
	t.mu.Lock()
	t.st.LastOutboundAt = t.now()
	t.mu.Unlock()
}

// Status returns a copy of the current status.
func (t *Tracker) Status() Status {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.st
}
