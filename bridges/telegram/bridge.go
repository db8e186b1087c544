package telegram

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/markup"
	"github.com/switchboardhq/switchboard/core"
)

// DefaultAPIURL is Telegram's public Bot API server.
const DefaultAPIURL = "https://api.telegram.org"

// DefaultChunkLimit is the longest message the bridge sends in one piece
// (Telegram allows 4096; openclaw-facts §5.3).
const DefaultChunkLimit = 4000

// OffsetStore keeps the getUpdates offset across restarts; *store.SQLite
// implements it.
type OffsetStore interface {
	ChannelOffset(ctx context.Context, channel, accountID string) (string, error)
	SetChannelOffset(ctx context.Context, channel, accountID, value string) error
}

// Options configure a Bridge.
type Options struct {
	// Token is the bot token from @BotFather (required). It is a secret:
	// the bridge never logs it or puts it in an error.
	Token string
	// APIURL is the Bot API server; empty means DefaultAPIURL. Any server
	// that implements the Bot API works (a self-hosted telegram-bot-api).
	APIURL string
	// AccountID names the bot account; empty means "default".
	AccountID string
	// AgentID is the agent whose sessions the bridge keys; empty: main.
	AgentID string
	// Session decides how direct chats map to sessions.
	Session core.SessionConfig
	// PollTimeout is getUpdates' long-poll timeout; zero means 30 s.
	PollTimeout time.Duration
	// ChunkLimit is the longest message sent in one piece; zero means
	// DefaultChunkLimit.
	ChunkLimit int
	// MentionPatterns are regular expressions (case-insensitive) that
	// address the bot in a group besides @mentions.
	MentionPatterns []string
	// ChunkMode is how long answers are split (markup.ModeLength by
	// default, or markup.ModeNewline).
	ChunkMode markup.Mode
	// LockDir, when set, holds a lock file named after the token's hash
	// while the bridge polls (the daemon uses the state directory), so two
	// pollers of one bot from the same directory cannot fight.
	LockDir string
	// MediaDir is where inbound attachments are saved (the daemon uses
	// <stateDir>/media/telegram); empty skips downloads.
	MediaDir string
	// MaxMediaBytes caps one attachment; zero means DefaultMaxMediaBytes.
	MaxMediaBytes int64
	// Webhook, when set, receives updates over HTTP instead of long
	// polling.
	Webhook *WebhookOptions
	// Offsets persists the poll position; nil keeps it in memory only
	// (redelivered updates are still answered once, by the journal's
	// dedupe).
	Offsets OffsetStore
	// HTTPClient makes the requests; nil means bridges.APIHTTPClient()
	// (the long poll sets its own timeout).
	HTTPClient *http.Client
	// Backoff paces reconnects; the zero value is 1 s doubling to 60 s.
	Backoff bridges.Backoff
	// Commands are registered with setMyCommands at start; nil means
	// DefaultCommands.
	Commands []models.BotCommand
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Log receives connection events; nil discards them.
	Log *slog.Logger
}

// DefaultCommands are the commands shown in Telegram's menu.
var DefaultCommands = []models.BotCommand{
	{Command: "new", Description: "Start a new conversation"},
	{Command: "reset", Description: "Start a new conversation"},
	{Command: "stop", Description: "Stop the current reply"},
	{Command: "queue", Description: "Show or change how messages queue"},
	{Command: "status", Description: "Show the session's status"},
}

// Bridge is the Telegram bridge. Build it with New.
type Bridge struct {
	opts    Options
	api     *bot.Bot
	tracker *bridges.Tracker
	pace    *pacer

	mu   sync.Mutex
	norm normalizer
	sink bridges.Sink // set while Start runs (webhook mode)
}

var (
	_ bridges.Bridge = (*Bridge)(nil)
	_ bridges.Typer  = (*Bridge)(nil)
)

