package main

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/discord"
	"github.com/switchboardhq/switchboard/bridges/slack"
	"github.com/switchboardhq/switchboard/bridges/telegram"
	"github.com/switchboardhq/switchboard/bridges/whatsapp"
	"github.com/switchboardhq/switchboard/channels"
	"github.com/switchboardhq/switchboard/config"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/gateway"
	"github.com/switchboardhq/switchboard/gateway/protocol"
	"github.com/switchboardhq/switchboard/queue"
	"github.com/switchboardhq/switchboard/store"
)

// channelStatePrefix marks readiness entries that report a bridge's
// connection: shown on /readyz, but a platform outage does not make the
// daemon unready.
const channelStatePrefix = "channel:"

// registry lists the bridges this binary carries. A new bridge is one line
// here and its section in config.ChannelsConfig; everything else loops
// over the registry.
func (c *cli) registry() bridges.Registry {
	return bridges.Registry{
		telegram.Descriptor(),
		slack.Descriptor(),
		discord.Descriptor(),
		whatsapp.Descriptor(c.whatsappClient),
	}
}

// bridgeHost runs the configured bridges: the reply router and the typing
// observer exist from the start (the dispatcher needs them), the
// supervisor once the bridges component starts.
type bridgeHost struct {
	reg    bridges.Registry
	router *channels.Router
	typing *channels.Typing
	sup    atomic.Pointer[channels.Supervisor]
}

// newBridgeHost builds the router: replies go to the bridge that owns their
// channel, the rest (web chat) to fallback.
func newBridgeHost(reg bridges.Registry, fallback queue.Deliverer, log *slog.Logger) *bridgeHost {
	r := &channels.Router{Fallback: fallback}
	return &bridgeHost{reg: reg, router: r, typing: &channels.Typing{Router: r, Log: log}}
}

// enabled pairs each registered bridge with its section, for the bridges
// the configuration enables.
func (h *bridgeHost) enabled(cfg *config.Config) []enabledBridge {
	var out []enabledBridge
	for _, d := range h.reg {
		sec, ok := cfg.Channels.Section(d.Channel)
		if ok && sec.IsEnabled() {
			out = append(out, enabledBridge{d, sec})
		}
	}
	return out
}

// active is the registry of the bridges the configuration enables: the
// targets the message tool and the gateway's send can reach.
func (h *bridgeHost) active(cfg *config.Config) bridges.Registry {
	var out bridges.Registry
	for _, e := range h.enabled(cfg) {
		out = append(out, e.desc)
	}
	return out
}

type enabledBridge struct {
	desc    bridges.Descriptor
	section bridges.Section
}

// wireBridges adds the bridges component, after the dispatcher and the
// gateway (intake starts last and stops first), when any bridge is
// enabled. The router holds replies for those channels from now on, so
// the replies a restart interrupted wait for their bridge.
//
// With several instances (ch has a member), a bridge whose connection is
// unique (Descriptor.Exclusive) waits in standby until this instance holds
// its lease, and its lease is released as soon as the bridges stop.
func wireBridges(d *daemon, cfg *config.Config, w wiring, h *bridgeHost, ch *clusterHost, st func() store.Full, disp func() *queue.Dispatcher, log *slog.Logger) {
	enabled := h.enabled(cfg)
	if len(enabled) == 0 {
		return
	}
	for _, e := range enabled {
		h.router.Expect(e.desc.Channel)
	}
	d.add("bridges",
		func(ctx context.Context) error {
			var standby func(bridges.Descriptor, bridges.Section) bool
			if ch.member != nil {
				standby = func(desc bridges.Descriptor, sec bridges.Section) bool {
					return desc.Exclusive != nil && desc.Exclusive(sec)
				}
			}
			sup := channels.NewSupervisor(channels.SupervisorOptions{
				Log: log,
				OnState: func(s bridges.Status) {
					d.setState(channelStateKey(s.Channel, s.AccountID), string(s.State))
				},
				Standby: standby,
			}, channels.SupervisorDeps{
				Router: h.router, Dispatch: channels.QueueDispatcher{D: disp()}, Pairing: st(),
				AckReaction: cfg.Messages.AckReaction, AckScope: cfg.Messages.AckReactionScope,
				Env: bridges.Env{
					AgentID: core.DefaultAgentID, Session: cfg.Session, MentionPatterns: cfg.Messages.GroupChat.MentionPatterns,
					StateDir: w.stateDir, State: st(),
				},
			})
			for _, e := range enabled {
				if err := sup.Add(e.desc, e.section); err != nil {
					return err
				}
			}
			h.sup.Store(sup)
			if err := sup.Start(ctx); err != nil {
				return err
			}
			if ch.member != nil {
				for _, ref := range sup.StandbyBridges() {
					ch.member.Want(connLease(ref), bridgeLease{sup: sup, ref: ref, log: log})
				}
			}
			return nil
		},
		func(ctx context.Context) error {
			if sup := h.sup.Load(); sup != nil && ch.member != nil {
				// Handed over at once, not left to expire.
				for _, ref := range sup.StandbyBridges() {
					ch.member.Unwant(ctx, connLease(ref))
				}
			}
			if sup := h.sup.Load(); sup != nil {
				return sup.Stop(ctx)
			}
			return nil
		},
	)
}

