package telegram

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/go-telegram/bot/models"
	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/core"
)

// Channel is the bridge's channel name.
const Channel = "telegram"

// generalTopic is the id of a forum's General topic, which messages in it
// do not carry (openclaw-facts §2.4).
const generalTopic = 1

// identity is who the bot is, from getMe.
type identity struct {
	id       int64
	username string // without "@"
}

// normalizer turns Telegram updates into bridges.Inbound values. It is
// pure: no IO.
type normalizer struct {
	accountID string
	agentID   string
	session   core.SessionConfig
	bot       identity
	mentions  bridges.Mentions
}

// normalize converts an update; ok is false for updates the bridge does
// not answer (edits, channel posts, service messages, its own and other
// bots' messages, empty messages) with the reason.
func (n normalizer) normalize(upd *models.Update) (msg bridges.Inbound, reason string, ok bool) {
	switch {
	case upd == nil:
		return msg, "empty update", false
	case upd.EditedMessage != nil:
		return msg, "edit (edits are not answered; send a new message)", false
	case upd.ChannelPost != nil || upd.EditedChannelPost != nil:
		return msg, "channel post", false
	case upd.Message == nil:
		return msg, "not a message", false
	}
	m := upd.Message
	if m.From == nil {
		return msg, "no sender", false
	}
	if m.From.IsBot {
		return msg, "from a bot", false
	}
	text, entities := m.Text, m.Entities
	if text == "" {
		text, entities = m.Caption, m.CaptionEntities
	}
	if strings.TrimSpace(text) == "" && !hasMedia(m) {
		return msg, "no text", false
	}

	chatID := strconv.FormatInt(m.Chat.ID, 10)
	in := &core.Inbound{
		Kind:      core.InboundUser,
		AgentID:   n.agentID,
		Surface:   Channel,
		MessageID: core.MessageID(strconv.Itoa(m.ID)),
		Timestamp: int64(m.Date) * 1000,
		Sender: core.Sender{
			ID:       strconv.FormatInt(m.From.ID, 10),
			Name:     strings.TrimSpace(m.From.FirstName + " " + m.From.LastName),
			Username: m.From.Username,
		},
		Route: core.Route{Channel: Channel, AccountID: core.AccountID(n.accountID), To: core.ChatID(chatID)},
	}
	msg = bridges.Inbound{Message: in, DedupeKey: fmt.Sprintf("telegram:%d:update:%d", n.bot.id, upd.ID)}

	switch m.Chat.Type {
	case models.ChatTypePrivate:
		in.ChatType = core.ChatDirect
		key := core.BuildPeerSessionKey(core.PeerKeyParams{
			AgentID: n.agentID, Channel: Channel, AccountID: n.accountID, Kind: core.ChatDirect,
			PeerID: in.Sender.ID, DMScope: n.session.DMScope, IdentityLinks: n.session.IdentityLinks,
		})
		if m.MessageThreadID != 0 {
			// A private-chat topic is its own conversation, whatever the
			// dmScope.
			thread := strconv.Itoa(m.MessageThreadID)
			key = key.WithThread(chatID + ":" + thread)
			in.Route.ThreadID = thread
		}
		in.SessionKey = key
	case models.ChatTypeGroup, models.ChatTypeSupergroup:
		in.ChatType = core.ChatGroup
		in.Group = &core.GroupInfo{Subject: m.Chat.Title}
		key := core.BuildPeerSessionKey(core.PeerKeyParams{AgentID: n.agentID, Channel: Channel, Kind: core.ChatGroup, PeerID: chatID})
		peer := chatID
		if m.Chat.IsForum {
			topic := m.MessageThreadID
			if topic == 0 || !m.IsTopicMessage {
				topic = generalTopic
			}
			t := strconv.Itoa(topic)
			key = key.WithTopic(t)
			in.TopicID, in.IsForum, in.Route.ThreadID = t, true, t
			peer = chatID + ":topic:" + t
		}
		in.SessionKey = key
		msg.GroupID = chatID
		msg.HistoryKey = core.GroupHistoryKey(Channel, n.accountID, core.ChatGroup, peer)
	default:
		return bridges.Inbound{}, "chat type " + string(m.Chat.Type), false
	}

	body, mentioned, command := n.readEntities(text, entities)
	in.Body = body
	in.WasMentioned = mentioned || n.mentions.Match(body)
	msg.IsControlCommand = command
	msg.CanDetectMention = n.bot.username != "" || n.mentions.Configured()
	if r := m.ReplyToMessage; r != nil && r.ForumTopicCreated == nil {
		from := ""
		fromBot := false
		if r.From != nil {
			from = strings.TrimSpace(r.From.FirstName + " " + r.From.LastName)
			fromBot = r.From.ID == n.bot.id
		}
		quoted := r.Text
		if quoted == "" {
			quoted = r.Caption
		}
		in.ReplyTo = &core.QuotedMessage{ID: strconv.Itoa(r.ID), Sender: from, Body: quoted, FromBot: fromBot, IsQuote: m.Quote != nil}
		msg.ImplicitMention = fromBot
	}
	in.Forwarded = forwardedFrom(m.ForwardOrigin)
	return msg, "", true
}

