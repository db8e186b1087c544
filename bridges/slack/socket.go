package slack

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	slackapi "github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
	"github.com/switchboardhq/switchboard/bridges"
)

// socketBacklog is how many received events may wait for the journal;
// past it the socket is read no faster than they are journaled.
const socketBacklog = 4096

// stableConnection is how long a Socket Mode connection must have stayed
// up for the next failure to start the backoff over: one that lasted this
// long shows Slack was back, while connections that keep dying sooner
// keep backing off.
const stableConnection = time.Minute

// runSocket receives events over Socket Mode until ctx ends (nil) or
// Slack refuses the app token (the error, reported as
// StateBadCredentials).
//
// slack-go's client reopens a connection that ends at once, by itself, as
// Slack asks when it recycles connections. A failed attempt to open one
// it would retry on its own schedule (no jitter, up to 5 minutes apart),
// and some failures end its run; either way the run ends here, and this
// loop reports StateTransientDisconnect, waits Options.Backoff and runs
// the client again. The client is kept across runs: envelopes it had
// queued, and acks not yet written, go on with the next connection, so a
// reconnect neither loses an event nor acks one twice.
func (b *Bridge) runSocket(ctx context.Context, sink bridges.Sink) error {
	smc := socketmode.New(b.api, socketmode.OptionLog(discardLogger{}))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Acks are sent off the event loop (see envelope); they end with ctx.
	var acks sync.WaitGroup
	defer acks.Wait()
	// Events are journaled by one worker, in the order they came, while
	// the event loop keeps reading: a socket left unread while the journal
	// is busy is closed by Slack, and what was in flight comes back only
	// as retries, out of order (the 1,000 messages/s run reordered that
	// way). The worker outlives reconnects.
	backlog := make(chan socketmode.Event, socketBacklog)
	worker := make(chan struct{})
	go func() {
		defer close(worker)
		for {
			select {
			case <-ctx.Done():
				return
			case evt := <-backlog:
				b.envelope(ctx, smc, sink, evt, &acks)
			}
		}
	}()
	defer func() { <-worker }()
	defer cancel()
	failures := 0
	for {
		stable, err := b.socketRun(ctx, smc, sink, backlog)
		if ctx.Err() != nil {
			return nil
		}
		if terminal(err) {
			err = fmt.Errorf("slack refused the app token (%w); check channels.slack.appToken", err)
			b.setState(sink, bridges.StateBadCredentials, err)
			return err
		}
		if stable {
			failures = 0
		}
		delay := b.retryDelay(failures, err)
		failures++
		b.setState(sink, bridges.StateTransientDisconnect, bridges.RetryIn(rateLimited(err), delay))
		b.opts.Log.Warn("slack: socket mode connection failed; reconnecting", "err", err, "in", delay)
		if !b.opts.Sleep(ctx, delay) {
			return nil
		}
	}
}

// socketRun runs smc once: until its RunContext returns, or until an
// attempt to open a connection fails, which stops the run so that
// runSocket paces the next attempt. Meanwhile it reports the connection's
// states and hands envelopes to backlog. It returns the error the run
// ended with (redacted; when ctx ended, whatever the client said) and
// whether one of its connections stayed up for stableConnection.
func (b *Bridge) socketRun(ctx context.Context, smc *socketmode.Client, sink bridges.Sink, backlog chan<- socketmode.Event) (stable bool, err error) {
	run, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- smc.RunContext(run) }()
	var (
		failed error     // the failed attempt that stopped the run
		upAt   time.Time // when the current connection opened; zero if none is open
	)
	// ended notes that the open connection, if any, is over.
	ended := func() {
		if !upAt.IsZero() && b.opts.Now().Sub(upAt) >= stableConnection {
			stable = true
		}
		upAt = time.Time{}
	}
	for {
		select {
		case runErr := <-done:
			ended()
			b.drainSocket(ctx, smc, backlog)
			switch {
			case failed != nil:
				return stable, failed // runErr only says the run was stopped
			case runErr == nil:
				return stable, errors.New("slack socket mode: the client stopped without an error")
			}
			return stable, fmt.Errorf("slack socket mode: %w", b.redact(runErr))
		case evt := <-smc.Events:
			switch evt.Type {
			case socketmode.EventTypeEventsAPI:
				select {
				case backlog <- evt:
				case <-ctx.Done():
				}
			case socketmode.EventTypeConnected:
				if failed != nil {
					continue // a stopped run's, already closing
				}
				upAt = b.opts.Now()
				b.setState(sink, bridges.StateConnected, nil)
			case socketmode.EventTypeConnecting:
				// After the first connection of a run, slack-go reconnects
				// by itself: the connection before has ended.
				if c, ok := evt.Data.(*slackapi.ConnectingEvent); ok && c.ConnectionCount > 0 && failed == nil && ctx.Err() == nil {
					ended()
					b.setState(sink, bridges.StateTransientDisconnect, errors.New("slack socket mode: the connection ended; reconnecting"))
				}
			case socketmode.EventTypeConnectionError:
				if failed != nil {
					continue
				}
				failed = errors.New("slack socket mode: connecting failed")
				if c, ok := evt.Data.(*slackapi.ConnectionErrorEvent); ok && c.ErrorObj != nil {
					failed = fmt.Errorf("slack socket mode: connecting: %w", b.redact(c.ErrorObj))
				}
				stop()
			default:
				// Hello, incoming errors, the invalid_auth event that
				// precedes the run's error, envelope types the bridge does
				// not subscribe to: nothing the run's end will not say.
			}
		}
	}
}

// drainSocket hands on the envelopes a finished run left in the client's
// queue; their acks wait in the client for the next connection. The run's
// connection events are stale by now, and dropped.
func (b *Bridge) drainSocket(ctx context.Context, smc *socketmode.Client, backlog chan<- socketmode.Event) {
	for {
		select {
		case evt := <-smc.Events:
			if evt.Type != socketmode.EventTypeEventsAPI {
				continue
			}
			select {
			case backlog <- evt:
			case <-ctx.Done():
				return
			}
		default:
			return
		}
	}
}

// envelope handles one events_api envelope; it is acked only after the
// sink has taken its message. The ack is sent on its own goroutine:
// slack-go queues it for a writer that, when a write fails, blocks on the
// Events channel the event loop drains, so an ack sent from the loop could
// wait forever (the 3,000-session load stalled that way). Between runs
// the ack waits in the client's queue for the next connection.
func (b *Bridge) envelope(ctx context.Context, smc *socketmode.Client, sink bridges.Sink, evt socketmode.Event, acks *sync.WaitGroup) {
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

// discardLogger silences the socketmode client's own log.
type discardLogger struct{}

func (discardLogger) Output(int, string) error { return nil }
