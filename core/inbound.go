package core

// WebchatChannel is the channel of conversations in the gateway's web chat
// and of its clients (chat.send): the one channel that is not a bridge.
const WebchatChannel ChannelName = "webchat"

// Route says where a conversation lives on its platform, so replies go back
// to the same bridge, chat and thread. It is the trusted part of an inbound
// message's addressing: the bridge derives it from the platform, not from
// message text.
type Route struct {
	// Channel is the bridge's channel name (its configuration key under
	// channels:), or WebchatChannel.
	Channel ChannelName `json:"channel"`
	// AccountID names the bot account on that channel ("default" for one).
	AccountID AccountID `json:"accountId,omitempty"`
	// To is the platform chat id the reply goes to (Telegram chat id, Slack
	// channel id, Discord channel id, WhatsApp JID).
	To ChatID `json:"to"`
	// ThreadID is the platform thread or topic to reply in, if any.
	ThreadID string `json:"threadId,omitempty"`
}

// InboundKind says who produced a turn's input.
type InboundKind string

// The inbound kinds.
const (
	// InboundUser is a message a person sent on a platform or in web chat.
	InboundUser InboundKind = "user"
	// InboundHeartbeat is the periodic heartbeat poll. A busy session drops
	// it rather than queueing it.
	InboundHeartbeat InboundKind = "heartbeat"
	// InboundCron is a scheduled job's agent turn.
	InboundCron InboundKind = "cron"
	// InboundSystem is a turn started by Switchboard itself (a queue
	// summary, a subagent announcement).
	InboundSystem InboundKind = "system"
)

// Inbound is one normalized message entering Switchboard: what a bridge (or
// the gateway, or the scheduler) hands to the dispatcher. Everything here
// except Route, ChatType, Surface, AgentID, SessionKey and Kind is
// channel-supplied and untrusted: prompt assembly places it only inside the
// labelled untrusted blocks of the user message, never in the system prompt.
type Inbound struct {
	// Kind says who produced the message. Zero means InboundUser.
	Kind InboundKind `json:"kind,omitempty"`
	// AgentID is the agent that answers. Zero means DefaultAgentID.
	AgentID string `json:"agentId,omitempty"`
	// SessionKey is the session the message belongs to (see BuildPeerSessionKey).
	SessionKey SessionKey `json:"sessionKey"`
	// Route is where replies go.
	Route Route `json:"route"`
	// ChatType is direct, group or channel.
	ChatType ChatType `json:"chatType,omitempty"`
	// Surface is the client surface the message came through when it differs
	// from Route.Channel (for example "webchat"). Zero means Route.Channel.
	Surface string `json:"surface,omitempty"`

	// Body is the text the sender wrote, with the bot mention and any
	// consumed directive removed.
	Body string `json:"body"`
	// MessageID is the platform message id; for a debounced batch, the last.
	MessageID MessageID `json:"messageId,omitempty"`
	// MessageIDs lists every platform message id of a debounced batch.
	MessageIDs []MessageID `json:"messageIds,omitempty"`
	// Timestamp is when the platform says the message was sent, in Unix ms.
	Timestamp int64 `json:"timestamp,omitempty"`

	// Sender is who wrote the message.
	Sender Sender `json:"sender"`
	// Group describes the group or channel for group and channel chats.
	Group *GroupInfo `json:"group,omitempty"`
	// WasMentioned reports that the bot was mentioned (natively, by a
	// mention pattern, or implicitly by a reply to the bot). Groups only.
	WasMentioned bool `json:"wasMentioned,omitempty"`

	// ReplyTo is the message this one replies to or quotes, if any.
	ReplyTo *QuotedMessage `json:"replyTo,omitempty"`
	// Forwarded describes where a forwarded message came from.
	Forwarded *ForwardedFrom `json:"forwarded,omitempty"`
	// ThreadStarter is the first message of the thread this message is in;
	// prompt assembly shows it only on a new session.
	ThreadStarter string `json:"threadStarter,omitempty"`
	// ThreadHistory is earlier thread text; shown only on a new session.
	ThreadHistory string `json:"threadHistory,omitempty"`
	// ParentSessionKey is the session of the channel a thread belongs to,
	// when the thread has a session of its own (Discord), for context.
	ParentSessionKey SessionKey `json:"parentSessionKey,omitempty"`
	// ThreadLabel names the thread or topic, if the platform has a name.
	ThreadLabel string `json:"threadLabel,omitempty"`
	// TopicID is the forum topic id (Telegram), if any.
	TopicID string `json:"topicId,omitempty"`
	// IsForum reports a Telegram forum supergroup.
	IsForum bool `json:"isForum,omitempty"`

	// History is the group's "since last reply" buffer: messages that did not
	// trigger a turn, oldest first.
	History []HistoryEntry `json:"history,omitempty"`
	// HistoryTruncated reports that older buffered messages were left out.
	HistoryTruncated bool `json:"historyTruncated,omitempty"`

	// Media lists attachments already downloaded by the bridge.
	Media []Media `json:"media,omitempty"`
	// UntrustedContext holds further channel-provided context lines
	// (forwarded payloads, link previews) appended under the untrusted
	// context header.
	UntrustedContext []string `json:"untrustedContext,omitempty"`
}

