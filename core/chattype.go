package core

import (
	"fmt"
	"strings"
)

// ChatType is the kind of conversation a message arrived in. It decides the
// shape of the session key: direct chats follow session.dmScope, groups and
// channels always get a key of their own.
type ChatType string

// The chat types, as OpenClaw spells them in session keys and bindings.
const (
	// ChatDirect is a one-to-one conversation with a single user (a DM).
	ChatDirect ChatType = "direct"
	// ChatGroup is a conversation among several users that is not a
	// broadcast channel: a Telegram group, a Slack group DM, a WhatsApp group.
	ChatGroup ChatType = "group"
	// ChatChannel is a named room on a server or workspace: a Slack channel,
	// a Discord guild channel or thread.
	ChatChannel ChatType = "channel"
)

// chatTypeAliasDM is accepted wherever a ChatType is parsed, as OpenClaw does.
const chatTypeAliasDM = "dm"

// String returns the chat type as written in session keys.
func (t ChatType) String() string { return string(t) }

// ParseChatType reads a chat type case-insensitively, ignoring surrounding
// white space, and accepts "dm" as another name for direct.
func ParseChatType(s string) (ChatType, error) {
	switch v := strings.ToLower(strings.TrimSpace(s)); v {
	case string(ChatDirect), chatTypeAliasDM:
		return ChatDirect, nil
	case string(ChatGroup), string(ChatChannel):
		return ChatType(v), nil
	}
	return "", fmt.Errorf("unknown chat type %q: want direct (or dm), group or channel", s)
}

// EnumValues lists the spellings a configuration file may use for a chat
// type, for the JSON Schema; "dm" is an alias of direct.
func (ChatType) EnumValues() []string {
	return []string{string(ChatDirect), string(ChatGroup), string(ChatChannel), chatTypeAliasDM}
}

// UnmarshalText parses a chat type with ParseChatType and stores its
// canonical spelling, so "DM" in a configuration file becomes ChatDirect.
func (t *ChatType) UnmarshalText(b []byte) error {
	v, err := ParseChatType(string(b))
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// keyKind returns the chat type as it goes into a session key: the zero value
// and "dm" mean direct, known values are made canonical, and anything else is
// lowercased and kept, as OpenClaw writes an unknown peer kind verbatim.
func (t ChatType) keyKind() ChatType {
	if t == ChatDirect || t == ChatGroup || t == ChatChannel {
		return t
	}
	v := strings.ToLower(strings.TrimSpace(string(t)))
	if v == "" {
		return ChatDirect
	}
	if ct, err := ParseChatType(v); err == nil {
		return ct
	}
	return ChatType(v)
}
