package whatsapptest

import (
	"time"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"
)

// Message builds an incoming message event in chat from sender, as
// whatsmeow dispatches it (already unwrapped).
func Message(chat, sender types.JID, id types.MessageID, pushName string, msg *waE2E.Message) *events.Message {
	return &events.Message{
		Info: types.MessageInfo{
			MessageSource: types.MessageSource{Chat: chat, Sender: sender, IsGroup: chat.Server == types.GroupServer},
			ID:            id, PushName: pushName, Timestamp: time.Unix(1_760_000_000, 0), Type: "text",
		},
		Message: msg, RawMessage: msg,
	}
}

// Text builds a plain text message event; a direct chat when chat is the
// sender.
func Text(chat, sender types.JID, id types.MessageID, text string) *events.Message {
	return Message(chat, sender, id, "Ada", &waE2E.Message{Conversation: proto.String(text)})
}

// Extended builds an extended text message with its context (mentions, a
// quoted message).
func Extended(chat, sender types.JID, id types.MessageID, text string, ci *waE2E.ContextInfo) *events.Message {
	return Message(chat, sender, id, "Ada", &waE2E.Message{ExtendedTextMessage: &waE2E.ExtendedTextMessage{Text: proto.String(text), ContextInfo: ci}})
}