// EffectiveKind returns Kind, or InboundUser when it is unset.
func (in *Inbound) EffectiveKind() InboundKind {
	if in.Kind == "" {
		return InboundUser
	}
	return in.Kind
}

// Sender describes who wrote a message. All fields are untrusted.
type Sender struct {
	// ID is the platform user id.
	ID string `json:"id,omitempty"`
	// Name is the display name.
	Name string `json:"name,omitempty"`
	// Username is the handle, without "@".
	Username string `json:"username,omitempty"`
	// Tag is a platform discriminator or tag (Discord).
	Tag string `json:"tag,omitempty"`
	// E164 is the phone number (WhatsApp, Signal).
	E164 string `json:"e164,omitempty"`
}

// Label returns a short human label: "Name (id)", the name, or the id.
func (s Sender) Label() string {
	switch {
	case s.Name != "" && s.E164 != "":
		return s.Name + " (" + s.E164 + ")"
	case s.Name != "" && s.Username != "":
		return s.Name + " (@" + s.Username + ")"
	case s.Name != "" && s.ID != "":
		return s.Name + " (" + s.ID + ")"
	case s.Name != "":
		return s.Name
	case s.Username != "":
		return "@" + s.Username
	case s.E164 != "":
		return s.E164
	}
	return s.ID
}

// GroupInfo describes a group or channel. All fields are untrusted.
type GroupInfo struct {
	// Subject is the group's title or name.
	Subject string `json:"subject,omitempty"`
	// Channel is the channel name within a space (Slack "#general").
	Channel string `json:"channel,omitempty"`
	// Space is the workspace or server name (Slack team, Discord guild).
	Space string `json:"space,omitempty"`
}

// QuotedMessage is a message being replied to or quoted.
type QuotedMessage struct {
	// ID is the platform message id.
	ID string `json:"id,omitempty"`
	// Sender labels who wrote it.
	Sender string `json:"sender,omitempty"`
	// Body is its text.
	Body string `json:"body,omitempty"`
	// IsQuote reports a quote (selected text) rather than a plain reply.
	IsQuote bool `json:"isQuote,omitempty"`
	// FromBot reports that the replied-to message is the bot's own, which
	// counts as an implicit mention.
	FromBot bool `json:"fromBot,omitempty"`
}

// ForwardedFrom describes the origin of a forwarded message.
type ForwardedFrom struct {
	// From names the original author or chat.
	From string `json:"from,omitempty"`
	// Type is the kind of origin (user, chat, channel, hidden_user).
	Type string `json:"type,omitempty"`
	// Username is the origin's handle.
	Username string `json:"username,omitempty"`
	// Title is the origin chat's title.
	Title string `json:"title,omitempty"`
	// Signature is the author signature of a channel post.
	Signature string `json:"signature,omitempty"`
	// ChatType is the origin chat's type.
	ChatType string `json:"chatType,omitempty"`
	// DateMs is when the original was sent, in Unix ms.
	DateMs int64 `json:"dateMs,omitempty"`
}

// HistoryEntry is one buffered group message.
type HistoryEntry struct {
	// Sender labels who wrote it.
	Sender string `json:"sender"`
	// Body is its text.
	Body string `json:"body"`
	// TimestampMs is when it was sent, in Unix ms.
	TimestampMs int64 `json:"timestampMs,omitempty"`
	// MessageID is its platform id.
	MessageID string `json:"messageId,omitempty"`
}

// Media is one attachment, downloaded into the state directory.
type Media struct {
	// Path is the local file.
	Path string `json:"path,omitempty"`
	// URL is where the platform serves it, if public.
	URL string `json:"url,omitempty"`
	// MimeType is its media type, e.g. "image/jpeg".
	MimeType string `json:"mimeType,omitempty"`
	// Transcript is the text of an audio attachment, when transcribed; the
	// audio itself is then not described to the model.
	Transcript string `json:"transcript,omitempty"`
}
