package slacktest

import (
	"encoding/json"
	"time"
)

// Channel types as the Events API spells them in a message event's
// channel_type: a direct message, a group direct message, a public channel
// and a private channel.
const (
	ChannelTypeIM      = "im"
	ChannelTypeMPIM    = "mpim"
	ChannelTypeChannel = "channel"
	ChannelTypeGroup   = "group"
)

// Message subtypes a bridge has to tell apart; a plain user message has none.
const (
	SubtypeBotMessage      = "bot_message"
	SubtypeMessageChanged  = "message_changed"
	SubtypeMessageDeleted  = "message_deleted"
	SubtypeFileShare       = "file_share"
	SubtypeThreadBroadcast = "thread_broadcast"
)

// Identity names the workspace, the app and the bot user the fake plays.
// A zero field takes the default shown in its comment.
type Identity struct {
	TeamID     string // "T0FAKETEAM"
	TeamName   string // "Switchboard Test"
	TeamDomain string // "switchboard-test"
	AppID      string // "A0FAKEAPP"
	BotUserID  string // "U0FAKEBOT"
	BotID      string // "B0FAKEBOT"
	BotName    string // "switchboard"
}

func (id Identity) withDefaults() Identity {
	def := func(v *string, d string) {
		if *v == "" {
			*v = d
		}
	}
	def(&id.TeamID, "T0FAKETEAM")
	def(&id.TeamName, "Switchboard Test")
	def(&id.TeamDomain, "switchboard-test")
	def(&id.AppID, "A0FAKEAPP")
	def(&id.BotUserID, "U0FAKEBOT")
	def(&id.BotID, "B0FAKEBOT")
	def(&id.BotName, "switchboard")
	return id
}

// User is the user object of users.info, reduced to what a bridge reads.
type User struct {
	ID       string      `json:"id"`
	TeamID   string      `json:"team_id"`
	Name     string      `json:"name"`
	RealName string      `json:"real_name"`
	Deleted  bool        `json:"deleted"`
	IsBot    bool        `json:"is_bot"`
	TZ       string      `json:"tz,omitempty"`
	Profile  UserProfile `json:"profile"`
}

// UserProfile is a user's profile; BotID is set for bot users.
type UserProfile struct {
	DisplayName string `json:"display_name"`
	RealName    string `json:"real_name"`
	Email       string `json:"email,omitempty"`
	Image72     string `json:"image_72,omitempty"`
	BotID       string `json:"bot_id,omitempty"`
}

// Conversation is the channel object of conversations.info. Exactly one of
// IsChannel, IsGroup, IsIM and IsMpIM is true; User is the other party of a
// direct message.
type Conversation struct {
	ID         string `json:"id"`
	Name       string `json:"name,omitempty"`
	Created    int64  `json:"created"`
	IsChannel  bool   `json:"is_channel"`
	IsGroup    bool   `json:"is_group"`
	IsIM       bool   `json:"is_im"`
	IsMpIM     bool   `json:"is_mpim"`
	IsPrivate  bool   `json:"is_private"`
	IsArchived bool   `json:"is_archived"`
	IsMember   bool   `json:"is_member"`
	User       string `json:"user,omitempty"`
}

// channelType is the Events API channel_type of c.
func (c *Conversation) channelType() string {
	switch {
	case c.IsIM:
		return ChannelTypeIM
	case c.IsMpIM:
		return ChannelTypeMPIM
	case c.IsGroup || c.IsPrivate:
		return ChannelTypeGroup
	}
	return ChannelTypeChannel
}

// setChannelType makes c the kind of conversation channel_type t names.
func (c *Conversation) setChannelType(t string) {
	c.IsChannel, c.IsGroup, c.IsIM, c.IsMpIM, c.IsPrivate = false, false, false, false, false
	switch t {
	case ChannelTypeIM:
		c.IsIM = true
	case ChannelTypeMPIM:
		c.IsMpIM, c.IsPrivate = true, true
	case ChannelTypeGroup:
		c.IsGroup, c.IsPrivate = true, true
	default:
		c.IsChannel = true
	}
}

// File is a file object as message events and files.info carry it. The
// URLs point at the fake, which serves them only with the bot token.
type File struct {
	ID                 string `json:"id"`
	Created            int64  `json:"created"`
	Timestamp          int64  `json:"timestamp"`
	Name               string `json:"name"`
	Title              string `json:"title"`
	Mimetype           string `json:"mimetype"`
	Filetype           string `json:"filetype"`
	PrettyType         string `json:"pretty_type"`
	User               string `json:"user,omitempty"`
	Mode               string `json:"mode"`
	IsExternal         bool   `json:"is_external"`
	Size               int    `json:"size"`
	URLPrivate         string `json:"url_private"`
	URLPrivateDownload string `json:"url_private_download"`
	Permalink          string `json:"permalink,omitempty"`
}

// Edited marks the new version of a message in a message_changed event.
type Edited struct {
	User string `json:"user"`
	TS   string `json:"ts"`
}

// BotProfile is the bot_profile of a message a bot user posted.
type BotProfile struct {
	ID      string `json:"id"`
	AppID   string `json:"app_id,omitempty"`
	Name    string `json:"name"`
	TeamID  string `json:"team_id"`
	Deleted bool   `json:"deleted"`
}

