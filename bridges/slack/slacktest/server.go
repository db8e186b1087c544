// Package slacktest is an in-process fake of Slack's Web API, Socket Mode
// and Events API delivery, so the real client library
// (github.com/slack-go/slack and its socketmode package) runs in tests
// unchanged.
//
// New starts an httptest server. Web API methods are served at
// <URL>/api/<method> (give the client slack.OptionAPIURL(s.APIURL), which
// ends in a slash), take their parameters from the query string or a
// form-encoded, JSON or multipart body and the token from the Authorization
// header or the token parameter, and answer {"ok":true,…} or
// {"ok":false,"error":"…"} with HTTP 200, or HTTP 429 with Retry-After. The
// fake implements auth.test, apps.connections.open, chat.postMessage,
// chat.update, chat.delete, reactions.add, reactions.remove,
// conversations.info, users.info, files.getUploadURLExternal and
// files.completeUploadExternal; any other method answers unknown_method.
//
// apps.connections.open hands out a one-time ws:// URL of the fake's own
// Socket Mode endpoint, which greets with hello, sends the envelopes a test
// queues with PushEvent, records the client's acks (Acked, WaitAck) and
// pings the client as Slack does. Disconnect asks clients to reconnect,
// Redeliver resends an envelope as a retry. For bridges that receive events
// over HTTP, PostEvent delivers a payload signed like Slack's.
//
// A test reads what the bot did with Sent, Reactions, Uploads and Calls,
// waits with WaitSent or WaitFor, and injects failures with FailNext and
// RateLimitNext (Slack's answers), ServerErrorNext (an outage's 5xx),
// CutNext and StallNext (a network that fails) and DropConnections (a
// Socket Mode connection lost). The fake checks what breaks bots in
// production: tokens of the wrong type, empty and over-long messages,
// invalid blocks and reaction names, edits of messages that do not exist
// or are not the bot's. It does not model membership, permissions or real
// rate limits.
package slacktest

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

// Tokens a Server accepts unless WithBotToken or WithAppToken say otherwise.
const (
	DefaultBotToken = "xoxb-1000000001-2000000002-SwitchboardFakeBotToken"
	DefaultAppToken = "xapp-1-A0FAKEAPP-3000000003-switchboardfakeapptoken"
)

// VerificationToken is the deprecated verification token every event
// callback carries in "token".
const VerificationToken = "fake-verification-token"

// Option configures a Server; pass options to New.
type Option func(*config)

type config struct {
	botToken     string
	appToken     string
	identity     Identity
	clock        func() time.Time
	pingInterval time.Duration
	onSent       func(SentMessage)
}

// WithOnSent calls f with every chat.postMessage, chat.update and
// chat.delete as it is recorded (under the server's lock: f must be quick
// and must not call the server). A load tool times replies with it
// without scanning Sent.
func WithOnSent(f func(SentMessage)) Option { return func(c *config) { c.onSent = f } }

// WithBotToken sets the bot token (xoxb-…) the Web API accepts.
func WithBotToken(token string) Option { return func(c *config) { c.botToken = token } }

// WithAppToken sets the app-level token (xapp-…) apps.connections.open
// accepts.
func WithAppToken(token string) Option { return func(c *config) { c.appToken = token } }

// WithIdentity sets the workspace, app and bot user the fake plays; zero
// fields keep their defaults.
func WithIdentity(id Identity) Option { return func(c *config) { c.identity = id } }

// WithClock sets the clock behind message timestamps and event times; the
// default is time.Now. Timestamps stay strictly increasing whatever it
// returns. Signatures of PostEvent use the real time regardless, because
// receivers check them against it.
func WithClock(now func() time.Time) Option { return func(c *config) { c.clock = now } }

// WithPingInterval sets how often the Socket Mode endpoint pings a client;
// the first ping follows hello at once. The default, 5s, suits slack-go's
// default 30s ping timeout; a client with a shorter socketmode
// OptionPingInterval needs a shorter interval here.
func WithPingInterval(d time.Duration) Option { return func(c *config) { c.pingInterval = d } }

