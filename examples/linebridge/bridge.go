package linebridge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/markup"
	"github.com/switchboardhq/switchboard/core"
)

// The protocol's limits.
const (
	// MaxLineBytes is the longest line a client may send; a longer one
	// ends the connection.
	MaxLineBytes = 16 << 10
	// DefaultHelloTimeout is how long a new connection has to say HELLO.
	DefaultHelloTimeout = 30 * time.Second
	// DefaultWriteTimeout is how long one write may block on a client
	// that does not read; then the connection is closed.
	DefaultWriteTimeout = 10 * time.Second
)

// Options configure a Bridge. Zero values are the documented defaults.
type Options struct {
	// Listen is the TCP address, host:port; empty means DefaultListen.
	Listen string
	// AccountID names the bot account; empty means "default".
	AccountID string
	// AgentID is the agent whose sessions the bridge keys; empty means
	// core.DefaultAgentID.
	AgentID string
	// Session decides how direct chats map to sessions (dmScope, identity
	// links).
	Session core.SessionConfig
	// ChunkLimit is the longest reply chunk, in characters; zero means
	// markup.DefaultLimit.
	ChunkLimit int
	// HelloTimeout and WriteTimeout override DefaultHelloTimeout and
	// DefaultWriteTimeout.
	HelloTimeout, WriteTimeout time.Duration
	// Backoff paces retries of a failed listen or accept; the zero value
	// is 1 s doubling to 60 s, with jitter.
	Backoff bridges.Backoff
	// Sleep waits between retries and reports whether the full wait
	// passed; nil means bridges.Sleep. Tests make time virtual with it.
	Sleep func(ctx context.Context, d time.Duration) bool
	// ListenFunc opens the listener; nil means net.ListenConfig's Listen.
	// Tests wrap it to inject accept failures.
	ListenFunc func(ctx context.Context, network, address string) (net.Listener, error)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Log receives connection events; nil discards them.
	Log *slog.Logger
}

// Bridge is the line bridge. Build it with New; it is safe for concurrent
// use: Deliver, Typing, Status and Addr may be called from any goroutine
// while Start runs.
type Bridge struct {
	opts    Options
	norm    normalizer
	tracker *bridges.Tracker
	// prefix starts every connection id, so ids of an earlier process
	// (still in the journal) never name a connection of this one.
	prefix string

	mu     sync.Mutex
	nextID int              // last connection number given
	conns  map[string]*conn // welcomed connections, by chat id
	ln     net.Listener     // while listening
	bound  chan struct{}    // closed when ln is set (see Addr)
}

var (
	_ bridges.Bridge = (*Bridge)(nil)
	_ bridges.Typer  = (*Bridge)(nil)
)

