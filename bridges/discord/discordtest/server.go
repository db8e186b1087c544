// Package discordtest is an in-process fake of Discord's REST API and
// Gateway, so the real client library (github.com/bwmarrin/discordgo) runs
// in tests unchanged.
//
// New starts two httptest servers: REST under <URL>/api/v{N}/ and the
// Gateway, a WebSocket at GatewayURL that speaks encoding=json without
// transport compression. A test registers channels with AddChannel (or lets
// the message builders do it), pushes events with PushMessageCreate (built
// with GuildMessage, DirectMessage or ThreadMessage) or Push, reads what the
// bot did with Sent, Reactions, Typing and Requests, waits with WaitSent or
// WaitFor, and injects trouble with FailNext, RateLimitNext,
// DropConnection, CloseWith, SendReconnect, SendInvalidSession and
// SetHeartbeatACKs. Identifies, Resumes, Connections, Heartbeats and Closes
// count what happened on the gateway.
//
// # Pointing discordgo at the fake
//
// discordgo sends REST requests through Session.Client to URLs built from
// package-level variables, and dials whatever URL GET /gateway answers. The
// preferred way in keeps the variables and swaps the client, whose
// transport sends every request for discord.com to the fake. Nothing global
// changes, so such tests may run in parallel:
//
//	srv := discordtest.New(t)
//	dg, _ := discordgo.New("Bot " + srv.Token)
//	dg.Client = srv.Client() // after New, before Open
//	if err := dg.Open(); err != nil { … } // GET /gateway → srv.GatewayURL
//	t.Cleanup(func() { dg.Close() }) // registered after New, so it runs first
//
// The other way overwrites the endpoint variables. discordgo computes them
// once, at init, from EndpointAPI, so setting EndpointAPI alone moves
// nothing; set every variable the calls under test use, at least:
//
//	discordgo.EndpointAPI = srv.APIURL // srv.URL + "/api/v9/"
//	discordgo.EndpointChannels = discordgo.EndpointAPI + "channels/"
//	discordgo.EndpointUsers = discordgo.EndpointAPI + "users/"
//	discordgo.EndpointGuilds = discordgo.EndpointAPI + "guilds/"
//	discordgo.EndpointGateway = discordgo.EndpointAPI + "gateway"
//	discordgo.EndpointGatewayBot = discordgo.EndpointGateway + "/bot"
//
// These are process-wide: a test that sets them must restore them in
// t.Cleanup and must not run in parallel with any other test that uses
// discordgo.
//
// # What the fake checks
//
// REST wants "Authorization: Bot <token>" (401 otherwise), answers unknown
// channels and messages with Discord's JSON error codes, refuses content
// over 2000 characters and empty messages (400, code 50035 / 50006),
// replies to unknown messages, contradictory allowed_mentions, edits of
// other users' messages and emoji shortcodes in reaction paths. Successful
// answers carry no X-RateLimit headers, so the client never waits on its
// own; RateLimitNext produces a 429.
//
// The gateway accepts v=9 or 10 (else 4012), encoding=json and no compress
// parameter (else 4002), sends Hello, wants Identify (token, shard,
// intents; a wrong token closes with 4004, privileged intents the
// application lacks with 4014) and answers with READY, then GUILD_CREATE
// for each known guild.
// Heartbeats get ACKs. Every dispatch carries the session's next sequence
// number and is kept, so Resume with the session ID and the last sequence
// seen replays what was missed and ends with RESUMED; a resume the fake
// cannot honor gets Invalid Session (op 9, d:false). Events are filtered
// by intents, message content is blanked without the MESSAGE_CONTENT
// intent (except in DMs, mentions of the bot and the bot's own messages),
// and the bot's own REST sends, edits and reactions come back as
// MESSAGE_CREATE, MESSAGE_UPDATE and MESSAGE_REACTION_ADD, as on Discord.
// A client that closes with 1000 or 1001 ends its session.
//
// Events pushed before any session exists wait for the next READY instead
// of being lost. The fake does not enforce heartbeat deadlines, payload
// rate limits or the session start limit, and does not compress payloads
// even when Identify asks for it.
//
// # discordgo's habits
//
// As checked against discordgo v0.29: discordgo.New asks for
// IntentsAllWithoutPrivileged, so guild messages arrive blank unless the
// test adds discordgo.IntentMessageContent to Session.Identify.Intents.
// discordgo caches the gateway URL and ignores resume_gateway_url (the fake
// sets it to GatewayURL anyway). It answers op 7 by closing with 1012 and
// resuming, and op 9 by identifying again on the same connection whatever
// d says. It ignores close codes: after any read error it closes with 1000
// and tries to resume, which works after DropConnection or a resumable
// CloseWith (the fake ended that connection first and ignores the 1000),
// and after a terminal code ends in op 9 and a new Identify. A missing
// heartbeat ACK makes it close a live connection with 1000, which ends the
// session, so it identifies anew. It sleeps a second inside every
// Close, so each reconnect costs a test about a second. Its heartbeat
// goroutine races with its reconnects, so wait for Online after Open and
// after each resume before disrupting the connection again. On 429 it
// sleeps retry_after and sends the request again.
package discordtest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/bridges/bridgetest"
)

