package slacktest

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// tokenKind is the kind of token a method requires.
type tokenKind int

const (
	botToken tokenKind = iota
	appToken
)

// method is one Web API method the fake implements. fn runs with s.mu held
// and returns the reply's fields besides "ok".
type method struct {
	token tokenKind
	fn    func(s *Server, p *params) (map[string]any, *apiError)
}

var methods = map[string]method{
	"auth.test":                    {botToken, (*Server).authTest},
	"apps.connections.open":        {appToken, (*Server).appsConnectionsOpen},
	"chat.postMessage":             {botToken, (*Server).chatPostMessage},
	"chat.update":                  {botToken, (*Server).chatUpdate},
	"chat.delete":                  {botToken, (*Server).chatDelete},
	"reactions.add":                {botToken, (*Server).reactionsAdd},
	"reactions.remove":             {botToken, (*Server).reactionsRemove},
	"conversations.info":           {botToken, (*Server).conversationsInfo},
	"users.info":                   {botToken, (*Server).usersInfo},
	"files.getUploadURLExternal":   {botToken, (*Server).filesGetUploadURLExternal},
	"files.completeUploadExternal": {botToken, (*Server).filesCompleteUploadExternal},
}

// Limits Slack enforces.
const (
	maxTextRunes = 40000 // chat.postMessage truncates at 40k; the fake refuses, to catch chunking bugs
	maxBlocks    = 50
)

// serveAPI answers POST or GET <URL>/api/<method>.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	p, perr := readParams(w, r)
	if perr != nil {
		writeAPIError(w, perr)
		return
	}
	reply, err := s.call(r.PathValue("method"), p)
	switch {
	case err != nil && err.cut:
		cutConnection(w)
		return
	case err != nil && err.stall:
		// Until the client gives up, or the server closes (close cancels
		// s.ctx before it waits for handlers).
		select {
		case <-r.Context().Done():
		case <-s.ctx.Done():
		}
		return
	case err != nil:
		writeAPIError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, reply)
}

// call records and runs one Web API call: a queued fault first, then the
// token check, then the method.
func (s *Server) call(name string, p *params) (map[string]any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, Call{Method: name, ContentType: p.contentType, Token: p.token, Params: p.values, At: s.clock()})
	s.changes.Changed()
	if f := s.faults[name]; len(f) > 0 {
		s.faults[name] = f[1:]
		switch {
		case f[0].cut:
			return nil, &apiError{cut: true}
		case f[0].stall:
			return nil, &apiError{stall: true}
		case f[0].status != 0:
			return nil, &apiError{status: f[0].status}
		case f[0].retryAfter > 0:
			return nil, &apiError{status: http.StatusTooManyRequests, code: f[0].errCode, retryAfter: f[0].retryAfter}
		}
		return nil, slackError(f[0].errCode)
	}
	m, known := methods[name]
	switch {
	case p.token == "":
		return nil, slackError("not_authed")
	case p.token != s.BotToken && p.token != s.AppToken:
		return nil, slackError("invalid_auth")
	case !known:
		return nil, slackError("unknown_method")
	case (m.token == appToken) != (p.token == s.AppToken):
		return nil, slackError("not_allowed_token_type")
	}
	reply, err := m.fn(s, p)
	if err != nil {
		return nil, err
	}
	if reply == nil {
		reply = map[string]any{}
	}
	reply["ok"] = true
	return reply, nil
}

func writeAPIError(w http.ResponseWriter, e *apiError) {
	if e.status >= 500 {
		http.Error(w, http.StatusText(e.status), e.status)
		return
	}
	if e.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.retryAfter))
	}
	writeJSON(w, e.status, map[string]any{"ok": false, "error": e.code})
}

// cutConnection closes the connection under w without a response.
func cutConnection(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "connection cannot be cut", http.StatusInternalServerError)
		return
	}
	if conn, _, err := hj.Hijack(); err == nil {
		_ = conn.Close()
	}
}

func (s *Server) authTest(*params) (map[string]any, *apiError) {
	id := s.Identity
	return map[string]any{
		"url":                   "https://" + id.TeamDomain + ".slack.com/",
		"team":                  id.TeamName,
		"user":                  id.BotName,
		"team_id":               id.TeamID,
		"user_id":               id.BotUserID,
		"bot_id":                id.BotID,
		"is_enterprise_install": false,
	}, nil
}

