// Package telegramtest is an in-process fake of the Telegram Bot API, so the
// real client library (github.com/go-telegram/bot) runs in tests unchanged.
//
// New starts an httptest server that speaks the Bot API wire format: requests
// to <URL>/bot<token>/<method> with parameters in the query string or in a
// JSON, urlencoded or multipart body; replies in the {"ok":…} envelope with
// the server's error codes and descriptions; file downloads from
// <URL>/file/bot<token>/<file_path>. A test pushes updates with PushUpdate
// (building them with TextMessage), reads what the bot did with Sent,
// ChatActions, Commands, Reactions and Requests, waits with WaitSent or
// WaitFor, and injects failures with FailNext and CutConnection.
//
// The fake checks what breaks bots in production: HTML parse_mode markup,
// empty and over-long texts, editing a message into itself, replying to a
// message that does not exist, polling while a webhook is set or from two
// pollers at once. It does not model users, permissions or rate limits; use
// FailNext for those answers.
package telegramtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/bridges/bridgetest"
)

// DefaultToken is the bot token a Server accepts unless WithToken says
// otherwise. Its numeric prefix is the bot's user ID, as in real tokens.
const DefaultToken = "7000000001:AAFakeTokenForTelegramTest_0123456789"

// Option configures a Server; pass options to New.
type Option func(*config)

type config struct {
	token   string
	botUser *User
	clock   func() time.Time
	onSent  func(SentMessage)
}

// WithToken sets the bot token the server accepts. Unless WithBotUser is also
// given, the bot's user ID is the token's numeric prefix.
func WithToken(token string) Option { return func(c *config) { c.token = token } }

// WithBotUser sets the user getMe returns and that messages sent by the bot
// carry in "from"; IsBot is forced on and a zero ID is taken from the token.
// Without it the bot is "Switchboard" with username "switchboard_bot".
func WithBotUser(u User) Option { return func(c *config) { c.botUser = &u } }

// WithOnSent calls f with every message the bot sends, as it is recorded
// (under the server's lock: f must be quick and must not call the
// server). A load tool times replies with it without scanning Sent.
func WithOnSent(f func(SentMessage)) Option { return func(c *config) { c.onSent = f } }

// WithClock sets the clock that dates messages; the default is time.Now.
func WithClock(now func() time.Time) Option { return func(c *config) { c.clock = now } }

// Server is a fake Bot API server. All methods are safe for concurrent use;
// the exported fields are set by New and must not be changed.
type Server struct {
	// URL is the base URL to give the client (bot.WithServerURL), without a
	// trailing slash.
	URL string
	// Token is the only bot token the server accepts; other tokens get 401.
	Token string
	// BotUser is the bot's own user, returned by getMe.
	BotUser User

	t             bridgetest.TB
	srv           *httptest.Server
	clock         func() time.Time
	closing       chan struct{}
	webhookClient *http.Client
	changes       bridgetest.Changes // wakes WaitFor and the fake's own waits on every state change; has its own lock

	mu           sync.Mutex
	nextUpdateID int64
	queue        []queuedUpdate
	pushMu       sync.Mutex // serializes PushUpdate: update ids queue in order
	pollGen      uint64     // incremented by every getUpdates; a waiting poll with an older generation is terminated
	waitingPolls int
	webhook      WebhookInfo
	chats        map[int64]*chatState
	files        map[string]*storedFile // by file_id
	paths        map[string]string      // file_path → file_id
	uploads      int
	sent         []SentMessage
	actions      []ChatAction
	commands     []BotCommand
	reactions    []Reaction
	answers      []CallbackAnswer
	calls        []Call
	faults       map[string][]fault // by lower-case method name

	// onSent is WithOnSent's callback, or nil.
	onSent func(SentMessage)
}

type queuedUpdate struct {
	id  int64
	raw json.RawMessage
}

type chatState struct {
	chat     Chat
	lastID   int
	messages map[int]*storedMessage
}

type storedMessage struct {
	msg     Message
	fromBot bool
}

type storedFile struct {
	file File
	data []byte
}

type fault struct {
	cut         bool
	status      int
	description string
	retryAfter  int
}

// WebhookInfo is the webhook the bot registered with setWebhook.
type WebhookInfo struct {
	URL            string
	SecretToken    string
	AllowedUpdates []string
}

