package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
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
	// HTTPClient makes the requests; nil means http.DefaultClient.
	HTTPClient *http.Client
	// Log receives connection events; nil discards them.
	Log *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Bridge is the Slack bridge, in Socket Mode. Build it with New.
type Bridge struct {
	opts     Options
	api      *slackapi.Client
	tracker  *bridges.Tracker
	mentions bridges.Mentions

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
	mentions, err := bridges.NewMentions(opts.MentionPatterns)
	if err != nil {
		return nil, fmt.Errorf("slack: %w", err)
	}
	apiOpts := []slackapi.Option{slackapi.OptionAppLevelToken(opts.AppToken), slackapi.OptionHTTPClient(opts.HTTPClient)}
	if opts.APIURL != "" {
		apiOpts = append(apiOpts, slackapi.OptionAPIURL(opts.APIURL))
	}
	return &Bridge{
		opts: opts, api: slackapi.New(opts.BotToken, apiOpts...), mentions: mentions,
		tracker: bridges.NewTracker(Channel, opts.AccountID, opts.Now, nil),
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
			b.event(ctx, smc, sink, evt)
		}
	}
}

// event handles one Socket Mode event; an events_api envelope is acked
// only after the sink has taken its message.
func (b *Bridge) event(ctx context.Context, smc *socketmode.Client, sink bridges.Sink, evt socketmode.Event) {
	switch evt.Type {
	case socketmode.EventTypeConnected:
		b.setState(sink, bridges.StateConnected, nil)
	case socketmode.EventTypeConnectionError, socketmode.EventTypeDisconnect:
		b.setState(sink, bridges.StateTransientDisconnect, fmt.Errorf("slack socket mode: %s", evt.Type))
	case socketmode.EventTypeInvalidAuth:
		b.setState(sink, bridges.StateBadCredentials, errors.New("slack refused the app token (invalid_auth)"))
	case socketmode.EventTypeEventsAPI:
		outer, ok := evt.Data.(slackevents.EventsAPIEvent)
		if !ok || evt.Request == nil {
			return
		}
		if msg, ok := b.normalize(outer); ok {
			if err := sink.Submit(ctx, msg); err != nil {
				// Not acked: Slack delivers the envelope again.
				b.opts.Log.Warn("slack: event not accepted; Slack will retry", "err", err)
				return
			}
			b.tracker.Inbound()
		}
		_ = smc.AckCtx(ctx, evt.Request.EnvelopeID, nil)
	}
}

// normalize turns an Events API callback into a gated inbound message.
func (b *Bridge) normalize(outer slackevents.EventsAPIEvent) (bridges.Inbound, bool) {
	b.mu.Lock()
	botID := b.botID
	b.mu.Unlock()
	eventID := ""
	if cb, ok := outer.Data.(*slackevents.EventsAPICallbackEvent); ok {
		eventID = cb.EventID
	}
	var c conversation
	var text, user string
	mentioned := false
	switch ev := outer.InnerEvent.Data.(type) {
	case *slackevents.MessageEvent:
		if ev.SubType != "" && ev.SubType != "file_share" && ev.SubType != "thread_broadcast" {
			return bridges.Inbound{}, false // edits, deletions, joins, bot messages
		}
		if ev.BotID != "" || ev.User == "" || ev.User == botID {
			return bridges.Inbound{}, false
		}
		if ev.ChannelType != "im" && botID != "" && strings.Contains(ev.Text, "<@"+botID+">") {
			// The app_mention event of the same message answers it.
			return bridges.Inbound{}, false
		}
		c = conversation{ChannelType: ev.ChannelType, ChannelID: ev.Channel, UserID: ev.User, TS: ev.TimeStamp, ThreadTS: ev.ThreadTimeStamp}
		text, user = ev.Text, ev.User
	case *slackevents.AppMentionEvent:
		if ev.BotID != "" || ev.User == botID {
			return bridges.Inbound{}, false
		}
		kind := "channel"
		if strings.HasPrefix(ev.Channel, "G") {
			kind = "group"
		}
		c = conversation{ChannelType: kind, ChannelID: ev.Channel, UserID: ev.User, TS: ev.TimeStamp, ThreadTS: ev.ThreadTimeStamp}
		text, user, mentioned = ev.Text, ev.User, true
	default:
		return bridges.Inbound{}, false
	}
	key, kind := sessionKey(b.opts.AgentID, b.opts.AccountID, b.opts.Session, c)
	body := strings.TrimSpace(strings.ReplaceAll(text, "<@"+botID+">", ""))
	if botID == "" {
		body = strings.TrimSpace(text)
	}
	in := &core.Inbound{
		Kind: core.InboundUser, AgentID: b.opts.AgentID, Surface: Channel, SessionKey: key, ChatType: kind,
		Body: body, MessageID: c.TS, Timestamp: tsMillis(c.TS),
		Sender:       core.Sender{ID: user},
		Route:        core.Route{Channel: Channel, AccountID: b.opts.AccountID, To: c.ChannelID},
		WasMentioned: mentioned || b.mentions.Match(text),
	}
	if c.ThreadTS != "" {
		in.Route.ThreadID = c.ThreadTS
	}
	msg := bridges.Inbound{Message: in, CanDetectMention: true, DedupeKey: "slack:" + outer.TeamID + ":event:" + eventID}
	if eventID == "" {
		msg.DedupeKey = ""
	}
	if kind != core.ChatDirect {
		msg.GroupID = c.ChannelID
		msg.HistoryKey = core.GroupHistoryKey(Channel, b.opts.AccountID, kind, c.ChannelID)
		msg.IsControlCommand = strings.HasPrefix(body, "/")
	}
	return msg, true
}

