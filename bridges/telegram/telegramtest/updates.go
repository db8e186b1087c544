package telegramtest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
)

// PushUpdate queues an update for getUpdates and returns its update_id. The
// update is an Update, *Update, any other value that marshals to an update
// object, or raw JSON ([]byte, json.RawMessage or string). A missing or zero
// update_id is assigned from a counter that stays above every ID pushed so
// far. Messages the update carries are remembered, so the bot can reply to
// them. A malformed update fails the test (with Errorf, so PushUpdate may be
// called from any goroutine) and returns 0.
func (s *Server) PushUpdate(update any) int64 {
	s.t.Helper()
	// The update_id is taken and the update queued in one step, as
	// Telegram does: an update queued behind a higher one the bot has
	// already confirmed would be dropped by that offset.
	s.pushMu.Lock()
	defer s.pushMu.Unlock()
	id, raw, err := s.stampUpdate(update)
	if err != nil {
		s.t.Errorf("telegramtest: PushUpdate: %v", err)
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, queuedUpdate{id: id, raw: raw})
	s.changes.Changed()
	return id
}

// stampUpdate encodes update with its update_id set and remembers the
// messages in it.
func (s *Server) stampUpdate(update any) (int64, json.RawMessage, error) {
	var raw []byte
	switch u := update.(type) {
	case []byte:
		raw = u
	case json.RawMessage:
		raw = u
	case string:
		raw = []byte(u)
	default:
		var err error
		if raw, err = json.Marshal(u); err != nil {
			return 0, nil, fmt.Errorf("encode update: %w", err)
		}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return 0, nil, fmt.Errorf("update is not a JSON object: %s", raw)
	}
	var id int64
	if v, ok := fields["update_id"]; ok {
		if err := json.Unmarshal(v, &id); err != nil {
			return 0, nil, fmt.Errorf("update_id is not an integer: %s", v)
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if id == 0 {
		id = s.nextUpdateID
	}
	s.nextUpdateID = max(s.nextUpdateID, id+1)
	fields["update_id"] = json.RawMessage(fmt.Sprint(id))
	for _, key := range []string{"message", "edited_message", "channel_post", "edited_channel_post", "business_message"} {
		var m Message
		if v, ok := fields[key]; ok && json.Unmarshal(v, &m) == nil && m.Chat.ID != 0 {
			s.recordMessageLocked(m, m.From != nil && m.From.ID == s.BotUser.ID)
		}
	}
	stamped, err := json.Marshal(fields)
	if err != nil {
		return 0, nil, fmt.Errorf("encode update: %w", err)
	}
	return id, stamped, nil
}

// WebhookPost delivers an update to a webhook receiver the way Telegram does:
// a JSON POST to url with the X-Telegram-Bot-Api-Secret-Token header when
// secret is not empty. The update is stamped like PushUpdate's but not
// queued for getUpdates. Pass Webhook().URL and Webhook().SecretToken to
// deliver to what the bot registered. A non-2xx answer is an error.
func (s *Server) WebhookPost(ctx context.Context, url, secret string, update any) error {
	_, raw, err := s.stampUpdate(update)
	if err != nil {
		return fmt.Errorf("telegramtest: webhook post: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("telegramtest: webhook post: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if secret != "" {
		req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
	}
	resp, err := s.webhookClient.Do(req)
	if err != nil {
		return fmt.Errorf("telegramtest: webhook post: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("telegramtest: webhook post: receiver answered %s", resp.Status)
	}
	return nil
}

// MessageOption adjusts a message built by TextMessage.
type MessageOption func(*messageBuilder)

type messageBuilder struct {
	s     *Server
	m     *Message
	media bool
}

// TextMessage builds an update carrying a new message from a user, as a
// Telegram client would send it: the next message_id in the chat, the current
// date, the chat (a private chat is named after from; others get a title),
// and the @mention and /bot_command entities found in text. Push it with
// PushUpdate. Options add replies, topics, entities and media; with media,
// text becomes the caption.
func (s *Server) TextMessage(chatID int64, chatType string, from User, text string, opts ...MessageOption) Update {
	s.mu.Lock()
	cs := s.chatLocked(chatID)
	if chatType != "" {
		cs.chat.Type = chatType
	}
	switch {
	case cs.chat.Type == ChatPrivate:
		cs.chat.FirstName, cs.chat.LastName, cs.chat.Username = from.FirstName, from.LastName, from.Username
	case cs.chat.Title == "":
		cs.chat.Title = fmt.Sprintf("Test %s %d", cs.chat.Type, chatID)
	}
	cs.lastID++
	m := &Message{MessageID: cs.lastID, Date: s.clock().Unix(), Chat: cs.chat, Text: text, Entities: detectEntities(text)}
	s.mu.Unlock()

	if from.ID != 0 {
		m.From = &from
	}
	b := &messageBuilder{s: s, m: m}
	for _, o := range opts {
		o(b)
	}
	if b.media {
		m.Caption, m.CaptionEntities = m.Text, m.Entities
		m.Text, m.Entities = "", nil
	}
	return Update{Message: m}
}

// ReplyTo makes the message a reply to message messageID of the same chat.
// A message the server has seen (pushed or sent by the bot) is embedded in
// full, any other as a bare stub with just its ID.
func ReplyTo(messageID int) MessageOption {
	return func(b *messageBuilder) {
		b.s.mu.Lock()
		defer b.s.mu.Unlock()
		reply := &Message{MessageID: messageID, Date: b.m.Date, Chat: b.m.Chat}
		if stored := b.s.chatLocked(b.m.Chat.ID).messages[messageID]; stored != nil {
			r := stored.msg
			r.ReplyToMessage = nil
			reply = &r
		}
		b.m.ReplyToMessage = reply
	}
}

// WithEntities replaces the detected entities with entities.
func WithEntities(entities ...MessageEntity) MessageOption {
	return func(b *messageBuilder) { b.m.Entities = entities }
}

// WithTextMention adds a text_mention entity for u over the first occurrence
// of substr in the text, as a client does when a user picks someone without a
// username from the mention list.
func WithTextMention(substr string, u User) MessageOption {
	return func(b *messageBuilder) {
		i := strings.Index(b.m.Text, substr)
		if i < 0 || substr == "" {
			b.s.t.Errorf("telegramtest: WithTextMention: %q not in %q", substr, b.m.Text)
			return
		}
		b.m.Entities = append(b.m.Entities, MessageEntity{
			Type: "text_mention", Offset: utf16Len(b.m.Text[:i]), Length: utf16Len(substr), User: &u,
		})
		slices.SortStableFunc(b.m.Entities, func(x, y MessageEntity) int { return cmp.Compare(x.Offset, y.Offset) })
	}
}

// InTopic puts the message in forum topic threadID: message_thread_id and
// is_topic_message are set and the chat is marked as a forum.
func InTopic(threadID int) MessageOption {
	return func(b *messageBuilder) {
		b.m.MessageThreadID = threadID
		b.m.IsTopicMessage = true
		b.m.Chat.IsForum = true
		b.s.mu.Lock()
		b.s.chatLocked(b.m.Chat.ID).chat.IsForum = true
		b.s.mu.Unlock()
	}
}

// WithChatTitle sets the title of a group, supergroup or channel chat.
func WithChatTitle(title string) MessageOption {
	return func(b *messageBuilder) {
		b.m.Chat.Title = title
		b.s.mu.Lock()
		b.s.chatLocked(b.m.Chat.ID).chat.Title = title
		b.s.mu.Unlock()
	}
}

// WithPhoto attaches a photo whose largest size is fileID, registering data
// for getFile and download (as photos/<fileID>.jpg). A smaller thumbnail size
// "<fileID>_s" with the same bytes comes first, as clients send sizes in
// ascending order.
func WithPhoto(fileID string, data []byte) MessageOption {
	return func(b *messageBuilder) {
		b.s.mu.Lock()
		b.s.addFileLocked(fileID+"_s", "photos/"+fileID+"_s.jpg", data)
		b.s.addFileLocked(fileID, "photos/"+fileID+".jpg", data)
		b.s.mu.Unlock()
		b.m.Photo = []PhotoSize{
			{FileID: fileID + "_s", FileUniqueID: "u_" + fileID + "_s", Width: 90, Height: 67, FileSize: len(data)},
			{FileID: fileID, FileUniqueID: "u_" + fileID, Width: 1280, Height: 960, FileSize: len(data)},
		}
		b.media = true
	}
}

// WithDocument attaches a document, registering data for getFile and
// download (as documents/<fileID>/<fileName>).
func WithDocument(fileID, fileName, mimeType string, data []byte) MessageOption {
	return func(b *messageBuilder) {
		b.s.AddFile(fileID, "documents/"+fileID+"/"+fileName, data)
		b.m.Document = &Document{
			FileID: fileID, FileUniqueID: "u_" + fileID, FileName: fileName, MimeType: mimeType, FileSize: int64(len(data)),
		}
		b.media = true
	}
}
