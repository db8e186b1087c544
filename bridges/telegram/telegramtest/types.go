package telegramtest

import "encoding/json"

// Chat types as the Bot API spells them in Chat.Type.
const (
	ChatPrivate    = "private"
	ChatGroup      = "group"
	ChatSupergroup = "supergroup"
	ChatChannel    = "channel"
)

// User is the Bot API User object, reduced to the fields a bridge reads.
type User struct {
	ID           int64  `json:"id"`
	IsBot        bool   `json:"is_bot"`
	FirstName    string `json:"first_name"`
	LastName     string `json:"last_name,omitempty"`
	Username     string `json:"username,omitempty"`
	LanguageCode string `json:"language_code,omitempty"`
}

// Chat is the Bot API Chat object.
type Chat struct {
	ID        int64  `json:"id"`
	Type      string `json:"type"`
	Title     string `json:"title,omitempty"`
	Username  string `json:"username,omitempty"`
	FirstName string `json:"first_name,omitempty"`
	LastName  string `json:"last_name,omitempty"`
	IsForum   bool   `json:"is_forum,omitempty"`
}

// MessageEntity is the Bot API MessageEntity object. Offset and Length count
// UTF-16 code units, as on the wire.
type MessageEntity struct {
	Type          string `json:"type"`
	Offset        int    `json:"offset"`
	Length        int    `json:"length"`
	URL           string `json:"url,omitempty"`
	User          *User  `json:"user,omitempty"`
	Language      string `json:"language,omitempty"`
	CustomEmojiID string `json:"custom_emoji_id,omitempty"`
}

// PhotoSize is one size of a Bot API photo.
type PhotoSize struct {
	FileID       string `json:"file_id"`
	FileUniqueID string `json:"file_unique_id"`
	Width        int    `json:"width"`
	Height       int    `json:"height"`
	FileSize     int    `json:"file_size,omitempty"`
}

// Document is the Bot API Document object (a general file).
type Document struct {
	FileID       string `json:"file_id"`
	FileUniqueID string `json:"file_unique_id"`
	FileName     string `json:"file_name,omitempty"`
	MimeType     string `json:"mime_type,omitempty"`
	FileSize     int64  `json:"file_size,omitempty"`
}

// File is the Bot API File object returned by getFile; FilePath is relative
// to <URL>/file/bot<token>/.
type File struct {
	FileID       string `json:"file_id"`
	FileUniqueID string `json:"file_unique_id"`
	FileSize     int64  `json:"file_size,omitempty"`
	FilePath     string `json:"file_path,omitempty"`
}

// Message is the Bot API Message object, reduced to the fields a bridge reads
// and the fake writes.
type Message struct {
	MessageID          int             `json:"message_id"`
	MessageThreadID    int             `json:"message_thread_id,omitempty"`
	From               *User           `json:"from,omitempty"`
	SenderChat         *Chat           `json:"sender_chat,omitempty"`
	Date               int64           `json:"date"`
	Chat               Chat            `json:"chat"`
	IsTopicMessage     bool            `json:"is_topic_message,omitempty"`
	ReplyToMessage     *Message        `json:"reply_to_message,omitempty"`
	EditDate           int64           `json:"edit_date,omitempty"`
	Text               string          `json:"text,omitempty"`
	Entities           []MessageEntity `json:"entities,omitempty"`
	LinkPreviewOptions json.RawMessage `json:"link_preview_options,omitempty"`
	Photo              []PhotoSize     `json:"photo,omitempty"`
	Document           *Document       `json:"document,omitempty"`
	Caption            string          `json:"caption,omitempty"`
	CaptionEntities    []MessageEntity `json:"caption_entities,omitempty"`
	ReplyMarkup        json.RawMessage `json:"reply_markup,omitempty"`
}

// CallbackQuery is the Bot API CallbackQuery object (an inline button press).
type CallbackQuery struct {
	ID           string   `json:"id"`
	From         User     `json:"from"`
	Message      *Message `json:"message,omitempty"`
	ChatInstance string   `json:"chat_instance,omitempty"`
	Data         string   `json:"data,omitempty"`
}

// Update is the Bot API Update object. An UpdateID of zero means "not set":
// PushUpdate and WebhookPost assign the next one.
type Update struct {
	UpdateID      int64          `json:"update_id"`
	Message       *Message       `json:"message,omitempty"`
	EditedMessage *Message       `json:"edited_message,omitempty"`
	ChannelPost   *Message       `json:"channel_post,omitempty"`
	CallbackQuery *CallbackQuery `json:"callback_query,omitempty"`
}

// BotCommand is one entry of a setMyCommands call.
type BotCommand struct {
	Command     string `json:"command"`
	Description string `json:"description"`
}

// ReactionType is one reaction of a setMessageReaction call: Type is "emoji"
// (with Emoji set) or "custom_emoji" (with CustomEmojiID set).
type ReactionType struct {
	Type          string `json:"type"`
	Emoji         string `json:"emoji,omitempty"`
	CustomEmojiID string `json:"custom_emoji_id,omitempty"`
}
