package channels

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/bridges"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/store"
)

// Dispatcher takes accepted messages; the daemon adapts queue.Dispatcher.
type Dispatcher interface {
	// Submit journals in durably (or recognises dedupeKey as already
	// taken, reporting duplicate) and returns; an error means nothing was
	// accepted.
	Submit(ctx context.Context, in *core.Inbound, dedupeKey string) (duplicate bool, err error)
}

// EventDispatcher is a Dispatcher that also queues system events for a
// session's next turn (queue.Dispatcher through QueueDispatcher).
type EventDispatcher interface {
	EnqueueSystemEvent(key core.SessionKey, text, contextKey string) bool
}

// NoticeDispatcher is a Dispatcher that also queues Switchboard's own
// notices as trusted system events (QueueDispatcher).
type NoticeDispatcher interface {
	EnqueueNotice(key core.SessionKey, text, contextKey string) bool
}

// PairingStore keeps DM pairing codes and approved senders; *store.SQLite
// implements it.
type PairingStore interface {
	CreateChannelPairingCode(ctx context.Context, c store.ChannelPairingCode, expiredBefore int64, max int, newCode func() string) (store.ChannelPairingCode, bool, error)
	ChannelSenderAllowed(ctx context.Context, channel, accountID, senderID string) (bool, error)
}

// Gate is the Sink a bridge runs with in the daemon: it applies the
// channel's Access policy to every message, answers unknown senders with a
// pairing code, keeps skipped group messages as history for the next turn,
// and hands accepted messages to the dispatcher.
type Gate struct {
	// Channel and AccountID name the bridge.
	Channel, AccountID string
	// Access is the policy.
	Access bridges.Access
	// Pairing stores codes and approvals.
	Pairing PairingStore
	// Dispatch takes accepted messages.
	Dispatch Dispatcher
	// Reply sends the pairing message back to the sender (the bridge's
	// Deliver).
	Reply func(ctx context.Context, out bridges.Outbound) error
	// AckReaction is the emoji put on accepted messages AckScope covers,
	// so the sender sees the bot got them ("" for none).
	AckReaction string
	// AckScope is which messages get AckReaction.
	AckScope bridges.AckScope
	// React puts a reaction on a message (the bridge's Reactor); nil
	// disables the ack reaction.
	React func(ctx context.Context, route core.Route, messageID bridges.MessageID, emoji string) error
	// History is the group history buffer; nil disables it.
	History *GroupHistory
	// Tracker, when set, records inbound activity and connection states.
	Tracker *bridges.Tracker
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// NewCode makes pairing codes; nil means NewPairingCode.
	NewCode func() string
	// Log receives policy decisions at debug level, state changes at info
	// and failures at warn; the gate adds the channel to each record.
	Log *slog.Logger

	mu        sync.Mutex
	lastState bridges.State
	lastErr   string
}

// State implements Sink.
func (g *Gate) State(s bridges.State, err error) {
	if g.Tracker != nil {
		g.Tracker.Set(s, err)
	}
	if g.Log == nil || !g.changed(s, err) {
		return
	}
	var retry *bridges.RetryError
	switch {
	case errors.As(err, &retry):
		g.Log.Warn("bridge state", "channel", g.Channel, "state", string(s), "err", err, "retryIn", retry.Delay.Round(time.Millisecond))
	case err != nil:
		g.Log.Warn("bridge state", "channel", g.Channel, "state", string(s), "err", err)
	default:
		g.Log.Info("bridge state", "channel", g.Channel, "state", string(s))
	}
}

// changed records s and err and reports whether they differ from the last
// ones: a bridge reports its state on every poll, the log wants changes.
func (g *Gate) changed(s bridges.State, err error) bool {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if s == g.lastState && msg == g.lastErr {
		return false
	}
	g.lastState, g.lastErr = s, msg
	return true
}

