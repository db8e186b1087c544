package discordtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Routes the fake serves, as "METHOD /path" with Discord's placeholders.
// FailNext and RateLimitNext take them; Request.Route reports them.
const (
	RouteGateway        = "GET /gateway"
	RouteGatewayBot     = "GET /gateway/bot"
	RouteGetCurrentUser = "GET /users/@me"
	RouteGetUser        = "GET /users/{user_id}"
	RouteCreateDM       = "POST /users/@me/channels"
	RouteGetChannel     = "GET /channels/{channel_id}"
	RouteCreateMessage  = "POST /channels/{channel_id}/messages"
	RouteGetMessages    = "GET /channels/{channel_id}/messages"
	RouteEditMessage    = "PATCH /channels/{channel_id}/messages/{message_id}"
	RouteCreateReaction = "PUT /channels/{channel_id}/messages/{message_id}/reactions/{emoji}/@me"
	RouteTriggerTyping  = "POST /channels/{channel_id}/typing"
)

// Limits Discord enforces on messages.
const (
	maxContentRunes = 2000
	maxEmbeds       = 10
	maxRequestBytes = 25 << 20 // the upload limit of a bot without boosts
)

// route is one REST endpoint.
type route struct {
	name   string
	method string
	segs   []string // "{name}" matches one segment
	auth   bool
	fn     func(s *Server, c *call) reply // runs with Server.mu held
}

// routes is in match order: literal segments before placeholders.
var routes = []*route{
	newRoute(RouteGateway, false, (*Server).getGateway),
	newRoute(RouteGatewayBot, true, (*Server).getGatewayBot),
	newRoute(RouteGetCurrentUser, true, (*Server).getCurrentUser),
	newRoute(RouteCreateDM, true, (*Server).createDM),
	newRoute(RouteGetUser, true, (*Server).getUser),
	newRoute(RouteGetChannel, true, (*Server).getChannel),
	newRoute(RouteCreateMessage, true, (*Server).createMessage),
	newRoute(RouteGetMessages, true, (*Server).getMessages),
	newRoute(RouteEditMessage, true, (*Server).editMessage),
	newRoute(RouteCreateReaction, true, (*Server).createReaction),
	newRoute(RouteTriggerTyping, true, (*Server).triggerTyping),
}

func newRoute(name string, auth bool, fn func(*Server, *call) reply) *route {
	method, path, _ := strings.Cut(name, " ")
	return &route{name: name, method: method, segs: strings.Split(strings.Trim(path, "/"), "/"), auth: auth, fn: fn}
}

func findRoute(name string) *route {
	i := slices.IndexFunc(routes, func(r *route) bool { return r.name == name })
	if i < 0 {
		return nil
	}
	return routes[i]
}

// matchRoute finds the route for an escaped path. A path that matches only
// under another method reports wrongMethod.
func matchRoute(method, path string) (rt *route, params map[string]string, wrongMethod bool) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for _, r := range routes {
		p, ok := matchSegs(r.segs, segs)
		if !ok {
			continue
		}
		if r.method != method && (r.method != http.MethodGet || method != http.MethodHead) {
			wrongMethod = true
			continue
		}
		return r, p, false
	}
	return nil, nil, wrongMethod
}

func matchSegs(pattern, segs []string) (map[string]string, bool) {
	if len(pattern) != len(segs) {
		return nil, false
	}
	params := map[string]string{}
	for i, p := range pattern {
		if name, ok := strings.CutPrefix(p, "{"); ok {
			v, err := url.PathUnescape(segs[i])
			if err != nil || v == "" {
				return nil, false
			}
			params[strings.TrimSuffix(name, "}")] = v
			continue
		}
		if p != segs[i] {
			return nil, false
		}
	}
	return params, true
}

// call is one REST request on its way through a route.
type call struct {
	r           *http.Request
	params      map[string]string
	contentType string
	mediaParams map[string]string
	body        []byte
}

