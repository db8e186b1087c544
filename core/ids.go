package core

// Typed ids keep a route's parts from being swapped for one another: a
// chat id where an account id belongs, a channel where a message id does.
// They are strings on the wire.

// ChannelName is a channel's name: a bridge's configuration key under
// channels: ("telegram", lower case), or WebchatChannel.
type ChannelName string

// AccountID names a bot account on its channel; DefaultAccountID for the
// only one.
type AccountID string

// ChatID is a platform's id of a chat: a Telegram chat id, a Slack or
// Discord channel id, a WhatsApp JID, as its bridge writes it.
type ChatID string

// MessageID is a platform's id of one message (Telegram's message_id,
// Slack's ts, a Discord snowflake, a WhatsApp stanza id). It is only
// meaningful together with the chat it is in.
type MessageID string
