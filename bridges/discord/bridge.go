package discord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/markup"
	"github.com/switchboardhq/switchboard/core"
)

// DefaultChunkLimit is the longest message sent in one piece
// (openclaw-facts §5.3); markup also keeps each piece to 17 lines.
const DefaultChunkLimit = markup.DiscordLimit

// Intents is what the bridge asks the gateway for: guilds (channel and
// thread bookkeeping), guild messages, direct messages and message
// content (a privileged intent to enable in the Developer Portal).
const Intents = int(discordgo.IntentsGuilds | discordgo.IntentsGuildMessages | discordgo.IntentsDirectMessages | discordgo.IntentMessageContent)

// Options configure a Bridge.
type Options struct {
	// Token is the bot token (without "Bot "); a secret.
	Token string
	// AccountID names the bot account; empty means "default".
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
	// AllowBots lets messages of other bots through (the bot's own never).
	AllowBots bool
	// MediaDir is where inbound attachments are saved; empty skips them.
	MediaDir string
	// MaxMediaBytes caps one attachment in or out; zero means
	// bridges.DefaultMaxMediaBytes.
	MaxMediaBytes int64
	// MediaClient fetches outbound media URLs (which the model may
	// choose); nil means the egress client, which refuses private and
	// metadata addresses. Tests of local servers set their own.
	MediaClient *http.Client
	// APIURL, when set, replaces Discord's REST base
	// (https://discord.com/api/v9/): a REST proxy, or a test server.
	APIURL string
	// HTTPClient makes REST requests and downloads; nil means
	// bridges.APIHTTPClient(). The gateway dials on its own.
	HTTPClient *http.Client
	// Backoff paces reconnects; the zero value is 1 s doubling to 60 s.
	// Its jitter is narrowed to the top fifth of each step, so a long
	// outage costs at most 17 connection attempts in 10 minutes.
	Backoff bridges.Backoff
	// Sleep waits between reconnects; nil means a timer. Tests make time
	// virtual with it.
	Sleep func(ctx context.Context, d time.Duration) bool
	// HelloTimeout is how long a connection may wait for Hello; zero means
	// 30 s.
	HelloTimeout time.Duration
	// Positions persists the newest message taken in each channel, so a
	// restarted bridge fetches what was written while it was down (Discord
	// does not replay it to a new session); nil keeps them in memory only.
	Positions PositionStore
	// Log receives connection events; nil discards them.
	Log *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// PositionStore keeps per-channel stream positions; the state store
// implements it.
type PositionStore interface {
	ChannelOffsets(ctx context.Context, channel, prefix string) (map[string]string, error)
	SetChannelOffset(ctx context.Context, channel, accountID, value string) error
}

// Bridge is the Discord bridge. Build it with New.
type Bridge struct {
	opts        Options
	mediaClient *http.Client
	api         *discordgo.Session // REST only; the gateway is gateway
	apiBase     *url.URL           // apiUrl; nil for Discord's own
	gw          *gateway
	tracker     *bridges.Tracker
	mentions    bridges.Mentions

	mu       sync.Mutex
	botID    string
	sink     bridges.Sink
	channels map[string]channelInfo // by id
	botRoles map[string][]string    // by guild id
	lastSeen map[string]string      // newest message id by channel
	restored bool                   // lastSeen came from Positions: backfill after the first READY too
	stored   map[string]bool        // channels with a position in Positions
	sessions int                    // READYs so far
	// backfilling is set while a backfill runs off the read goroutine;
	// live messages wait in held meanwhile so a channel stays in order.
	backfilling bool
	held        []*discordgo.Message
	background  sync.WaitGroup // backfills; joined before Start returns
}

// channelInfo is what the bridge remembers of a channel.
type channelInfo struct {
	guildID, parentID, name string
	thread                  bool
}

// maxChannels bounds the channel cache; past it the cache starts over.
const maxChannels = 20000

var (
	_ bridges.Bridge  = (*Bridge)(nil)
	_ bridges.Typer   = (*Bridge)(nil)
	_ bridges.Reactor = (*Bridge)(nil)
)

// New validates the options and builds the bridge; it does no network IO.
func New(opts Options) (*Bridge, error) {
	opts.Token = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(opts.Token), "Bot "))
	if opts.Token == "" {
		return nil, errors.New("discord: a bot token is required (channels.discord.token)")
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
	if opts.MaxMediaBytes <= 0 {
		opts.MaxMediaBytes = bridges.DefaultMaxMediaBytes
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
	if opts.Sleep == nil {
		opts.Sleep = bridges.Sleep
	}
	if opts.Backoff.Rand == nil {
		opts.Backoff.Rand = bridges.NarrowJitter
	}
	mentions, err := bridges.NewMentions(opts.MentionPatterns)
	if err != nil {
		return nil, fmt.Errorf("discord: %w", err)
	}
	api, err := discordgo.New("Bot " + opts.Token)
	if err != nil {
		return nil, fmt.Errorf("discord: %w", err)
	}
	api.Client = opts.HTTPClient
	var apiBase *url.URL
	if opts.APIURL != "" {
		if api.Client, apiBase, err = rebased(opts.HTTPClient, opts.APIURL); err != nil {
			return nil, fmt.Errorf("discord: %w", err)
		}
	}
	api.LogLevel = -1 // discordgo's own logging goes nowhere
	b := &Bridge{
		mediaClient: bridges.MediaClient(opts.MediaClient, opts.MaxMediaBytes),
		opts:        opts, api: api, apiBase: apiBase, mentions: mentions,
		tracker:  bridges.NewTracker(Channel, opts.AccountID, opts.Now, nil),
		channels: map[string]channelInfo{}, botRoles: map[string][]string{}, lastSeen: map[string]string{}, stored: map[string]bool{},
	}
	b.gw = &gateway{
		token: opts.Token, intents: Intents, log: opts.Log, backoff: opts.Backoff, now: opts.Now,
		sleep: opts.Sleep, helloTimeout: opts.HelloTimeout,
		gatewayBot: b.gatewayBot, dispatch: b.dispatch, state: b.setState,
	}
	return b, nil
}

// Name implements bridges.Bridge.
func (b *Bridge) Name() string { return Channel }

// AccountID implements bridges.Bridge.
func (b *Bridge) AccountID() string { return b.opts.AccountID }

// Status implements bridges.Bridge.
func (b *Bridge) Status() bridges.Status { return b.tracker.Status() }

// Identifies reports how many times the bridge identified on the gateway
// (each one spends one of Discord's 1000 a day).
func (b *Bridge) Identifies() int { return b.gw.Identifies() }

func (b *Bridge) setState(s bridges.State, err error) {
	b.tracker.Set(s, err)
	b.mu.Lock()
	sink := b.sink
	b.mu.Unlock()
	if sink != nil {
		sink.State(s, err)
	}
}

// Start implements bridges.Bridge: it learns the bot's own user over
// REST (a refused token is terminal), then runs the gateway until ctx
// ends or a terminal close code stops it. A Discord outage only makes it
// back off and try again.
func (b *Bridge) Start(ctx context.Context, sink bridges.Sink) error {
	b.mu.Lock()
	b.sink = sink
	b.mu.Unlock()
	b.setState(bridges.StateStarting, nil)
	defer func() {
		if !b.tracker.Status().State.Terminal() {
			b.setState(bridges.StateStopped, nil)
		}
		b.mu.Lock()
		b.sink = nil
		b.mu.Unlock()
	}()
	b.restorePositions(ctx)
	for attempt := 0; ; attempt++ {
		me, err := b.api.User("@me", discordgo.WithContext(ctx))
		if err == nil {
			b.mu.Lock()
			b.botID = me.ID
			b.mu.Unlock()
			break
		}
		if ctx.Err() != nil {
			return nil
		}
		var re *discordgo.RESTError
		if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode == http.StatusUnauthorized {
			err = errors.New("discord refused the bot token (401 Unauthorized); check channels.discord.token")
			b.setState(bridges.StateBadCredentials, err)
			return err
		}
		delay := b.opts.Backoff.Delay(attempt)
		b.setState(bridges.StateTransientDisconnect, bridges.RetryIn(fmt.Errorf("discord: GET /users/@me: %w", b.apiErr(err)), delay))
		if !b.opts.Sleep(ctx, delay) {
			return nil
		}
	}
	err := b.gw.run(ctx)
	b.background.Wait()
	return err
}

// gatewayBot asks GET /gateway/bot for the gateway URL and the identify
// budget.
func (b *Bridge) gatewayBot(ctx context.Context) (string, startLimit, error) {
	r, err := b.api.GatewayBot(discordgo.WithContext(ctx))
	if err != nil {
		return "", startLimit{}, b.apiErr(err)
	}
	l := r.SessionStartLimit
	return r.URL, startLimit{Remaining: l.Remaining, ResetAt: b.opts.Now().Add(time.Duration(l.ResetAfter) * time.Millisecond)}, nil
}

// dispatch handles one gateway event.
func (b *Bridge) dispatch(ctx context.Context, t string, d json.RawMessage) {
	switch t {
	case "READY":
		var r struct {
			User discordgo.User `json:"user"`
		}
		b.mu.Lock()
		if json.Unmarshal(d, &r) == nil && r.User.ID != "" {
			b.botID = r.User.ID
		}
		b.sessions++
		again := b.sessions > 1 || b.restored
		b.mu.Unlock()
		if again {
			// A new session: Discord does not replay what the old one
			// missed, so fetch it, off the read goroutine so heartbeat
			// ACKs keep flowing.
			b.startBackfill(ctx)
		}
	case "GUILD_CREATE":
		var g discordgo.Guild
		if json.Unmarshal(d, &g) == nil {
			b.rememberGuild(&g)
		}
	case "CHANNEL_CREATE", "CHANNEL_UPDATE", "THREAD_CREATE", "THREAD_UPDATE":
		var c discordgo.Channel
		if json.Unmarshal(d, &c) == nil {
			b.rememberChannel(&c)
		}
	case "GUILD_MEMBER_UPDATE":
		var m struct {
			GuildID string         `json:"guild_id"`
			User    discordgo.User `json:"user"`
			Roles   []string       `json:"roles"`
		}
		if json.Unmarshal(d, &m) == nil {
			b.mu.Lock()
			if m.User.ID == b.botID {
				b.botRoles[m.GuildID] = m.Roles
			}
			b.mu.Unlock()
		}
	case "MESSAGE_CREATE":
		var m discordgo.Message
		if err := json.Unmarshal(d, &m); err != nil {
			b.opts.Log.Warn("discord: unreadable MESSAGE_CREATE", "err", err)
			return
		}
		if b.hold(&m) {
			return
		}
		b.message(ctx, &m)
	}
}

// message submits one message, retrying a failing journal a few times:
// Discord does not deliver an event twice, so giving up loses it (and is
// logged as an error).
func (b *Bridge) message(ctx context.Context, m *discordgo.Message) {
	b.seen(m.ChannelID, m.ID)
	msg, ok := b.normalize(ctx, m)
	if !ok {
		return
	}
	b.mu.Lock()
	sink := b.sink
	b.mu.Unlock()
	if sink == nil {
		return
	}
	b.persistBefore(ctx, m.ChannelID, m.ID)
	var err error
	for attempt := range 5 {
		if err = sink.Submit(ctx, msg); err == nil {
			b.tracker.Inbound()
			b.persistPosition(ctx, m.ChannelID, m.ID)
			return
		}
		if ctx.Err() != nil || !b.opts.Sleep(ctx, b.opts.Backoff.Delay(attempt)) {
			break
		}
	}
	b.opts.Log.Error("discord: message could not be journaled and is lost", "message", m.ID, "channel", m.ChannelID, "err", err)
}

func (b *Bridge) rememberGuild(g *discordgo.Guild) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, list := range [][]*discordgo.Channel{g.Channels, g.Threads} {
		for _, c := range list {
			if c.GuildID == "" {
				c.GuildID = g.ID
			}
			b.rememberLocked(c)
		}
	}
	for _, m := range g.Members {
		if m.User != nil && m.User.ID == b.botID {
			b.botRoles[g.ID] = m.Roles
		}
	}
}

