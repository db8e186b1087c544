package channels

import (
	"strings"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/core"
)

// Verdict is what the gate does with a message.
type Verdict int

// The verdicts.
const (
	// Accept: the message goes to the dispatcher.
	Accept Verdict = iota
	// Ignore: the message is dropped (policy); nothing is sent back.
	Ignore
	// Pair: the sender is unknown under dmPolicy pairing; they get a
	// pairing code and the message is dropped.
	Pair
	// Skip: a group message not addressed to the bot; it is kept in the
	// group's history buffer for the next turn that is.
	Skip
)

// Decision is a verdict and why.
type Decision struct {
	Verdict Verdict
	// Reason says why, for logs and tests ("dm-disabled",
	// "sender-not-allowed", "group-not-allowed", "no-mention", ...).
	Reason string
}

// Decide applies a bridge's access policy to a message (openclaw-facts §4.3 and §4.4).
// approved reports that pairing approved the sender on this channel.
func Decide(a bridges.Access, msg bridges.Inbound, approved bool) Decision {
	in := msg.Message
	if in.ChatType == core.ChatDirect || in.ChatType == "" {
		switch a.EffectiveDMPolicy() {
		case bridges.DMDisabled:
			return Decision{Ignore, "dm-disabled"}
		case bridges.DMOpen:
			return Decision{Accept, "dm-open"}
		}
		if approved || listed(a.AllowFrom, in.Sender) {
			return Decision{Accept, "dm-allowed"}
		}
		if a.EffectiveDMPolicy() == bridges.DMAllowlist {
			return Decision{Ignore, "sender-not-allowed"}
		}
		return Decision{Pair, "sender-unknown"}
	}

	rule, found := a.Groups[msg.GroupID]
	for _, id := range msg.GroupParents {
		if found {
			break
		}
		rule, found = a.Groups[id]
	}
	star, starFound := a.Groups["*"]
	switch a.EffectiveGroupPolicy() {
	case bridges.GroupDisabled:
		return Decision{Ignore, "groups-disabled"}
	case bridges.GroupAllowlist:
		if !found && !starFound {
			return Decision{Ignore, "group-not-allowed"}
		}
	}
	allow := a.GroupAllowFrom
	switch {
	case found && len(rule.AllowFrom) > 0:
		allow = rule.AllowFrom
	case starFound && len(star.AllowFrom) > 0 && len(allow) == 0:
		allow = star.AllowFrom
	}
	if len(allow) > 0 && !listed(allow, in.Sender) {
		return Decision{Ignore, "sender-not-allowed"}
	}
	requireMention := true
	switch {
	case found && rule.RequireMention != nil:
		requireMention = *rule.RequireMention
	case starFound && star.RequireMention != nil:
		requireMention = *star.RequireMention
	}
	bypass := msg.IsControlCommand && !in.WasMentioned
	if requireMention && msg.CanDetectMention && !(in.WasMentioned || msg.ImplicitMention || bypass) {
		return Decision{Skip, "no-mention"}
	}
	return Decision{Accept, "group-allowed"}
}

// listed reports whether the sender's id (or "*") is in list. Entries may
// carry the channel prefix OpenClaw accepts ("telegram:123") and an "@"
// before usernames.
func listed(list []string, s core.Sender) bool {
	for _, e := range list {
		e = strings.TrimSpace(e)
		if i := strings.IndexByte(e, ':'); i > 0 && !strings.HasPrefix(e, "+") {
			e = e[i+1:]
		}
		switch {
		case e == "*":
			return true
		case e == "":
		case e == s.ID, s.E164 != "" && e == s.E164:
			return true
		case strings.HasPrefix(e, "@") && s.Username != "" && strings.EqualFold(e[1:], s.Username):
			return true
		}
	}
	return false
}
