package gateway

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// Timeouts of web.login.start (waiting for the first code) and
// web.login.wait (waiting for the scan), in milliseconds, when the client
// gives none; maxLoginMs caps what a client may ask for.
const (
	defaultLoginStartMs = 30_000
	defaultLoginWaitMs  = 120_000
	maxLoginMs          = 600_000
)

// LoginRequest is what web.login.start and web.login.wait ask of the
// backend.
type LoginRequest struct {
	// Channel is the bridge whose account is linked; empty (OpenClaw's
	// clients never name one) means the one bridge linked by QR code.
	Channel string
	// AccountID names the account ("default" when the client names none).
	AccountID string
	// Phone, for LoginStart, asks for a pairing code for this number
	// (international form, "+15551234567") instead of a QR code.
	Phone string
	// Force, for LoginStart, logs a linked account out first and links
	// anew; without it a linked account is left alone.
	Force bool
}

// LoginResult is what the backend's login hooks report. It holds no
// secret: a QR code or a pairing code is only useful to the phone that
// scans or types it within a minute or two.
type LoginResult struct {
	// Message says what to do next or what happened, for the user.
	Message string
	// QR is the payload to show as a QR code: the first one (LoginStart),
	// or a fresh one that replaces it (LoginWait).
	QR string
	// QRDataURL is QR as a PNG data: URL, for the web page.
	QRDataURL string
	// PairingCode is the code to type on the phone (LoginStart with a
	// phone number).
	PairingCode string
	// Connected reports that linking finished (LoginWait).
	Connected bool
	// Account names the linked account once Connected (a phone number).
	Account string
}

// loginParams are the params of web.login.start and web.login.wait
// (OpenClaw's WebLoginStartParams and WebLoginWaitParams, plus channel and
// phone). Members Switchboard does not act on (verbose) are ignored.
type loginParams struct {
	Force     bool   `json:"force"`
	TimeoutMs *int64 `json:"timeoutMs"`
	AccountID string `json:"accountId"`
	Channel   string `json:"channel"`
	Phone     string `json:"phone"`
}

// decodeLogin reads web.login.* params with their defaults.
func decodeLogin(req protocol.RequestFrame, defaultMs int64) (LoginRequest, time.Duration, *protocol.ErrorShape) {
	var p loginParams
	if e := decodeParamsLenient(req, &p); e != nil {
		return LoginRequest{}, 0, e
	}
	ms := defaultMs
	if p.TimeoutMs != nil {
		if *p.TimeoutMs <= 0 || *p.TimeoutMs > maxLoginMs {
			return LoginRequest{}, 0, invalidParams(req.Method, fmt.Sprintf("timeoutMs must be between 1 and %d", maxLoginMs))
		}
		ms = *p.TimeoutMs
	}
	lr := LoginRequest{Channel: p.Channel, AccountID: p.AccountID, Phone: p.Phone, Force: p.Force}
	if lr.AccountID == "" {
		lr.AccountID = "default"
	}
	return lr, time.Duration(ms) * time.Millisecond, nil
}

// loginHook returns the backend's hook for web.login.start (start) or
// web.login.wait, or the error to answer when there is none.
func (s *Server) loginHook(start bool) (func(context.Context, LoginRequest) (LoginResult, error), *protocol.ErrorShape) {
	b := s.backend.Load()
	hook := b.LoginWait
	if start {
		hook = b.LoginStart
	}
	if hook == nil {
		return nil, protocol.NewError(protocol.CodeUnavailable, "no bridge that links by QR code runs in this process; enable one under channels: and restart")
	}
	return hook, nil
}

// mWebLoginStart begins linking (a QR code, or a pairing code for
// phone). It answers asynchronously: reaching the platform for the first
// code takes a moment, and the connection's other requests go on
// meanwhile.
func (s *Server) mWebLoginStart(_ context.Context, c *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	lr, timeout, e := decodeLogin(req, defaultLoginStartMs)
	if e != nil {
		return nil, e
	}
	hook, e := s.loginHook(true)
	if e != nil {
		return nil, e
	}
	s.later(c, req, timeout, func(ctx context.Context) (any, *protocol.ErrorShape) {
		res, err := hook(ctx, lr)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
				return nil, protocol.Unavailable(fmt.Sprintf("no code to link %s arrived within %d ms; check this machine's connection and start again", lr.Channel, timeout.Milliseconds()), 0)
			}
			return nil, errorShape(err)
		}
		out := map[string]any{"message": res.Message}
		putLoginCode(out, res)
		if res.PairingCode != "" {
			out["pairingCode"] = res.PairingCode
		}
		return out, nil
	})
	return respondLater, nil
}

// mWebLoginWait waits for the linking web.login.start began: connected
// once the phone confirmed, a fresh QR code when the shown one expired
// (show it instead), or connected false when timeoutMs passed first (call
// again).
func (s *Server) mWebLoginWait(_ context.Context, c *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	lr, timeout, e := decodeLogin(req, defaultLoginWaitMs)
	if e != nil {
		return nil, e
	}
	// force and phone belong to web.login.start; a client that sends its
	// start params again is not refused for it.
	lr.Force, lr.Phone = false, ""
	hook, e := s.loginHook(false)
	if e != nil {
		return nil, e
	}
	s.later(c, req, timeout, func(ctx context.Context) (any, *protocol.ErrorShape) {
		res, err := hook(ctx, lr)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
				return map[string]any{"connected": false, "message": "Still waiting for the code to be scanned; call web.login.wait again."}, nil
			}
			return nil, errorShape(err)
		}
		out := map[string]any{"connected": res.Connected, "message": res.Message}
		putLoginCode(out, res)
		if res.Account != "" {
			out["account"] = res.Account
		}
		return out, nil
	})
	return respondLater, nil
}

// putLoginCode adds a result's QR code to a payload.
func putLoginCode(out map[string]any, res LoginResult) {
	if res.QR != "" {
		out["qr"] = res.QR
	}
	if res.QRDataURL != "" {
		out["qrDataUrl"] = res.QRDataURL
	}
}

// later answers req from a goroutine owned by the connection, with fn's
// result, fn running under the connection's context bounded by timeout.
// Nothing is answered once the connection is gone.
func (s *Server) later(c *conn, req protocol.RequestFrame, timeout time.Duration, fn func(ctx context.Context) (any, *protocol.ErrorShape)) {
	c.inflight.Add(1)
	go func() {
		defer c.inflight.Done()
		ctx, cancel := context.WithTimeout(c.ctx, timeout)
		defer cancel()
		payload, e := fn(ctx)
		if c.ctx.Err() != nil {
			return
		}
		s.answer(c, req, payload, e)
	}()
}
