package channels

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/switchboardhq/switchboard/bridges"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/queue"
)

// Router delivers the dispatcher's replies and notices to the bridge that
// owns their route's channel and account (queue.Deliverer). Deliveries for
// channels without a bridge (web chat) go to Fallback. Safe for concurrent
// use.
type Router struct {
	// Ledger makes reply delivery idempotent across crashes; nil sends
	// without recording.
	Ledger bridges.Ledger
	// Fallback takes deliveries no bridge owns; nil makes them an error.
	Fallback queue.Deliverer

	mu      sync.RWMutex
	bridges map[string]routed
	// expected are the channels a bridge will be added for, closed when
	// it is (see Expect).
	expected map[string]chan struct{}
}

type routed struct {
	bridge bridges.Bridge
	bridges.RouteOptions
}

// Add registers a bridge with its reply-to mode and response prefix
// (prepended to each reply's text; "" for none).
func (r *Router) Add(b bridges.Bridge, mode bridges.ReplyToMode, responsePrefix string) {
	r.AddWith(b, bridges.RouteOptions{Mode: mode, Prefix: responsePrefix})
}

// AddWith registers a bridge with its route options.
func (r *Router) AddWith(b bridges.Bridge, o bridges.RouteOptions) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.bridges == nil {
		r.bridges = map[string]routed{}
	}
	r.bridges[routeKey(b.Name(), b.AccountID())] = routed{bridge: b, RouteOptions: o}
	r.settleLocked(b.Name())
}

// Expect says a bridge for channel is on its way: until Add (or Settle)
// for that channel, Deliver holds its deliveries instead of handing them
// to Fallback. A daemon expects its configured bridges before the
// dispatcher starts, so the replies a restart interrupted, redelivered at
// once, wait for their bridge rather than being lost.
func (r *Router) Expect(channel string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.expected == nil {
		r.expected = map[string]chan struct{}{}
	}
	if _, ok := r.expected[strings.ToLower(channel)]; !ok {
		r.expected[strings.ToLower(channel)] = make(chan struct{})
	}
}

// Settle releases the deliveries held for channel without a bridge (its
// bridge will not come): they go to Fallback.
func (r *Router) Settle(channel string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.settleLocked(channel)
}

func (r *Router) settleLocked(channel string) {
	if ch, ok := r.expected[strings.ToLower(channel)]; ok {
		close(ch)
		delete(r.expected, strings.ToLower(channel))
	}
}

// route finds the bridge for channel and account, waiting while the
// channel's bridge is expected.
func (r *Router) route(ctx context.Context, channel, accountID string) (routed, bool, error) {
	for {
		r.mu.RLock()
		rt, ok := r.bridges[routeKey(channel, accountID)]
		wait := r.expected[strings.ToLower(channel)]
		r.mu.RUnlock()
		if ok || wait == nil {
			return rt, ok, nil
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return routed{}, false, fmt.Errorf("bridges: the %s bridge has not started: %w", channel, ctx.Err())
		}
	}
}

// Bridge returns the bridge for a channel and account, if any.
func (r *Router) Bridge(channel, accountID string) (bridges.Bridge, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	rt, ok := r.bridges[routeKey(channel, accountID)]
	return rt.bridge, ok
}

func routeKey(channel, accountID string) string {
	return strings.ToLower(channel) + "/" + core.NormalizeAccountID(accountID)
}

// Deliver implements queue.Deliverer: each reply payload becomes one
// Outbound to the bridge, in order. Reply threading follows the bridge's
// mode; a reply tag ([[reply_to:<id>]]) wins. The ledger key of a reply is
// "<runId>:<reply index>", so a delivery repeated after a crash resends
// only the chunks that were not sent.
func (r *Router) Deliver(ctx context.Context, d queue.Delivery) error {
	return r.deliver(ctx, d, r.Fallback)
}

// DeliverOwned is Deliver for a delivery that must reach a chat, such as a
// cron job's announcement: one for a channel and account that no bridge of
// this daemon owns fails with an error that is ErrNoBridge, naming them,
// instead of going to Fallback, which keeps a reply in the transcript only
// (issue 26, finding 6: such a run showed "ok"). It waits for an expected
// bridge as Deliver does. The web chat has no bridge; its deliveries go to
// Fallback as always. Safe for concurrent use.
func (r *Router) DeliverOwned(ctx context.Context, d queue.Delivery) error {
	if d.Route.Channel == core.WebchatChannel {
		return r.Deliver(ctx, d)
	}
	return r.deliver(ctx, d, nil)
}