// SentMessage is one message the bot sent or edited, in the order the server
// received the calls.
type SentMessage struct {
	// Method is "sendMessage", "sendPhoto", "sendDocument" or
	// "editMessageText".
	Method string
	ChatID int64
	// MessageID is the ID the server assigned, or for editMessageText the ID
	// of the edited message.
	MessageID int
	// ThreadID is message_thread_id (a forum topic), 0 when absent.
	ThreadID int
	// Text is the text (or the caption, for media) exactly as sent, markup
	// included.
	Text string
	// ParseMode is parse_mode as sent ("", "HTML", "MarkdownV2", …).
	ParseMode string
	// PlainText is Text as a user sees it, after HTML markup is parsed;
	// Entities are its formatting. Markdown modes are not parsed: PlainText
	// is Text and Entities is nil.
	PlainText string
	Entities  []MessageEntity
	// ReplyToMessageID is from reply_parameters or reply_to_message_id.
	ReplyToMessageID    int
	DisableNotification bool
	// LinkPreviewOptions and ReplyMarkup are the JSON as sent, nil if absent.
	LinkPreviewOptions json.RawMessage
	ReplyMarkup        json.RawMessage
	// File is set for sendPhoto and sendDocument.
	File *SentFile
}

// SentFile is the file of a sendPhoto or sendDocument call.
type SentFile struct {
	// FileName and Data are the uploaded part; both are empty when the file
	// was sent by reference.
	FileName string
	Data     []byte
	// Ref is the file_id or URL the file was sent by, "" for uploads.
	Ref string
	// FileID is the file_id of the sent message's file: new for uploads (so
	// getFile and the download endpoint serve Data), Ref for a file_id.
	FileID string
}

// ChatAction is one sendChatAction call.
type ChatAction struct {
	ChatID   int64
	ThreadID int
	Action   string
}

// Reaction is one setMessageReaction call; an empty Reaction list removes
// the bot's reactions.
type Reaction struct {
	ChatID    int64
	MessageID int
	Reaction  []ReactionType
	IsBig     bool
}

// CallbackAnswer is one answerCallbackQuery call.
type CallbackAnswer struct {
	CallbackQueryID string
	Text            string
	ShowAlert       bool
	URL             string
}

// Call is one request that carried the right token, successful or not.
type Call struct {
	// Method is the method name, canonically cased when the fake knows it.
	Method string
	// ContentType is the request's media type: "multipart/form-data",
	// "application/json", "application/x-www-form-urlencoded" or "".
	ContentType string
	// Params are the parameters as strings; JSON-valued ones are JSON text.
	Params map[string]string
	// Files maps multipart file fields to their file names.
	Files map[string]string
}

// New starts a fake Bot API server that is closed when the test ends. Closing
// ends pending long polls first, so a client still polling does not hold the
// test up.
func New(t bridgetest.TB, opts ...Option) *Server {
	t.Helper()
	cfg := config{token: DefaultToken, clock: time.Now}
	for _, o := range opts {
		o(&cfg)
	}
	bot := User{IsBot: true, FirstName: "Switchboard", Username: "switchboard_bot"}
	if cfg.botUser != nil {
		bot = *cfg.botUser
		bot.IsBot = true
	}
	if bot.ID == 0 {
		prefix, _, _ := strings.Cut(cfg.token, ":")
		bot.ID, _ = strconv.ParseInt(prefix, 10, 64)
	}
	s := &Server{
		Token:         cfg.token,
		BotUser:       bot,
		t:             t,
		clock:         cfg.clock,
		onSent:        cfg.onSent,
		closing:       make(chan struct{}),
		webhookClient: &http.Client{Transport: &http.Transport{}},
		nextUpdateID:  1,
		chats:         map[int64]*chatState{},
		files:         map[string]*storedFile{},
		paths:         map[string]string{},
		faults:        map[string][]fault{},
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	s.URL = s.srv.URL
	t.Cleanup(func() {
		close(s.closing)
		s.srv.Close()
		s.webhookClient.CloseIdleConnections()
	})
	return s
}

// Client returns an HTTP client for the server whose idle connections are
// closed with it; pass it to bot.WithHTTPClient to keep goleak quiet.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// WaitFor blocks until cond returns true or ctx ends. cond is evaluated now
// and again after every change of the server's state (a request, a push), so
// it may call the server's accessors such as Sent or Requests.
func (s *Server) WaitFor(ctx context.Context, cond func() bool) error {
	if err := s.changes.WaitFor(ctx, cond); err != nil {
		return fmt.Errorf("telegramtest: condition not met: %w", err)
	}
	return nil
}

// WaitSent blocks until at least n messages have been sent (see Sent) or ctx
// ends, and returns all sent messages.
func (s *Server) WaitSent(ctx context.Context, n int) ([]SentMessage, error) {
	var sent []SentMessage
	err := s.WaitFor(ctx, func() bool {
		sent = s.Sent()
		return len(sent) >= n
	})
	if err != nil {
		return sent, fmt.Errorf("telegramtest: waiting for %d sent messages, have %d: %w", n, len(sent), ctx.Err())
	}
	return sent, nil
}

// Sent returns the messages sent or edited so far, oldest first, across
// sendMessage, sendPhoto, sendDocument and editMessageText.
func (s *Server) Sent() []SentMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.sent)
}