// New validates the options and builds the bridge; it does no network IO.
func New(opts Options) (*Bridge, error) {
	if opts.Token == "" {
		return nil, errors.New("telegram: botToken is required (from @BotFather; keep it in the environment: botToken: ${TELEGRAM_BOT_TOKEN})")
	}
	if opts.APIURL == "" {
		opts.APIURL = DefaultAPIURL
	}
	if opts.AccountID == "" {
		opts.AccountID = "default"
	}
	if opts.AgentID == "" {
		opts.AgentID = core.DefaultAgentID
	}
	if opts.PollTimeout <= 0 {
		opts.PollTimeout = 30 * time.Second
	}
	if opts.Webhook != nil {
		wh := *opts.Webhook
		if err := wh.validate(); err != nil {
			return nil, err
		}
		opts.Webhook = &wh
	}
	if opts.MaxMediaBytes <= 0 {
		opts.MaxMediaBytes = DefaultMaxMediaBytes
	}
	if opts.ChunkLimit <= 0 {
		opts.ChunkLimit = DefaultChunkLimit
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = bridges.APIHTTPClient()
	}
	if opts.Commands == nil {
		opts.Commands = DefaultCommands
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	api, err := bot.New(opts.Token,
		bot.WithServerURL(opts.APIURL),
		bot.WithSkipGetMe(),
		bot.WithHTTPClient(opts.PollTimeout+15*time.Second, opts.HTTPClient),
		bot.WithErrorsHandler(func(error) {}),
		bot.WithDefaultHandler(func(context.Context, *bot.Bot, *models.Update) {}),
	)
	if err != nil {
		return nil, fmt.Errorf("telegram: %w", err)
	}
	b := &Bridge{opts: opts, api: api, tracker: bridges.NewTracker(Channel, opts.AccountID, opts.Now, nil), pace: &pacer{now: opts.Now}}
	mentions, err := bridges.NewMentions(opts.MentionPatterns)
	if err != nil {
		return nil, fmt.Errorf("telegram: %w", err)
	}
	b.norm = normalizer{accountID: opts.AccountID, agentID: opts.AgentID, session: opts.Session, mentions: mentions}
	return b, nil
}

// Name implements bridges.Bridge.
func (b *Bridge) Name() string { return Channel }

// AccountID implements bridges.Bridge.
func (b *Bridge) AccountID() string { return b.opts.AccountID }

// Status implements bridges.Bridge.
func (b *Bridge) Status() bridges.Status { return b.tracker.Status() }

// setState records and reports a state.
func (b *Bridge) setState(sink bridges.Sink, s bridges.State, err error) {
	if b.tracker.Status().State != s {
		if err != nil {
			b.opts.Log.Warn("telegram", "state", string(s), "err", err)
		} else {
			b.opts.Log.Info("telegram", "state", string(s))
		}
	}
	b.tracker.Set(s, err)
	sink.State(s, err)
}

// Start implements bridges.Bridge: it learns who the bot is (getMe),
// registers the commands, and long-polls until ctx ends. A refused token is
// terminal (bad-credentials); everything else is retried with backoff.
func (b *Bridge) Start(ctx context.Context, sink bridges.Sink) error {
	b.setState(sink, bridges.StateStarting, nil)
	defer func() {
		// A terminal state (a refused token) stays visible in
		// channels.status; otherwise the bridge is now stopped.
		if !b.tracker.Status().State.Terminal() {
			b.setState(sink, bridges.StateStopped, nil)
		}
	}()

	me, err := b.hello(ctx, sink)
	if err != nil || ctx.Err() != nil {
		return err
	}
	b.mu.Lock()
	b.norm.bot = identity{id: me.ID, username: me.Username}
	norm := b.norm
	b.sink = sink
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.sink = nil
		b.mu.Unlock()
	}()
	if b.opts.Webhook != nil {
		return b.runWebhook(ctx, sink)
	}

	if b.opts.LockDir != "" {
		lock, err := b.lockPolling(ctx, sink)
		if err != nil || lock == nil {
			return err
		}
		defer lock.release()
	}
	// The offset belongs to the bot, not the account name: renaming the
	// account must not replay or skip updates (reliability matrix row 6).
	offsetKey := "bot:" + strconv.FormatInt(me.ID, 10)
	offset := int64(0)
	if b.opts.Offsets != nil {
		if v, err := b.opts.Offsets.ChannelOffset(ctx, Channel, offsetKey); err == nil && v != "" {
			offset, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	failures := 0
	for ctx.Err() == nil {
		updates, err := b.getUpdates(ctx, offset)
		if err == nil {
			failures = 0
			b.setState(sink, bridges.StateConnected, nil)
			next, err := b.handle(ctx, sink, norm, updates, offset)
			if next != offset {
				offset = next
				if b.opts.Offsets != nil {
					if err := b.opts.Offsets.SetChannelOffset(context.WithoutCancel(ctx), Channel, offsetKey, strconv.FormatInt(offset, 10)); err != nil {
						b.opts.Log.Warn("telegram: offset not saved (updates may be redelivered, and answered once)", "err", err)
					}
				}
			}
			if err == nil {
				continue
			}
			// The sink refused: nothing after offset was confirmed, so
			// Telegram delivers it again.
			b.opts.Log.Warn("telegram: update not accepted; retrying", "err", err)
		}
		if ctx.Err() != nil {
			break
		}
		kind, retryAfter := classify(err)
		delay := b.opts.Backoff.Delay(failures)
		failures++
		switch kind {
		case kindBadToken:
			err = fmt.Errorf("telegram refused the bot token (%w); check channels.telegram.botToken", err)
			b.setState(sink, bridges.StateBadCredentials, err)
			return err
		case kindConflict:
			b.setState(sink, bridges.StateConflict, bridges.RetryIn(fmt.Errorf("another client is reading this bot's updates (a second Switchboard or a webhook): %w", err), delay))
		case kindRateLimited:
			delay = retryAfter
			b.setState(sink, bridges.StateTransientDisconnect, bridges.RetryIn(bridges.Summarized(err, "rate limited by Telegram"), delay))
		default:
			b.setState(sink, bridges.StateTransientDisconnect, bridges.RetryIn(err, delay))
		}
		if !bridges.Sleep(ctx, delay) {
			break
		}
	}
	return nil
}

// hello calls getMe until it works, deletes a webhook (polling and a
// webhook cannot coexist) and registers the commands.
func (b *Bridge) hello(ctx context.Context, sink bridges.Sink) (*models.User, error) {
	for attempt := 0; ; attempt++ {
		me, err := b.api.GetMe(ctx)
		if err == nil {
			if b.opts.Webhook == nil {
				if _, err := b.api.DeleteWebhook(ctx, &bot.DeleteWebhookParams{}); err != nil {
					b.opts.Log.Warn("telegram: deleteWebhook failed", "err", b.redact(err))
				}
			}
			if _, err := b.api.SetMyCommands(ctx, &bot.SetMyCommandsParams{Commands: b.opts.Commands}); err != nil {
				b.opts.Log.Warn("telegram: setMyCommands failed", "err", b.redact(err))
			}
			return me, nil
		}
		if ctx.Err() != nil {
			return nil, nil
		}
		err = b.redact(err)
		kind, retryAfter := classify(err)
		if kind == kindBadToken {
			err = fmt.Errorf("telegram refused the bot token (%w); check channels.telegram.botToken", err)
			b.setState(sink, bridges.StateBadCredentials, err)
			return nil, err
		}
		delay := b.opts.Backoff.Delay(attempt)
		if kind == kindRateLimited {
			delay = retryAfter
			err = bridges.Summarized(err, "rate limited by Telegram")
		}
		b.setState(sink, bridges.StateTransientDisconnect, bridges.RetryIn(err, delay))
		if !bridges.Sleep(ctx, delay) {
			return nil, nil
		}
	}
}

// handle gives each update to the sink in order and returns the offset
// after the last one accepted; on a sink error it stops there.
func (b *Bridge) handle(ctx context.Context, sink bridges.Sink, norm normalizer, updates []*models.Update, offset int64) (int64, error) {
	for _, upd := range updates {
		if upd == nil || upd.ID < offset {
			continue
		}
		msg, why, ok := norm.normalize(upd)
		if ok {
			b.fetchMedia(ctx, upd.Message, msg.Message)
			if err := sink.Submit(ctx, msg); err != nil {
				return offset, err
			}
			b.tracker.Inbound()
		} else {
			b.opts.Log.Debug("telegram: update not answered", "update", upd.ID, "why", why)
		}
		offset = upd.ID + 1
	}
	return offset, nil
}

// chatID parses a route's chat id.
func chatID(route core.Route) (int64, error) {
	id, err := strconv.ParseInt(string(route.To), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("telegram: chat id %q is not a number", route.To)
	}
	return id, nil
}

// threadID is the message_thread_id to send with, 0 for none. The
// General topic (1) must not be named for typing (openclaw-facts §5.4).
func threadID(route core.Route, forTyping bool) int {
	t, _ := strconv.Atoi(route.ThreadID)
	if forTyping && t == generalTopic {
		return 0
	}
	return t
}

// Typing implements bridges.Typer.
func (b *Bridge) Typing(ctx context.Context, route core.Route) error {
	id, err := chatID(route)
	if err != nil {
		return err
	}
	_, err = b.api.SendChatAction(ctx, &bot.SendChatActionParams{ChatID: id, MessageThreadID: threadID(route, true), Action: models.ChatActionTyping})
	return b.redact(err)
}

var _ bridges.Reactor = (*Bridge)(nil)

// React implements bridges.Reactor with setMessageReaction.
func (b *Bridge) React(ctx context.Context, route core.Route, messageID bridges.MessageID, emoji string) error {
	id, err := chatID(route)
	if err != nil {
		return err
	}
	mid, err := strconv.Atoi(string(messageID))
	if err != nil {
		return fmt.Errorf("telegram: message id %q is not a number", messageID)
	}
	_, err = b.api.SetMessageReaction(ctx, &bot.SetMessageReactionParams{ChatID: id, MessageID: mid, Reaction: []models.ReactionType{{
		Type: models.ReactionTypeTypeEmoji, ReactionTypeEmoji: &models.ReactionTypeEmoji{Type: models.ReactionTypeTypeEmoji, Emoji: emoji},
	}}})
	return b.redact(err)
}

// lockPolling takes the token's poll lock, waiting (state conflict) while
// another poller holds it. It returns nil, nil when ctx ends first.
func (b *Bridge) lockPolling(ctx context.Context, sink bridges.Sink) (*pollLock, error) {
	for attempt := 0; ; attempt++ {
		lock, ok, err := acquirePollLock(b.opts.LockDir, b.opts.Token)
		if err != nil {
			err = fmt.Errorf("telegram: poll lock in %s: %w", b.opts.LockDir, err)
			b.setState(sink, bridges.StateTransientDisconnect, err)
			return nil, err
		}
		if ok {
			return lock, nil
		}
		delay := b.opts.Backoff.Delay(attempt)
		b.setState(sink, bridges.StateConflict, bridges.RetryIn(errors.New("another Switchboard on this machine is polling this bot (its lock is in "+b.opts.LockDir+"); stop it or use another bot token"), delay))
		if !bridges.Sleep(ctx, delay) {
			return nil, nil
		}
	}
}
