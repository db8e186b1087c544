package slacktest

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Callback wraps an inner event (a *MessageEvent, a map, raw JSON, …) in an
// event_callback from the fake's team and app, with a fresh event_id and the
// clock's event_time.
func (s *Server) Callback(event any) EventCallback {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.callbackLocked(event)
}

func (s *Server) callbackLocked(event any) EventCallback {
	id := s.Identity
	return EventCallback{
		Token:        VerificationToken,
		TeamID:       id.TeamID,
		APIAppID:     id.AppID,
		Event:        event,
		Type:         "event_callback",
		EventID:      fmt.Sprintf("Ev0FAKE%06d", s.nextSeqLocked()),
		EventTime:    s.clock().Unix(),
		EventContext: "4-fake-event-context",
		Authorizations: []Authorization{{
			TeamID: id.TeamID, UserID: id.BotUserID, IsBot: true,
		}},
	}
}

// MessageOption adjusts a message event built by Message or AppMention.
type MessageOption func(*messageBuilder)

type messageBuilder struct {
	s        *Server
	ev       *MessageEvent
	editOf   string
	deleteOf string
}

// Message builds the event_callback of a new message that user posted in
// channel, as Slack delivers it for the message.channels, message.groups,
// message.im and message.mpim subscriptions: the next ts (also event_ts),
// a client_msg_id, and channel_type from the conversation (registered with
// AddConversation or guessed from the ID's prefix). Push it with PushEvent
// or deliver it with PostEvent; options make it a thread reply, a bot's
// message, an edit, a deletion or a file share.
func (s *Server) Message(channel, user, text string, opts ...MessageOption) EventCallback {
	s.t.Helper()
	b := s.newMessage("message", channel, user, text)
	s.mu.Lock()
	if c := s.conversationLocked(channel); c != nil {
		b.ev.ChannelType = c.channelType()
	} else {
		b.ev.ChannelType = defaultChannelType(channel)
	}
	s.mu.Unlock()
	for _, o := range opts {
		o(b)
	}
	switch {
	case b.editOf != "":
		b.makeEdit()
	case b.deleteOf != "":
		b.makeDeletion()
	}
	return s.Callback(b.ev)
}

// AppMention builds the event_callback of an app_mention event: user
// mentioned the bot in channel. Unless text already mentions the bot
// ("<@BOTUSERID>"), the mention is put in front, as a user would type it.
// Edits and Deletes do not apply.
func (s *Server) AppMention(channel, user, text string, opts ...MessageOption) EventCallback {
	s.t.Helper()
	mention := "<@" + s.Identity.BotUserID + ">"
	if !strings.Contains(text, mention) {
		text = strings.TrimSpace(mention + " " + text)
	}
	b := s.newMessage("app_mention", channel, user, text)
	for _, o := range opts {
		o(b)
	}
	if b.editOf != "" || b.deleteOf != "" {
		s.t.Errorf("slacktest: AppMention: Edits and Deletes apply to message events only")
	}
	return s.Callback(b.ev)
}

func (s *Server) newMessage(typ, channel, user, text string) *messageBuilder {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := s.nextTSLocked()
	n := s.nextSeqLocked()
	return &messageBuilder{s: s, ev: &MessageEvent{
		ClientMsgID: fmt.Sprintf("c0ffee00-0000-4000-8000-%012d", n),
		Type:        typ,
		Text:        text,
		User:        user,
		TS:          ts,
		Team:        s.Identity.TeamID,
		Channel:     channel,
		EventTS:     ts,
	}}
}

// InThread makes the message a reply in the thread of threadTS, with
// parent_user_id when the parent message is known to the fake.
func InThread(threadTS string) MessageOption {
	return func(b *messageBuilder) {
		b.ev.ThreadTS = threadTS
		b.s.mu.Lock()
		defer b.s.mu.Unlock()
		if m := b.s.messageLocked(b.ev.Channel, threadTS); m != nil {
			b.ev.ParentUserID = m.user
		}
	}
}

// WithChannelType sets channel_type (ChannelTypeIM, ChannelTypeMPIM,
// ChannelTypeChannel or ChannelTypeGroup). Pushing the event makes
// conversations.info agree.
func WithChannelType(channelType string) MessageOption {
	return func(b *messageBuilder) { b.ev.ChannelType = channelType }
}

// FromBot marks the message as posted by a bot user, as Slack does for apps:
// bot_id and bot_profile are set, the user stays. Pass the fake's own
// Identity.BotID to build the echo of the bot's own message.
func FromBot(botID string) MessageOption {
	return func(b *messageBuilder) {
		b.ev.BotID = botID
		b.ev.BotProfile = &BotProfile{ID: botID, Name: "bot " + botID, TeamID: b.ev.Team}
		b.ev.ClientMsgID = ""
	}
}