// New validates the options and builds the bridge. It does no network IO.
func New(opts Options) (*Bridge, error) {
	if opts.Listen == "" {
		opts.Listen = DefaultListen
	}
	if _, _, err := net.SplitHostPort(opts.Listen); err != nil {
		return nil, fmt.Errorf("linebridge: listen address %q: %w", opts.Listen, err)
	}
	opts.AccountID = core.NormalizeAccountID(opts.AccountID)
	opts.AgentID = core.NormalizeAgentID(opts.AgentID)
	if opts.ChunkLimit <= 0 {
		opts.ChunkLimit = markup.DefaultLimit
	}
	if opts.HelloTimeout <= 0 {
		opts.HelloTimeout = DefaultHelloTimeout
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = DefaultWriteTimeout
	}
	if opts.Sleep == nil {
		opts.Sleep = bridges.Sleep
	}
	if opts.ListenFunc == nil {
		var lc net.ListenConfig
		opts.ListenFunc = lc.Listen
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	return &Bridge{
		opts:    opts,
		norm:    normalizer{accountID: opts.AccountID, agentID: opts.AgentID, session: opts.Session},
		tracker: bridges.NewTracker(Channel, opts.AccountID, opts.Now, nil),
		prefix:  fmt.Sprintf("%08x", rand.Uint32()),
		conns:   map[string]*conn{},
		bound:   make(chan struct{}),
	}, nil
}

// Name implements bridges.Bridge.
func (b *Bridge) Name() string { return Channel }

// AccountID implements bridges.Bridge.
func (b *Bridge) AccountID() string { return b.opts.AccountID }

// Status implements bridges.Bridge.
func (b *Bridge) Status() bridges.Status { return b.tracker.Status() }

// Addr returns the address the bridge listens on, waiting until Start has
// bound it or ctx ends. With a ":0" listen address it is how a program
// learns the port; the port may change when the bridge listens again
// after a failure.
func (b *Bridge) Addr(ctx context.Context) (net.Addr, error) {
	for {
		b.mu.Lock()
		ln, bound := b.ln, b.bound
		b.mu.Unlock()
		if ln != nil {
			return ln.Addr(), nil
		}
		select {
		case <-bound:
		case <-ctx.Done():
			return nil, fmt.Errorf("linebridge: not listening: %w", context.Cause(ctx))
		}
	}
}

// Start implements bridges.Bridge: it listens, reports StateConnected, and
// serves each connection on a goroutine of its own until ctx ends; then
// it closes the listener and every connection, waits for their goroutines
// and returns nil. A failure to listen or accept (the address is in use,
// the process is out of file descriptors) is transient: it reports
// StateTransientDisconnect with the error, backs off and tries again. No
// failure of this platform is terminal, so Start never returns an error.
func (b *Bridge) Start(ctx context.Context, sink bridges.Sink) error {
	b.setState(sink, bridges.StateStarting, nil)
	// One per connection; each closes its connection when ctx ends.
	var wg sync.WaitGroup
	defer func() {
		wg.Wait()
		b.setState(sink, bridges.StateStopped, nil)
	}()
	failures := 0
	for {
		ln, err := b.opts.ListenFunc(ctx, "tcp", b.opts.Listen)
		if err == nil {
			var served bool
			served, err = b.serve(ctx, ln, sink, &wg)
			if served {
				failures = 0
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		delay := b.opts.Backoff.Delay(failures)
		b.setState(sink, bridges.StateTransientDisconnect, bridges.RetryIn(fmt.Errorf("linebridge: listen on %s: %w", b.opts.Listen, err), delay))
		if !b.opts.Sleep(ctx, delay) {
			return nil
		}
		failures++
	}
}

// serve accepts connections on ln until ctx ends (nil) or ln fails for
// good (its error). served reports that a connection was accepted, so
// Start's backoff starts over. A failed Accept on a listener that still
// works (out of file descriptors) is retried after a backoff, as
// net/http's Server does; the state says connected again once an Accept
// succeeds, since nothing tells sooner that the cause has gone.
func (b *Bridge) serve(ctx context.Context, ln net.Listener, sink bridges.Sink, wg *sync.WaitGroup) (served bool, err error) {
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	defer ln.Close()
	b.setListener(ln)
	defer b.setListener(nil)
	b.opts.Log.Info("listening", "addr", ln.Addr().String())
	b.setState(sink, bridges.StateConnected, nil)
	for failures := 0; ; {
		nc, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return served, err
			}
			delay := b.opts.Backoff.Delay(failures)
			b.setState(sink, bridges.StateTransientDisconnect, bridges.RetryIn(fmt.Errorf("linebridge: accept: %w", err), delay))
			if !b.opts.Sleep(ctx, delay) {
				return served, ctx.Err()
			}
			failures++
			continue
		}
		if failures > 0 {
			failures = 0
			b.setState(sink, bridges.StateConnected, nil)
		}
		served = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.handle(ctx, sink, b.newConn(nc))
		}()
	}
}

// setListener records the listener Addr reports (nil: none).
func (b *Bridge) setListener(ln net.Listener) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ln = ln
	if ln != nil {
		close(b.bound)
	} else {
		b.bound = make(chan struct{})
	}
}

// setState records a state for Status and reports it to the sink, which
// logs changes (the supervisor's gate does).
func (b *Bridge) setState(sink bridges.Sink, s bridges.State, err error) {
	b.tracker.Set(s, err)
	sink.State(s, err)
}
