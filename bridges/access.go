package bridges

import (
	"fmt"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// DMPolicy decides who may talk to the bot in a direct chat
// (openclaw-facts §4.4).
type DMPolicy string

// The DM policies.
const (
	// DMPairing (the default): an unknown sender gets a pairing code and
	// their message is dropped until the owner approves the code.
	DMPairing DMPolicy = "pairing"
	// DMAllowlist: only senders in allowFrom (or approved by pairing);
	// others are ignored silently.
	DMAllowlist DMPolicy = "allowlist"
	// DMOpen: anyone. The configuration must say so with "*" in allowFrom.
	DMOpen DMPolicy = "open"
	// DMDisabled: direct messages are ignored.
	DMDisabled DMPolicy = "disabled"
)

var dmPolicies = []DMPolicy{DMPairing, DMAllowlist, DMOpen, DMDisabled}

// EnumValues lists the accepted values, for the JSON Schema.
func (DMPolicy) EnumValues() []string { return enumStrings(dmPolicies) }

// UnmarshalText accepts a policy in any case; empty means DMPairing.
func (p *DMPolicy) UnmarshalText(b []byte) error { return unmarshalEnum(p, dmPolicies, "dmPolicy", b) }

// GroupPolicy decides which groups the bot answers in (openclaw-facts §4.3).
type GroupPolicy string

// The group policies.
const (
	// GroupAllowlist (the default): only groups listed in groups (or "*").
	// No list means no group.
	GroupAllowlist GroupPolicy = "allowlist"
	// GroupOpen: every group the bot is in.
	GroupOpen GroupPolicy = "open"
	// GroupDisabled: group messages are ignored.
	GroupDisabled GroupPolicy = "disabled"
)

var groupPolicies = []GroupPolicy{GroupAllowlist, GroupOpen, GroupDisabled}

// EnumValues lists the accepted values, for the JSON Schema.
func (GroupPolicy) EnumValues() []string { return enumStrings(groupPolicies) }

// UnmarshalText accepts a policy in any case; empty means GroupAllowlist.
func (p *GroupPolicy) UnmarshalText(b []byte) error {
	return unmarshalEnum(p, groupPolicies, "groupPolicy", b)
}

// GroupRule configures one group (or every group, under "*").
type GroupRule struct {
	// RequireMention makes the bot answer only when mentioned (natively,
	// by a mention pattern, or by replying to it). Default true.
	RequireMention *bool `json:"requireMention,omitempty"`
	// AllowFrom limits who may trigger the bot in the group (sender ids);
	// empty means everyone in the group.
	AllowFrom []string `json:"allowFrom,omitempty"`
}

// Access is the gating configuration of one bridge: direct messages,
// groups and mentions. Every channel's section embeds it.
type Access struct {
	// DMPolicy is who may talk to the bot in a direct chat: "pairing"
	// (default: unknown senders get a code the owner approves with
	// `switchboard pairing approve <channel> <code>`), "allowlist" (only
	// allowFrom), "open" (anyone; needs "*" in allowFrom) or "disabled".
	DMPolicy DMPolicy `json:"dmPolicy,omitempty"`
	// AllowFrom lists the sender ids always allowed in direct chats ("*"
	// for anyone). Senders approved by pairing are added to it.
	AllowFrom []string `json:"allowFrom,omitempty"`
	// GroupPolicy is which groups the bot answers in: "allowlist"
	// (default: only those in groups), "open" or "disabled".
	GroupPolicy GroupPolicy `json:"groupPolicy,omitempty"`
	// Groups configures groups by id; "*" applies to every group and, with
	// groupPolicy allowlist, allows every group.
	Groups map[string]GroupRule `json:"groups,omitempty"`
	// GroupAllowFrom limits who may trigger the bot in any group (sender
	// ids); empty means everyone. A group's own allowFrom wins.
	GroupAllowFrom []string `json:"groupAllowFrom,omitempty"`
	// HistoryLimit is how many skipped group messages (not addressed to
	// the bot) are kept per group and shown to the model on the next turn
	// that is; default 50, 0 disables.
	HistoryLimit *int `json:"historyLimit,omitempty"`
}

// Validate reports settings that contradict each other.
func (a Access) Validate() error {
	switch a.dmPolicyOrDefault() {
	case DMOpen:
		if !slices.Contains(a.AllowFrom, "*") {
			return fmt.Errorf(`dmPolicy "open" lets anyone talk to the bot: say so with allowFrom: ["*"], or use "pairing"`)
		}
	case DMAllowlist:
		if len(a.AllowFrom) == 0 {
			return fmt.Errorf(`dmPolicy "allowlist" with an empty allowFrom blocks every direct message: list the sender ids, or use "pairing"`)
		}
	}
	return nil
}

func (a Access) dmPolicyOrDefault() DMPolicy {
	if a.DMPolicy == "" {
		return DMPairing
	}
	return a.DMPolicy
}

func (a Access) groupPolicyOrDefault() GroupPolicy {
	if a.GroupPolicy == "" {
		return GroupAllowlist
	}
	return a.GroupPolicy
}

// HistoryLimitOrDefault is the group history buffer size to use.
func (a Access) HistoryLimitOrDefault() int {
	if a.HistoryLimit == nil {
		return DefaultHistoryLimit
	}
	return max(*a.HistoryLimit, 0)
}

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

// Decide applies the policy to a message (openclaw-facts §4.3 and §4.4).
// approved reports that pairing approved the sender on this channel.
func (a Access) Decide(msg Inbound, approved bool) Decision {
	in := msg.Message
	if in.ChatType == core.ChatDirect || in.ChatType == "" {
		switch a.dmPolicyOrDefault() {
		case DMDisabled:
			return Decision{Ignore, "dm-disabled"}
		case DMOpen:
			return Decision{Accept, "dm-open"}
		}
		if approved || listed(a.AllowFrom, in.Sender) {
			return Decision{Accept, "dm-allowed"}
		}
		if a.dmPolicyOrDefault() == DMAllowlist {
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
	switch a.groupPolicyOrDefault() {
	case GroupDisabled:
		return Decision{Ignore, "groups-disabled"}
	case GroupAllowlist:
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

func enumStrings[T ~string](values []T) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}

func unmarshalEnum[T ~string](dst *T, values []T, name string, b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "" {
		*dst = ""
		return nil
	}
	for _, v := range values {
		if strings.EqualFold(s, string(v)) {
			*dst = v
			return nil
		}
	}
	return fmt.Errorf("%s %q is not one of %s", name, s, strings.Join(enumStrings(values), ", "))
}