// Defaults of a Server made without options.
const (
	// DefaultBotID is the bot's user ID.
	DefaultBotID = "1100000000000000001"
	// DefaultToken is the bot token the server accepts. As in real tokens,
	// its first part is the bot's ID in base64.
	DefaultToken = "MTEwMDAwMDAwMDAwMDAwMDAwMQ.GdTest.discordtest-fake-token-0123456789abcdefgh"
	// DefaultGuildID is the guild that guild channels belong to unless they
	// name another.
	DefaultGuildID = "1100000000000000100"
	// DefaultHeartbeatInterval is the heartbeat_interval Hello announces,
	// Discord's own value.
	DefaultHeartbeatInterval = 41250 * time.Millisecond
	// DefaultSessionStartLimit is session_start_limit.total of GET
	// /gateway/bot.
	DefaultSessionStartLimit = 1000
	// APIVersion is the REST version of APIURL, the one discordgo uses.
	APIVersion = "9"
)

// Option configures a Server; pass options to New.
type Option func(*config)

type config struct {
	token      string
	bot        *User
	heartbeat  time.Duration
	clock      func() time.Time
	privileged Intent
	startLimit int
	onSent     func(SentMessage)
}

// WithOnSent calls f with every message the bot sends or edits as it is
// recorded (under the server's lock: f must be quick and must not call the
// server). A load tool times replies with it without scanning Sent.
func WithOnSent(f func(SentMessage)) Option { return func(c *config) { c.onSent = f } }

// WithToken sets the bot token the server accepts, without the "Bot "
// prefix.
func WithToken(token string) Option { return func(c *config) { c.token = token } }

// WithBotUser sets the bot's own user, returned by GET /users/@me and in
// READY; Bot is forced on and an empty ID becomes DefaultBotID. Without it
// the bot is "switchboard".
func WithBotUser(u User) Option { return func(c *config) { c.bot = &u } }

// WithHeartbeatInterval sets the heartbeat_interval Hello announces; it is
// sent in whole milliseconds, at least 1. Clients treat missed ACKs as a
// dead connection (discordgo after five intervals), so a short interval
// makes SetHeartbeatACKs(false) tests fast. Keep the default otherwise:
// the shorter the interval, the likelier discordgo's heartbeat goroutine
// races with its reconnects (see Online).
func WithHeartbeatInterval(d time.Duration) Option {
	return func(c *config) { c.heartbeat = d }
}

// WithClock sets the clock that stamps messages and snowflakes; the default
// is time.Now.
func WithClock(now func() time.Time) Option { return func(c *config) { c.clock = now } }

// WithPrivilegedIntents sets which privileged intents the application has
// enabled in the developer portal; Identify asking for others is closed
// with 4014. The default enables all three.
func WithPrivilegedIntents(enabled Intent) Option {
	return func(c *config) { c.privileged = enabled & privilegedIntents }
}

// WithSessionStartLimit sets session_start_limit.total of GET /gateway/bot.
func WithSessionStartLimit(total int) Option { return func(c *config) { c.startLimit = total } }

