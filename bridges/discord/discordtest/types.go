package discordtest

import (
	"encoding/json"
	"time"
)

// User is a Discord user as the API serializes it.
type User struct {
	ID       string `json:"id"`
	Username string `json:"username"`
	// Discriminator is "0" for users on the new username system; an empty
	// one is sent as "0".
	Discriminator string `json:"discriminator"`
	GlobalName    string `json:"global_name,omitempty"`
	Avatar        string `json:"avatar,omitempty"`
	Bot           bool   `json:"bot,omitempty"`
	System        bool   `json:"system,omitempty"`
}

// ChannelType is a channel's "type" field.
type ChannelType int

// The channel types the fake knows; see Discord's channel object docs.
const (
	ChannelGuildText          ChannelType = 0
	ChannelDM                 ChannelType = 1
	ChannelGuildVoice         ChannelType = 2
	ChannelGroupDM            ChannelType = 3
	ChannelGuildCategory      ChannelType = 4
	ChannelGuildAnnouncement  ChannelType = 5
	ChannelAnnouncementThread ChannelType = 10
	ChannelPublicThread       ChannelType = 11
	ChannelPrivateThread      ChannelType = 12
	ChannelGuildForum         ChannelType = 15
)

// IsThread reports whether channels of type t are threads, which live
// under a ParentID.
func (t ChannelType) IsThread() bool {
	return t == ChannelAnnouncementThread || t == ChannelPublicThread || t == ChannelPrivateThread
}

// isPrivate reports whether channels of type t live outside any guild.
func (t ChannelType) isPrivate() bool { return t == ChannelDM || t == ChannelGroupDM }

// Channel is a channel as GET /channels/{id} returns it.
type Channel struct {
	ID   string      `json:"id"`
	Type ChannelType `json:"type"`
	// GuildID is empty for DMs and group DMs.
	GuildID string `json:"guild_id,omitempty"`
	// ParentID is the text channel of a thread, or the category of a guild
	// channel.
	ParentID string `json:"parent_id,omitempty"`
	Name     string `json:"name,omitempty"`
	// Recipients are the other users of a DM.
	Recipients []User `json:"recipients,omitempty"`
	// OwnerID is the user who started a thread.
	OwnerID string `json:"owner_id,omitempty"`
}

// Member is the guild member data Discord attaches to guild messages.
type Member struct {
	Nick     string    `json:"nick,omitempty"`
	Roles    []string  `json:"roles"`
	JoinedAt time.Time `json:"joined_at"`
	Deaf     bool      `json:"deaf"`
	Mute     bool      `json:"mute"`
}

// MessageType is a message's "type" field.
type MessageType int

// The message types the fake produces.
const (
	MessageDefault MessageType = 0
	MessageReply   MessageType = 19
)

// Message is a message object, both as dispatched in MESSAGE_CREATE and as
// returned by the REST API.
type Message struct {
	ID        string      `json:"id"`
	Type      MessageType `json:"type"`
	ChannelID string      `json:"channel_id"`
	// GuildID is empty in DMs.
	GuildID string `json:"guild_id,omitempty"`
	Author  User   `json:"author"`
	// Member is set on guild messages from users.
	Member          *Member           `json:"member,omitempty"`
	Content         string            `json:"content"`
	Timestamp       time.Time         `json:"timestamp"`
	EditedTimestamp *time.Time        `json:"edited_timestamp"`
	TTS             bool              `json:"tts"`
	MentionEveryone bool              `json:"mention_everyone"`
	Mentions        []User            `json:"mentions"`
	MentionRoles    []string          `json:"mention_roles"`
	Attachments     []Attachment      `json:"attachments"`
	Embeds          []json.RawMessage `json:"embeds"`
	Components      []json.RawMessage `json:"components,omitempty"`
	Pinned          bool              `json:"pinned"`
	Flags           int               `json:"flags,omitempty"`
	Reference       *MessageReference `json:"message_reference,omitempty"`
	Referenced      *Message          `json:"referenced_message,omitempty"`
}

// MessageReference points at the message a reply answers.
type MessageReference struct {
	// Type is 0 for a reply, 1 for a forward.
	Type            int    `json:"type,omitempty"`
	MessageID       string `json:"message_id,omitempty"`
	ChannelID       string `json:"channel_id,omitempty"`
	GuildID         string `json:"guild_id,omitempty"`
	FailIfNotExists *bool  `json:"fail_if_not_exists,omitempty"`
}

// AllowedMentions is the allowed_mentions object of a sent message.
type AllowedMentions struct {
	// Parse lists the mention kinds parsed from the content: "users",
	// "roles", "everyone". Empty means none.
	Parse       []string `json:"parse"`
	Users       []string `json:"users,omitempty"`
	Roles       []string `json:"roles,omitempty"`
	RepliedUser bool     `json:"replied_user,omitempty"`
}

// Attachment is a file attached to a message.
type Attachment struct {
	ID          string `json:"id"`
	Filename    string `json:"filename"`
	ContentType string `json:"content_type,omitempty"`
	Size        int    `json:"size"`
	URL         string `json:"url"`
	ProxyURL    string `json:"proxy_url"`
}

// SentMessage is one message the bot created or edited through REST, in
// the order the server received the calls.
type SentMessage struct {
	// Edit is false for POST /channels/{id}/messages and true for PATCH
	// /channels/{id}/messages/{mid}.
	Edit      bool
	ChannelID string
	// MessageID is the ID the server assigned, or the ID of the edited
	// message.
	MessageID string
	// Content is the message's content after the call, exactly as sent.
	Content string
	// Reference is message_reference as sent, nil when the message is no
	// reply.
	Reference *MessageReference
	// AllowedMentions is allowed_mentions as sent, nil when absent.
	AllowedMentions *AllowedMentions
	// Embeds and Components are the JSON objects as sent.
	Embeds     []json.RawMessage
	Components []json.RawMessage
	TTS        bool
	Flags      int
	// Files are the files uploaded with a multipart request.
	Files []SentFile
}

// SentFile is one file uploaded with a message.
type SentFile struct {
	// Field is the multipart field, e.g. "files[0]".
	Field       string
	Name        string
	ContentType string
	Data        []byte
}

// Reaction is one PUT /channels/{id}/messages/{mid}/reactions/{emoji}/@me.
type Reaction struct {
	ChannelID string
	MessageID string
	// Emoji is the unescaped path segment: a Unicode emoji ("👍") or a
	// custom emoji as "name:id".
	Emoji string
}

// Request is one REST request the server received, whatever its outcome.
type Request struct {
	Method string
	// Path is the URL path without the /api/v{N} prefix, still escaped,
	// e.g. "/channels/42/messages".
	Path string
	// Route is the matched route (RouteCreateMessage, …), "" for unknown
	// paths.
	Route string
	// Authorized reports whether the request carried "Bot <token>" with the
	// right token.
	Authorized  bool
	ContentType string
	Body        []byte
	// Status is the HTTP status the server answered.
	Status int
}

// Close records how one gateway connection ended.
type Close struct {
	// Conn numbers connections from 1 in the order they were accepted.
	Conn int
	// Code is the WebSocket close code; 1006 for a connection that ended
	// without a close frame (DropConnection, a vanished client).
	Code CloseCode
	// Reason is the close frame's reason.
	Reason string
	// ByServer is true when the fake ended the connection.
	ByServer bool
}
