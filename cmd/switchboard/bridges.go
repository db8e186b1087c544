package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"

	"github.com/switchboardhq/switchboard/channels"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/discord"
	"github.com/switchboardhq/switchboard/bridges/slack"
	"github.com/switchboardhq/switchboard/bridges/telegram"
	"github.com/switchboardhq/switchboard/config"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/gateway"
	"github.com/switchboardhq/switchboard/queue"
	"github.com/switchboardhq/switchboard/store"
)

// channelStatePrefix marks readiness entries that report a bridge's
// connection: shown on /readyz, but a platform outage does not make the
// daemon unready.
const channelStatePrefix = "channel:"

// bridgeSet runs the configured bridges: each gets a gate, a goroutine
// owned by the daemon, and a place in the router.
type bridgeSet struct {
	router *channels.Router
	typing *channels.Typing
	log    *slog.Logger

	mu      sync.Mutex
	running []*runningBridge
}

type runningBridge struct {
	bridge bridges.Bridge
	cancel context.CancelFunc
	done   chan error
	// stopped is closed once Start has returned.
	stopped chan struct{}
	// linked names the account a bridge with a login flow is linked to
	// (WhatsApp's device store), ok false when none is; nil when the
	// bridge cannot tell.
	linked func(ctx context.Context) (account string, ok bool, err error)
}

// newBridgeSet builds the router: replies go to the bridge that owns their
// channel, the rest (web chat) to fallback.
func newBridgeSet(fallback queue.Deliverer, log *slog.Logger) *bridgeSet {
	r := &channels.Router{Fallback: fallback}
	return &bridgeSet{router: r, typing: &channels.Typing{Router: r, Log: log}, log: log}
}

// wireBridges adds one daemon component per enabled bridge, after the
// dispatcher and the gateway (intake starts last and stops first).
func wireBridges(d *daemon, cfg *config.Config, w wiring, bs *bridgeSet, st func() *store.SQLite, disp func() *queue.Dispatcher) {
	wireTelegram(d, cfg, w.stateDir, bs, st, disp)
	wireSlack(d, cfg, w.stateDir, bs, st, disp)
	wireDiscord(d, cfg, w.stateDir, bs, st, disp)
	wireWhatsApp(d, cfg, w, bs, st, disp)
}

// wireDiscord adds the Discord bridge when channels.discord is enabled.
func wireDiscord(d *daemon, cfg *config.Config, stateDir string, bs *bridgeSet, st func() *store.SQLite, disp func() *queue.Dispatcher) {
	dc := cfg.Channels.Discord
	if !dc.Enabled {
		return
	}
	bs.router.Expect(discord.Channel)
	d.add("discord",
		func(context.Context) error {
			defer bs.router.Settle(discord.Channel) // a start that failed releases held deliveries
			opts := dc.Options(core.DefaultAgentID, cfg.Session)
			opts.MentionPatterns = cfg.Messages.GroupChat.MentionPatterns
			opts.MediaDir = filepath.Join(stateDir, "media", discord.Channel)
			opts.Positions = st()
			opts.Log = bs.log.With("channel", discord.Channel)
			b, err := discord.New(opts)
			if err != nil {
				return err
			}
			bs.router.Add(b, dc.ReplyToMode, dc.ResponsePrefix)
			bs.start(d, b, gateFor(cfg, b, dc.Access(), b.React, st(), disp(), bs.log))
			return nil
		},
		bs.stop,
	)
}

// gateFor builds the gate a bridge runs with.
func gateFor(cfg *config.Config, b bridges.Bridge, access bridges.Access, react func(context.Context, core.Route, bridges.MessageID, string) error,
	st *store.SQLite, disp *queue.Dispatcher, log *slog.Logger) *channels.Gate {
	return &channels.Gate{
		Channel: b.Name(), AccountID: b.AccountID(), Access: access, Pairing: st,
		Dispatch: channels.QueueDispatcher{D: disp}, History: &channels.GroupHistory{}, Log: log,
		Reply: func(ctx context.Context, out bridges.Outbound) error {
			_, err := b.Deliver(ctx, out)
			return err
		},
		AckReaction: cfg.Messages.AckReaction, AckScope: cfg.Messages.AckReactionScope, React: react,
	}
}

// wireSlack adds the Slack bridge when channels.slack is enabled.
func wireSlack(d *daemon, cfg *config.Config, stateDir string, bs *bridgeSet, st func() *store.SQLite, disp func() *queue.Dispatcher) {
	sc := cfg.Channels.Slack
	if !sc.Enabled {
		return
	}
	bs.router.Expect(slack.Channel)
	d.add("slack",
		func(context.Context) error {
			defer bs.router.Settle(slack.Channel) // a start that failed releases held deliveries
			opts := sc.Options(core.DefaultAgentID, cfg.Session)
			opts.MentionPatterns = cfg.Messages.GroupChat.MentionPatterns
			opts.MediaDir = filepath.Join(stateDir, "media", slack.Channel)
			opts.Log = bs.log.With("channel", slack.Channel)
			b, err := slack.New(opts)
			if err != nil {
				return err
			}
			bs.router.AddWith(b, sc.RouteOptions())
			bs.start(d, b, gateFor(cfg, b, sc.Access(), b.React, st(), disp(), bs.log))
			return nil
		},
		bs.stop,
	)
}