// Server is a fake Slack. All methods are safe for concurrent use; the
// exported fields are set by New and must not be changed.
type Server struct {
	// URL is the server's base URL, without a trailing slash.
	URL string
	// APIURL is URL + "/api/", the value for slack.OptionAPIURL; slack-go
	// appends the method name to it directly.
	APIURL string
	// BotToken is the only token the Web API methods accept.
	BotToken string
	// AppToken is the only token apps.connections.open accepts.
	AppToken string
	// Identity is the workspace, app and bot user the fake plays.
	Identity Identity

	t            bridgetest.TB
	srv          *httptest.Server
	clock        func() time.Time
	pingInterval time.Duration
	onSent       func(SentMessage) // WithOnSent's callback, or nil
	ctx          context.Context   // canceled when the test ends
	cancel       context.CancelFunc
	eventClient  *http.Client
	sockets      sync.WaitGroup     // Socket Mode handlers, which outlive httptest's tracking once hijacked
	changes      bridgetest.Changes // wakes WaitFor and the fake's own waits on every state change; has its own lock

	mu       sync.Mutex
	closed   bool
	lastTS   int64 // microseconds of the last assigned ts
	seq      int   // shared counter for generated IDs
	convs    map[string]*Conversation
	users    map[string]*User
	messages map[string]map[string]*storedMessage // channel → ts → message
	reacted  map[reactionKey]bool
	files    map[string]*storedFile
	pending  map[string]*pendingUpload // by file ID, until completed
	sent     []SentMessage
	reacts   []Reaction
	uploads  []Upload
	calls    []Call
	faults   map[string][]fault

	// Socket Mode state, see socket.go.
	tickets   map[string]bool
	conns     map[int]*socketConn
	connects  int
	envelopes []*envelope
	byID      map[string]*envelope
	outbox    []*envelope
	acks      []Ack
}

type storedMessage struct {
	user     string
	text     string
	threadTS string
	fromBot  bool
}

type reactionKey struct{ channel, ts, name string }

type fault struct {
	errCode    string
	retryAfter int  // > 0: HTTP 429
	status     int  // >= 500: that HTTP status, an outage page instead of JSON
	cut        bool // close the connection without a reply
	stall      bool // no reply until the client gives up
}