// readEntities finds mentions of the bot and a leading bot command in the
// text (entity offsets count UTF-16 code units), and returns the body with
// "/cmd@thisbot" shortened to "/cmd".
func (n normalizer) readEntities(text string, entities []models.MessageEntity) (body string, mentioned, command bool) {
	units := utf16.Encode([]rune(text))
	slice := func(e models.MessageEntity) string {
		if e.Offset < 0 || e.Length < 0 || e.Offset+e.Length > len(units) {
			return ""
		}
		return string(utf16.Decode(units[e.Offset : e.Offset+e.Length]))
	}
	body = text
	at := "@" + strings.ToLower(n.bot.username)
	for _, e := range entities {
		switch e.Type {
		case models.MessageEntityTypeMention:
			if n.bot.username != "" && strings.ToLower(slice(e)) == at {
				mentioned = true
			}
		case models.MessageEntityTypeTextMention:
			if e.User != nil && e.User.ID == n.bot.id {
				mentioned = true
			}
		case models.MessageEntityTypeBotCommand:
			cmd := slice(e)
			target := ""
			if i := strings.IndexByte(cmd, '@'); i >= 0 {
				cmd, target = cmd[:i], strings.ToLower(cmd[i:])
			}
			if target != "" && target != at {
				continue // a command for another bot
			}
			if target != "" {
				mentioned = true
			}
			if e.Offset == 0 {
				command = true
				body = cmd + strings.TrimPrefix(text, slice(e))
			}
		}
	}
	return body, mentioned, command
}

// hasMedia reports an attachment the bridge downloads.
func hasMedia(m *models.Message) bool {
	return len(m.Photo) > 0 || m.Document != nil || m.Voice != nil || m.Audio != nil || m.Video != nil
}

// forwardedFrom describes a forward's origin.
func forwardedFrom(o *models.MessageOrigin) *core.ForwardedFrom {
	if o == nil {
		return nil
	}
	switch {
	case o.MessageOriginUser != nil:
		u := o.MessageOriginUser
		return &core.ForwardedFrom{Type: "user", From: strings.TrimSpace(u.SenderUser.FirstName + " " + u.SenderUser.LastName),
			Username: u.SenderUser.Username, DateMs: int64(u.Date) * 1000}
	case o.MessageOriginHiddenUser != nil:
		h := o.MessageOriginHiddenUser
		return &core.ForwardedFrom{Type: "hidden_user", From: h.SenderUserName, DateMs: int64(h.Date) * 1000}
	case o.MessageOriginChat != nil:
		c := o.MessageOriginChat
		f := &core.ForwardedFrom{Type: "chat", Title: c.SenderChat.Title, Username: c.SenderChat.Username, ChatType: string(c.SenderChat.Type), DateMs: int64(c.Date) * 1000}
		if c.AuthorSignature != nil {
			f.Signature = *c.AuthorSignature
		}
		return f
	case o.MessageOriginChannel != nil:
		c := o.MessageOriginChannel
		f := &core.ForwardedFrom{Type: "channel", Title: c.Chat.Title, Username: c.Chat.Username, ChatType: string(c.Chat.Type), DateMs: int64(c.Date) * 1000}
		if c.AuthorSignature != nil {
			f.Signature = *c.AuthorSignature
		}
		return f
	}
	return nil
}