// Server is a fake Discord. All methods are safe for concurrent use; the
// exported fields are set by New and must not be changed.
type Server struct {
	// URL is the REST server's base URL, e.g. "http://127.0.0.1:41234".
	URL string
	// APIURL is URL + "/api/v9/", the value for discordgo.EndpointAPI.
	APIURL string
	// GatewayURL is the gateway's WebSocket URL, which GET /gateway answers
	// and READY names as resume_gateway_url.
	GatewayURL string
	// Token is the only bot token the server accepts, without "Bot ".
	Token string
	// BotUser is the bot's own user.
	BotUser User

	t          bridgetest.TB
	rest       *httptest.Server
	gw         *httptest.Server
	client     *http.Client
	clock      func() time.Time
	heartbeat  time.Duration
	privileged Intent
	startLimit int
	onSent     func(SentMessage)  // WithOnSent's callback, or nil
	conns      sync.WaitGroup     // gateway connection goroutines
	changes    bridgetest.Changes // wakes WaitFor and the fake's own waits on every state change; has its own lock

	mu        sync.Mutex
	closed    bool
	lastID    uint64
	users     map[string]User
	guilds    []string // IDs in the order they became known
	channels  map[string]*Channel
	dms       map[string]string         // user ID → DM channel ID
	messages  map[string]*storedMessage // by channel ID + "/" + message ID
	sent      []SentMessage
	reactions []Reaction
	typing    []string
	requests  []Request
	faults    map[string][]fault    // by route
	files     map[string]storedFile // by URL path
	botRoles  map[string][]string   // by guild ID
	gateway   gatewayState
}

type storedMessage struct {
	msg     Message
	fromBot bool
}

// New starts a fake Discord that is closed when the test ends. Closing
// drops the gateway connections that are still open; close the client
// first (register its Cleanup after New) so it does not try to reconnect.
func New(t bridgetest.TB, opts ...Option) *Server {
	t.Helper()
	cfg := config{
		token:      DefaultToken,
		heartbeat:  DefaultHeartbeatInterval,
		clock:      time.Now,
		privileged: privilegedIntents,
		startLimit: DefaultSessionStartLimit,
	}
	for _, o := range opts {
		o(&cfg)
	}
	bot := User{ID: DefaultBotID, Username: "switchboard", GlobalName: "Switchboard"}
	if cfg.bot != nil {
		bot = *cfg.bot
		if bot.ID == "" {
			bot.ID = DefaultBotID
		}
	}
	bot.Bot = true
	bot = normalizeUser(bot)
	s := &Server{
		Token:      cfg.token,
		BotUser:    bot,
		t:          t,
		clock:      cfg.clock,
		heartbeat:  cfg.heartbeat,
		privileged: cfg.privileged,
		startLimit: cfg.startLimit,
		onSent:     cfg.onSent,
		users:      map[string]User{bot.ID: bot},
		channels:   map[string]*Channel{},
		dms:        map[string]string{},
		messages:   map[string]*storedMessage{},
		faults:     map[string][]fault{},
		files:      map[string]storedFile{},
		gateway:    newGatewayState(),
	}
	s.rest = httptest.NewServer(http.HandlerFunc(s.serveREST))
	s.gw = httptest.NewServer(http.HandlerFunc(s.serveGateway))
	s.URL = s.rest.URL
	s.APIURL = s.URL + "/api/v" + APIVersion + "/"
	s.GatewayURL = "ws" + strings.TrimPrefix(s.gw.URL, "http")
	restURL, _ := url.Parse(s.URL)
	s.client = &http.Client{Transport: &redirectTransport{base: s.rest.Client().Transport, host: restURL.Host}}
	t.Cleanup(s.close)
	return s
}

// close ends every gateway connection, then both servers.
func (s *Server) close() {
	s.mu.Lock()
	s.closed = true
	conns := make([]*gwConn, 0, len(s.gateway.conns))
	for c := range s.gateway.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.ws.CloseNow()
	}
	s.gw.Close()
	s.rest.Close()
	s.conns.Wait()
}

// Client returns an HTTP client that sends requests for discord.com (and
// discordapp.com) to the fake and refuses every other host, so nothing a
// test does reaches the real Discord. Assign it to discordgo's
// Session.Client. Its idle connections are closed with the server.
func (s *Server) Client() *http.Client { return s.client }

// redirectTransport rewrites Discord's hosts to the fake's REST server.
type redirectTransport struct {
	base http.RoundTripper
	host string
}

// discordHosts are the hosts redirectTransport sends to the fake.
var discordHosts = map[string]bool{
	"discord.com": true, "www.discord.com": true, "canary.discord.com": true, "ptb.discord.com": true,
	"discordapp.com": true, "www.discordapp.com": true,
}

