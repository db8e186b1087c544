package queue

import (
	"fmt"
	"strings"
)

// Mode says what a message does when it arrives while its session is
// already running a turn (openclaw-facts §3.1).
type Mode string

// The queue modes.
const (
	// ModeSteer injects the message into the running turn when the model is
	// streaming (the model reads it after its current tool call); otherwise
	// the message is queued as a followup.
	ModeSteer Mode = "steer"
	// ModeFollowup queues the message; each queued message later runs as a
	// turn of its own.
	ModeFollowup Mode = "followup"
	// ModeCollect queues the message; when the session is free, everything
	// queued runs as one turn with the collect prompt (CollectPrompt). It is
	// the default.
	ModeCollect Mode = "collect"
	// ModeSteerBacklog steers the message into the running turn and also
	// queues it as a followup, which can produce what looks like a
	// duplicate reply.
	ModeSteerBacklog Mode = "steer-backlog"
	// ModeInterrupt aborts the running turn and runs the message now.
	ModeInterrupt Mode = "interrupt"
)

// modes lists the canonical modes in the order messages name them.
var modes = []Mode{ModeSteer, ModeFollowup, ModeCollect, ModeSteerBacklog, ModeInterrupt}

// modeAliases maps every accepted spelling, lower-cased, to its mode
// (OpenClaw's normalizeQueueMode as of the facts' commit, which still had
// queue, queued and steer-backlog with its two spellings).
var modeAliases = map[string]Mode{
	"steer":         ModeSteer,
	"steering":      ModeSteer,
	"queue":         ModeSteer,
	"queued":        ModeSteer,
	"followup":      ModeFollowup,
	"follow-ups":    ModeFollowup,
	"followups":     ModeFollowup,
	"collect":       ModeCollect,
	"coalesce":      ModeCollect,
	"steer-backlog": ModeSteerBacklog,
	"steer+backlog": ModeSteerBacklog,
	"steer_backlog": ModeSteerBacklog,
	"interrupt":     ModeInterrupt,
	"interrupts":    ModeInterrupt,
	"abort":         ModeInterrupt,
}

// modeSpellings is EnumValues' answer: the canonical modes, then the
// aliases.
var modeSpellings = []string{
	"steer", "followup", "collect", "steer-backlog", "interrupt",
	"steering", "queue", "queued", "follow-ups", "followups", "coalesce",
	"steer+backlog", "steer_backlog", "interrupts", "abort",
}

// ParseMode reads a mode or one of its aliases, ignoring case and
// surrounding white space: steering, queue and queued mean steer;
// follow-ups and followups mean followup; coalesce means collect;
// steer+backlog and steer_backlog mean steer-backlog; interrupts and abort
// mean interrupt. It reports false for anything else, including "".
func ParseMode(s string) (Mode, bool) {
	m, ok := modeAliases[foldToken(s)]
	return m, ok
}

// EnumValues lists every spelling a configuration file may use for a mode,
// canonical names first, then the aliases, for validation messages and the
// JSON Schema.
func (Mode) EnumValues() []string { return append([]string(nil), modeSpellings...) }

// UnmarshalText accepts a mode or an alias in any case and stores the
// canonical mode. Empty text leaves the zero value, which means "not set".
func (m *Mode) UnmarshalText(b []byte) error {
	if strings.TrimSpace(string(b)) == "" {
		*m = ""
		return nil
	}
	v, ok := ParseMode(string(b))
	if !ok {
		return fmt.Errorf("queue mode %q is not one of %s (aliases: %s)",
			string(b), strings.Join(modeSpellings[:len(modes)], ", "), strings.Join(modeSpellings[len(modes):], ", "))
	}
	*m = v
	return nil
}

// canonical returns m's canonical spelling, or "" when m is empty or
// unknown.
func (m Mode) canonical() Mode {
	for _, v := range modes {
		if m == v {
			return v
		}
	}
	v, _ := ParseMode(string(m))
	return v
}

// DropPolicy says what happens when a message arrives at a full queue
// (openclaw-facts §3.2).
type DropPolicy string

