// Package client is a Go client for the gateway's WebSocket protocol,
// OpenClaw protocol v3 and v4 (openclaw-facts §1). Dial performs the connect
// handshake, optionally proving an Ed25519 device identity; the Client then
// matches responses to requests by id and delivers server events on a
// channel.
//
// It serves the gateway's protocol tests and benchmarks and the CLI commands
// that talk to a running daemon. A Client is one connection: it neither
// reconnects nor watches ticks, so a long-lived caller redials when Closed
// fires. One goroutine per Client reads the socket; every method is safe for
// concurrent use.
package client

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/switchboardhq/switchboard/gateway/auth"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// readLimit caps one inbound frame at the protocol's frame limit; the
// library's default of 32 KiB is smaller than a hello-ok.
const readLimit = protocol.MaxPayloadBytes

// ErrClosed is wrapped by every error caused by the connection having ended;
// CloseErr tells how it ended.
var ErrClosed = errors.New("gateway client: connection closed")

// Options configures Dial. The zero value of every field but URL is a
// documented default.
type Options struct {
	// URL is the gateway's address, e.g. ws://127.0.0.1:18789/. It may appear
	// in error messages, so credentials belong in Token, Password or
	// DeviceToken, never in the URL.
	URL string
	// Header is sent with the upgrade request, e.g. an Origin to look like
	// a browser.
	Header http.Header
	// HTTPClient performs the upgrade; nil means http.DefaultClient.
	HTTPClient *http.Client
	// MinProtocol and MaxProtocol are the offered protocol range; zero
	// means protocol.MinProtocol and protocol.MaxProtocol (3 and 4).
	MinProtocol, MaxProtocol int
	// Client describes this program; empty fields default to id "cli",
	// version "switchboard", platform runtime.GOOS and mode "cli".
	Client protocol.ClientInfo
	// Role is the requested role; empty means protocol.RoleOperator.
	Role string
	// Scopes are the requested operator scopes. A gateway clears them for
	// an operator without a device identity (openclaw-facts §1.4 step 7).
	Scopes []string
	// Caps are declared capabilities, e.g. protocol.CapToolEvents.
	Caps []string
	// Token, Password, DeviceToken and BootstrapToken are sent in connect's
	// auth when non-empty.
	Token, Password, DeviceToken, BootstrapToken string
	// Device, when set, proves a device identity: the v3 payload, bound to
	// the challenge nonce, is signed with it (openclaw-facts §1.6).
	Device ed25519.PrivateKey
	// Now is the clock for device.signedAt; nil means time.Now. (The v4
	// docs suggest the challenge's ts instead; both pass the server's
	// two-minute skew check.)
	Now func() time.Time
	// RawConnect, when set, may edit the connect params after they are
	// built and signed and before they are sent, so tests can send invalid
	// params or a corrupted device proof.
	RawConnect func(p *protocol.ConnectParams)
	// EventBuffer is the capacity of the Events channel; zero means 1024.
	EventBuffer int
}

// Event is one event frame from the server.
type Event struct {
	// Name is the event name, e.g. "tick" or "chat".
	Name string
	// Payload is the event body, or nil when the frame had none.
	Payload json.RawMessage
	// Seq is the sequence number, or nil when the frame had none (targeted
	// sends, the connect challenge).
	Seq *int64
	// StateVersion is the presence and health versions, or nil.
	StateVersion *protocol.StateVersion
	// Raw is the whole frame as received.
	Raw []byte
}

// Client is one connection to a gateway. Create it with Dial (or DialRaw)
// and release it with Close.
type Client struct {
	ws     *websocket.Conn
	opts   Options
	events chan Event
	done   chan struct{} // closed when the reader has exited

	nextID    atomic.Uint64
	closing   atomic.Bool // Close has begun
	dropped   atomic.Int64
	badFrames atomic.Int64

	mu      sync.Mutex // guards streams
	streams map[string]*Stream

	closeOnce sync.Once
	closeErr  error

	// Written by the reader before done is closed.
	code   int
	reason string

	// Written by the handshake before Dial returns.
	challenge protocol.ChallengePayload
	hello     *protocol.HelloOk
	helloRaw  json.RawMessage
}