// New starts a fake Slack that is closed when the test ends. Closing drops
// Socket Mode connections without a disconnect message, so stop clients
// first (register their cleanup after New) to keep them from reconnecting
// into a closed server.
func New(t bridgetest.TB, opts ...Option) *Server {
	t.Helper()
	cfg := config{botToken: DefaultBotToken, appToken: DefaultAppToken, clock: time.Now, pingInterval: 5 * time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		BotToken:     cfg.botToken,
		AppToken:     cfg.appToken,
		Identity:     cfg.identity.withDefaults(),
		t:            t,
		clock:        cfg.clock,
		pingInterval: cfg.pingInterval,
		onSent:       cfg.onSent,
		ctx:          ctx,
		cancel:       cancel,
		eventClient:  &http.Client{Transport: &http.Transport{}},
		convs:        map[string]*Conversation{},
		users:        map[string]*User{},
		messages:     map[string]map[string]*storedMessage{},
		reacted:      map[reactionKey]bool{},
		files:        map[string]*storedFile{},
		pending:      map[string]*pendingUpload{},
		faults:       map[string][]fault{},
		tickets:      map[string]bool{},
		conns:        map[int]*socketConn{},
		byID:         map[string]*envelope{},
	}
	id := s.Identity
	s.users[id.BotUserID] = &User{
		ID: id.BotUserID, TeamID: id.TeamID, Name: id.BotName, RealName: id.BotName, IsBot: true,
		Profile: UserProfile{DisplayName: id.BotName, RealName: id.BotName, BotID: id.BotID},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/{method}", s.serveAPI)
	mux.HandleFunc("GET /socket", s.serveSocket)
	mux.HandleFunc("GET /files/{id}/", s.serveFile)
	mux.HandleFunc("GET /files/{id}", s.serveFile)
	mux.HandleFunc("POST /upload/v1/{id}", s.serveUpload)
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL
	s.APIURL = s.URL + "/api/"
	t.Cleanup(s.close)
	return s
}

// close ends Socket Mode connections, then the HTTP server.
func (s *Server) close() {
	s.mu.Lock()
	s.closed = true
	conns := make([]*socketConn, 0, len(s.conns))
	for _, c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	s.cancel()
	for _, c := range conns {
		_ = c.ws.CloseNow()
	}
	s.sockets.Wait()
	s.srv.Close()
	s.eventClient.CloseIdleConnections()
}

// Client returns an HTTP client for the server whose idle connections are
// closed with it; pass it to slack.OptionHTTPClient to keep goleak quiet.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// WaitFor blocks until cond returns true or ctx ends. cond is evaluated now
// and again after every change of the server's state (a request, a push, an
// ack, a connection), so it may call the server's accessors such as Sent or
// Acked.
func (s *Server) WaitFor(ctx context.Context, cond func() bool) error {
	if err := s.changes.WaitFor(ctx, cond); err != nil {
		return fmt.Errorf("slacktest: condition not met: %w", err)
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
		return sent, fmt.Errorf("slacktest: waiting for %d sent messages, have %d: %w", n, len(sent), ctx.Err())
	}
	return sent, nil
}

// Sent returns the successful chat.postMessage, chat.update and chat.delete
// calls so far, oldest first.
func (s *Server) Sent() []SentMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.sent)
}

// Reactions returns the successful reactions.add and reactions.remove calls
// so far, oldest first.
func (s *Server) Reactions() []Reaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reacts)
}

// Uploads returns the completed file uploads so far, oldest first.
func (s *Server) Uploads() []Upload {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.uploads)
}

// Requests returns the method names of all Web API calls, oldest first,
// including failed and unknown ones.
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

// FailNext makes the next call of method (e.g. "chat.postMessage") answer
// {"ok":false,"error":errCode} with HTTP 200, as Slack answers
// "invalid_auth", "account_inactive", "channel_not_found" and the like,
// without side effects. Failing apps.connections.open with "invalid_auth" or
// "account_inactive" makes slack-go's socketmode client give up. Several
// faults for one method queue up.
func (s *Server) FailNext(method, errCode string) {
	s.addFault(method, fault{errCode: errCode})
}

// RateLimitNext makes the next call of method answer HTTP 429 with
// Retry-After: retryAfter (seconds) and {"ok":false,"error":"ratelimited"},
// without side effects. slack-go reports it as *slack.RateLimitedError.
func (s *Server) RateLimitNext(method string, retryAfter int) {
	s.addFault(method, fault{errCode: "ratelimited", retryAfter: max(retryAfter, 1)})
}

// ServerErrorNext makes the next call of method answer HTTP status (a 5xx,
// such as 503 during an outage) with a plain-text page instead of JSON, as
// Slack's edge does, without side effects. slack-go reports it as
// slack.StatusCodeError. A status outside 500–599 fails the test and
// queues nothing.
func (s *Server) ServerErrorNext(method string, status int) {
	s.t.Helper()
	if status < 500 || status > 599 {
		s.t.Errorf("slacktest: ServerErrorNext(%q, %d): want a 5xx status", method, status)
		return
	}
	s.addFault(method, fault{status: status})
}

// CutNext makes the next call of method end in a network error: the
// server reads the request, then closes the connection without a reply and
// without acting on it.
func (s *Server) CutNext(method string) {
	s.addFault(method, fault{cut: true})
}