// reply is a REST answer: a status, a JSON body (nil for none) and extra
// headers.
type reply struct {
	status int
	body   any
	header map[string]string
}

// apiError is Discord's JSON error body.
type apiError struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Errors  map[string]any `json:"errors,omitempty"`
}

func errorReply(status, code int, message string) reply {
	return reply{status: status, body: apiError{Code: code, Message: message}}
}

// formError is a 400 "Invalid Form Body" (code 50035) for the field at a
// dotted path ("content", "allowed_mentions.parse.0"), shaped as Discord
// nests it: {"content": {"_errors": [{"code": …, "message": …}]}}.
func formError(path, code, message string) reply {
	var leaf any = map[string]any{"_errors": []map[string]string{{"code": code, "message": message}}}
	parts := strings.Split(path, ".")
	for i := len(parts) - 1; i > 0; i-- {
		leaf = map[string]any{parts[i]: leaf}
	}
	return reply{status: http.StatusBadRequest, body: apiError{
		Code: 50035, Message: "Invalid Form Body", Errors: map[string]any{parts[0]: leaf},
	}}
}

// Discord's answers to common mistakes.
var (
	errUnauthorized     = errorReply(http.StatusUnauthorized, 0, "401: Unauthorized")
	errNotFound         = errorReply(http.StatusNotFound, 0, "404: Not Found")
	errMethodNotAllowed = errorReply(http.StatusMethodNotAllowed, 0, "405: Method Not Allowed")
	errInvalidJSON      = errorReply(http.StatusBadRequest, 50109, "The request body contains invalid JSON.")
	errUnknownChannel   = errorReply(http.StatusNotFound, 10003, "Unknown Channel")
	errUnknownMessage   = errorReply(http.StatusNotFound, 10008, "Unknown Message")
	errUnknownUser      = errorReply(http.StatusNotFound, 10013, "Unknown User")
	errUnknownEmoji     = errorReply(http.StatusBadRequest, 10014, "Unknown Emoji")
	errEmptyMessage     = errorReply(http.StatusBadRequest, 50006, "Cannot send an empty message")
	errNotAuthor        = errorReply(http.StatusForbidden, 50005, "Cannot edit a message authored by another user")
	errTooLarge         = errorReply(http.StatusRequestEntityTooLarge, 40005, "Request entity too large")
)

var apiPrefix = regexp.MustCompile(`^/api(/v[0-9]+)?(/.*)$`)

// serveREST routes /api[/v{N}]/… and serves attachment downloads.
func (s *Server) serveREST(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/attachments/") {
		s.serveFile(w, r)
		return
	}
	body, readErr := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	mediaType, mediaParams, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	req := Request{
		Method:      r.Method,
		Path:        r.URL.EscapedPath(),
		Authorized:  r.Header.Get("Authorization") == "Bot "+s.Token,
		ContentType: mediaType,
		Body:        body,
	}
	c := &call{r: r, contentType: mediaType, mediaParams: mediaParams, body: body}

	s.mu.Lock()
	rep := s.routeLocked(&req, c, readErr)
	req.Status = rep.status
	s.requests = append(s.requests, req)
	s.changes.Changed()
	var out []byte
	if rep.body != nil {
		var err error
		if out, err = json.Marshal(rep.body); err != nil {
			s.t.Errorf("discordtest: encode reply to %s %s: %v", r.Method, r.URL.Path, err)
		}
	}
	s.mu.Unlock()

	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	if out != nil {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(rep.status)
	_, _ = w.Write(out)
}