// appsConnectionsOpen hands out a one-time Socket Mode URL.
func (s *Server) appsConnectionsOpen(*params) (map[string]any, *apiError) {
	ticket := "fake-ticket-" + strconv.Itoa(s.nextSeqLocked())
	s.tickets[ticket] = true
	wsURL := "ws" + strings.TrimPrefix(s.URL, "http") + "/socket?ticket=" + ticket + "&app_id=" + s.Identity.AppID
	return map[string]any{"url": wsURL}, nil
}

// botMessage builds the message object chat.postMessage and chat.update
// return.
func (s *Server) botMessage(text, ts, threadTS string, blocks, attachments json.RawMessage) map[string]any {
	id := s.Identity
	m := map[string]any{
		"type":   "message",
		"user":   id.BotUserID,
		"bot_id": id.BotID,
		"app_id": id.AppID,
		"team":   id.TeamID,
		"text":   text,
		"ts":     ts,
		"bot_profile": BotProfile{
			ID: id.BotID, AppID: id.AppID, Name: id.BotName, TeamID: id.TeamID,
		},
	}
	if threadTS != "" {
		m["thread_ts"] = threadTS
	}
	if blocks != nil {
		m["blocks"] = blocks
	}
	if attachments != nil {
		m["attachments"] = attachments
	}
	return m
}

var tsPattern = regexp.MustCompile(`^[0-9]{10}\.[0-9]{6}$`)

// messageContent validates and returns text, blocks and attachments, which
// chat.postMessage and chat.update share.
func messageContent(p *params) (text string, blocks, attachments json.RawMessage, _ *apiError) {
	text = p.str("text")
	blocks, ok := p.rawJSON("blocks")
	if !ok {
		return "", nil, nil, slackError("invalid_blocks_format")
	}
	if blocks != nil {
		var list []json.RawMessage
		if err := json.Unmarshal(blocks, &list); err != nil {
			return "", nil, nil, slackError("invalid_blocks_format")
		}
		if len(list) > maxBlocks {
			return "", nil, nil, slackError("invalid_blocks")
		}
		for _, b := range list {
			var typed struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(b, &typed) != nil || typed.Type == "" {
				return "", nil, nil, slackError("invalid_blocks")
			}
		}
	}
	attachments, ok = p.rawJSON("attachments")
	if !ok {
		return "", nil, nil, slackError("invalid_attachments")
	}
	// slack-go sends attachments=[] with every message; empty arrays are no
	// content.
	if strings.TrimSpace(text) == "" && isEmptyArray(blocks) && isEmptyArray(attachments) {
		return "", nil, nil, slackError("no_text")
	}
	if utf8.RuneCountInString(text) > maxTextRunes {
		return "", nil, nil, slackError("msg_too_long")
	}
	return text, blocks, attachments, nil
}

// isEmptyArray reports whether raw is absent or a JSON array with no elements.
func isEmptyArray(raw json.RawMessage) bool {
	var list []json.RawMessage
	return raw == nil || json.Unmarshal(raw, &list) == nil && len(list) == 0
}

func (s *Server) chatPostMessage(p *params) (map[string]any, *apiError) {
	channel := p.str("channel")
	if s.conversationLocked(channel) == nil {
		return nil, slackError("channel_not_found")
	}
	text, blocks, attachments, err := messageContent(p)
	if err != nil {
		return nil, err
	}
	threadTS := p.str("thread_ts")
	if threadTS != "" && !tsPattern.MatchString(threadTS) {
		return nil, slackError("invalid_thread_ts")
	}
	ts := s.nextTSLocked()
	s.recordMessageLocked(channel, ts, storedMessage{user: s.Identity.BotUserID, text: text, threadTS: threadTS, fromBot: true})
	s.recordSentLocked(SentMessage{
		Method: "chat.postMessage", Channel: channel, TS: ts, ThreadTS: threadTS, Text: text,
		Mrkdwn: p.bool("mrkdwn", true), Blocks: blocks, Attachments: attachments,
		ReplyBroadcast: p.bool("reply_broadcast", false),
	})
	return map[string]any{
		"channel": channel,
		"ts":      ts,
		"message": s.botMessage(text, ts, threadTS, blocks, attachments),
	}, nil
}

