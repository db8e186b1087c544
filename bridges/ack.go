package bridges

import "github.com/switchboardhq/switchboard/core"

// AckScope decides which accepted messages get the ack reaction
// (openclaw-facts §5.4).
type AckScope string

// The ack scopes.
const (
	// AckGroupMentions (the default): group messages that addressed the bot.
	AckGroupMentions AckScope = "group-mentions"
	// AckGroupAll: every accepted group message.
	AckGroupAll AckScope = "group-all"
	// AckDirect: direct messages only.
	AckDirect AckScope = "direct"
	// AckAll: every accepted message.
	AckAll AckScope = "all"
	// AckNone: never.
	AckNone AckScope = "none"
)

var ackScopes = []AckScope{AckGroupMentions, AckGroupAll, AckDirect, AckAll, AckNone}

// EnumValues lists the accepted values, for the JSON Schema.
func (AckScope) EnumValues() []string { return enumStrings(ackScopes) }

// UnmarshalText accepts a scope in any case; empty means AckGroupMentions.
func (s *AckScope) UnmarshalText(b []byte) error {
	return unmarshalEnum(s, ackScopes, "ackReactionScope", b)
}

// Covers reports whether an accepted message gets the reaction.
func (s AckScope) Covers(msg Inbound) bool {
	group := msg.Message.ChatType == core.ChatGroup || msg.Message.ChatType == core.ChatChannel
	switch s {
	case AckNone:
		return false
	case AckAll:
		return true
	case AckDirect:
		return !group
	case AckGroupAll:
		return group
	}
	return group && (msg.Message.WasMentioned || msg.ImplicitMention)
}
