package telegramtest

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// method is one Bot API method the fake implements.
type method struct {
	name string // canonical spelling
	fn   func(s *Server, ctx context.Context, p *params) (any, *apiError)
}

// methods maps lower-case method names (the Bot API ignores case) to their
// implementations.
var methods = map[string]method{}

func init() {
	for _, m := range []method{
		{"getMe", (*Server).getMe},
		{"getUpdates", (*Server).getUpdates},
		{"setWebhook", (*Server).setWebhook},
		{"deleteWebhook", (*Server).deleteWebhook},
		{"getWebhookInfo", (*Server).getWebhookInfo},
		{"sendMessage", (*Server).sendMessage},
		{"editMessageText", (*Server).editMessageText},
		{"sendPhoto", func(s *Server, _ context.Context, p *params) (any, *apiError) {
			return s.sendMedia("sendPhoto", "photo", p)
		}},
		{"sendDocument", func(s *Server, _ context.Context, p *params) (any, *apiError) {
			return s.sendMedia("sendDocument", "document", p)
		}},
		{"sendChatAction", (*Server).sendChatAction},
		{"setMyCommands", (*Server).setMyCommands},
		{"getMyCommands", (*Server).getMyCommands},
		{"deleteMyCommands", (*Server).deleteMyCommands},
		{"setMessageReaction", (*Server).setMessageReaction},
		{"answerCallbackQuery", (*Server).answerCallbackQuery},
		{"getFile", (*Server).getFile},
	} {
		methods[strings.ToLower(m.name)] = m
	}
}

// Limits the server enforces, in UTF-16 code units of the parsed text.
const (
	maxTextLen     = 4096
	maxCaptionLen  = 1024
	maxDownload    = 20 << 20 // getFile refuses bigger files
	maxUpdateLimit = 100
)

func (s *Server) getMe(context.Context, *params) (any, *apiError) {
	return s.BotUser, nil
}

// getUpdates confirms updates below offset, then returns what is queued or
// waits up to timeout seconds for a push. A newer getUpdates terminates a
// waiting one with 409, as the real server does when two pollers compete.
func (s *Server) getUpdates(ctx context.Context, p *params) (any, *apiError) {
	offset, err := p.int64("offset")
	if err != nil {
		return nil, err
	}
	limit, err := p.int("limit")
	if err != nil {
		return nil, err
	}
	if limit <= 0 || limit > maxUpdateLimit {
		limit = maxUpdateLimit
	}
	timeout, err := p.int("timeout")
	if err != nil {
		return nil, err
	}

	s.mu.Lock()
	if s.webhook.URL != "" {
		s.mu.Unlock()
		return nil, &apiError{code: 409, description: conflictWebhook}
	}
	s.pollGen++
	gen := s.pollGen
	switch {
	case offset > 0:
		i := 0
		for i < len(s.queue) && s.queue[i].id < offset {
			i++
		}
		s.queue = s.queue[i:]
	case offset < 0:
		if keep := int(-offset); keep < len(s.queue) {
			s.queue = s.queue[len(s.queue)-keep:]
		}
	}
	s.changes.Changed()
	s.mu.Unlock()

	var expired <-chan time.Time
	if timeout > 0 {
		timer := time.NewTimer(time.Duration(timeout) * time.Second)
		defer timer.Stop()
		expired = timer.C
	}
	waiting := false
	defer func() {
		if waiting {
			s.mu.Lock()
			s.waitingPolls--
			s.changes.Changed()
			s.mu.Unlock()
		}
	}()
	for {
		s.mu.Lock()
		if gen != s.pollGen {
			s.mu.Unlock()
			return nil, &apiError{code: 409, description: conflictTerminated}
		}
		if len(s.queue) > 0 || timeout <= 0 {
			batch := make([]json.RawMessage, 0, min(limit, len(s.queue)))
			for _, u := range s.queue[:min(limit, len(s.queue))] {
				batch = append(batch, u.raw)
			}
			s.mu.Unlock()
			return batch, nil
		}
		if !waiting {
			waiting = true
			s.waitingPolls++
			s.changes.Changed()
		}
		changed := s.changes.Next()
		s.mu.Unlock()

		select {
		case <-changed:
		case <-expired:
			return []json.RawMessage{}, nil
		case <-ctx.Done():
			return nil, &apiError{code: 499, description: "Client Closed Request"}
		case <-s.closing:
			return []json.RawMessage{}, nil
		}
	}
}