func (s *Server) routeLocked(req *Request, c *call, readErr error) reply {
	if readErr != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(readErr, &tooLarge) {
			return errTooLarge
		}
		return errorReply(http.StatusBadRequest, 0, "400: Bad Request")
	}
	m := apiPrefix.FindStringSubmatch(req.Path)
	if m == nil {
		return errNotFound
	}
	req.Path = m[2]
	rt, params, wrongMethod := matchRoute(req.Method, req.Path)
	switch {
	case wrongMethod:
		return errMethodNotAllowed
	case rt == nil:
		return errNotFound
	}
	req.Route = rt.name
	if rt.auth && !req.Authorized {
		return errUnauthorized
	}
	if f := s.faults[rt.name]; len(f) > 0 {
		s.faults[rt.name] = f[1:]
		return s.faultReply(rt.name, f[0])
	}
	c.params = params
	return rt.fn(s, c)
}

// faultReply is the answer FailNext or RateLimitNext prepared.
func (s *Server) faultReply(routeName string, f fault) reply {
	if !f.rateLimit {
		return errorReply(f.status, f.code, f.message)
	}
	secs := math.Round(f.retryAfter.Seconds()*1000) / 1000
	h := fnv.New64a()
	_, _ = h.Write([]byte(routeName))
	scope := "user"
	header := map[string]string{
		"Retry-After":             strconv.Itoa(int(math.Ceil(secs))),
		"X-RateLimit-Limit":       "5",
		"X-RateLimit-Remaining":   "0",
		"X-RateLimit-Reset":       strconv.FormatFloat(float64(s.clock().Add(f.retryAfter).UnixMilli())/1000, 'f', 3, 64),
		"X-RateLimit-Reset-After": strconv.FormatFloat(secs, 'f', 3, 64),
		"X-RateLimit-Bucket":      fmt.Sprintf("%016x", h.Sum64()),
	}
	if f.global {
		scope = "global"
		header["X-RateLimit-Global"] = "true"
	}
	header["X-RateLimit-Scope"] = scope
	return reply{status: http.StatusTooManyRequests, header: header, body: map[string]any{
		"message": "You are being rate limited.", "retry_after": secs, "global": f.global,
	}}
}

func (s *Server) serveFile(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	f, ok := s.files[r.URL.EscapedPath()]
	if !ok {
		f, ok = s.files[r.URL.Path]
	}
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	if f.contentType != "" {
		w.Header().Set("Content-Type", f.contentType)
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(f.data)))
	_, _ = w.Write(f.data)
}

func (s *Server) getGateway(*call) reply {
	return reply{status: http.StatusOK, body: map[string]string{"url": s.GatewayURL}}
}

func (s *Server) getGatewayBot(*call) reply {
	return reply{status: http.StatusOK, body: map[string]any{
		"url":    s.GatewayURL,
		"shards": 1,
		"session_start_limit": map[string]int{
			"total":           s.startLimit,
			"remaining":       max(s.startLimit-s.gateway.identifies, 0),
			"reset_after":     86_400_000,
			"max_concurrency": 1,
		},
	}}
}

func (s *Server) getCurrentUser(*call) reply {
	return reply{status: http.StatusOK, body: s.BotUser}
}

func (s *Server) getUser(c *call) reply {
	u, ok := s.userLocked(c.params["user_id"])
	if !ok {
		return errUnknownUser
	}
	return reply{status: http.StatusOK, body: u}
}

func (s *Server) createDM(c *call) reply {
	var d struct {
		RecipientID string `json:"recipient_id"`
	}
	if json.Unmarshal(c.body, &d) != nil {
		return errInvalidJSON
	}
	if d.RecipientID == "" {
		return formError("recipient_id", "BASE_TYPE_REQUIRED", "This field is required")
	}
	u, ok := s.userLocked(d.RecipientID)
	if !ok || u.ID == s.BotUser.ID {
		return errUnknownUser
	}
	return reply{status: http.StatusOK, body: s.dmChannelLocked(u)}
}

func (s *Server) getChannel(c *call) reply {
	ch := s.channels[c.params["channel_id"]]
	if ch == nil {
		return errUnknownChannel
	}
	return reply{status: http.StatusOK, body: ch}
}

