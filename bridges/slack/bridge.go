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
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/markup"
	"github.com/switchboardhq/switchboard/core"
)

// DefaultChunkLimit is the longest message sent in one piece
// (openclaw-facts §5.3).
const DefaultChunkLimit = markup.SlackLimit

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
	// HTTPClient makes the requests; nil means http.DefaultClient.
	HTTPClient *http.Client
	// Log receives connection events; nil discards them.
	Log *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// After waits out rate limits on the clock of Now; nil means
	// time.After.
	After func(time.Duration) <-chan time.Time
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
		opts.HTTPClient = http.DefaultClient
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
		tracker:    bridges.NewTracker(Channel, opts.AccountID, opts.Now, nil),
		pace:       newPacer(opts.Now, opts.After),
		httpBudget: defaultHTTPBudget,
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

// Start implements bridges.Bridge: auth.test, then Socket Mode until ctx
// ends. invalid_auth and account_inactive are terminal; everything else
// reconnects (the socketmode client backs off by itself).
func (b *Bridge) Start(ctx context.Context, sink bridges.Sink) error {
	b.setState(sink, bridges.StateStarting, nil)
	defer func() {
		if !b.tracker.Status().State.Terminal() {
			b.setState(sink, bridges.StateStopped, nil)
		}
	}()
	auth, err := b.api.AuthTestContext(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		if terminal(err) {
			err = fmt.Errorf("slack refused the bot token (%w); check channels.slack.botToken", err)
			b.setState(sink, bridges.StateBadCredentials, err)
			return err
		}
		b.setState(sink, bridges.StateTransientDisconnect, err)
		return err
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
		return b.serveHTTP(ctx, sink)
	}

	smc := socketmode.New(b.api, socketmode.OptionLog(discardLogger{}))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	runErr := make(chan error, 1)
	go func() { runErr <- smc.RunContext(ctx) }()
	// Acks are sent off this loop (see event); they end with ctx.
	var acks sync.WaitGroup
	defer acks.Wait()
	// Events are journaled by one worker, in the order they came, while
	// this loop keeps reading: a socket left unread while the journal is
	// busy is closed by Slack, and what was in flight comes back only as
	// retries, out of order (the 1,000 messages/s run reordered that way).
	backlog := make(chan socketmode.Event, socketBacklog)
	worker := make(chan struct{})
	go func() {
		defer close(worker)
		for {
			select {
			case <-ctx.Done():
				return
			case evt := <-backlog:
				b.event(ctx, smc, sink, evt, &acks)
			}
		}
	}()
	defer func() { <-worker }()
	defer cancel()
	for {
		select {
		case err := <-runErr:
			if ctx.Err() != nil {
				return nil
			}
			if err != nil && terminal(err) {
				err = fmt.Errorf("slack refused the app token (%w); check channels.slack.appToken", err)
				b.setState(sink, bridges.StateBadCredentials, err)
				return err
			}
			return err
		case evt := <-smc.Events:
			if evt.Type != socketmode.EventTypeEventsAPI {
				b.event(ctx, smc, sink, evt, &acks)
				continue
			}
			select {
			case backlog <- evt:
			case <-ctx.Done():
			}
		}
	}
}

// socketBacklog is how many received events may wait for the journal;
// past it the socket is read no faster than they are journaled.
const socketBacklog = 4096

// event handles one Socket Mode event; an events_api envelope is acked
// only after the sink has taken its message. The ack is sent on its own
// goroutine: slack-go queues it for a writer that, when a write fails,
// blocks on the Events channel this loop drains, so an ack sent from the
// loop could wait forever (the 3,000-session load stalled that way).
func (b *Bridge) event(ctx context.Context, smc *socketmode.Client, sink bridges.Sink, evt socketmode.Event, acks *sync.WaitGroup) {
	switch evt.Type {
	case socketmode.EventTypeConnected:
		b.setState(sink, bridges.StateConnected, nil)
	case socketmode.EventTypeConnectionError, socketmode.EventTypeDisconnect:
		if ctx.Err() != nil {
			return // shutting down: the bridge is stopping, not failing
		}
		b.setState(sink, bridges.StateTransientDisconnect, fmt.Errorf("slack socket mode: %s", evt.Type))
	case socketmode.EventTypeInvalidAuth:
		b.setState(sink, bridges.StateBadCredentials, errors.New("slack refused the app token (invalid_auth)"))
	case socketmode.EventTypeEventsAPI:
		outer, ok := evt.Data.(slackevents.EventsAPIEvent)
		if !ok || evt.Request == nil {
			return
		}
		if err := b.handle(ctx, sink, outer); err != nil {
			// Not acked: Slack delivers the envelope again.
			b.opts.Log.Warn("slack: event not accepted; Slack will retry", "err", b.redact(err))
			return
		}
		id := evt.Request.EnvelopeID
		acks.Add(1)
		go func() {
			defer acks.Done()
			_ = smc.AckCtx(ctx, id, nil)
		}()
	}
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

// discardLogger silences the socketmode client's own log.
type discardLogger struct{}

func (discardLogger) Output(int, string) error { return nil }
