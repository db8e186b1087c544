package client

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/switchboardhq/switchboard/gateway/auth"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// connectID is the id of the connect request.
const connectID = "connect"

// ConnectError is a handshake the gateway refused: a failed connect response
// followed by the server closing the socket, or a close without any response
// (a pre-auth frame too large, an invalid first frame). Whether to retry
// depends on Err's details (see Detail) and the close code.
type ConnectError struct {
	// Err is the connect response's error, or nil when the server closed
	// without responding.
	Err *protocol.ErrorShape
	// CloseCode is the server's close code, e.g. protocol.ClosePolicyViolation;
	// 1006 when the socket ended without a close frame, including when ctx
	// ended before the server closed.
	CloseCode int
	// CloseReason is the server's close reason.
	CloseReason string
}

// Error describes the rejection and the close.
func (e *ConnectError) Error() string {
	msg := "gateway client: connection closed during handshake"
	if e.Err != nil {
		msg = "gateway client: connect rejected: " + e.Err.Error()
	}
	return fmt.Sprintf("%s (close %d %q)", msg, e.CloseCode, e.CloseReason)
}

// Unwrap returns Err, so errors.As finds the *protocol.ErrorShape.
func (e *ConnectError) Unwrap() error {
	if e.Err == nil {
		return nil
	}
	return e.Err
}

// Dial connects to the gateway and completes the handshake (openclaw-facts
// §1.4): it waits for connect.challenge, sends connect with id "connect",
// signed with Options.Device when set, and waits for hello-ok. A refusal is
// a *ConnectError, returned once the server has closed the socket so that
// the close code is known. ctx bounds the whole handshake; the Client
// outlives it.
func Dial(ctx context.Context, o Options) (*Client, error) {
	c, err := DialRaw(ctx, o)
	if err != nil {
		return nil, err
	}
	if err := c.handshake(ctx); err != nil {
		c.abort()
		return nil, err
	}
	return c, nil
}

func (c *Client) handshake(ctx context.Context) error {
	ev, err := c.Next(ctx, func(e Event) bool { return e.Name == protocol.EventConnectChallenge })
	if err != nil {
		return c.refused(ctx, nil, err)
	}
	if err := json.Unmarshal(ev.Payload, &c.challenge); err != nil || c.challenge.Nonce == "" {
		return fmt.Errorf("gateway client: connect.challenge without a nonce: %s", ev.Raw)
	}
	p := c.connectParams()
	if c.opts.RawConnect != nil {
		c.opts.RawConnect(&p)
	}
	s, err := c.request(ctx, connectID, "connect", p)
	if err != nil {
		return c.refused(ctx, nil, err)
	}
	defer s.Close()
	r, err := s.Next(ctx)
	if err != nil {
		return c.refused(ctx, nil, err)
	}
	if !r.OK {
		return c.refused(ctx, r.errorShape(), nil)
	}
	var h protocol.HelloOk
	if err := json.Unmarshal(r.Payload, &h); err != nil || h.Type != protocol.TypeHelloOk {
		return fmt.Errorf("gateway client: connect: response is not hello-ok: %.200s", r.Raw)
	}
	if h.Protocol < p.MinProtocol || h.Protocol > p.MaxProtocol {
		return fmt.Errorf("gateway client: connect: server chose protocol %d outside the offered %d..%d", h.Protocol, p.MinProtocol, p.MaxProtocol)
	}
	c.hello, c.helloRaw = &h, r.Payload
	return nil
}

// refused turns a handshake failure into its error. A rejection (rej set)
// becomes a *ConnectError once the server has closed the socket or ctx has
// ended. Without a rejection, ctx ending wins, since a write interrupted by
// ctx also closes the socket; a connection the server closed becomes a
// *ConnectError, and anything else is returned wrapped.
func (c *Client) refused(ctx context.Context, rej *protocol.ErrorShape, err error) error {
	if rej == nil {
		if ctx.Err() != nil {
			return fmt.Errorf("gateway client: connect: %w", ctx.Err())
		}
		if !errors.Is(err, ErrClosed) {
			return fmt.Errorf("gateway client: connect: %w", err)
		}
	}
	select {
	case <-c.done:
	case <-ctx.Done():
		c.abort()
	}
	return &ConnectError{Err: rej, CloseCode: c.code, CloseReason: c.reason}
}

// connectParams builds the connect params from the options, signing the
// challenge when a device key is set.
func (c *Client) connectParams() protocol.ConnectParams {
	o := c.opts
	p := protocol.ConnectParams{
		MinProtocol: cmp.Or(o.MinProtocol, protocol.MinProtocol),
		MaxProtocol: cmp.Or(o.MaxProtocol, protocol.MaxProtocol),
		Client:      o.Client,
		Caps:        slices.Clone(o.Caps),
		Role:        cmp.Or(o.Role, protocol.RoleOperator),
		Scopes:      append([]string{}, o.Scopes...), // [] rather than null
	}
	p.Client.ID = cmp.Or(p.Client.ID, protocol.ClientCLI)
	p.Client.Version = cmp.Or(p.Client.Version, "switchboard")
	p.Client.Platform = cmp.Or(p.Client.Platform, runtime.GOOS)
	p.Client.Mode = cmp.Or(p.Client.Mode, protocol.ModeCLI)
	if o.Token != "" || o.Password != "" || o.DeviceToken != "" || o.BootstrapToken != "" {
		p.Auth = &protocol.ConnectAuth{
			Token:          o.Token,
			Password:       o.Password,
			DeviceToken:    o.DeviceToken,
			BootstrapToken: o.BootstrapToken,
		}
	}
	if o.Device != nil {
		now := time.Now
		if o.Now != nil {
			now = o.Now
		}
		p.Device = signConnect(o.Device, p, c.challenge.Nonce, now())
	}
	return p
}

// signConnect builds the device proof for p: the v3 payload over the
// challenge nonce, signed at now (openclaw-facts §1.6).
func signConnect(priv ed25519.PrivateKey, p protocol.ConnectParams, nonce string, now time.Time) *protocol.ConnectDevice {
	pub := priv.Public().(ed25519.PublicKey)
	d := &protocol.ConnectDevice{
		ID:        auth.DeviceIDFromPublicKey(pub),
		PublicKey: auth.EncodePublicKey(pub),
		SignedAt:  now.UnixMilli(),
		Nonce:     nonce,
	}
	d.Signature = auth.SignPayload(priv, auth.PayloadV3(auth.SignatureFields{
		DeviceID:     d.ID,
		ClientID:     p.Client.ID,
		ClientMode:   p.Client.Mode,
		Role:         p.Role,
		Scopes:       p.Scopes,
		SignedAtMs:   d.SignedAt,
		Token:        auth.SignatureToken(p.Auth),
		Nonce:        nonce,
		Platform:     p.Client.Platform,
		DeviceFamily: p.Client.DeviceFamily,
	}))
	return d
}