// getMessages answers GET /channels/{id}/messages with after (and limit,
// default 50, at most 100): the messages after that id, newest first, as
// Discord orders them. before and around are not supported.
func (s *Server) getMessages(c *call) reply {
	ch := s.channels[c.params["channel_id"]]
	if ch == nil {
		return errUnknownChannel
	}
	q := c.r.URL.Query()
	limit := 50
	if l, err := strconv.Atoi(q.Get("limit")); err == nil && l >= 1 && l <= 100 {
		limit = l
	}
	after := q.Get("after")
	var out []Message
	for _, m := range s.messages {
		if m.msg.ChannelID == ch.ID && (after == "" || compareIDs(m.msg.ID, after) > 0) {
			out = append(out, m.msg)
		}
	}
	slices.SortFunc(out, func(a, b Message) int { return compareIDs(a.ID, b.ID) })
	if len(out) > limit {
		out = out[:limit] // the oldest after "after", as Discord does
	}
	slices.Reverse(out)
	if out == nil {
		out = []Message{}
	}
	return reply{status: http.StatusOK, body: out}
}

// messageBody is the JSON of a message create or edit. Pointers tell an
// absent field from an empty one, which matters for edits.
type messageBody struct {
	Content         *string            `json:"content"`
	Embeds          *[]json.RawMessage `json:"embeds"`
	Components      *[]json.RawMessage `json:"components"`
	TTS             bool               `json:"tts"`
	AllowedMentions *AllowedMentions   `json:"allowed_mentions"`
	Reference       *MessageReference  `json:"message_reference"`
	StickerIDs      []string           `json:"sticker_ids"`
	Flags           *int               `json:"flags"`
	Poll            json.RawMessage    `json:"poll"`
}

// readMessageBody decodes a JSON body, or a multipart one with the JSON in
// payload_json (or a plain content field) and files in the other parts.
func readMessageBody(c *call) (messageBody, []SentFile, *reply) {
	var b messageBody
	payload := c.body
	var files []SentFile
	if c.contentType == "multipart/form-data" {
		form, err := multipart.NewReader(bytes.NewReader(c.body), c.mediaParams["boundary"]).ReadForm(maxRequestBytes)
		if err != nil {
			r := errorReply(http.StatusBadRequest, 0, "400: Bad Request")
			return b, nil, &r
		}
		defer func() { _ = form.RemoveAll() }()
		payload = nil
		if v := form.Value["payload_json"]; len(v) > 0 {
			payload = []byte(v[0])
		} else if v := form.Value["content"]; len(v) > 0 {
			b.Content = &v[0]
		}
		fields := make([]string, 0, len(form.File))
		for k := range form.File {
			fields = append(fields, k)
		}
		slices.Sort(fields)
		for _, k := range fields {
			for _, fh := range form.File[k] {
				f, err := fh.Open()
				if err != nil {
					r := errorReply(http.StatusBadRequest, 0, "400: Bad Request")
					return b, nil, &r
				}
				data, err := io.ReadAll(f)
				_ = f.Close()
				if err != nil {
					r := errorReply(http.StatusBadRequest, 0, "400: Bad Request")
					return b, nil, &r
				}
				files = append(files, SentFile{Field: k, Name: fh.Filename, ContentType: fh.Header.Get("Content-Type"), Data: data})
			}
		}
	}
	if len(bytes.TrimSpace(payload)) > 0 {
		if err := json.Unmarshal(payload, &b); err != nil {
			r := errInvalidJSON
			return b, nil, &r
		}
	}
	return b, files, nil
}