func (b *Bridge) rememberChannel(c *discordgo.Channel) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.rememberLocked(c)
}

func (b *Bridge) rememberLocked(c *discordgo.Channel) {
	if len(b.channels) >= maxChannels {
		clear(b.channels)
	}
	info := channelInfo{guildID: c.GuildID, name: c.Name, thread: c.IsThread()}
	if info.thread {
		info.parentID = c.ParentID
	}
	b.channels[c.ID] = info
}

// channel returns what is known of a guild channel, asking REST once
// for a channel the gateway has not described.
func (b *Bridge) channel(ctx context.Context, id string) (channelInfo, bool) {
	b.mu.Lock()
	info, ok := b.channels[id]
	b.mu.Unlock()
	if ok {
		return info, true
	}
	c, err := b.api.Channel(id, discordgo.WithContext(ctx))
	if err != nil {
		b.opts.Log.Warn("discord: channel lookup failed", "channel", id, "err", b.apiErr(err))
		return channelInfo{}, false
	}
	b.rememberChannel(c)
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.channels[id], true
}

// redact removes the token from an error's text.
func redact(err error, token string) error {
	if err == nil || token == "" || !strings.Contains(err.Error(), token) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), token, "<redacted>"))
}

// sleep waits d or until ctx ends; false when ctx ended.
