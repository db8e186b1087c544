package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	slackapi "github.com/slack-go/slack"
	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/markup"
	"github.com/switchboardhq/switchboard/core"
)

// DefaultChunkLimit is the longest message sent in one piece
// (openclaw-facts §5.3).
const DefaultChunkLimit = markup.SlackLimit

// defaultAuthTimeout bounds one auth.test call.
const defaultAuthTimeout = 30 * time.Second

// Options configure a Bridge.
type Options struct {
	// BotToken (xoxb-…) calls the Web API; AppToken (xapp-…) opens Socket
	// Mode. Both are secrets.
	BotToken, AppToken string
	// APIURL is the Web API base ending in "/api/"; empty means Slack's.
	APIURL string
	// AccountID names the workspace account; empty means "default".
	AccountID string
	// AgentID is the agent whose sessions the bridge keys; empty: main.
	AgentID string
	// Session decides how direct messages map to sessions.
	Session core.SessionConfig
	// ChunkLimit is the longest message sent in one piece; zero means
	// DefaultChunkLimit.
	ChunkLimit int
	// MentionPatterns address the bot in channels besides <@bot>.
	MentionPatterns []string
	// HTTP, when set, receives events over HTTP instead of Socket Mode
	// (the app token is then not needed).
	HTTP *HTTPOptions
	// MediaDir is where inbound files are saved (the daemon uses
	// <stateDir>/media/slack); empty skips downloads, and each file is
	// then described to the model as not downloaded. Local files a reply
	// attaches must lie inside its parent (bridges.LocalMedia).
	MediaDir string
	// MaxMediaBytes caps one file downloaded or uploaded; zero means
	// bridges.DefaultMaxMediaBytes.
	MaxMediaBytes int64
	// MediaClient fetches outbound media URLs (which the model may
	// choose); nil means the egress client, which refuses private and
	// metadata addresses. Tests of local servers set their own.
	MediaClient *http.Client
	// HTTPClient makes the requests; nil means bridges.APIHTTPClient().
	HTTPClient *http.Client
	// Log receives connection events; nil discards them.
	Log *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// After waits out rate limits on the clock of Now; nil means
	// time.After.
	After func(time.Duration) <-chan time.Time
	// Backoff paces the retries of auth.test and of Socket Mode
	// connections after transient failures; the zero value is 1 s
	// doubling to 60 s, its jitter narrowed to the top fifth of each step
	// (bridges.NarrowJitter). A rate limit's Retry-After, when longer,
	// wins.
	Backoff bridges.Backoff
	// Sleep waits between retries; nil means a timer (bridges.Sleep).
	// Tests make time virtual with it.
	Sleep func(ctx context.Context, d time.Duration) bool
}

// Bridge is the Slack bridge, in Socket Mode or over HTTP. Build it with
// New.
type Bridge struct {
	opts        Options
	mediaClient *http.Client
	api         *slackapi.Client
	tracker     *bridges.Tracker
	mentions    bridges.Mentions

	pace *pacer
	// httpBudget bounds the handling of one Events API request, so Slack
	// has its answer before its 3 s timeout even when the journal is
	// stuck.
	httpBudget time.Duration
	// authTimeout bounds one auth.test: the default HTTP client has no
	// timeout, and a network that drops packets would otherwise hold
	// Start in its first attempt for good.
	authTimeout time.Duration

	mu    sync.Mutex
	botID string // the bot's user id, from auth.test
	team  string
	sink  bridges.Sink // set while Start runs (HTTP mode)
}

var (
	_ bridges.Bridge  = (*Bridge)(nil)
	_ bridges.Reactor = (*Bridge)(nil)
)