// checkMessageBody applies the limits shared by create and edit.
func checkMessageBody(b messageBody) *reply {
	if b.Content != nil && utf8.RuneCountInString(*b.Content) > maxContentRunes {
		r := formError("content", "BASE_TYPE_MAX_LENGTH", fmt.Sprintf("Must be %d or fewer in length.", maxContentRunes))
		return &r
	}
	if b.Embeds != nil && len(*b.Embeds) > maxEmbeds {
		r := formError("embeds", "BASE_TYPE_MAX_LENGTH", fmt.Sprintf("Must be %d or fewer in length.", maxEmbeds))
		return &r
	}
	if am := b.AllowedMentions; am != nil {
		for i, p := range am.Parse {
			if p != "users" && p != "roles" && p != "everyone" {
				r := formError(fmt.Sprintf("allowed_mentions.parse.%d", i), "ENUM_TYPE_COERCE", fmt.Sprintf("Value %q is not a valid enum value.", p))
				return &r
			}
		}
		for _, kind := range []struct {
			parse string
			ids   []string
		}{{"users", am.Users}, {"roles", am.Roles}} {
			if slices.Contains(am.Parse, kind.parse) && len(kind.ids) > 0 {
				r := formError("allowed_mentions", "MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE",
					fmt.Sprintf(`parse:[%q] and %s: [ids...] are mutually exclusive.`, kind.parse, kind.parse))
				return &r
			}
		}
	}
	return nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func (s *Server) createMessage(c *call) reply {
	ch := s.channels[c.params["channel_id"]]
	if ch == nil {
		return errUnknownChannel
	}
	b, files, errRep := readMessageBody(c)
	if errRep != nil {
		return *errRep
	}
	if r := checkMessageBody(b); r != nil {
		return *r
	}
	content := deref(b.Content)
	embeds := deref(b.Embeds)
	components := deref(b.Components)
	if content == "" && len(embeds) == 0 && len(components) == 0 && len(files) == 0 && len(b.StickerIDs) == 0 && len(b.Poll) == 0 {
		return errEmptyMessage
	}

	m := Message{
		ID:         s.newIDLocked(),
		Type:       MessageDefault,
		ChannelID:  ch.ID,
		GuildID:    ch.GuildID,
		Author:     s.BotUser,
		Content:    content,
		Timestamp:  s.clock().UTC(),
		TTS:        b.TTS,
		Embeds:     embeds,
		Components: components,
		Flags:      deref(b.Flags),
	}
	m.Mentions, m.MentionRoles, m.MentionEveryone = s.mentionsLocked(content)
	if ref := b.Reference; ref != nil && ref.Type == 0 && ref.MessageID != "" {
		refChannel := ref.ChannelID
		if refChannel == "" {
			refChannel = ch.ID
		}
		target := s.messages[messageKey(refChannel, ref.MessageID)]
		switch {
		case target != nil:
			r := target.msg
			r.Referenced = nil
			m.Type = MessageReply
			m.Reference = &MessageReference{MessageID: r.ID, ChannelID: r.ChannelID, GuildID: r.GuildID}
			m.Referenced = &r
		case ref.FailIfNotExists == nil || *ref.FailIfNotExists:
			return formError("message_reference", "REPLIES_UNKNOWN_MESSAGE", "Unknown message")
		}
	}
	for _, f := range files {
		m.Attachments = append(m.Attachments, s.storeFileLocked(ch.ID, f.Name, f.ContentType, f.Data))
	}
	m = normalizeMessage(m)
	s.messages[messageKey(ch.ID, m.ID)] = &storedMessage{msg: m, fromBot: true}
	s.recordSentLocked(SentMessage{
		ChannelID:       ch.ID,
		MessageID:       m.ID,
		Content:         content,
		Reference:       b.Reference,
		AllowedMentions: b.AllowedMentions,
		Embeds:          embeds,
		Components:      components,
		TTS:             b.TTS,
		Flags:           m.Flags,
		Files:           files,
	})
	s.dispatchLocked(messageEvent("MESSAGE_CREATE", m), false)
	return reply{status: http.StatusOK, body: m}
}

func (s *Server) editMessage(c *call) reply {
	ch := s.channels[c.params["channel_id"]]
	if ch == nil {
		return errUnknownChannel
	}
	stored := s.messages[messageKey(ch.ID, c.params["message_id"])]
	if stored == nil {
		return errUnknownMessage
	}
	if !stored.fromBot {
		return errNotAuthor
	}
	b, _, errRep := readMessageBody(c)
	if errRep != nil {
		return *errRep
	}
	if r := checkMessageBody(b); r != nil {
		return *r
	}
	m := stored.msg
	if b.Content != nil {
		m.Content = *b.Content
		m.Mentions, m.MentionRoles, m.MentionEveryone = s.mentionsLocked(m.Content)
	}
	if b.Embeds != nil {
		m.Embeds = *b.Embeds
	}
	if b.Components != nil {
		m.Components = *b.Components
	}
	if b.Flags != nil {
		m.Flags = *b.Flags
	}
	if m.Content == "" && len(m.Embeds) == 0 && len(m.Components) == 0 && len(m.Attachments) == 0 {
		return errEmptyMessage
	}
	edited := s.clock().UTC()
	m.EditedTimestamp = &edited
	m = normalizeMessage(m)
	stored.msg = m
	s.recordSentLocked(SentMessage{
		Edit:            true,
		ChannelID:       ch.ID,
		MessageID:       m.ID,
		Content:         m.Content,
		AllowedMentions: b.AllowedMentions,
		Embeds:          deref(b.Embeds),
		Components:      deref(b.Components),
		Flags:           m.Flags,
	})
	s.dispatchLocked(messageEvent("MESSAGE_UPDATE", m), false)
	return reply{status: http.StatusOK, body: m}
}

// customEmoji is "name:id" or "a:name:id", how clients write guild emoji.
var customEmoji = regexp.MustCompile(`^(?:a:)?([A-Za-z0-9_]{2,32}):([0-9]+)$`)

func (s *Server) createReaction(c *call) reply {
	ch := s.channels[c.params["channel_id"]]
	if ch == nil {
		return errUnknownChannel
	}
	stored := s.messages[messageKey(ch.ID, c.params["message_id"])]
	if stored == nil {
		return errUnknownMessage
	}
	emoji := c.params["emoji"]
	emojiObj := map[string]any{"id": nil, "name": emoji}
	if m := customEmoji.FindStringSubmatch(emoji); m != nil {
		emojiObj = map[string]any{"id": m[2], "name": m[1]}
	} else if !isUnicodeEmoji(emoji) {
		return errUnknownEmoji
	}
	s.reactions = append(s.reactions, Reaction{ChannelID: ch.ID, MessageID: stored.msg.ID, Emoji: emoji})
	data := map[string]any{
		"user_id":           s.BotUser.ID,
		"channel_id":        ch.ID,
		"message_id":        stored.msg.ID,
		"message_author_id": stored.msg.Author.ID,
		"emoji":             emojiObj,
		"burst":             false,
		"type":              0,
	}
	intent := IntentDirectMessageReactions
	if ch.GuildID != "" {
		intent = IntentGuildMessageReactions
		data["guild_id"] = ch.GuildID
	}
	s.dispatchLocked(event{name: "MESSAGE_REACTION_ADD", intent: intent, data: data}, false)
	return reply{status: http.StatusNoContent}
}

// isUnicodeEmoji accepts anything with a non-ASCII rune, keycaps
// included, and refuses the ASCII shortcodes (":thumbsup:") bots
// mistakenly send.
func isUnicodeEmoji(s string) bool {
	for _, r := range s {
		if r >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

func (s *Server) triggerTyping(c *call) reply {
	ch := s.channels[c.params["channel_id"]]
	if ch == nil {
		return errUnknownChannel
	}
	s.typing = append(s.typing, ch.ID)
	return reply{status: http.StatusNoContent}
}

// recordSentLocked keeps m for Sent and tells WithOnSent's callback.
func (s *Server) recordSentLocked(m SentMessage) {
	s.sent = append(s.sent, m)
	if s.onSent != nil {
		s.onSent(m)
	}
}