// ChatActions returns the sendChatAction calls so far, oldest first.
func (s *Server) ChatActions() []ChatAction {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.actions)
}

// Commands returns the command list of the latest setMyCommands call
// (whatever its scope and language), nil before any.
func (s *Server) Commands() []BotCommand {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.commands)
}

// Reactions returns the setMessageReaction calls so far, oldest first.
func (s *Server) Reactions() []Reaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reactions)
}

// CallbackAnswers returns the answerCallbackQuery calls so far, oldest first.
func (s *Server) CallbackAnswers() []CallbackAnswer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.answers)
}

// Requests returns the method names of all calls with the right token,
// oldest first, including failed and unknown ones.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, len(s.calls))
	for i, c := range s.calls {
		names[i] = c.Method
	}
	return names
}

// Calls returns the calls behind Requests with their parameters.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// Webhook returns the webhook set with setWebhook; its URL is "" when none is
// set.
func (s *Server) Webhook() WebhookInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.webhook
}

// LongPolls reports how many getUpdates calls are waiting for an update
// right now; wait for it to reach 1 to know the bot is polling.
func (s *Server) LongPolls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.waitingPolls
}

// PendingUpdates reports how many pushed updates getUpdates has not yet seen
// confirmed by an offset past them.
func (s *Server) PendingUpdates() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// FailNext makes the next call of method (case-insensitive) fail with status
// as error_code and description, without side effects. A retryAfter above
// zero is sent as parameters.retry_after, as with 429. An empty description
// gets the server's usual one for status, e.g. "Too Many Requests: retry
// after N" or, for 409, the getUpdates conflict. Several calls queue up.
func (s *Server) FailNext(method string, status int, description string, retryAfter int) {
	if description == "" {
		description = defaultDescription(status, retryAfter)
	}
	s.addFault(method, fault{status: status, description: description, retryAfter: retryAfter})
}

// CutConnection makes the next call of method (case-insensitive) end in a
// network error: the server reads the whole request, then closes the
// connection without replying and without acting on it.
func (s *Server) CutConnection(method string) {
	s.addFault(method, fault{cut: true})
}

func (s *Server) addFault(method string, f fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := strings.ToLower(method)
	s.faults[key] = append(s.faults[key], f)
}

func defaultDescription(status, retryAfter int) string {
	switch status {
	case http.StatusBadRequest:
		return "Bad Request"
	case http.StatusForbidden:
		return "Forbidden: bot was blocked by the user"
	case http.StatusConflict:
		return conflictTerminated
	case http.StatusTooManyRequests:
		return fmt.Sprintf("Too Many Requests: retry after %d", retryAfter)
	}
	return http.StatusText(status)
}

// apiError is an {"ok":false} reply.
type apiError struct {
	code        int
	description string
	retryAfter  int
}

func badRequest(detail string) *apiError {
	return &apiError{code: http.StatusBadRequest, description: "Bad Request: " + detail}
}

// Descriptions the real server uses.
const (
	conflictTerminated = "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"
	conflictWebhook    = "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"
)

type okReply struct {
	OK     bool `json:"ok"`
	Result any  `json:"result"`
}

type errorReply struct {
	OK          bool         `json:"ok"`
	ErrorCode   int          `json:"error_code"`
	Description string       `json:"description"`
	Parameters  *replyParams `json:"parameters,omitempty"`
}

type replyParams struct {
	RetryAfter int `json:"retry_after,omitempty"`
}

func writeReply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, e *apiError) {
	reply := errorReply{ErrorCode: e.code, Description: e.description}
	if e.retryAfter > 0 {
		reply.Parameters = &replyParams{RetryAfter: e.retryAfter}
	}
	writeReply(w, e.code, reply)
}