// DialRaw opens a socket to the gateway without the connect handshake, for
// tests of what a server does with a client that misbehaves: the
// connect.challenge arrives on Events, and Send, Watch and Call work as
// after Dial. ctx bounds only the HTTP upgrade.
func DialRaw(ctx context.Context, o Options) (*Client, error) {
	if o.Device != nil && len(o.Device) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("gateway client: device key has %d bytes, want %d", len(o.Device), ed25519.PrivateKeySize)
	}
	ws, _, err := websocket.Dial(ctx, o.URL, &websocket.DialOptions{
		HTTPClient: o.HTTPClient,
		HTTPHeader: o.Header.Clone(),
	})
	if err != nil {
		return nil, fmt.Errorf("gateway client: dial: %w", err)
	}
	ws.SetReadLimit(readLimit)
	n := o.EventBuffer
	if n <= 0 {
		n = 1024
	}
	c := &Client{
		ws:      ws,
		opts:    o,
		events:  make(chan Event, n),
		done:    make(chan struct{}),
		streams: make(map[string]*Stream),
	}
	go c.read()
	return c, nil
}

// read is the connection's only reader: it routes responses to their
// streams and events to the channel until the socket ends.
func (c *Client) read() {
	for {
		_, data, err := c.ws.Read(context.Background())
		if err != nil {
			c.finish(err)
			return
		}
		c.route(data)
	}
}

// inbound is the union of the response and event frames.
type inbound struct {
	Type         string                 `json:"type"`
	ID           string                 `json:"id"`
	OK           bool                   `json:"ok"`
	Payload      json.RawMessage        `json:"payload"`
	Error        *protocol.ErrorShape   `json:"error"`
	Event        string                 `json:"event"`
	Seq          *int64                 `json:"seq"`
	StateVersion *protocol.StateVersion `json:"stateVersion"`
}

// route delivers one frame. Like OpenClaw's reference client it skips frames
// it cannot parse, counting them in BadFrames. A full event channel never
// blocks the reader, which would also stall every response: the event is
// dropped and counted in DroppedEvents.
func (c *Client) route(data []byte) {
	var f inbound
	if err := json.Unmarshal(data, &f); err != nil {
		c.badFrames.Add(1)
		return
	}
	switch f.Type {
	case protocol.TypeResponse:
		c.mu.Lock()
		s := c.streams[f.ID]
		c.mu.Unlock()
		if s != nil {
			s.push(Response{ID: f.ID, OK: f.OK, Payload: f.Payload, Error: f.Error, Raw: data})
		}
	case protocol.TypeEvent:
		ev := Event{Name: f.Event, Payload: f.Payload, Seq: f.Seq, StateVersion: f.StateVersion, Raw: data}
		select {
		case c.events <- ev:
		default:
			c.dropped.Add(1)
		}
	default:
		c.badFrames.Add(1)
	}
}

// finish records how the socket ended, then wakes every waiter.
func (c *Client) finish(err error) {
	var ce websocket.CloseError
	switch {
	case errors.As(err, &ce):
		c.code, c.reason = int(ce.Code), ce.Reason
	case errors.Is(err, websocket.ErrMessageTooBig):
		c.code, c.reason = int(websocket.StatusMessageTooBig), "message too big"
	case c.closing.Load():
		// Close's handshake read the server's acknowledgement itself,
		// between two of the reader's reads.
		c.code = int(websocket.StatusNormalClosure)
	default:
		c.code = int(websocket.StatusAbnormalClosure)
	}
	close(c.events)
	close(c.done)
}

// closedError is the error for an operation on an ended connection; call it
// only after done is closed.
func (c *Client) closedError() error {
	return fmt.Errorf("%w (close %d %q)", ErrClosed, c.code, c.reason)
}