// channelStateKey names a bridge's entry on /readyz.
func channelStateKey(channel, accountID string) string {
	if accountID == "" || accountID == core.DefaultAccountID {
		return channelStatePrefix + channel
	}
	return channelStatePrefix + channel + "#" + accountID
}

// statuses reports the bridges for channels.status.
func (h *bridgeHost) statuses() []gateway.ChannelStatus {
	sup := h.sup.Load()
	if sup == nil {
		return nil
	}
	list := sup.Statuses()
	out := make([]gateway.ChannelStatus, 0, len(list))
	for _, s := range list {
		cs := gateway.ChannelStatus{
			Channel: s.Channel, Label: s.Label, AccountID: s.AccountID, State: string(s.State),
			Configured: true, Running: s.Running, Connected: s.State == bridges.StateConnected, LastError: s.LastError,
			LastErrorSummary: s.Summary, Restarts: s.Restarts, StateSince: s.Since.UnixMilli(),
		}
		if !s.RetryAt.IsZero() {
			cs.RetryAt = s.RetryAt.UnixMilli()
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

// supervisor returns the running supervisor, or an UNAVAILABLE error when
// no bridge runs.
func (h *bridgeHost) supervisor() (*channels.Supervisor, error) {
	if sup := h.sup.Load(); sup != nil {
		return sup, nil
	}
	return nil, noBridge("no bridge runs in this daemon; enable one under channels: and restart it")
}

// logout implements channels.logout.
func (h *bridgeHost) logout(ctx context.Context, channel, accountID string) error {
	sup, err := h.supervisor()
	if err != nil {
		return err
	}
	return unavailable(sup.Logout(ctx, channel, accountID))
}

// loginStart implements web.login.start.
func (h *bridgeHost) loginStart(ctx context.Context, req gateway.LoginRequest) (gateway.LoginResult, error) {
	sup, err := h.supervisor()
	if err != nil {
		return gateway.LoginResult{}, err
	}
	res, err := sup.LoginStart(ctx, req.Channel, req.AccountID, req.Phone, req.Force)
	return loginResult(res), unavailable(err)
}

// loginWait implements web.login.wait.
func (h *bridgeHost) loginWait(ctx context.Context, req gateway.LoginRequest) (gateway.LoginResult, error) {
	sup, err := h.supervisor()
	if err != nil {
		return gateway.LoginResult{}, err
	}
	res, err := sup.LoginWait(ctx, req.Channel, req.AccountID)
	return loginResult(res), unavailable(err)
}

// loginResult is a linking step as web.login.* answers it.
func loginResult(l channels.Login) gateway.LoginResult {
	return gateway.LoginResult{Message: l.Message, QR: l.QR, QRDataURL: l.QRImage, PairingCode: l.PairingCode,
		Connected: l.Linked, Account: l.Account}
}

// noBridge is an UNAVAILABLE gateway error.
func noBridge(msg string) error { return protocol.NewError(protocol.CodeUnavailable, msg) }

// unavailable turns the supervisor's "no such bridge" into UNAVAILABLE, so
// a client knows the daemon lacks the bridge rather than its request
// being wrong.
func unavailable(err error) error {
	if errors.Is(err, channels.ErrNoBridge) {
		return noBridge(err.Error())
	}
	return err
}