func (s *Server) setWebhook(_ context.Context, p *params) (any, *apiError) {
	var allowed []string
	if err := p.json("allowed_updates", &allowed); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.webhook = WebhookInfo{URL: p.str("url"), SecretToken: p.str("secret_token"), AllowedUpdates: allowed}
	if s.webhook.URL == "" {
		s.webhook = WebhookInfo{}
	}
	if p.bool("drop_pending_updates") {
		s.queue = nil
	}
	s.changes.Changed()
	return true, nil
}

func (s *Server) deleteWebhook(_ context.Context, p *params) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.webhook = WebhookInfo{}
	if p.bool("drop_pending_updates") {
		s.queue = nil
	}
	s.changes.Changed()
	return true, nil
}

func (s *Server) getWebhookInfo(context.Context, *params) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return map[string]any{
		"url":                    s.webhook.URL,
		"has_custom_certificate": false,
		"pending_update_count":   len(s.queue),
	}, nil
}

// formatted parses text per parseMode into what the user sees. explicit are
// entities the client passed itself, used only without a parse mode.
func formatted(text, parseMode string, explicit []MessageEntity) (string, []MessageEntity, *apiError) {
	switch strings.ToLower(parseMode) {
	case "":
		return text, explicit, nil
	case "html":
		plain, entities, err := parseHTML(text)
		if err != nil {
			return "", nil, badRequest("can't parse entities: " + err.Error())
		}
		return plain, entities, nil
	case "markdown", "markdownv2":
		return text, nil, nil
	}
	return "", nil, badRequest("unsupported parse_mode")
}