// MessageEvent is the inner event of a "message" or "app_mention" event
// callback, and the message object nested in message_changed and
// message_deleted events.
type MessageEvent struct {
	ClientMsgID     string          `json:"client_msg_id,omitempty"`
	Type            string          `json:"type"`
	Subtype         string          `json:"subtype,omitempty"`
	Text            string          `json:"text,omitempty"`
	User            string          `json:"user,omitempty"`
	BotID           string          `json:"bot_id,omitempty"`
	Username        string          `json:"username,omitempty"`
	BotProfile      *BotProfile     `json:"bot_profile,omitempty"`
	TS              string          `json:"ts"`
	ThreadTS        string          `json:"thread_ts,omitempty"`
	ParentUserID    string          `json:"parent_user_id,omitempty"`
	Team            string          `json:"team,omitempty"`
	Channel         string          `json:"channel,omitempty"`
	ChannelType     string          `json:"channel_type,omitempty"`
	EventTS         string          `json:"event_ts,omitempty"`
	Blocks          json.RawMessage `json:"blocks,omitempty"`
	Files           []File          `json:"files,omitempty"`
	Upload          bool            `json:"upload,omitempty"`
	Hidden          bool            `json:"hidden,omitempty"`
	DeletedTS       string          `json:"deleted_ts,omitempty"`
	Edited          *Edited         `json:"edited,omitempty"`
	Message         *MessageEvent   `json:"message,omitempty"`
	PreviousMessage *MessageEvent   `json:"previous_message,omitempty"`
}

// Authorization is one installation an event is delivered for.
type Authorization struct {
	EnterpriseID        *string `json:"enterprise_id"`
	TeamID              string  `json:"team_id"`
	UserID              string  `json:"user_id"`
	IsBot               bool    `json:"is_bot"`
	IsEnterpriseInstall bool    `json:"is_enterprise_install"`
}

// EventCallback is the outer Events API payload, type "event_callback".
// Event is the inner event: a *MessageEvent from Message and AppMention,
// or any value that marshals to an event object.
type EventCallback struct {
	Token              string          `json:"token"`
	TeamID             string          `json:"team_id"`
	APIAppID           string          `json:"api_app_id"`
	Event              any             `json:"event"`
	Type               string          `json:"type"`
	EventID            string          `json:"event_id"`
	EventTime          int64           `json:"event_time"`
	EventContext       string          `json:"event_context,omitempty"`
	Authorizations     []Authorization `json:"authorizations"`
	IsExtSharedChannel bool            `json:"is_ext_shared_channel"`
}

// SentMessage is one successful chat.postMessage, chat.update or
// chat.delete call, in the order the server received them.
type SentMessage struct {
	// Method is "chat.postMessage", "chat.update" or "chat.delete".
	Method  string
	Channel string
	// TS is the message's ts: assigned by chat.postMessage, the edited or
	// deleted message's for the others.
	TS string
	// ThreadTS is thread_ts as sent, "" outside threads.
	ThreadTS string
	// Text is the text exactly as sent, mrkdwn included.
	Text string
	// Mrkdwn is false only when the call sent mrkdwn=false.
	Mrkdwn bool
	// Blocks and Attachments are the JSON as sent, nil if absent.
	Blocks      json.RawMessage
	Attachments json.RawMessage
	// ReplyBroadcast is reply_broadcast: a thread reply also posted to the
	// channel.
	ReplyBroadcast bool
}

// Reaction is one successful reactions.add or reactions.remove call.
type Reaction struct {
	// Method is "reactions.add" or "reactions.remove".
	Method    string
	Name      string
	Channel   string
	Timestamp string
}

// Upload is a file the bot uploaded with files.getUploadURLExternal, a POST
// to the upload URL and files.completeUploadExternal (slack-go's
// UploadFile). Only completed uploads are listed.
type Upload struct {
	FileID   string
	Filename string
	Title    string
	// Length is the length the bot announced; len(Data) is what it sent.
	Length      int
	Data        []byte
	AltText     string
	SnippetType string
	// Channel is channel_id; Channels is the comma-separated channels.
	Channel        string
	Channels       []string
	ThreadTS       string
	InitialComment string
	Blocks         json.RawMessage
}

// Call is one Web API request, successful or not.
type Call struct {
	// Method is the method name from the path, e.g. "chat.postMessage".
	Method string
	// ContentType is the request's media type: "application/json",
	// "application/x-www-form-urlencoded", "multipart/form-data" or "".
	ContentType string
	// Token is the bearer token or, failing that, the token parameter.
	Token string
	// Params are the parameters as strings without the token; JSON-valued
	// ones (blocks in a JSON body, say) are JSON text.
	Params map[string]string
	// At is the time on the server's clock (see WithClock) when the call
	// arrived, e.g. to check that none came inside a Retry-After window.
	At time.Time
}

// Envelope is one Socket Mode envelope the fake queued, in push order.
type Envelope struct {
	ID                     string
	Type                   string
	Payload                json.RawMessage
	AcceptsResponsePayload bool
	RetryAttempt           int
	RetryReason            string
	// Delivered is set once the envelope was handed to a connection, and
	// cleared again if writing it failed.
	Delivered bool
	// Acked is set once the client acknowledged the envelope.
	Acked bool
}

// Ack is one acknowledgement the client sent over Socket Mode.
type Ack struct {
	EnvelopeID string
	// Payload is the response payload, nil when the ack carried none.
	Payload json.RawMessage
	// Raw is the whole message as received.
	Raw json.RawMessage
}