// BotMessage makes the message a legacy bot_message (an integration or
// webhook): subtype bot_message, bot_id and username, no user.
func BotMessage(botID, username string) MessageOption {
	return func(b *messageBuilder) {
		b.ev.Subtype = SubtypeBotMessage
		b.ev.BotID = botID
		b.ev.Username = username
		b.ev.User = ""
		b.ev.ClientMsgID = ""
	}
}

// WithSubtype sets the subtype, e.g. SubtypeThreadBroadcast.
func WithSubtype(subtype string) MessageOption {
	return func(b *messageBuilder) { b.ev.Subtype = subtype }
}

// WithBlocks sets the message's blocks (a JSON array, e.g. rich_text).
func WithBlocks(blocks json.RawMessage) MessageOption {
	return func(b *messageBuilder) { b.ev.Blocks = blocks }
}

// WithFile attaches a file the user uploaded, registered with the fake so
// its url_private serves data to the bot token, and makes the message a
// file_share. Several WithFile options attach several files.
func WithFile(name, mimeType string, data []byte) MessageOption {
	return func(b *messageBuilder) {
		b.s.mu.Lock()
		f := b.s.addFileLocked(name, name, mimeType, b.ev.User, data)
		b.s.mu.Unlock()
		b.ev.Files = append(b.ev.Files, f.file)
		if b.ev.Type == "message" && b.ev.Subtype == "" {
			b.ev.Subtype = SubtypeFileShare
		}
	}
}

// Edits turns the message into a message_changed event: the message of
// originalTS now reads text. previous_message carries the old text when the
// fake knows the message.
func Edits(originalTS string) MessageOption {
	return func(b *messageBuilder) { b.editOf = originalTS }
}

// Deletes turns the message into a message_deleted event for originalTS.
// text is ignored; previous_message is the message as the fake knows it,
// or else a stub from user without text.
func Deletes(originalTS string) MessageOption {
	return func(b *messageBuilder) { b.deleteOf = originalTS }
}

// previous returns the message at ts as previous_message shows it.
func (b *messageBuilder) previous(ts string) *MessageEvent {
	prev := &MessageEvent{Type: "message", User: b.ev.User, TS: ts, ThreadTS: b.ev.ThreadTS}
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	if m := b.s.messageLocked(b.ev.Channel, ts); m != nil {
		prev.User, prev.Text, prev.ThreadTS = m.user, m.text, m.threadTS
	}
	return prev
}

// makeEdit restructures b.ev into a message_changed event.
func (b *messageBuilder) makeEdit() {
	inner := *b.ev
	prev := b.previous(b.editOf)
	inner.TS, inner.Channel, inner.ChannelType, inner.EventTS = b.editOf, "", "", ""
	inner.ThreadTS = prev.ThreadTS
	inner.Edited = &Edited{User: b.ev.User, TS: b.ev.TS}
	b.ev = &MessageEvent{
		Type: "message", Subtype: SubtypeMessageChanged, Hidden: true,
		Message: &inner, PreviousMessage: prev,
		Channel: b.ev.Channel, ChannelType: b.ev.ChannelType, TS: b.ev.TS, EventTS: b.ev.EventTS,
	}
}

// makeDeletion restructures b.ev into a message_deleted event.
func (b *messageBuilder) makeDeletion() {
	b.ev = &MessageEvent{
		Type: "message", Subtype: SubtypeMessageDeleted, Hidden: true, DeletedTS: b.deleteOf,
		PreviousMessage: b.previous(b.deleteOf),
		Channel:         b.ev.Channel, ChannelType: b.ev.ChannelType, TS: b.ev.TS, EventTS: b.ev.EventTS,
	}
}

// toJSON returns payload as JSON: raw JSON as is, anything else marshaled.
func toJSON(payload any) (json.RawMessage, error) {
	var raw []byte
	switch p := payload.(type) {
	case []byte:
		raw = p
	case json.RawMessage:
		raw = p
	case string:
		raw = []byte(p)
	default:
		var err error
		if raw, err = json.Marshal(p); err != nil {
			return nil, fmt.Errorf("encode payload: %w", err)
		}
	}
	if !json.Valid(raw) {
		return nil, fmt.Errorf("payload is not JSON: %q", raw)
	}
	return json.RawMessage(raw), nil
}

// stampPayload encodes an Events API payload, wrapping a bare inner event in
// an event_callback and filling in a missing event_id, and remembers the
// message it carries.
func (s *Server) stampPayload(payload any) (json.RawMessage, error) {
	raw, err := toJSON(payload)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return nil, fmt.Errorf("payload is not a JSON object: %s", raw)
	}
	var typ string
	_ = json.Unmarshal(fields["type"], &typ)
	switch typ {
	case "event_callback", "url_verification", "app_rate_limited":
	case "":
		return nil, fmt.Errorf("payload has no type: %s", raw)
	default: // an inner event
		if raw, err = json.Marshal(s.Callback(raw)); err != nil {
			return nil, fmt.Errorf("encode payload: %w", err)
		}
		s.recordEvent(raw)
		return raw, nil
	}
	if typ == "event_callback" && len(fields["event_id"]) == 0 {
		s.mu.Lock()
		fields["event_id"], _ = json.Marshal(fmt.Sprintf("Ev0FAKE%06d", s.nextSeqLocked()))
		s.mu.Unlock()
		if raw, err = json.Marshal(fields); err != nil {
			return nil, fmt.Errorf("encode payload: %w", err)
		}
	}
	s.recordEvent(raw)
	return raw, nil
}