// New validates the options and builds the bridge; it does no network IO.
func New(opts Options) (*Bridge, error) {
	if opts.BotToken == "" || (opts.AppToken == "" && opts.HTTP == nil) {
		return nil, errors.New("slack: botToken (xoxb-…) and appToken (xapp-…, for Socket Mode) are required")
	}
	if opts.HTTP != nil && opts.HTTP.SigningSecret == "" {
		return nil, errors.New("slack: the Events API over HTTP needs the app's signing secret")
	}
	if opts.AccountID == "" {
		opts.AccountID = "default"
	}
	if opts.AgentID == "" {
		opts.AgentID = core.DefaultAgentID
	}
	if opts.ChunkLimit <= 0 {
		opts.ChunkLimit = DefaultChunkLimit
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = bridges.APIHTTPClient()
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.After == nil {
		opts.After = time.After
	}
	if opts.MaxMediaBytes <= 0 {
		opts.MaxMediaBytes = bridges.DefaultMaxMediaBytes
	}
	if opts.Sleep == nil {
		opts.Sleep = bridges.Sleep
	}
	if opts.Backoff.Rand == nil {
		opts.Backoff.Rand = bridges.NarrowJitter
	}
	mentions, err := bridges.NewMentions(opts.MentionPatterns)
	if err != nil {
		return nil, fmt.Errorf("slack: %w", err)
	}
	apiOpts := []slackapi.Option{slackapi.OptionAppLevelToken(opts.AppToken), slackapi.OptionHTTPClient(opts.HTTPClient)}
	if opts.APIURL != "" {
		apiOpts = append(apiOpts, slackapi.OptionAPIURL(opts.APIURL))
	}
	return &Bridge{
		mediaClient: bridges.MediaClient(opts.MediaClient, opts.MaxMediaBytes),
		opts:        opts, api: slackapi.New(opts.BotToken, apiOpts...), mentions: mentions,
		tracker:     bridges.NewTracker(Channel, opts.AccountID, opts.Now, nil),
		pace:        newPacer(opts.Now, opts.After),
		httpBudget:  defaultHTTPBudget,
		authTimeout: defaultAuthTimeout,
	}, nil
}

// Name implements bridges.Bridge.
func (b *Bridge) Name() string { return Channel }

// AccountID implements bridges.Bridge.
func (b *Bridge) AccountID() string { return b.opts.AccountID }

// Status implements bridges.Bridge.
func (b *Bridge) Status() bridges.Status { return b.tracker.Status() }

func (b *Bridge) setState(sink bridges.Sink, s bridges.State, err error) {
	b.tracker.Set(s, err)
	sink.State(s, err)
}

// terminal reports Slack errors no retry can fix.
func terminal(err error) bool {
	var se slackapi.SlackErrorResponse
	if errors.As(err, &se) {
		switch se.Err {
		case "invalid_auth", "account_inactive", "token_revoked", "not_authed", "not_allowed_token_type":
			return true
		}
	}
	return strings.Contains(err.Error(), "invalid_auth") || strings.Contains(err.Error(), "account_inactive")
}

// Start implements bridges.Bridge: auth.test, then Socket Mode (or the
// Events API over HTTP) until ctx ends. A token Slack refuses ends it with
// StateBadCredentials, and a listen address that cannot be bound with
// StateFailed; every other failure (Slack unreachable, 5xx, rate limits,
// a lost connection) is reported as StateTransientDisconnect and tried
// again after Options.Backoff, for as long as ctx lasts.
func (b *Bridge) Start(ctx context.Context, sink bridges.Sink) error {
	b.setState(sink, bridges.StateStarting, nil)
	defer func() {
		if !b.tracker.Status().State.Terminal() {
			b.setState(sink, bridges.StateStopped, nil)
		}
	}()
	var events *eventServer
	if h := b.opts.HTTP; h != nil && h.Listen != "" {
		// Bound before auth.test: a wrong address is the owner's to fix,
		// and it should say so at once rather than after an outage.
		var err error
		if events, err = b.listen(ctx); err != nil {
			err = fmt.Errorf("slack: cannot listen on %s (%w); check channels.slack.http.listen", h.Listen, err)
			b.setState(sink, bridges.StateFailed, err)
			return err
		}
		defer events.stop()
	}
	auth, err := b.authTest(ctx, sink)
	if auth == nil {
		return err // nil when ctx ended
	}
	b.mu.Lock()
	b.botID, b.team, b.sink = auth.UserID, auth.TeamID, sink
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.sink = nil
		b.mu.Unlock()
	}()
	if b.opts.HTTP != nil {
		return b.serveHTTP(ctx, sink, events)
	}
	return b.runSocket(ctx, sink)
}

// authTest calls auth.test until Slack answers, which names the bot. A
// refused token is terminal: StateBadCredentials, and the error is
// returned. Any other failure is reported as StateTransientDisconnect and
// retried after the backoff. It returns nil, nil when ctx ends.
func (b *Bridge) authTest(ctx context.Context, sink bridges.Sink) (*slackapi.AuthTestResponse, error) {
	for attempt := 0; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, b.authTimeout)
		auth, err := b.api.AuthTestContext(actx)
		cancel()
		if err == nil {
			return auth, nil
		}
		if ctx.Err() != nil {
			return nil, nil
		}
		err = b.redact(err)
		if terminal(err) {
			err = fmt.Errorf("slack refused the bot token (%w); check channels.slack.botToken", err)
			b.setState(sink, bridges.StateBadCredentials, err)
			return nil, err
		}
		delay := b.retryDelay(attempt, err)
		b.setState(sink, bridges.StateTransientDisconnect, bridges.RetryIn(rateLimited(fmt.Errorf("slack: auth.test: %w", err)), delay))
		b.opts.Log.Warn("slack: auth.test failed; retrying", "err", err, "in", delay)
		if !b.opts.Sleep(ctx, delay) {
			return nil, nil
		}
	}
}

// rateLimited returns err summarized as a rate limit when Slack said it
// was one.
func rateLimited(err error) error {
	var rl *slackapi.RateLimitedError
	if errors.As(err, &rl) {
		return bridges.Summarized(err, "rate limited by Slack")
	}
	return err
}

// retryDelay is the wait before retry number attempt after err: the
// backoff's delay, or Slack's Retry-After when err is a rate limit that
// asks for longer.
func (b *Bridge) retryDelay(attempt int, err error) time.Duration {
	d := b.opts.Backoff.Delay(attempt)
	var rl *slackapi.RateLimitedError
	if errors.As(err, &rl) && rl.RetryAfter > d {
		d = rl.RetryAfter
	}
	return d
}

// redact removes the bridge's tokens from an error's text; the chain
// stays, so errors.As still finds what it wraps.
func (b *Bridge) redact(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := msg
	for _, tok := range []string{b.opts.BotToken, b.opts.AppToken} {
		if tok != "" {
			clean = strings.ReplaceAll(clean, tok, "[token]")
		}
	}
	if clean == msg {
		return err
	}
	return redactedError{msg: clean, err: err}
}

// redactedError is an error whose text had a token removed.
type redactedError struct {
	msg string
	err error
}

func (e redactedError) Error() string { return e.msg }
func (e redactedError) Unwrap() error { return e.err }