// chatID reads chat_id: a number, or "@username" of a chat the fake has seen.
func (s *Server) chatID(p *params, name string) (int64, *apiError) {
	v := strings.TrimSpace(p.str(name))
	if v == "" {
		return 0, badRequest("chat_id is empty")
	}
	if username, ok := strings.CutPrefix(v, "@"); ok {
		s.mu.Lock()
		defer s.mu.Unlock()
		for id, cs := range s.chats {
			if strings.EqualFold(cs.chat.Username, username) {
				return id, nil
			}
		}
		return 0, badRequest("chat not found")
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id == 0 {
		return 0, badRequest("chat not found")
	}
	return id, nil
}

// replyTarget reads reply_parameters (or the older reply_to_message_id).
func replyTarget(p *params, chatID int64) (replyChat int64, messageID int, allowMissing bool, _ *apiError) {
	var rp struct {
		MessageID                int             `json:"message_id"`
		ChatID                   json.RawMessage `json:"chat_id"`
		AllowSendingWithoutReply bool            `json:"allow_sending_without_reply"`
	}
	if err := p.json("reply_parameters", &rp); err != nil {
		return 0, 0, false, err
	}
	replyChat = chatID
	if len(rp.ChatID) > 0 {
		id, err := strconv.ParseInt(strings.Trim(string(rp.ChatID), `"`), 10, 64)
		if err != nil {
			return 0, 0, false, badRequest("chat not found")
		}
		replyChat = id
	}
	if rp.MessageID == 0 {
		id, err := p.int("reply_to_message_id")
		if err != nil {
			return 0, 0, false, err
		}
		rp.MessageID = id
		rp.AllowSendingWithoutReply = p.bool("allow_sending_without_reply")
	}
	return replyChat, rp.MessageID, rp.AllowSendingWithoutReply, nil
}

// outgoing is what sendMessage and sendMedia share.
type outgoing struct {
	chatID    int64
	threadID  int
	replyChat int64
	replyTo   int
	allowNoRe bool
}

func (s *Server) readOutgoing(p *params) (outgoing, *apiError) {
	var o outgoing
	var err *apiError
	if o.chatID, err = s.chatID(p, "chat_id"); err != nil {
		return o, err
	}
	if o.threadID, err = p.int("message_thread_id"); err != nil {
		return o, err
	}
	if o.replyChat, o.replyTo, o.allowNoRe, err = replyTarget(p, o.chatID); err != nil {
		return o, err
	}
	return o, nil
}

// newBotMessageLocked allocates the next message in the chat, resolving the
// reply target; the caller fills in the content and records it.
func (s *Server) newBotMessageLocked(o outgoing) (Message, *apiError) {
	var reply *Message
	if o.replyTo != 0 {
		if target := s.chatLocked(o.replyChat).messages[o.replyTo]; target != nil {
			r := target.msg
			r.ReplyToMessage = nil // the API nests one level only
			reply = &r
		} else if !o.allowNoRe {
			return Message{}, badRequest("message to be replied not found")
		}
	}
	cs := s.chatLocked(o.chatID)
	cs.lastID++
	bot := s.BotUser
	return Message{
		MessageID:       cs.lastID,
		MessageThreadID: o.threadID,
		From:            &bot,
		Date:            s.clock().Unix(),
		Chat:            cs.chat,
		IsTopicMessage:  o.threadID != 0,
		ReplyToMessage:  reply,
	}, nil
}

func (s *Server) sendMessage(_ context.Context, p *params) (any, *apiError) {
	o, err := s.readOutgoing(p)
	if err != nil {
		return nil, err
	}
	text, mode := p.str("text"), p.str("parse_mode")
	if strings.TrimSpace(text) == "" {
		return nil, badRequest("message text is empty")
	}
	var explicit []MessageEntity
	if err := p.json("entities", &explicit); err != nil {
		return nil, err
	}
	plain, entities, err := formatted(text, mode, explicit)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(plain) == "" {
		return nil, badRequest("message text is empty")
	}
	if utf16Len(plain) > maxTextLen {
		return nil, badRequest("message is too long")
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.newBotMessageLocked(o)
	if err != nil {
		return nil, err
	}
	m.Text, m.Entities = plain, entities
	m.LinkPreviewOptions = p.rawJSON("link_preview_options")
	m.ReplyMarkup = p.rawJSON("reply_markup")
	s.recordMessageLocked(m, true)
	s.recordSentLocked(SentMessage{
		Method:              "sendMessage",
		ChatID:              o.chatID,
		MessageID:           m.MessageID,
		ThreadID:            o.threadID,
		Text:                text,
		ParseMode:           mode,
		PlainText:           plain,
		Entities:            entities,
		ReplyToMessageID:    o.replyTo,
		DisableNotification: p.bool("disable_notification"),
		LinkPreviewOptions:  m.LinkPreviewOptions,
		ReplyMarkup:         m.ReplyMarkup,
	})
	s.changes.Changed()
	return m, nil
}

// notModified is the server's answer to an edit that changes nothing, which
// streaming edits run into.
const notModified = "message is not modified: specified new message content and reply markup of the message are exactly the same as a previous message and reply markup of the message"

func (s *Server) editMessageText(_ context.Context, p *params) (any, *apiError) {
	text, mode := p.str("text"), p.str("parse_mode")
	if strings.TrimSpace(text) == "" {
		return nil, badRequest("message text is empty")
	}
	var explicit []MessageEntity
	if err := p.json("entities", &explicit); err != nil {
		return nil, err
	}
	plain, entities, err := formatted(text, mode, explicit)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(plain) == "" {
		return nil, badRequest("message text is empty")
	}
	if utf16Len(plain) > maxTextLen {
		return nil, badRequest("message is too long")
	}
	if p.str("inline_message_id") != "" {
		return true, nil // inline messages live outside any chat the fake models
	}
	chatID, err := s.chatID(p, "chat_id")
	if err != nil {
		return nil, err
	}
	messageID, err := p.int("message_id")
	if err != nil {
		return nil, err
	}
	if messageID == 0 {
		return nil, badRequest("message identifier is not specified")
	}
	markup := p.rawJSON("reply_markup")

	s.mu.Lock()
	defer s.mu.Unlock()
	stored := s.chatLocked(chatID).messages[messageID]
	switch {
	case stored == nil:
		return nil, badRequest("message to edit not found")
	case !stored.fromBot:
		return nil, badRequest("message can't be edited")
	case stored.msg.Text == "":
		return nil, badRequest("there is no text in the message to edit")
	case stored.msg.Text == plain && entitiesEqual(stored.msg.Entities, entities) && string(stored.msg.ReplyMarkup) == string(markup):
		return nil, badRequest(notModified)
	}
	stored.msg.Text, stored.msg.Entities, stored.msg.ReplyMarkup = plain, entities, markup
	stored.msg.EditDate = s.clock().Unix()
	if lpo := p.rawJSON("link_preview_options"); lpo != nil {
		stored.msg.LinkPreviewOptions = lpo
	}
	s.recordSentLocked(SentMessage{
		Method:             "editMessageText",
		ChatID:             chatID,
		MessageID:          messageID,
		ThreadID:           stored.msg.MessageThreadID,
		Text:               text,
		ParseMode:          mode,
		PlainText:          plain,
		Entities:           entities,
		LinkPreviewOptions: p.rawJSON("link_preview_options"),
		ReplyMarkup:        markup,
	})
	s.changes.Changed()
	return stored.msg, nil
}

func entitiesEqual(a, b []MessageEntity) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return len(a) == len(b) && string(ja) == string(jb)
}

var urlPattern = regexp.MustCompile(`^https?://`)

// sendMedia implements sendPhoto and sendDocument; field is "photo" or
// "document". The file is a multipart upload, "attach://<part>", a known
// file_id or an HTTP URL (recorded, not fetched).
func (s *Server) sendMedia(methodName, field string, p *params) (any, *apiError) {
	o, err := s.readOutgoing(p)
	if err != nil {
		return nil, err
	}
	caption, mode := p.str("caption"), p.str("parse_mode")
	var explicit []MessageEntity
	if err := p.json("caption_entities", &explicit); err != nil {
		return nil, err
	}
	plain, entities, err := formatted(caption, mode, explicit)
	if err != nil {
		return nil, err
	}
	if utf16Len(plain) > maxCaptionLen {
		return nil, badRequest("message caption is too long")
	}

	sf := &SentFile{}
	up, uploaded := p.files[field]
	if ref := p.str(field); !uploaded && ref != "" {
		if part, ok := strings.CutPrefix(ref, "attach://"); ok {
			up, uploaded = p.files[part]
			if !uploaded {
				return nil, badRequest("wrong file identifier/HTTP URL specified")
			}
		} else {
			sf.Ref = ref
		}
	}
	if !uploaded && sf.Ref == "" {
		return nil, badRequest("there is no " + field + " in the request")
	}
	if uploaded && len(up.data) == 0 {
		return nil, badRequest("file must be non-empty")
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	var known *storedFile
	if sf.Ref != "" {
		known = s.files[sf.Ref]
		if known == nil && !urlPattern.MatchString(sf.Ref) {
			return nil, badRequest("wrong file identifier/HTTP URL specified")
		}
	}
	m, err := s.newBotMessageLocked(o)
	if err != nil {
		return nil, err
	}
	switch {
	case uploaded:
		s.uploads++
		sf.FileName, sf.Data = up.name, up.data
		sf.FileID = fmt.Sprintf("%s_%d", field, s.uploads)
		name := up.name
		if name == "" {
			name = sf.FileID
		}
		known = s.addFileLocked(sf.FileID, fmt.Sprintf("%ss/file_%d%s", field, s.uploads, path.Ext(name)), up.data)
	case known != nil:
		sf.FileID = sf.Ref
	default: // a URL: the real server would fetch it and mint a file_id
		s.uploads++
		sf.FileID = fmt.Sprintf("%s_%d", field, s.uploads)
	}
	var size int64
	if known != nil {
		size = known.file.FileSize
	}
	if field == "photo" {
		m.Photo = []PhotoSize{{FileID: sf.FileID, FileUniqueID: "u_" + sf.FileID, Width: 1280, Height: 960, FileSize: int(size)}}
	} else {
		name := sf.FileName
		if name == "" {
			name = path.Base(sf.Ref)
		}
		m.Document = &Document{
			FileID: sf.FileID, FileUniqueID: "u_" + sf.FileID, FileName: name,
			MimeType: mime.TypeByExtension(path.Ext(name)), FileSize: size,
		}
	}
	m.Caption, m.CaptionEntities = plain, entities
	m.ReplyMarkup = p.rawJSON("reply_markup")
	s.recordMessageLocked(m, true)
	s.recordSentLocked(SentMessage{
		Method:              methodName,
		ChatID:              o.chatID,
		MessageID:           m.MessageID,
		ThreadID:            o.threadID,
		Text:                caption,
		ParseMode:           mode,
		PlainText:           plain,
		Entities:            entities,
		ReplyToMessageID:    o.replyTo,
		DisableNotification: p.bool("disable_notification"),
		ReplyMarkup:         m.ReplyMarkup,
		File:                sf,
	})
	s.changes.Changed()
	return m, nil
}

// chatActions are the actions sendChatAction accepts.
var chatActions = map[string]bool{
	"typing": true, "upload_photo": true, "record_video": true, "upload_video": true,
	"record_voice": true, "upload_voice": true, "upload_document": true, "choose_sticker": true,
	"find_location": true, "record_video_note": true, "upload_video_note": true,
}

func (s *Server) sendChatAction(_ context.Context, p *params) (any, *apiError) {
	chatID, err := s.chatID(p, "chat_id")
	if err != nil {
		return nil, err
	}
	thread, err := p.int("message_thread_id")
	if err != nil {
		return nil, err
	}
	action := p.str("action")
	if !chatActions[action] {
		return nil, badRequest("wrong parameter action in request")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.actions = append(s.actions, ChatAction{ChatID: chatID, ThreadID: thread, Action: action})
	s.changes.Changed()
	return true, nil
}

var commandPattern = regexp.MustCompile(`^[a-z0-9_]{1,32}$`)

func (s *Server) setMyCommands(_ context.Context, p *params) (any, *apiError) {
	var commands []BotCommand
	if err := p.json("commands", &commands); err != nil {
		return nil, err
	}
	for _, c := range commands {
		if !commandPattern.MatchString(c.Command) {
			return nil, badRequest("BOT_COMMAND_INVALID")
		}
	}
	if commands == nil {
		commands = []BotCommand{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commands = commands
	s.changes.Changed()
	return true, nil
}

func (s *Server) getMyCommands(context.Context, *params) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.commands == nil {
		return []BotCommand{}, nil
	}
	return s.commands, nil
}

func (s *Server) deleteMyCommands(context.Context, *params) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commands = []BotCommand{}
	s.changes.Changed()
	return true, nil
}

func (s *Server) setMessageReaction(_ context.Context, p *params) (any, *apiError) {
	chatID, err := s.chatID(p, "chat_id")
	if err != nil {
		return nil, err
	}
	messageID, err := p.int("message_id")
	if err != nil {
		return nil, err
	}
	if messageID == 0 {
		return nil, badRequest("message identifier is not specified")
	}
	var reaction []ReactionType
	if err := p.json("reaction", &reaction); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reactions = append(s.reactions, Reaction{ChatID: chatID, MessageID: messageID, Reaction: reaction, IsBig: p.bool("is_big")})
	s.changes.Changed()
	return true, nil
}

func (s *Server) answerCallbackQuery(_ context.Context, p *params) (any, *apiError) {
	id := p.str("callback_query_id")
	if id == "" {
		return nil, badRequest("query ID is empty")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answers = append(s.answers, CallbackAnswer{CallbackQueryID: id, Text: p.str("text"), ShowAlert: p.bool("show_alert"), URL: p.str("url")})
	s.changes.Changed()
	return true, nil
}

func (s *Server) getFile(_ context.Context, p *params) (any, *apiError) {
	id := p.str("file_id")
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.files[id]
	switch {
	case id == "" || f == nil:
		return nil, badRequest("invalid file_id")
	case len(f.data) > maxDownload:
		return nil, badRequest("file is too big")
	}
	return f.file, nil
}

// recordSentLocked records a message the bot sent and reports it to the
// WithOnSent callback.
func (s *Server) recordSentLocked(m SentMessage) {
	s.sent = append(s.sent, m)
	if s.onSent != nil {
		s.onSent(m)
	}
}