// botMessageLocked finds a message the bot may edit or delete.
func (s *Server) botMessageLocked(channel, ts, refusal string) (*storedMessage, *apiError) {
	if s.conversationLocked(channel) == nil {
		return nil, slackError("channel_not_found")
	}
	m := s.messageLocked(channel, ts)
	if m == nil {
		return nil, slackError("message_not_found")
	}
	if !m.fromBot {
		return nil, slackError(refusal)
	}
	return m, nil
}

func (s *Server) chatUpdate(p *params) (map[string]any, *apiError) {
	channel, ts := p.str("channel"), p.str("ts")
	m, err := s.botMessageLocked(channel, ts, "cant_update_message")
	if err != nil {
		return nil, err
	}
	text, blocks, attachments, err := messageContent(p)
	if err != nil {
		return nil, err
	}
	m.text = text
	s.recordSentLocked(SentMessage{
		Method: "chat.update", Channel: channel, TS: ts, ThreadTS: m.threadTS, Text: text,
		Mrkdwn: p.bool("mrkdwn", true), Blocks: blocks, Attachments: attachments,
	})
	return map[string]any{
		"channel": channel,
		"ts":      ts,
		"text":    text,
		"message": s.botMessage(text, ts, m.threadTS, blocks, attachments),
	}, nil
}

func (s *Server) chatDelete(p *params) (map[string]any, *apiError) {
	channel, ts := p.str("channel"), p.str("ts")
	m, err := s.botMessageLocked(channel, ts, "cant_delete_message")
	if err != nil {
		return nil, err
	}
	delete(s.messages[channel], ts)
	s.recordSentLocked(SentMessage{Method: "chat.delete", Channel: channel, TS: ts, ThreadTS: m.threadTS, Mrkdwn: true})
	return map[string]any{"channel": channel, "ts": ts}, nil
}

// reactionName is an emoji name as the Web API takes it: no colons, an
// optional skin tone suffix.
var reactionName = regexp.MustCompile(`^[a-z0-9_+'-]+(::skin-tone-[2-6])?$`)

// reactionLocked validates a reactions.add or reactions.remove call.
func (s *Server) reactionLocked(p *params) (reactionKey, *apiError) {
	k := reactionKey{channel: p.str("channel"), ts: p.str("timestamp"), name: p.str("name")}
	switch {
	case k.channel == "" || k.ts == "":
		return k, slackError("no_item_specified")
	case s.conversationLocked(k.channel) == nil:
		return k, slackError("channel_not_found")
	case s.messageLocked(k.channel, k.ts) == nil:
		return k, slackError("message_not_found")
	case !reactionName.MatchString(k.name):
		return k, slackError("invalid_name")
	}
	return k, nil
}

func (s *Server) reactionsAdd(p *params) (map[string]any, *apiError) {
	k, err := s.reactionLocked(p)
	if err != nil {
		return nil, err
	}
	if s.reacted[k] {
		return nil, slackError("already_reacted")
	}
	s.reacted[k] = true
	s.reacts = append(s.reacts, Reaction{Method: "reactions.add", Name: k.name, Channel: k.channel, Timestamp: k.ts})
	return nil, nil
}

func (s *Server) reactionsRemove(p *params) (map[string]any, *apiError) {
	k, err := s.reactionLocked(p)
	if err != nil {
		return nil, err
	}
	if !s.reacted[k] {
		return nil, slackError("no_reaction")
	}
	delete(s.reacted, k)
	s.reacts = append(s.reacts, Reaction{Method: "reactions.remove", Name: k.name, Channel: k.channel, Timestamp: k.ts})
	return nil, nil
}

func (s *Server) conversationsInfo(p *params) (map[string]any, *apiError) {
	c := s.conversationLocked(p.str("channel"))
	if c == nil {
		return nil, slackError("channel_not_found")
	}
	return map[string]any{"channel": *c}, nil
}

func (s *Server) usersInfo(p *params) (map[string]any, *apiError) {
	u := s.userLocked(p.str("user"))
	if u == nil {
		return nil, slackError("user_not_found")
	}
	return map[string]any{"user": *u}, nil
}

// recordSentLocked keeps m for Sent and tells WithOnSent's callback.
func (s *Server) recordSentLocked(m SentMessage) {
	s.sent = append(s.sent, m)
	if s.onSent != nil {
		s.onSent(m)
	}
}
