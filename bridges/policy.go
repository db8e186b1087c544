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
	switch a.EffectiveDMPolicy() {
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

// EffectiveDMPolicy is DMPolicy with its default applied.
func (a Access) EffectiveDMPolicy() DMPolicy {
	if a.DMPolicy == "" {
		return DMPairing
	}
	return a.DMPolicy
}

// EffectiveGroupPolicy is GroupPolicy with its default applied.
func (a Access) EffectiveGroupPolicy() GroupPolicy {
	if a.GroupPolicy == "" {
		return GroupAllowlist
	}
	return a.GroupPolicy
}

// DefaultHistoryLimit is how many skipped group messages a group keeps
// when historyLimit is not set (openclaw-facts §4.3).
const DefaultHistoryLimit = 50

// HistoryLimitOrDefault is the group history buffer size to use.
func (a Access) HistoryLimitOrDefault() int {
	if a.HistoryLimit == nil {
		return DefaultHistoryLimit
	}
	return max(*a.HistoryLimit, 0)
}

// ReplyToMode decides which chunks of a reply are sent as native replies
// to the message being answered (openclaw-facts §5.5).
type ReplyToMode string

// The reply-to modes.
const (
	// ReplyOff: never reply natively (the default, as in OpenClaw for
	// Telegram, Slack and Discord).
	ReplyOff ReplyToMode = "off"
	// ReplyFirst: the first message of the answer replies.
	ReplyFirst ReplyToMode = "first"
	// ReplyAll: every message of the answer replies.
	ReplyAll ReplyToMode = "all"
	// ReplyBatched: reply only when the turn answered several queued
	// messages, to make clear which one.
	ReplyBatched ReplyToMode = "batched"
)

var replyToModes = []ReplyToMode{ReplyOff, ReplyFirst, ReplyAll, ReplyBatched}

// EnumValues lists the accepted values, for the JSON Schema.
func (ReplyToMode) EnumValues() []string { return enumStrings(replyToModes) }

// UnmarshalText accepts a mode in any case; empty means ReplyOff.
func (m *ReplyToMode) UnmarshalText(b []byte) error {
	return unmarshalEnum(m, replyToModes, "replyToMode", b)
}

// RouteOptions are how replies for one bridge are threaded and prefixed.
type RouteOptions struct {
	// Mode is the bridge's replyToMode.
	Mode ReplyToMode
	// ByChatType overrides Mode for direct, group or channel chats
	// (Slack's replyToModeByChatType).
	ByChatType map[core.ChatType]ReplyToMode
	// OffIgnoresTags makes "off" disable reply tags too, as Slack's does;
	// elsewhere [[reply_to_*]] tags work even in "off".
	OffIgnoresTags bool
	// Prefix is put before each reply's text ("" for none).
	Prefix string
}

// ModeFor is the reply-to mode for a delivery in the session with key.
func (o RouteOptions) ModeFor(key core.SessionKey) ReplyToMode {
	if len(o.ByChatType) == 0 {
		return o.Mode
	}
	kind := core.ChatDirect
	parsed, _ := core.ParseSessionKey(string(key))
	switch parsed.Kind {
	case core.SessionKindGroup:
		kind = core.ChatGroup
	case core.SessionKindChannel:
		kind = core.ChatChannel
	}
	if m, ok := o.ByChatType[kind]; ok && m != "" {
		return m
	}
	return o.Mode
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