// StallNext makes the next call of method never answer: the server holds
// the request, without acting on it, until the client gives up (its
// context ends or its timeout passes) or the server closes. It stands for
// a network that drops packets instead of refusing them.
func (s *Server) StallNext(method string) {
	s.addFault(method, fault{stall: true})
}

func (s *Server) addFault(method string, f fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[method] = append(s.faults[method], f)
}

// AddUser registers a user for users.info, replacing one with the same ID.
// An empty TeamID is the fake's team.
func (s *Server) AddUser(u User) {
	if u.TeamID == "" {
		u.TeamID = s.Identity.TeamID
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[u.ID] = &u
	s.changes.Changed()
}

// AddConversation registers a conversation for conversations.info and as
// the default channel_type of events in it, replacing one with the same ID.
// Unregistered conversations are made up from their ID's prefix when first
// seen: C is a public channel, G a private one, D a direct message.
func (s *Server) AddConversation(c Conversation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !c.IsChannel && !c.IsGroup && !c.IsIM && !c.IsMpIM {
		c.setChannelType(defaultChannelType(c.ID))
	}
	s.convs[c.ID] = &c
	s.changes.Changed()
}

// defaultChannelType guesses a conversation's channel_type from its ID.
func defaultChannelType(id string) string {
	switch {
	case strings.HasPrefix(id, "D"):
		return ChannelTypeIM
	case strings.HasPrefix(id, "G"):
		return ChannelTypeGroup
	}
	return ChannelTypeChannel
}

// conversationLocked returns conversation id, making it up on first sight;
// nil if id is not a conversation ID.
func (s *Server) conversationLocked(id string) *Conversation {
	if c := s.convs[id]; c != nil {
		return c
	}
	if len(id) < 2 || !strings.ContainsAny(id[:1], "CDG") || !isIDChars(id[1:]) {
		return nil
	}
	c := &Conversation{ID: id, Created: s.clock().Unix(), IsMember: true}
	c.setChannelType(defaultChannelType(id))
	if !c.IsIM {
		c.Name = strings.ToLower(id)
	}
	s.convs[id] = c
	return c
}

// userLocked returns user id, making up a profile for a well-formed user ID
// on first sight; nil otherwise.
func (s *Server) userLocked(id string) *User {
	if u := s.users[id]; u != nil {
		return u
	}
	if len(id) < 2 || !strings.ContainsAny(id[:1], "UW") || !isIDChars(id[1:]) {
		return nil
	}
	name := strings.ToLower(id)
	u := &User{
		ID: id, TeamID: s.Identity.TeamID, Name: name, RealName: "User " + id,
		Profile: UserProfile{DisplayName: name, RealName: "User " + id},
	}
	s.users[id] = u
	return u
}

func isIDChars(s string) bool {
	for _, c := range []byte(s) {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// nextTSLocked assigns a message timestamp: the clock's time in
// microseconds, forced above the last one so ts values sort in the order
// they were assigned.
func (s *Server) nextTSLocked() string {
	us := max(s.clock().UnixMicro(), s.lastTS+1)
	s.lastTS = us
	return formatTS(us)
}

func formatTS(us int64) string {
	return strconv.FormatInt(us/1e6, 10) + "." + fmt.Sprintf("%06d", us%1e6)
}

// nextSeqLocked returns the next value of the ID counter.
func (s *Server) nextSeqLocked() int {
	s.seq++
	return s.seq
}

// recordMessageLocked stores a message so chat.update, reactions and edits
// can find it.
func (s *Server) recordMessageLocked(channel, ts string, m storedMessage) {
	byTS := s.messages[channel]
	if byTS == nil {
		byTS = map[string]*storedMessage{}
		s.messages[channel] = byTS
	}
	byTS[ts] = &m
}

func (s *Server) messageLocked(channel, ts string) *storedMessage {
	return s.messages[channel][ts]
}

// writeJSON writes v as the response body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