// tsMillis turns a Slack ts ("1700000000.000100") into Unix milliseconds.
func tsMillis(ts string) int64 {
	sec, frac, _ := strings.Cut(ts, ".")
	var s, f int64
	fmt.Sscan(sec, &s)
	if len(frac) >= 3 {
		fmt.Sscan(frac[:3], &f)
	}
	return s*1000 + f
}

// Deliver implements bridges.Bridge: markdown becomes mrkdwn in chunks of
// at most ChunkLimit, posted in the route's thread when it has one; with a
// ledger, chunks already sent are skipped.
func (b *Bridge) Deliver(ctx context.Context, out bridges.Outbound) (bridges.Receipt, error) {
	var rc bridges.Receipt
	if strings.TrimSpace(out.Text) == "" {
		return rc, nil
	}
	chunks := markup.RenderChunks(out.Text, markup.Slack, b.opts.ChunkLimit, markup.ModeLength)
	thread := out.Route.ThreadID
	if thread == "" && out.ReplyToMessageID != "" {
		thread = string(out.ReplyToMessageID)
	}
	for i, chunk := range chunks {
		sent, err := bridges.SendOnce(ctx, out, strconv.Itoa(i), func() (bridges.MessageID, error) {
			opts := []slackapi.MsgOption{slackapi.MsgOptionText(chunk, false)}
			if thread != "" {
				opts = append(opts, slackapi.MsgOptionTS(thread))
			}
			ts, err := b.post(ctx, out.Route.To, opts)
			if err != nil {
				return "", fmt.Errorf("slack: sending chunk %d of %d: %w", i+1, len(chunks), err)
			}
			b.tracker.Outbound()
			return bridges.MessageID(ts), nil
		})
		if sent != "" {
			rc.MessageIDs = append(rc.MessageIDs, sent)
		}
		if err != nil {
			return rc, err
		}
	}
	return rc, nil
}

// post sends one message, waiting out rate limits (Retry-After).
func (b *Bridge) post(ctx context.Context, channel string, opts []slackapi.MsgOption) (string, error) {
	for attempt := 0; ; attempt++ {
		_, ts, err := b.api.PostMessageContext(ctx, channel, opts...)
		if err == nil {
			return ts, nil
		}
		var rl *slackapi.RateLimitedError
		if !errors.As(err, &rl) || attempt >= 4 {
			return "", err
		}
		t := time.NewTimer(rl.RetryAfter)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", ctx.Err()
		case <-t.C:
		}
	}
}

// React implements bridges.Reactor with reactions.add; Slack names
// emoji, so the common ack emoji are translated.
func (b *Bridge) React(ctx context.Context, route core.Route, messageID bridges.MessageID, emoji string) error {
	name := emojiNames[emoji]
	if name == "" {
		name = strings.Trim(emoji, ":")
	}
	return b.api.AddReactionContext(ctx, name, slackapi.ItemRef{Channel: route.To, Timestamp: string(messageID)})
}

var emojiNames = map[string]string{"👀": "eyes", "👍": "+1", "✅": "white_check_mark", "⏳": "hourglass_flowing_sand"}

// discardLogger silences the socketmode client's own log.
type discardLogger struct{}

func (discardLogger) Output(int, string) error { return nil }