// Submit implements Sink.
func (g *Gate) Submit(ctx context.Context, msg bridges.Inbound) error {
	in := msg.Message
	if g.Tracker != nil {
		g.Tracker.Inbound()
	}
	direct := in.ChatType == core.ChatDirect || in.ChatType == ""
	approved, err := g.approved(ctx, in)
	if err != nil {
		return err
	}
	d := Decide(g.Access, msg, approved)
	g.debug("gate", "verdict", d.Reason, "session", string(in.SessionKey), "message", in.MessageID)
	switch d.Verdict {
	case Ignore:
		return nil
	case Pair:
		return g.pair(ctx, in)
	case Skip:
		if g.History != nil {
			g.History.Add(msg.HistoryKey, core.HistoryEntry{
				Sender: in.Sender.Label(), Body: in.Body, TimestampMs: in.Timestamp, MessageID: string(in.MessageID),
			}, g.Access.HistoryLimitOrDefault())
		}
		return nil
	}
	if !direct && g.History != nil && msg.HistoryKey != "" {
		in.History, in.HistoryTruncated = g.History.Peek(msg.HistoryKey, HistoryShown)
	}
	dup, err := g.Dispatch.Submit(ctx, in, msg.DedupeKey)
	if err != nil {
		return err
	}
	if !dup && g.AckReaction != "" && g.React != nil && in.MessageID != "" && g.AckScope.Covers(msg) {
		if err := g.React(ctx, in.Route, bridges.MessageID(in.MessageID), g.AckReaction); err != nil {
			g.debug("ack reaction failed", "err", err)
		}
	}
	if !direct && g.History != nil && msg.HistoryKey != "" {
		g.History.Clear(msg.HistoryKey)
	}
	return nil
}

// approved reports whether a DM sender was approved by pairing (only
// asked when the policy and allowFrom do not decide alone).
func (g *Gate) approved(ctx context.Context, in *core.Inbound) (bool, error) {
	direct := in.ChatType == core.ChatDirect || in.ChatType == ""
	policy := g.Access.EffectiveDMPolicy()
	if !direct || g.Pairing == nil || policy == bridges.DMOpen || policy == bridges.DMDisabled || listed(g.Access.AllowFrom, in.Sender) {
		return false, nil
	}
	return g.Pairing.ChannelSenderAllowed(ctx, g.Channel, g.AccountID, in.Sender.ID)
}

// SystemEvent implements SystemEventSink: the notice is queued for the
// message's session when the chat and sender pass the access policy
// (mention gating aside: an edit in a group the bot listens to counts),
// and only if the dispatcher takes system events. The line is queued as
// untrusted.
func (g *Gate) SystemEvent(ctx context.Context, msg bridges.Inbound, text, contextKey string) error {
	ev, ok := g.Dispatch.(EventDispatcher)
	if !ok {
		return nil
	}
	approved, err := g.approved(ctx, msg.Message)
	if err != nil {
		return err
	}
	switch d := Decide(g.Access, msg, approved); d.Verdict {
	case Accept, Skip:
		ev.EnqueueSystemEvent(msg.Message.SessionKey, text, contextKey)
	default:
		g.debug("system event dropped by policy", "verdict", d.Reason, "session", string(msg.Message.SessionKey))
	}
	return nil
}

// Notice implements NoticeSink: text is queued, trusted, for the main
// session of agentID, when the dispatcher takes notices.
func (g *Gate) Notice(_ context.Context, agentID, text, contextKey string) error {
	if d, ok := g.Dispatch.(NoticeDispatcher); ok {
		d.EnqueueNotice(core.MainSessionKey(agentID), text, contextKey)
	}
	return nil
}

// pair gives an unknown sender a pairing code, sent only when it is new.
func (g *Gate) pair(ctx context.Context, in *core.Inbound) error {
	if g.Pairing == nil {
		return nil
	}
	now := time.Now
	if g.Now != nil {
		now = g.Now
	}
	newCode := g.NewCode
	if newCode == nil {
		newCode = NewPairingCode
	}
	at := now()
	c, created, err := g.Pairing.CreateChannelPairingCode(ctx, store.ChannelPairingCode{
		Channel: g.Channel, AccountID: g.AccountID, SenderID: in.Sender.ID, SenderName: in.Sender.Label(), CreatedAt: at.UnixMilli(),
	}, at.Add(-PairingTTL).UnixMilli(), MaxPendingPairingCodes, newCode)
	if err != nil {
		return err
	}
	if !created || g.Reply == nil {
		g.debug("pairing code not sent", "sender", in.Sender.ID, "pending", c.Code != "")
		return nil
	}
	if err := g.Reply(ctx, bridges.Outbound{Route: in.Route, Text: PairingMessage(g.Channel, in.Sender.ID, c.Code)}); err != nil {
		// The code stands; the owner can still approve it from the list.
		if g.Log != nil {
			g.Log.Warn("pairing code could not be sent", "channel", g.Channel, "sender", in.Sender.ID, "err", err)
		}
	}
	return nil
}

func (g *Gate) debug(msg string, args ...any) {
	if g.Log != nil {
		g.Log.Debug(msg, append([]any{"channel", g.Channel}, args...)...)
	}
}

var (
	_ bridges.Sink            = (*Gate)(nil)
	_ bridges.SystemEventSink = (*Gate)(nil)
	_ bridges.NoticeSink      = (*Gate)(nil)
	_ NoticeDispatcher        = QueueDispatcher{}
	_ EventDispatcher         = QueueDispatcher{}
)