// wireTelegram adds the Telegram bridge when channels.telegram is enabled.
func wireTelegram(d *daemon, cfg *config.Config, stateDir string, bs *bridgeSet, st func() *store.SQLite, disp func() *queue.Dispatcher) {
	tg := cfg.Channels.Telegram
	if !tg.Enabled {
		return
	}
	bs.router.Expect(telegram.Channel)
	d.add("telegram",
		func(ctx context.Context) error {
			defer bs.router.Settle(telegram.Channel) // a start that failed releases held deliveries
			opts := tg.Options(core.DefaultAgentID, cfg.Session)
			opts.Offsets = st()
			opts.MentionPatterns = cfg.Messages.GroupChat.MentionPatterns
			opts.MediaDir = filepath.Join(stateDir, "media", telegram.Channel)
			opts.LockDir = stateDir
			opts.Log = bs.log.With("channel", telegram.Channel)
			b, err := telegram.New(opts)
			if err != nil {
				return err
			}
			bs.router.Add(b, tg.ReplyToMode, tg.ResponsePrefix)
			gate := gateFor(cfg, b, tg.Access(), b.React, st(), disp(), bs.log)
			bs.start(d, b, gate)
			return nil
		},
		bs.stop,
	)
}

// start runs b until stop; its connection state is shown on /readyz.
func (bs *bridgeSet) start(d *daemon, b bridges.Bridge, gate *channels.Gate) {
	bs.run(d, &runningBridge{bridge: b}, gate)
}

// run runs rb.bridge until stop, as start does, keeping what rb says of
// the bridge besides.
func (bs *bridgeSet) run(d *daemon, rb *runningBridge, gate *channels.Gate) {
	b := rb.bridge
	ctx, cancel := context.WithCancel(context.Background())
	rb.cancel, rb.done, rb.stopped = cancel, make(chan error, 1), make(chan struct{})
	sink := stateSink{Sink: gate, on: func(s bridges.State) { d.setState(channelStatePrefix+b.Name(), string(s)) }}
	go func() {
		err := b.Start(ctx, sink)
		close(rb.stopped)
		rb.done <- err
	}()
	bs.mu.Lock()
	bs.running = append(bs.running, rb)
	bs.mu.Unlock()
}

// stop stops every bridge and waits for it.
func (bs *bridgeSet) stop(ctx context.Context) error {
	bs.mu.Lock()
	running := bs.running
	bs.running = nil
	bs.mu.Unlock()
	for _, rb := range running {
		rb.cancel()
	}
	for _, rb := range running {
		select {
		case err := <-rb.done:
			if err != nil {
				bs.log.Warn("bridge stopped with an error", "channel", rb.bridge.Name(), "err", err)
			}
		case <-ctx.Done():
			return fmt.Errorf("bridge %s did not stop: %w", rb.bridge.Name(), ctx.Err())
		}
	}
	return nil
}

// statuses reports the bridges for channels.status.
func (bs *bridgeSet) statuses() []gateway.ChannelStatus {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	out := make([]gateway.ChannelStatus, 0, len(bs.running))
	for _, rb := range bs.running {
		s := rb.bridge.Status()
		cs := gateway.ChannelStatus{
			Channel: s.Channel, Label: s.Channel, AccountID: s.AccountID, State: string(s.State),
			Configured: true, Running: s.State != bridges.StateStopped && !s.State.Terminal(),
			Connected: s.State == bridges.StateConnected, LastError: s.LastError,
		}
		if !s.LastInboundAt.IsZero() {
			cs.LastInboundAt = s.LastInboundAt.UnixMilli()
		}
		if !s.LastOutboundAt.IsZero() {
			cs.LastOutboundAt = s.LastOutboundAt.UnixMilli()
		}
		out = append(out, cs)
	}
	return out
}

// stateSink reports state changes to the daemon besides the gate. It
// passes the gate's optional interfaces on explicitly: bridges find them
// by type assertion on the sink they were given, and an embedded
// interface alone would hide them.
type stateSink struct {
	bridges.Sink
	on func(bridges.State)
}

var (
	_ bridges.SystemEventSink = stateSink{}
	_ bridges.NoticeSink      = stateSink{}
)

func (s stateSink) State(st bridges.State, err error) {
	s.on(st)
	s.Sink.State(st, err)
}

// SystemEvent implements bridges.SystemEventSink when the inner sink
// does; otherwise the event is dropped, as a bridge would drop it.
func (s stateSink) SystemEvent(ctx context.Context, msg bridges.Inbound, text, contextKey string) error {
	if es, ok := s.Sink.(bridges.SystemEventSink); ok {
		return es.SystemEvent(ctx, msg, text, contextKey)
	}
	return nil
}

// Notice implements bridges.NoticeSink when the inner sink does;
// otherwise the notice is dropped.
func (s stateSink) Notice(ctx context.Context, agentID, text, contextKey string) error {
	if ns, ok := s.Sink.(bridges.NoticeSink); ok {
		return ns.Notice(ctx, agentID, text, contextKey)
	}
	return nil
}