// recordEvent remembers what an event_callback's inner event says about
// messages and conversations.
func (s *Server) recordEvent(raw json.RawMessage) {
	var cb struct {
		Type  string        `json:"type"`
		Event *MessageEvent `json:"event"`
	}
	if json.Unmarshal(raw, &cb) != nil {
		return // not a message-shaped event; nothing to remember
	}
	ev := cb.Event
	if cb.Type != "event_callback" || ev == nil || ev.Channel == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ev.ChannelType != "" {
		if c := s.conversationLocked(ev.Channel); c != nil && c.channelType() != ev.ChannelType {
			c.setChannelType(ev.ChannelType)
		}
	}
	if ev.Type != "message" && ev.Type != "app_mention" {
		return
	}
	switch ev.Subtype {
	case SubtypeMessageChanged:
		if ev.Message != nil {
			if m := s.messageLocked(ev.Channel, ev.Message.TS); m != nil {
				m.text = ev.Message.Text
			} else {
				s.recordMessageLocked(ev.Channel, ev.Message.TS, storedMessage{user: ev.Message.User, text: ev.Message.Text, threadTS: ev.Message.ThreadTS})
			}
		}
	case SubtypeMessageDeleted:
		delete(s.messages[ev.Channel], ev.DeletedTS)
	default:
		if ev.TS != "" {
			s.recordMessageLocked(ev.Channel, ev.TS, storedMessage{
				user: ev.User, text: ev.Text, threadTS: ev.ThreadTS,
				fromBot: ev.User == s.Identity.BotUserID,
			})
		}
	}
	s.changes.Changed()
}

// DeliveryOption adjusts a PostEvent delivery.
type DeliveryOption func(*delivery)

type delivery struct {
	at          time.Time
	retryNum    int
	retryReason string
}

// WithRetry marks the delivery as Slack's retry number num (1 to 3) for
// reason ("http_timeout", "http_error", …) with the X-Slack-Retry-Num and
// X-Slack-Retry-Reason headers.
func WithRetry(num int, reason string) DeliveryOption {
	return func(d *delivery) { d.retryNum, d.retryReason = num, reason }
}

// SignedAt signs the delivery with timestamp t instead of now, e.g. to test
// that a receiver rejects stale requests.
func SignedAt(t time.Time) DeliveryOption {
	return func(d *delivery) { d.at = t }
}

// PostEvent delivers an Events API payload to a receiver over HTTP the way
// Slack does: a JSON POST to url with X-Slack-Request-Timestamp and
// X-Slack-Signature computed from signingSecret (both left out when it is
// empty). The payload is stamped like PushEvent's. It returns the
// receiver's HTTP status; a receiver must answer 2xx within 3 seconds or
// Slack retries (see WithRetry).
func (s *Server) PostEvent(ctx context.Context, url, signingSecret string, payload any, opts ...DeliveryOption) (int, error) {
	d := delivery{at: time.Now()}
	for _, o := range opts {
		o(&d)
	}
	body, err := s.stampPayload(payload)
	if err != nil {
		return 0, fmt.Errorf("slacktest: post event: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("slacktest: post event: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Slackbot 1.0 (+https://api.slack.com/robots)")
	if signingSecret != "" {
		SignRequest(req, signingSecret, body, d.at)
	}
	if d.retryNum > 0 {
		req.Header.Set("X-Slack-Retry-Num", strconv.Itoa(d.retryNum))
		req.Header.Set("X-Slack-Retry-Reason", d.retryReason)
	}
	resp, err := s.eventClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("slacktest: post event: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// SignRequest sets the X-Slack-Request-Timestamp and X-Slack-Signature
// headers of a request whose body is body, as Slack signs requests with the
// app's signing secret at time at.
func SignRequest(req *http.Request, signingSecret string, body []byte, at time.Time) {
	ts := strconv.FormatInt(at.Unix(), 10)
	req.Header.Set("X-Slack-Request-Timestamp", ts)
	req.Header.Set("X-Slack-Signature", Signature(signingSecret, ts, body))
}

// Signature returns Slack's v0 request signature:
// "v0=" + hex(HMAC-SHA256(signingSecret, "v0:" + timestamp + ":" + body)).
func Signature(signingSecret, timestamp string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(signingSecret))
	mac.Write([]byte("v0:" + timestamp + ":"))
	mac.Write(body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}