// Send writes one raw text frame, for tests of how the server treats frames
// a well-behaved client never sends. As with every write, a ctx that ends
// mid-frame closes the connection.
func (c *Client) Send(ctx context.Context, frame []byte) error {
	if err := c.ws.Write(ctx, websocket.MessageText, frame); err != nil {
		if errors.Is(err, net.ErrClosed) {
			<-c.done // the reader's Read fails at once on a closed socket
			return c.closedError()
		}
		return fmt.Errorf("gateway client: write: %w", err)
	}
	return nil
}

// Events returns the channel of server events. It is closed when the
// connection ends. Events that arrive while it is full are dropped and
// counted in DroppedEvents. Next reads the same channel.
func (c *Client) Events() <-chan Event { return c.events }

// Next returns the next event for which match reports true, discarding the
// events before it; a nil match takes any event. It fails with ctx's error,
// or with ErrClosed once the connection has ended and no event is left.
func (c *Client) Next(ctx context.Context, match func(Event) bool) (Event, error) {
	for {
		select {
		case ev, ok := <-c.events:
			if !ok {
				<-c.done
				return Event{}, c.closedError()
			}
			if match == nil || match(ev) {
				return ev, nil
			}
		case <-ctx.Done():
			return Event{}, ctx.Err()
		}
	}
}

// DroppedEvents returns how many events were dropped because the Events
// channel was full.
func (c *Client) DroppedEvents() int64 { return c.dropped.Load() }

// BadFrames returns how many frames from the server were skipped because
// they were not JSON objects of type "res" or "event".
func (c *Client) BadFrames() int64 { return c.badFrames.Load() }

// Close closes the connection normally (1000), waiting up to the
// library's 5 s for the server to acknowledge, and returns once the reader
// has exited. It is idempotent, and returns nil when the server had already
// closed the connection.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.closing.Store(true)
		err := c.ws.Close(websocket.StatusNormalClosure, "")
		<-c.done
		if err != nil && !errors.Is(err, net.ErrClosed) && websocket.CloseStatus(err) == -1 {
			c.closeErr = fmt.Errorf("gateway client: close: %w", err)
		}
	})
	return c.closeErr
}

// abort drops the connection without a close handshake and waits for the
// reader.
func (c *Client) abort() {
	_ = c.ws.CloseNow()
	<-c.done
}

// Closed returns a channel that is closed when the connection has ended,
// whichever side ended it.
func (c *Client) Closed() <-chan struct{} { return c.done }

// CloseErr returns the close status that ended the connection: the server's
// close frame, 1000 after this client's Close, 1009 when
// a frame exceeded the read limit, or 1006 when the connection ended without
// a close frame. It returns 0 and "" while the connection is open.
func (c *Client) CloseErr() (code int, reason string) {
	select {
	case <-c.done:
		return c.code, c.reason
	default:
		return 0, ""
	}
}

// Challenge returns the connect.challenge the handshake answered; it is zero
// for a client from DialRaw.
func (c *Client) Challenge() protocol.ChallengePayload { return c.challenge }

// Hello returns the decoded hello-ok, or nil for a client from DialRaw.
func (c *Client) Hello() *protocol.HelloOk { return c.hello }

// HelloRaw returns the hello-ok payload as received, for checks of the exact
// wire shape; nil for a client from DialRaw.
func (c *Client) HelloRaw() json.RawMessage { return c.helloRaw }

// Protocol returns the negotiated protocol version, or 0 for a client from
// DialRaw.
func (c *Client) Protocol() int {
	if c.hello == nil {
		return 0
	}
	return c.hello.Protocol
}

// DeviceID returns the device id a gateway derives from priv's public key:
// the lowercase sha256 hex of the raw key.
func DeviceID(priv ed25519.PrivateKey) string {
	return auth.DeviceIDFromPublicKey(priv.Public().(ed25519.PublicKey))
}