// Owned is a queue.Deliverer that delivers through its router's
// DeliverOwned; safe for concurrent use, as the router is.
type Owned struct{ Router *Router }

// Deliver implements queue.Deliverer.
func (o Owned) Deliver(ctx context.Context, d queue.Delivery) error {
	return o.Router.DeliverOwned(ctx, d)
}

// noBridgeError is the error for a delivery no bridge takes; it is
// ErrNoBridge.
type noBridgeError struct{ channel, accountID string }

func (e noBridgeError) Error() string {
	return fmt.Sprintf("no %s bridge for account %q runs in this daemon", e.channel, e.accountID)
}

func (noBridgeError) Is(target error) bool { return target == ErrNoBridge }

func (r *Router) deliver(ctx context.Context, d queue.Delivery, fallback queue.Deliverer) error {
	rt, ok, err := r.route(ctx, string(d.Route.Channel), string(d.Route.AccountID))
	if err != nil {
		return err
	}
	if !ok {
		if fallback != nil {
			return fallback.Deliver(ctx, d)
		}
		return noBridgeError{channel: string(d.Route.Channel), accountID: core.NormalizeAccountID(string(d.Route.AccountID))}
	}
	mode := rt.ModeFor(d.SessionKey)
	tags := !rt.OffIgnoresTags || (mode != "" && mode != bridges.ReplyOff)
	for i, p := range d.Replies {
		text := p.Text
		if rt.Prefix != "" && strings.TrimSpace(text) != "" {
			text = rt.Prefix + " " + text
		}
		media := p.MediaURLs
		if p.MediaURL != "" {
			media = append([]string{p.MediaURL}, media...)
		}
		out := bridges.Outbound{Route: d.Route, SessionKey: d.SessionKey, Text: text, MediaURLs: media}
		switch {
		case tags && p.ReplyToID != "":
			out.ReplyToMessageID = bridges.MessageID(p.ReplyToID)
		case tags && p.ReplyToCurrent:
			out.ReplyToMessageID = bridges.MessageID(d.ReplyToMessageID) // [[reply_to_current]]
		case mode == bridges.ReplyAll, mode == bridges.ReplyFirst:
			if mode == bridges.ReplyAll || i == 0 {
				out.ReplyToMessageID = bridges.MessageID(d.ReplyToMessageID)
			}
		case mode == bridges.ReplyBatched:
			if d.Batched && i == 0 {
				out.ReplyToMessageID = bridges.MessageID(d.ReplyToMessageID)
			}
		}
		if r.Ledger != nil && d.RunID != "" {
			out.Ledger, out.LedgerKey = r.Ledger, d.RunID+":"+strconv.Itoa(i)
		}
		if _, err := rt.bridge.Deliver(ctx, out); err != nil {
			return err
		}
	}
	return nil
}

// QueueDispatcher adapts a queue.Dispatcher to the gate's Dispatcher.
type QueueDispatcher struct {
	D *queue.Dispatcher
}

// Submit implements Dispatcher.
func (q QueueDispatcher) Submit(ctx context.Context, in *core.Inbound, dedupeKey string) (bool, error) {
	rc, err := q.D.SubmitWith(ctx, *in, queue.SubmitOptions{DedupeKey: dedupeKey})
	if err != nil {
		return false, err
	}
	return rc.Disposition == queue.Duplicate, nil
}

// EnqueueSystemEvent implements EventDispatcher; the event is queued as
// untrusted.
func (q QueueDispatcher) EnqueueSystemEvent(key core.SessionKey, text, contextKey string) bool {
	return q.D.EnqueueSystemEvent(key, text, queue.EventOptions{ContextKey: contextKey})
}

// EnqueueNotice implements NoticeDispatcher; the event is queued as
// trusted (Switchboard wrote it).
func (q QueueDispatcher) EnqueueNotice(key core.SessionKey, text, contextKey string) bool {
	return q.D.EnqueueSystemEvent(key, text, queue.EventOptions{ContextKey: contextKey, Trusted: true})
}