func (rt *redirectTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host != rt.host && !discordHosts[strings.ToLower(req.URL.Hostname())] {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, fmt.Errorf("discordtest: refusing request to %s: only discord.com is faked", req.URL.Redacted())
	}
	r := req.Clone(req.Context())
	r.URL.Scheme, r.URL.Host, r.Host = "http", rt.host, ""
	return rt.base.RoundTrip(r)
}

// WaitFor blocks until cond returns true or ctx ends. cond is evaluated now
// and again after every change of the server's state (a request, a gateway
// frame, a push), so it may call the server's accessors such as Sent or
// Resumes.
func (s *Server) WaitFor(ctx context.Context, cond func() bool) error {
	if err := s.changes.WaitFor(ctx, cond); err != nil {
		return fmt.Errorf("discordtest: condition not met: %w", err)
	}
	return nil
}

// WaitSent blocks until at least n messages have been sent or edited (see
// Sent) or ctx ends, and returns all of them.
func (s *Server) WaitSent(ctx context.Context, n int) ([]SentMessage, error) {
	var sent []SentMessage
	err := s.WaitFor(ctx, func() bool {
		sent = s.Sent()
		return len(sent) >= n
	})
	if err != nil {
		return sent, fmt.Errorf("discordtest: waiting for %d sent messages, have %d: %w", n, len(sent), ctx.Err())
	}
	return sent, nil
}

// Sent returns the messages the bot created or edited so far, oldest first.
func (s *Server) Sent() []SentMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.sent)
}

// Reactions returns the reactions the bot added so far, oldest first.
func (s *Server) Reactions() []Reaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reactions)
}

// Typing returns the channel IDs of the bot's POST /channels/{id}/typing
// calls so far, oldest first.
func (s *Server) Typing() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.typing)
}

// Requests returns every REST request so far, oldest first, including
// unauthorized, failed and unknown ones.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// fault is a prepared answer for the next request of a route.
type fault struct {
	status     int
	code       int
	message    string
	retryAfter time.Duration
	global     bool
	rateLimit  bool
}

// FailNext makes the next authorized request of route (RouteCreateMessage,
// …) fail with status and the JSON error {"code": code, "message":
// message}, without side effects; e.g. 403, 50013, "Missing Permissions".
// An empty message gets the status text. Several calls queue up.
func (s *Server) FailNext(route string, status, code int, message string) {
	s.t.Helper()
	if message == "" {
		message = fmt.Sprintf("%d: %s", status, http.StatusText(status))
	}
	s.addFault(route, fault{status: status, code: code, message: message})
}

// RateLimitNext makes the next authorized request of route answer 429
// Too Many Requests the way Discord does: the JSON body {"message": "You
// are being rate limited.", "retry_after": seconds, "global": global} and
// the headers Retry-After (whole seconds, rounded up), X-RateLimit-Limit,
// X-RateLimit-Remaining (0), X-RateLimit-Reset, X-RateLimit-Reset-After,
// X-RateLimit-Bucket, X-RateLimit-Scope and, when global, X-RateLimit-Global.
// Only the next request of route is refused, even when global is set.
// Several calls queue up.
func (s *Server) RateLimitNext(route string, retryAfter time.Duration, global bool) {
	s.t.Helper()
	s.addFault(route, fault{status: http.StatusTooManyRequests, rateLimit: true, retryAfter: retryAfter, global: global})
}

func (s *Server) addFault(route string, f fault) {
	s.t.Helper()
	if findRoute(route) == nil {
		s.t.Errorf("discordtest: unknown route %q; use a Route constant", route)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[route] = append(s.faults[route], f)
}

// discordEpoch is the start of Discord's snowflake clock.
var discordEpoch = time.UnixMilli(1420070400000)

// newIDLocked returns a new snowflake: milliseconds since the Discord epoch
// in the top bits, strictly increasing even when the clock stands still.
func (s *Server) newIDLocked() string {
	ms := max(s.clock().Sub(discordEpoch).Milliseconds(), 0)
	id := uint64(ms) << 22
	if id <= s.lastID {
		id = s.lastID + 1
	}
	s.lastID = id
	return strconv.FormatUint(id, 10)
}