var (
	errUnauthorized = &apiError{code: http.StatusUnauthorized, description: "Unauthorized"}
	errNotFound     = &apiError{code: http.StatusNotFound, description: "Not Found"}
)

// serveHTTP routes /bot<token>/<method> and /file/bot<token>/<path>.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if rest, ok := strings.CutPrefix(r.URL.Path, "/file/bot"); ok {
		s.serveFile(w, rest)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	if !ok {
		writeError(w, errNotFound)
		return
	}
	token, method, ok := strings.Cut(rest, "/")
	if !ok || method == "" {
		writeError(w, errNotFound)
		return
	}
	if token != s.Token {
		writeError(w, errUnauthorized)
		return
	}
	method = strings.TrimPrefix(method, "test/") // the test environment's prefix
	p, perr := readParams(w, r)
	if perr != nil {
		writeError(w, perr)
		return
	}
	key := strings.ToLower(method)
	h, known := methods[key]
	if known {
		method = h.name
	}

	s.mu.Lock()
	call := Call{Method: method, ContentType: p.contentType, Params: p.values}
	if len(p.files) > 0 {
		call.Files = map[string]string{}
		for k, u := range p.files {
			call.Files[k] = u.name
		}
	}
	s.calls = append(s.calls, call)
	f, faulted := s.faults[key], false
	if len(f) > 0 {
		faulted = true
		s.faults[key] = f[1:]
	}
	s.changes.Changed()
	s.mu.Unlock()

	switch {
	case faulted && f[0].cut:
		cutConnection(w)
	case faulted:
		writeError(w, &apiError{code: f[0].status, description: f[0].description, retryAfter: f[0].retryAfter})
	case !known:
		writeError(w, errNotFound)
	default:
		result, err := h.fn(s, r.Context(), p)
		if err != nil {
			writeError(w, err)
			return
		}
		writeReply(w, http.StatusOK, okReply{OK: true, Result: result})
	}
}

// cutConnection closes the connection under w without a response.
func cutConnection(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		writeError(w, &apiError{code: http.StatusInternalServerError, description: "Internal Server Error: connection cannot be cut"})
		return
	}
	conn, _, err := hj.Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

// serveFile serves <token>/<file_path> from the files registered with
// AddFile or uploaded by the bot.
func (s *Server) serveFile(w http.ResponseWriter, rest string) {
	token, path, _ := strings.Cut(rest, "/")
	if token != s.Token {
		writeError(w, errUnauthorized)
		return
	}
	s.mu.Lock()
	f := s.files[s.paths[path]]
	s.mu.Unlock()
	if f == nil || path == "" {
		writeError(w, errNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(f.data)))
	_, _ = w.Write(f.data)
}

// AddFile registers a file that getFile resolves fileID to, served at
// <URL>/file/bot<token>/<path>. An empty path becomes "documents/<fileID>".
// Registering an existing fileID replaces it.
func (s *Server) AddFile(fileID, path string, data []byte) {
	if path == "" {
		path = "documents/" + fileID
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addFileLocked(fileID, path, data)
}

func (s *Server) addFileLocked(fileID, path string, data []byte) *storedFile {
	if old := s.files[fileID]; old != nil {
		delete(s.paths, old.file.FilePath)
	}
	f := &storedFile{
		file: File{FileID: fileID, FileUniqueID: "u_" + fileID, FileSize: int64(len(data)), FilePath: path},
		data: slices.Clone(data),
	}
	s.files[fileID] = f
	s.paths[path] = fileID
	return f
}

// chatLocked returns the state of chat id, creating it on first sight with a
// type guessed from the ID's range the way Telegram allocates them.
func (s *Server) chatLocked(id int64) *chatState {
	cs := s.chats[id]
	if cs == nil {
		typ := ChatPrivate
		switch {
		case id < -1_000_000_000_000:
			typ = ChatSupergroup
		case id < 0:
			typ = ChatGroup
		}
		cs = &chatState{chat: Chat{ID: id, Type: typ}, messages: map[int]*storedMessage{}}
		s.chats[id] = cs
	}
	return cs
}

// recordMessageLocked stores a message the bot sent or a pushed update
// carried, so replies and edits can find it.
func (s *Server) recordMessageLocked(m Message, fromBot bool) {
	cs := s.chatLocked(m.Chat.ID)
	if m.Chat.Type != "" {
		cs.chat = m.Chat
	}
	cs.lastID = max(cs.lastID, m.MessageID)
	cs.messages[m.MessageID] = &storedMessage{msg: m, fromBot: fromBot}
}
