package whatsapp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/core"
)

// Channel is the bridge's channel name.
const Channel = "whatsapp"

// DefaultChunkLimit is WhatsApp's text chunk limit (openclaw-facts §5.3).
const DefaultChunkLimit = 4000

// Options configure a Bridge.
type Options struct {
	// Store is the device store (OpenStore); required. The bridge does
	// not close it.
	Store *Store
	// NewClient builds the WhatsApp client for a device; nil means
	// NewWhatsmeowClient. Tests pass a fake.
	NewClient NewClientFunc
	// AccountID names the account; empty means "default".
	AccountID string
	// AgentID is the agent that answers; empty means the default agent.
	AgentID string
	// Session configures session keys (dmScope).
	Session core.SessionConfig
	// ChunkLimit is the longest text message; zero means 4000.
	ChunkLimit int
	// MentionPatterns are regexes that count as mentioning the bot in a
	// group.
	MentionPatterns []string
	// MediaDir is where inbound attachments are saved and the only local
	// folder outbound media may come from.
	MediaDir string
	// MaxMediaBytes caps one attachment in or out; zero means
	// bridges.DefaultMaxMediaBytes.
	MaxMediaBytes int64
	// MediaClient fetches outbound media URLs (which the model may
	// choose); nil means the egress client, which refuses private and
	// metadata addresses. Tests of local servers set their own.
	MediaClient *http.Client
	// HTTPClient fetches outbound media URLs; nil means a default client.
	HTTPClient *http.Client
	// SendReadReceipts marks messages read once they are journaled.
	SendReadReceipts bool
	// Backoff paces reconnects after transient failures.
	Backoff bridges.Backoff
	// Sleep waits between reconnects; nil means a timer. Tests make time
	// virtual with it.
	Sleep func(ctx context.Context, d time.Duration) bool
	// Log receives connection events; nil discards them.
	Log *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Bridge is the WhatsApp bridge: one linked device (a WhatsApp Web
// companion) through whatsmeow. Build it with New.
type Bridge struct {
	opts        Options
	mediaClient *http.Client
	tracker     *bridges.Tracker
	mentions    bridges.Mentions
	recent      *recentMessages

	// conn carries connection events from whatsmeow's goroutines to the
	// session loop.
	conn chan any
	// relinked wakes a Start that waits for a device after a login
	// linked one.
	relinked chan struct{}
	// loggedOut is set by an explicit logout, so a session between
	// reconnects does not try the deleted device again.
	loggedOut atomic.Bool

	mu      sync.Mutex
	sink    bridges.Sink
	runCtx  context.Context
	cli     Client
	dev     *store.Device
	login   *Link
	started bool

	// ownsStore is set when the bridge opened opts.Store itself
	// (Descriptor), so Close closes it.
	ownsStore bool
}

var (
	_ bridges.Bridge        = (*Bridge)(nil)
	_ bridges.Typer         = (*Bridge)(nil)
	_ bridges.TypingStopper = (*Bridge)(nil)
	_ bridges.Reactor       = (*Bridge)(nil)
	_ bridges.Logouter      = (*Bridge)(nil)
	_ bridges.LoginFlow     = (*Bridge)(nil)
)

// New validates the options and builds the bridge; it does no IO.
func New(opts Options) (*Bridge, error) {
	if opts.Store == nil {
		return nil, errors.New("whatsapp: a device store is required (OpenStore)")
	}
	if opts.NewClient == nil {
		opts.NewClient = NewWhatsmeowClient
	}
	if opts.AccountID == "" {
		opts.AccountID = "default"
	}
	if opts.AgentID == "" {
		opts.AgentID = core.DefaultAgentID
	}
	if opts.ChunkLimit <= 0 || opts.ChunkLimit > DefaultChunkLimit {
		opts.ChunkLimit = DefaultChunkLimit
	}
	if opts.MaxMediaBytes <= 0 {
		opts.MaxMediaBytes = bridges.DefaultMaxMediaBytes
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Transport: http.DefaultTransport}
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
		return nil, fmt.Errorf("whatsapp: %w", err)
	}
	return &Bridge{
		mediaClient: bridges.MediaClient(opts.MediaClient, opts.MaxMediaBytes),
		opts:        opts, mentions: mentions, recent: newRecentMessages(recentLimit),
		tracker:  bridges.NewTracker(Channel, opts.AccountID, opts.Now, nil),
		conn:     make(chan any, 64),
		relinked: make(chan struct{}, 1),
	}, nil
}

// Close ends a linking under way and closes the device store when the
// bridge opened it (built by its Descriptor); call it after Start has
// returned. A store passed in Options is the caller's to close.
func (b *Bridge) Close() error {
	b.mu.Lock()
	pending := b.login
	b.login = nil
	b.mu.Unlock()
	if pending != nil {
		// A link under way must not outlive the store.
		pending.Close()
	}
	if !b.ownsStore {
		return nil
	}
	return b.opts.Store.Close()
}

// Name implements bridges.Bridge.
func (b *Bridge) Name() string { return Channel }

// AccountID implements bridges.Bridge.
func (b *Bridge) AccountID() string { return b.opts.AccountID }

// Status implements bridges.Bridge.
func (b *Bridge) Status() bridges.Status { return b.tracker.Status() }

func (b *Bridge) setState(s bridges.State, err error) {
	b.tracker.Set(s, err)
	b.mu.Lock()
	sink := b.sink
	b.mu.Unlock()
	if sink != nil {
		sink.State(s, err)
	}
}

// errNotLinked is the state of a store without a linked device.
var errNotLinked = errors.New("no WhatsApp account is linked: run `switchboard whatsapp link` (or link from the web page), then the bridge connects")

// Start implements bridges.Bridge. It runs the linked device until ctx
// ends. Disconnects and keepalive failures are transient: it reconnects
// with backoff. A logout, a takeover by another client, a ban or an
// outdated client are terminal: the state says why and nothing
// reconnects, but Start keeps waiting, so a new link (LoginStart, from
// the web page) brings the bridge back without a restart. With no device
// linked it waits the same way.
func (b *Bridge) Start(ctx context.Context, sink bridges.Sink) error {
	b.mu.Lock()
	if b.started {
		b.mu.Unlock()
		return errors.New("whatsapp: the bridge is already running")
	}
	b.started, b.sink, b.runCtx = true, sink, ctx
	b.mu.Unlock()
	b.setState(bridges.StateStarting, nil)
	defer func() {
		b.setState(bridges.StateStopped, nil)
		b.mu.Lock()
		b.sink, b.started = nil, false
		pending := b.login
		b.login = nil
		b.mu.Unlock()
		if pending != nil {
			// A link under way must not outlive the store.
			pending.Close()
		}
	}()
	for ctx.Err() == nil {
		dev, err := b.opts.Store.Device(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			b.setState(bridges.StateFailed, err)
			return err
		}
		if dev.ID == nil {
			b.setState(bridges.StateLoggedOut, errNotLinked)
		} else {
			b.loggedOut.Store(false)
			b.session(ctx, dev)
		}
		select {
		case <-ctx.Done():
		case <-b.relinked:
			b.setState(bridges.StateStarting, nil)
		}
	}
	return nil
}

// session runs one linked device until a terminal event or ctx.
func (b *Bridge) session(ctx context.Context, dev *store.Device) {
	cli := b.opts.NewClient(dev, b.opts.Log)
	id := cli.AddEventHandlerWithSuccessStatus(b.handle)
	b.mu.Lock()
	b.cli, b.dev = cli, dev
	b.mu.Unlock()
	defer func() {
		cli.RemoveEventHandler(id)
		cli.Disconnect()
		b.mu.Lock()
		if b.cli == cli {
			b.cli, b.dev = nil, nil
		}
		b.mu.Unlock()
	}()
	b.drainConn()
	announced := false
	for attempt := 0; ; attempt++ {
		if b.loggedOut.Load() {
			b.setState(bridges.StateLoggedOut, classify(ownerLogout{}, b.opts.Now()).err)
			return
		}
		var failed error
		if err := cli.ConnectContext(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			failed = fmt.Errorf("whatsapp: connect: %w", err)
		} else if over, err := b.connected(ctx, cli, dev, &announced, &attempt); over {
			return // terminal, or ctx ended
		} else {
			failed = err
		}
		delay := b.opts.Backoff.Delay(attempt)
		b.setState(bridges.StateTransientDisconnect, bridges.RetryIn(failed, delay))
		if !b.opts.Sleep(ctx, delay) {
			return
		}
	}
}

// connected follows one connection's events. It returns true when the
// session is over (a terminal event or ctx), false with the reason to
// reconnect, which the caller reports with its delay.
func (b *Bridge) connected(ctx context.Context, cli Client, dev *store.Device, announced *bool, attempt *int) (bool, error) {
	for {
		select {
		case <-ctx.Done():
			return true, nil
		case ev := <-b.conn:
			c := classify(ev, b.opts.Now())
			switch c.kind {
			case evConnected:
				*attempt = -1 // the next failure starts the backoff over
				b.setState(bridges.StateConnected, nil)
				if !*announced {
					*announced = true
					b.notice(ctx, "WhatsApp connected as "+ownLabel(dev)+".")
				}
			case evDegraded:
				b.setState(bridges.StateTransientDisconnect, c.err)
			case evReconnect:
				cli.Disconnect()
				return false, c.err
			case evTerminal:
				b.setState(c.state, c.err)
				b.opts.Log.Warn("whatsapp: stopped reconnecting", "reason", c.err)
				return true, nil
			}
		}
	}
}

// drainConn drops connection events left from an earlier session.
func (b *Bridge) drainConn() {
	for {
		select {
		case <-b.conn:
		default:
			return
		}
	}
}

// handle is the whatsmeow event handler. Messages are journaled before it
// returns (a false return withholds the ack, so WhatsApp redelivers);
// connection events go to the session loop.
func (b *Bridge) handle(evt any) bool {
	switch e := evt.(type) {
	case *events.Message:
		return b.onMessage(e)
	default:
		if isConnEvent(evt) {
			select {
			case b.conn <- evt:
			default:
				b.opts.Log.Warn("whatsapp: connection events backed up; one dropped", "event", fmt.Sprintf("%T", evt))
			}
		}
	}
	return true
}

// notice hands a connect notice to the sink when it takes notices.
func (b *Bridge) notice(ctx context.Context, text string) {
	b.mu.Lock()
	sink := b.sink
	b.mu.Unlock()
	if ns, ok := sink.(bridges.NoticeSink); ok {
		if err := ns.Notice(ctx, b.opts.AgentID, text, "whatsapp:connected"); err != nil {
			b.opts.Log.Warn("whatsapp: connect notice failed", "err", err)
		}
	}
}

// client returns the running client and its device, if connected.
func (b *Bridge) client() (Client, *store.Device, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cli == nil || b.dev == nil || b.dev.ID == nil {
		return nil, nil, fmt.Errorf("whatsapp is not connected (%s)", b.tracker.Status().State)
	}
	return b.cli, b.dev, nil
}

// ownLabel names the linked account: its phone number, else its JID.
func ownLabel(dev *store.Device) string {
	if dev == nil || dev.ID == nil {
		return "(not linked)"
	}
	if e := e164(dev.ID.ToNonAD()); e != "" {
		return e
	}
	return dev.ID.ToNonAD().String()
}

// isMe reports whether jid is the linked account (by phone number or
// LID, any device).
func isMe(dev *store.Device, jid types.JID) bool {
	if dev == nil || jid.IsEmpty() {
		return false
	}
	u := jid.ToNonAD()
	if dev.ID != nil && u.User == dev.ID.User && u.Server == dev.ID.Server {
		return true
	}
	return !dev.LID.IsEmpty() && u.User == dev.LID.User && u.Server == dev.LID.Server
}