// The drop policies.
const (
	// DropSummarize drops the oldest queued messages, as DropOld does, but
	// keeps a one-line summary of each for the next turn (Overflow). It is
	// the default.
	DropSummarize DropPolicy = "summarize"
	// DropOld drops the oldest queued messages silently.
	DropOld DropPolicy = "old"
	// DropNew rejects the incoming message.
	DropNew DropPolicy = "new"
)

var dropPolicies = []DropPolicy{DropSummarize, DropOld, DropNew}

var dropAliases = map[string]DropPolicy{
	"summarize": DropSummarize,
	"summary":   DropSummarize,
	"old":       DropOld,
	"oldest":    DropOld,
	"new":       DropNew,
	"newest":    DropNew,
}

var dropSpellings = []string{"summarize", "old", "new", "summary", "oldest", "newest"}

// ParseDropPolicy reads a drop policy or one of its aliases, ignoring case
// and surrounding white space: summary means summarize, oldest means old,
// newest means new. It reports false for anything else, including "".
func ParseDropPolicy(s string) (DropPolicy, bool) {
	p, ok := dropAliases[foldToken(s)]
	return p, ok
}

// EnumValues lists every spelling a configuration file may use for a drop
// policy, canonical names first, then the aliases.
func (DropPolicy) EnumValues() []string { return append([]string(nil), dropSpellings...) }

// UnmarshalText accepts a drop policy or an alias in any case and stores the
// canonical policy. Empty text leaves the zero value, which means "not set".
func (p *DropPolicy) UnmarshalText(b []byte) error {
	if strings.TrimSpace(string(b)) == "" {
		*p = ""
		return nil
	}
	v, ok := ParseDropPolicy(string(b))
	if !ok {
		return fmt.Errorf("queue drop policy %q is not one of %s (aliases: %s)",
			string(b), strings.Join(dropSpellings[:len(dropPolicies)], ", "), strings.Join(dropSpellings[len(dropPolicies):], ", "))
	}
	*p = v
	return nil
}

// canonical returns p's canonical spelling, or "" when p is empty or
// unknown.
func (p DropPolicy) canonical() DropPolicy {
	for _, v := range dropPolicies {
		if p == v {
			return v
		}
	}
	v, _ := ParseDropPolicy(string(p))
	return v
}

// foldToken trims JavaScript white space and lower-cases ASCII, as
// OpenClaw's normalizeOptionalLowercaseString does for the spellings above
// (all ASCII, so Unicode case folding could only add false matches).
func foldToken(s string) string {
	s = trimJS(s)
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}

// Action is what the dispatcher does with a message for a session that may
// be running a turn (OpenClaw's resolveActiveRunQueueAction).
type Action int

// The actions.
const (
	// ActionRunNow runs the message as a turn now. For ModeInterrupt the
	// running turn is aborted first.
	ActionRunNow Action = iota
	// ActionEnqueue queues the message as a followup.
	ActionEnqueue
	// ActionDrop discards the message (a heartbeat while a turn runs).
	ActionDrop
)

// String returns OpenClaw's name for the action: run-now, enqueue-followup
// or drop.
func (a Action) String() string {
	switch a {
	case ActionRunNow:
		return "run-now"
	case ActionEnqueue:
		return "enqueue-followup"
	case ActionDrop:
		return "drop"
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// Decide applies the decision table of openclaw-facts §3.1: with no active
// run the message runs now; while a run is active a heartbeat is dropped,
// followup, collect and steer-backlog messages are queued, and so is a steer
// message that could not be steered (steered is false: the run was not
// streaming, or was compacting); everything else (interrupt, and a steer
// message that was steered) runs now. An unknown or empty mode counts as the
// default, collect.
//
// A steer message that was steered into the run has already been delivered:
// OpenClaw returns before consulting the table, and a dispatcher should too.
// Decide answers ActionRunNow for it only because that is the table's
// "otherwise" row.
func Decide(active bool, heartbeat bool, mode Mode, steered bool) Action {
	if !active {
		return ActionRunNow
	}
	if heartbeat {
		return ActionDrop
	}
	switch m := mode.canonical(); {
	case m == "", m == ModeFollowup, m == ModeCollect, m == ModeSteerBacklog:
		return ActionEnqueue
	case m == ModeSteer && !steered:
		return ActionEnqueue
	}
	return ActionRunNow
}
