package prompt

import (
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// UntrustedOptions controls UntrustedPrefix.
type UntrustedOptions struct {
	// IsNewSession shows the thread starter block; OpenClaw shows it only on
	// the first turn of a session.
	IsNewSession bool
	// Location is the zone of the conversation timestamp; nil means local
	// time.
	Location *time.Location
}

// UntrustedPrefix builds the labelled untrusted metadata blocks that go
// before the user's message (openclaw-facts §4.2, OpenClaw's
// buildInboundUserContextPrefix), in order: conversation info, sender,
// thread starter (new sessions only), replied message, forwarded context,
// chat history (the newest MaxHistoryEntries). Each block is its label line
// and a ```json fenced value; blocks are joined by a blank line; a block
// with nothing to say is left out, and "" is returned when none remains.
//
// Every string is trimmed of NUL bytes, capped at MaxJSONStringChars and
// has its ``` broken; JSON escaping keeps every name and label on one line.
// Ids (message_id, reply_to_id, sender_id, sender) are left out of a
// direct chat whose channel is webchat or unknown, as OpenClaw does.
func UntrustedPrefix(in *core.Inbound, opts UntrustedOptions) string {
	if in == nil {
		return ""
	}
	b := appendUntrustedPrefix(make([]byte, 0, 1024), in, opts)
	return string(b)
}

func appendUntrustedPrefix(b []byte, in *core.Inbound, opts UntrustedOptions) []byte {
	start := len(b)
	block := func(label string, value func([]byte) []byte) {
		if len(b) > start {
			b = append(b, "\n\n"...)
		}
		b = append(b, label...)
		b = append(b, "\n```json\n"...)
		b = value(b)
		b = append(b, "\n```"...)
	}

	direct := isDirect(in.ChatType)
	channel := inboundChannel(in)
	withIDs := !direct || (channel != "" && channel != "webchat")

	history := in.History
	if len(history) > MaxHistoryEntries {
		history = history[len(history)-MaxHistoryEntries:]
	}
	starter := ""
	if opts.IsNewSession {
		starter = stripNUL(in.ThreadStarter)
		if jsTrim(starter) == "" {
			starter = ""
		}
	}
	replyBody := ""
	if in.ReplyTo != nil {
		replyBody = stripNUL(in.ReplyTo.Body)
	}
	forwardedFrom := ""
	if in.Forwarded != nil {
		forwardedFrom = metaString(in.Forwarded.From)
	}
	var group core.GroupInfo
	if in.Group != nil {
		group = *in.Group
	}
	sender := senderFields(in.Sender)

	var info jsonObject
	if withIDs {
		info.str("message_id", metaString(messageID(in)))
		if in.ReplyTo != nil {
			info.str("reply_to_id", metaString(in.ReplyTo.ID))
		}
		info.str("sender_id", sender.id)
	}
	if !direct {
		info.str("conversation_label", conversationLabel(in))
	}
	if withIDs {
		info.str("sender", firstNonEmpty(sender.name, sender.e164, sender.id, sender.username))
	}
	if in.Timestamp != 0 {
		info.str("timestamp", formatMessageTime(in.Timestamp, opts.Location))
	}
	info.str("group_subject", metaString(group.Subject))
	info.str("group_channel", metaString(group.Channel))
	info.str("group_space", metaString(group.Space))
	info.str("thread_label", metaString(in.ThreadLabel))
	info.str("topic_id", metaString(firstNonEmpty(in.TopicID, in.Route.ThreadID)))
	info.flag("is_forum", in.IsForum)
	info.flag("is_group_chat", !direct)
	info.flag("was_mentioned", in.WasMentioned)
	info.flag("has_reply_context", replyBody != "")
	info.flag("has_forwarded_context", forwardedFrom != "")
	info.flag("has_thread_starter", starter != "")
	info.num("history_count", int64(len(history)), len(history) > 0)
	info.flag("history_truncated", len(in.History) > MaxHistoryEntries || (len(history) > 0 && in.HistoryTruncated))
	if !info.empty() {
		block(LabelConversationInfo, func(b []byte) []byte { return appendObject(b, &info, 0, true) })
	}

	if label := senderLabel(sender); label != "" {
		var o jsonObject
		o.str("label", label)
		o.str("id", sender.id)
		o.str("name", sender.name)
		o.str("username", sender.username)
		o.str("tag", sender.tag)
		o.str("e164", sender.e164)
		block(LabelSender, func(b []byte) []byte { return appendObject(b, &o, 0, true) })
	}

	if starter != "" {
		var o jsonObject
		o.str("body", starter)
		block(LabelThreadStarter, func(b []byte) []byte { return appendObject(b, &o, 0, true) })
	}

	if replyBody != "" {
		var o jsonObject
		o.str("sender_label", metaString(in.ReplyTo.Sender))
		o.flag("is_quote", in.ReplyTo.IsQuote)
		o.str("body", replyBody)
		block(LabelRepliedMessage, func(b []byte) []byte { return appendObject(b, &o, 0, true) })
	}

	if forwardedFrom != "" {
		f := in.Forwarded
		var o jsonObject
		o.str("from", forwardedFrom)
		o.str("type", metaString(f.Type))
		o.str("username", metaString(f.Username))
		o.str("title", metaString(f.Title))
		o.str("signature", metaString(f.Signature))
		o.str("chat_type", metaString(f.ChatType))
		o.num("date_ms", f.DateMs, f.DateMs != 0)
		block(LabelForwarded, func(b []byte) []byte { return appendObject(b, &o, 0, true) })
	}

	if len(history) > 0 {
		entries := make([]jsonObject, len(history))
		for i, h := range history {
			entries[i].str("sender", stripNUL(h.Sender))
			entries[i].num("timestamp_ms", h.TimestampMs, h.TimestampMs != 0)
			entries[i].str("body", stripNUL(h.Body))
		}
		block(LabelChatHistory, func(b []byte) []byte { return appendObjectArray(b, entries, 0, true) })
	}
	return b
}

// isDirect reports a direct chat; an empty or unknown chat type counts as
// direct, as OpenClaw's normalizeChatType leaves it undefined.
func isDirect(t core.ChatType) bool {
	ct, err := core.ParseChatType(string(t))
	return err != nil || ct == core.ChatDirect
}

// inboundChannel is OpenClaw's resolveInboundChannel: the route's channel,
// else the surface.
func inboundChannel(in *core.Inbound) string {
	return firstNonEmpty(metaString(string(in.Route.Channel)), metaString(in.Surface))
}

// messageID is the message's id, or the last of a debounced batch.
func messageID(in *core.Inbound) string {
	if in.MessageID != "" || len(in.MessageIDs) == 0 {
		return string(in.MessageID)
	}
	return string(in.MessageIDs[len(in.MessageIDs)-1])
}

// conversationLabel names a group chat the way OpenClaw's channels do:
// "<title> id:<chat id>[ topic:<topic id>]", or the chat id alone.
func conversationLabel(in *core.Inbound) string {
	id := metaString(string(in.Route.To))
	title := ""
	if in.Group != nil {
		title = metaString(firstNonEmpty(in.Group.Subject, in.Group.Channel))
	}
	topic := metaString(in.TopicID)
	var parts []string
	if title != "" {
		parts = append(parts, title)
	}
	if id != "" {
		if title != "" {
			parts = append(parts, "id:"+id)
		} else {
			parts = append(parts, id)
		}
	}
	if topic != "" && len(parts) > 0 {
		parts = append(parts, "topic:"+topic)
	}
	return strings.Join(parts, " ")
}

// senderInfo is the sender's fields, normalized.
type senderInfo struct {
	id, name, username, tag, e164 string
}

func senderFields(s core.Sender) senderInfo {
	return senderInfo{
		id:       metaString(s.ID),
		name:     metaString(s.Name),
		username: metaString(s.Username),
		tag:      metaString(s.Tag),
		e164:     metaString(s.E164),
	}
}

// senderLabel is OpenClaw's resolveSenderLabel: "<display> (<id part>)"
// where display is the name, username or tag and the id part the phone
// number or id; either alone when the other is missing or equal.
func senderLabel(s senderInfo) string {
	display := firstNonEmpty(s.name, s.username, s.tag)
	idPart := firstNonEmpty(s.e164, s.id)
	if display != "" && idPart != "" && display != idPart {
		return display + " (" + idPart + ")"
	}
	return firstNonEmpty(display, idPart)
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
