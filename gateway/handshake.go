package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core/transcript"
	"github.com/switchboardhq/switchboard/gateway/auth"
	"github.com/switchboardhq/switchboard/gateway/protocol"
	"github.com/switchboardhq/switchboard/store"
)

// urlSecretParams are query parameters that would carry a secret in a URL,
// where proxies and browser histories log it. A request with one is
// refused before the upgrade.
var urlSecretParams = []string{"token", "password", "auth", "deviceToken", "bootstrapToken"}

// serveWS upgrades one HTTP request and runs the connection until it ends.
func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	if !s.hostAllowed(r.Host) {
		http.Error(w, s.misdirected(r.Host), http.StatusMisdirectedRequest)
		s.metrics.handshakes.WithLabelValues("host").Inc()
		return
	}
	q := r.URL.Query()
	for _, p := range urlSecretParams {
		if q.Has(p) {
			http.Error(w, "credentials are not accepted in the URL; send them in the connect request's auth object", http.StatusBadRequest)
			s.metrics.handshakes.WithLabelValues("url_secret").Inc()
			return
		}
	}
	ip, loopback := s.clientAddr(r)
	if err := s.hub.enterPreauth(ip); err != nil {
		http.Error(w, err.Error(), http.StatusTooManyRequests)
		s.metrics.handshakes.WithLabelValues("preauth_budget").Inc()
		return
	}
	inPreauth := true
	defer func() {
		if inPreauth {
			s.hub.leavePreauth(ip)
		}
	}()
	s.mu.Lock()
	if s.stopping.Load() {
		s.mu.Unlock()
		http.Error(w, "the gateway is stopping", http.StatusServiceUnavailable)
		return
	}
	s.connWG.Add(1)
	s.mu.Unlock()
	handedOff := false // to the connection's own goroutine, which then ends it
	defer func() {
		if !handedOff {
			s.connWG.Done()
		}
	}()

	ws, frames, err := acceptWS(w, r)
	if err != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &conn{
		srv: s, ws: ws, frames: frames, id: newUUID(), ip: ip, loopback: loopback,
		origin: r.Header.Get("Origin"), ctx: ctx, cancel: cancel, nonce: newUUID(),
	}
	c.log = s.log.With("conn", c.id)
	s.hub.add(c)
	s.metrics.connections.Inc()
	defer func() {
		if !handedOff {
			s.endConn(c)
		}
	}()

	challenge, _ := json.Marshal(protocol.ChallengePayload{Nonce: c.nonce, Ts: s.now().UnixMilli()})
	c.sendEvent(protocol.EventConnectChallenge, challenge, -1, nil, false, nil)
	timer := time.AfterFunc(time.Duration(s.cfg.HandshakeTimeoutMs)*time.Millisecond, func() {
		if !c.ready.Load() {
			s.metrics.handshakes.WithLabelValues("timeout").Inc()
			c.closeAsync(protocol.CloseNormal, "")
		}
	})
	ok := s.handshake(c, r)
	timer.Stop()
	s.hub.leavePreauth(ip)
	inPreauth = false
	if !ok {
		<-c.ctx.Done()
		return
	}
	s.presenceChanged()
	// The connection reads on a goroutine of its own from here, and this
	// handler returns: its stack, grown by the upgrade and the handshake
	// (JSON, signature checks) and never shrunk while a read blocks ~20
	// frames deep, goes, and so does the upgrade request. An idle client
	// then costs a small stack (BenchmarkIdleConnections10k).
	handedOff = true
	go func() {
		defer s.connWG.Done()
		defer s.endConn(c)
		s.readLoop(c)
	}()
}

// endConn ends a connection serveWS accepted: it stops its work, waits
// for its asynchronous answers, forgets it and closes the socket.
func (s *Server) endConn(c *conn) {
	c.cancel()
	c.inflight.Wait()
	s.hub.remove(c)
	s.metrics.connections.Dec()
	_ = c.ws.CloseNow()
	if c.ready.Load() {
		s.presenceChanged()
	}
}

// handshake runs openclaw-facts §1.4 on the first frame and reports whether
// the client is now connected. On failure it has queued the response and
// the close.
func (s *Server) handshake(c *conn, r *http.Request) bool {
	data, err := c.readMessage(c.ctx, protocol.MaxPreauthPayloadBytes, protocol.ReasonPreauthTooLarge)
	if err != nil {
		switch {
		case errors.Is(err, errTooBig):
			s.metrics.handshakes.WithLabelValues("preauth_too_large").Inc()
		case errors.Is(err, errBinaryFrame):
			c.closeAsync(protocol.ClosePolicyViolation, protocol.ReasonInvalidRequestFrame)
		default:
			c.cancel()
		}
		return false
	}
	req, err := protocol.DecodeRequest(data)
	if err != nil {
		s.metrics.handshakes.WithLabelValues("invalid_frame").Inc()
		c.closeAsync(protocol.ClosePolicyViolation, protocol.ReasonInvalidRequestFrame)
		return false
	}
	if req.Method != "connect" {
		return s.reject(c, req.ID, "not_connect", &protocol.Rejection{
			Error:     protocol.InvalidRequest(protocol.MessageFirstRequestMustBeConnect, nil),
			CloseCode: protocol.ClosePolicyViolation, CloseReason: protocol.MessageFirstRequestMustBeConnect,
		})
	}
	p, proto, rej := protocol.CheckConnect(req.Params)
	if rej != nil {
		return s.reject(c, req.ID, "invalid_connect", rej)
	}
	if c.origin != "" && !s.originAllowed(c.origin, r) {
		msg := "origin not allowed (open the web chat from the gateway's own address, or add " + c.origin + " to gateway.controlUi.allowedOrigins)"
		return s.reject(c, req.ID, "origin", &protocol.Rejection{
			Error:     protocol.InvalidRequest(msg, protocol.CodeDetails{Code: protocol.DetailControlUIOriginNotAllowed}),
			CloseCode: protocol.ClosePolicyViolation, CloseReason: "origin not allowed",
		})
	}

	g, rej := s.authenticate(c, p)
	if rej != nil {
		return s.reject(c, req.ID, g.outcome, rej)
	}
	c.protocol, c.role, c.scopes, c.params = proto, p.Role, g.scopes, p
	c.deviceID, c.secretGen, c.connected = g.deviceID, g.secretGen, s.now()
	hello, err := s.hello(c, g).MarshalFor(proto)
	if err != nil {
		c.log.Error("gateway: hello-ok could not be encoded", "err", err)
		return s.reject(c, req.ID, "internal", &protocol.Rejection{
			Error:     protocol.Unavailable("hello-ok could not be encoded", 0),
			CloseCode: protocol.ClosePolicyViolation, CloseReason: "internal error",
		})
	}
	c.log = c.log.With("client", p.Client.ID, "role", p.Role)
	// Counted before hello-ok leaves, so a client that has read it sees
	// itself in /metrics.
	s.metrics.handshakes.WithLabelValues("ok").Inc()
	c.respondReady(req.ID, json.RawMessage(hello))
	// A rotation between the grant and ready skipped this socket: close
	// it here as setSecret would have.
	if _, _, gen := s.currentSecret(); gen != c.secretGen {
		c.closeAsync(protocol.CloseAuthChanged, protocol.ReasonAuthChanged)
	}
	// A command-line call (switchboard's own commands, OpenClaw's
	// `gateway call`) connects for one request: at info level each one
	// would fill the daemon's terminal (issue 26, finding 10).
	level := slog.LevelInfo
	if p.Client.Mode == protocol.ModeCLI {
		level = slog.LevelDebug
	}
	c.log.Log(context.Background(), level, "gateway client connected", "protocol", proto, "ip", c.ip, "device", g.deviceID != "", "scopes", strings.Join(g.scopes, ","))
	return true
}

// reject answers a failed connect and closes the socket.
func (s *Server) reject(c *conn, id, outcome string, rej *protocol.Rejection) bool {
	s.metrics.handshakes.WithLabelValues(outcome).Inc()
	c.log.Info("gateway connect rejected", "outcome", outcome, "ip", c.ip, "code", rej.Error.Code, "message", rej.Error.Message)
	c.respond(id, nil, rej.Error)
	c.closeAsync(rej.CloseCode, rej.CloseReason)
	return false
}

// grant is what a successful authentication allows.
type grant struct {
	scopes      []string
	deviceID    string
	deviceToken string // issued in hello-ok
	issuedAt    int64
	secretGen   int64
	outcome     string // metrics label of a failure
}

// authenticate runs steps 6–9 of the handshake: shared secret (rate
// limited), device identity, device token, pairing.
func (s *Server) authenticate(c *conn, p protocol.ConnectParams) (grant, *protocol.Rejection) {
	now := s.now()
	mode, secret, gen := s.currentSecret()
	g := grant{secretGen: gen}
	fail := func(outcome, reason string, retry time.Duration) (grant, *protocol.Rejection) {
		g.outcome = outcome
		e := auth.ConnectFailureError(auth.ConnectFailure{
			Reason: reason, Mode: mode, Client: p.Client, Auth: p.Auth, HasDevice: p.Device != nil, RetryAfter: retry,
		})
		return g, &protocol.Rejection{Error: e, CloseCode: protocol.ClosePolicyViolation, CloseReason: protocol.TruncateCloseReason(e.Message)}
	}

	if ok, retry := s.authAllowed(c, p, auth.ScopeSharedSecret, now); !ok {
		return fail("rate_limited", auth.FailRateLimited, retry)
	}
	sharedFail := auth.CheckSharedSecret(mode, secret, p.Auth)

	if p.Device == nil {
		if sharedFail != "" && p.Auth != nil && p.Auth.BootstrapToken != "" && p.Auth.Token == "" {
			// A sign-in code pairs a device, so it needs one; it stays unspent.
			s.limiter.Failure(c.ip, auth.ScopeSharedSecret, now)
			e := protocol.NewError(protocol.CodeInvalidRequest, "a sign-in link needs a browser that can keep a device key (WebCrypto Ed25519); "+
				"paste the gateway token instead (switchboard gateway token prints it)")
			g.outcome = "auth_failed"
			return g, &protocol.Rejection{Error: e, CloseCode: protocol.ClosePolicyViolation, CloseReason: "sign-in link needs a device identity"}
		}
		if sharedFail != "" {
			s.limiter.Failure(c.ip, auth.ScopeSharedSecret, now)
			return fail("auth_failed", sharedFail, 0)
		}
		s.limiter.Success(c.ip, auth.ScopeSharedSecret)
		if p.Role != protocol.RoleOperator {
			g.outcome = "device_required"
			return g, &protocol.Rejection{Error: protocol.DeviceIdentityRequired(), CloseCode: protocol.ClosePolicyViolation, CloseReason: protocol.ReasonDeviceIdentityRequired}
		}
		// A shared-secret client without a device identity keeps the scopes
		// it asked for only on this machine (openclaw-facts §1.4 step 7).
		g.scopes = []string{}
		if c.loopback {
			g.scopes = p.Scopes
		}
		return g, nil
	}

	proof, fields, _ := auth.FromConnect(p)
	if err := auth.VerifyDevice(proof, fields, c.nonce, now); err != nil {
		var de *auth.DeviceError
		if !errors.As(err, &de) {
			de = &auth.DeviceError{Message: "device signature invalid", Reason: auth.ReasonSignature, Code: protocol.DetailDeviceAuthInvalid}
		}
		g.outcome = "device_" + strings.ReplaceAll(de.Reason, "-", "_")
		return g, &protocol.Rejection{Error: de.ErrorShape(), CloseCode: protocol.ClosePolicyViolation, CloseReason: de.Message}
	}
	g.deviceID = proof.ID
	b := s.backend.Load()
	if b == nil || b.Store == nil {
		g.outcome = "unavailable"
		e := protocol.Unavailable("device pairing is unavailable while the gateway starts", 500)
		return g, &protocol.Rejection{Error: e, CloseCode: protocol.ClosePolicyViolation, CloseReason: "gateway starting"}
	}
	ctx, cancel := context.WithTimeout(c.ctx, storeTimeout)
	defer cancel()

	// A one-time sign-in code the daemon printed stands for the token
	// holder on this machine only: the code sits in the daemon's log, and
	// a reader of a shipped log must not be able to pair a device from
	// elsewhere with it. It is spent now; the device pairs below.
	byCode := false
	if sharedFail != "" && c.loopback && p.Auth != nil && p.Auth.Token == "" && p.Auth.DeviceToken == "" &&
		p.Auth.BootstrapToken != "" && s.logins.spend(p.Auth.BootstrapToken, now) {
		sharedFail, byCode = "", true
		c.log.Info("browser signed in with a one-time link", "device", proof.ID, "ip", c.ip)
	}

	// A device token can stand in for the shared secret.
	var byToken *store.IssuedToken
	if sharedFail != "" {
		var presented protocol.ConnectAuth
		if p.Auth != nil {
			presented = *p.Auth
		}
		tok := presented.DeviceToken
		if tok == "" {
			tok = presented.Token
		}
		if ok, retry := s.authAllowed(c, p, auth.ScopeDeviceToken, now); !ok {
			return fail("rate_limited", auth.FailRateLimited, retry)
		}
		if tok != "" {
			it, ok, err := b.Store.CheckDeviceToken(ctx, tok)
			if err != nil {
				return s.storeFailure(c, g, err)
			}
			if ok && it.DeviceID == proof.ID {
				byToken = &it
			}
		}
		if byToken == nil {
			reason := sharedFail
			scope := auth.ScopeSharedSecret
			if presented.DeviceToken != "" {
				reason, scope = auth.FailDeviceTokenMismatch, auth.ScopeDeviceToken
			}
			s.limiter.Failure(c.ip, scope, now)
			return fail("auth_failed", reason, 0)
		}
		s.limiter.Success(c.ip, auth.ScopeDeviceToken)
	} else {
		s.limiter.Success(c.ip, auth.ScopeSharedSecret)
	}

	dev, paired, err := b.Store.GetDevice(ctx, proof.ID)
	if err != nil {
		return s.storeFailure(c, g, err)
	}
	reason := ""
	switch {
	case !paired:
		reason = protocol.PairingReasonNotPaired
	case dev.Role != p.Role:
		reason = protocol.PairingReasonRoleUpgrade
	case byToken == nil && !coversAll(dev.Scopes, p.Scopes):
		reason = protocol.PairingReasonScopeUpgrade
	}
	want := store.Device{
		ID: proof.ID, PublicKey: proof.PublicKey, Role: p.Role, Scopes: p.Scopes,
		ClientID: p.Client.ID, ClientMode: p.Client.Mode, Platform: p.Client.Platform,
		DeviceFamily: p.Client.DeviceFamily, DisplayName: displayName(p.Client), Remote: !c.loopback,
	}
	if reason != "" {
		if !c.loopback {
			return s.requestPairing(ctx, c, g, want, reason)
		}
		// Direct loopback connects (a sign-in link's among them) pair silently.
		if paired && reason == protocol.PairingReasonScopeUpgrade {
			want.Scopes = union(dev.Scopes, p.Scopes)
		}
		want.PairedAt = now.UnixMilli()
		if err := b.Store.PutDevice(ctx, want); err != nil {
			return s.storeFailure(c, g, err)
		}
		dev = want
		how := "loopback"
		if byCode {
			how = "one-time link"
		}
		c.log.Info("device paired automatically ("+how+")", "device", proof.ID, "reason", reason)
	}
	g.scopes = grantedScopes(p.Scopes, dev.Scopes)
	if byToken != nil {
		g.scopes = grantedScopes(g.scopes, byToken.Scopes)
	} else {
		tok, err := b.Store.IssueDeviceToken(ctx, proof.ID, dev.Role, dev.Scopes, now.UnixMilli())
		if err != nil {
			return s.storeFailure(c, g, err)
		}
		g.deviceToken, g.issuedAt = tok, now.UnixMilli()
	}
	if err := b.Store.TouchDevice(ctx, proof.ID, now.UnixMilli()); err != nil {
		c.log.Warn("gateway: could not record the device's connect", "err", err)
	}
	return g, nil
}

// storeTimeout bounds the store calls of one handshake or method.
const storeTimeout = 10 * time.Second

func (s *Server) storeFailure(c *conn, g grant, err error) (grant, *protocol.Rejection) {
	c.log.Error("gateway: store failed during connect", "err", err)
	g.outcome = "store_error"
	e := protocol.Unavailable("the gateway could not read its device store; try again", 1000)
	return g, &protocol.Rejection{Error: e, CloseCode: protocol.ClosePolicyViolation, CloseReason: "store unavailable"}
}

// requestPairing records a pairing request for a remote device, announces
// it to operators with the pairing scope and rejects the connect.
func (s *Server) requestPairing(ctx context.Context, c *conn, g grant, want store.Device, reason string) (grant, *protocol.Rejection) {
	b := s.backend.Load()
	req, created, err := b.Store.CreatePairingRequest(ctx, store.PairingRequest{Device: want, IP: c.ip})
	if err != nil {
		if errors.Is(err, store.ErrTooManyPairingRequests) {
			g.outcome = "pairing_full"
			e := protocol.Unavailable("too many pending pairing requests; approve or reject some first (switchboard devices list)", 60000)
			return g, &protocol.Rejection{Error: e, CloseCode: protocol.ClosePolicyViolation, CloseReason: protocol.ReasonPairingRequired}
		}
		return s.storeFailure(c, g, err)
	}
	if created {
		s.broadcastPairing("device.pair.requested", pairingRequestView(req, reason))
		c.log.Info("device pairing requested", "request", req.RequestID, "device", want.ID, "ip", c.ip, "reason", reason)
	}
	g.outcome = "pairing_required"
	return g, &protocol.Rejection{Error: protocol.PairingRequired(req.RequestID, reason), CloseCode: protocol.ClosePolicyViolation, CloseReason: protocol.ReasonPairingRequired}
}

// hello builds the hello-ok payload for a connected client.
func (s *Server) hello(c *conn, g grant) protocol.HelloOk {
	pol := protocol.DefaultPolicy()
	pol.MaxPayload = s.cfg.Policy.MaxPayload
	pol.MaxBufferedBytes = s.cfg.Policy.MaxBufferedBytes
	pol.TickIntervalMs = s.cfg.Policy.TickIntervalMs
	h := protocol.HelloOk{
		Server:   protocol.ServerInfo{Version: s.deps.Version, Host: hostname(), ConnID: c.id},
		Features: protocol.Features{Methods: s.advertisedMethods(), Events: advertisedEvents},
		Snapshot: s.snapshot(c.ctx),
		Auth:     &protocol.HelloAuth{Role: c.role, Scopes: c.scopes, DeviceToken: g.deviceToken},
		Policy:   pol,
	}
	if g.deviceToken != "" {
		h.Auth.IssuedAtMs = &g.issuedAt
	}
	return h
}

// snapshot is hello-ok's initial state.
func (s *Server) snapshot(ctx context.Context) protocol.Snapshot {
	mode, _, _ := s.currentSecret()
	agentID := s.defaultAgentID()
	return protocol.Snapshot{
		Presence:     s.presence(),
		Health:       s.healthSnapshot(ctx),
		StateVersion: s.stateVersion(),
		UptimeMs:     s.now().Sub(s.started).Milliseconds(),
		ConfigPath:   s.deps.ConfigPath,
		StateDir:     s.deps.StateDir,
		SessionDefaults: &protocol.SessionDefaults{
			DefaultAgentID: agentID, MainKey: "main", MainSessionKey: "agent:" + agentID + ":main",
		},
		AuthMode: mode,
	}
}

// maxPresenceEntries caps the presence list, as OpenClaw does: it describes
// the newest clients, and its cost must not grow with every connection.
const maxPresenceEntries = 200

// presenceDebounce merges the presence broadcasts of a burst of connects
// and disconnects into one.
const presenceDebounce = 250 * time.Millisecond

// presence lists the newest connected clients, at most maxPresenceEntries.
func (s *Server) presence() []protocol.PresenceEntry {
	var newest []*conn
	for _, c := range s.hub.snapshot() {
		if c.ready.Load() {
			newest = append(newest, c)
		}
	}
	slices.SortFunc(newest, func(a, b *conn) int { return b.connected.Compare(a.connected) })
	if len(newest) > maxPresenceEntries {
		newest = newest[:maxPresenceEntries]
	}
	out := make([]protocol.PresenceEntry, 0, len(newest))
	for _, c := range newest {
		e := protocol.PresenceEntry{
			Host: displayName(c.params.Client), Version: c.params.Client.Version, Platform: c.params.Client.Platform,
			DeviceFamily: c.params.Client.DeviceFamily, ModelIdentifier: c.params.Client.ModelIdentifier,
			Mode: c.params.Client.Mode, Reason: "connect", Ts: c.connected.UnixMilli(), DeviceID: c.deviceID,
			Roles: []string{c.role}, Scopes: c.scopes, InstanceID: c.params.Client.InstanceID,
		}
		if !c.loopback {
			e.IP = c.ip
		}
		out = append(out, e)
	}
	slices.Reverse(out)
	return out
}

// presenceChanged bumps the presence version and schedules one broadcast of
// the list for the burst of changes it is part of.
func (s *Server) presenceChanged() {
	s.presenceVersion.Add(1)
	if s.presencePending.Swap(true) {
		return
	}
	time.AfterFunc(presenceDebounce, s.flushPresence)
}

func (s *Server) flushPresence() {
	s.presencePending.Store(false)
	if s.stopping.Load() {
		return
	}
	payload, _ := json.Marshal(map[string]any{"presence": nonNil(s.presence())})
	sv := s.stateVersion()
	s.hub.broadcast(outEvent{name: protocol.EventPresence, payload: func(int) []byte { return payload }, dropIfSlow: true, stateVersion: &sv})
}

// originAllowed implements the browser origin rule: the gateway's own
// origin, or one listed in gateway.controlUi.allowedOrigins. The own origin
// counts only under a name hostAllowed trusts: a page on a rebound name is
// its own origin too.
func (s *Server) originAllowed(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) && s.hostAllowed(r.Host) {
		return true
	}
	for _, o := range s.cfg.ControlUI.AllowedOrigins {
		if strings.EqualFold(strings.TrimRight(o, "/"), origin) {
			return true
		}
	}
	return false
}

// hostAllowed reports whether host, a request's Host header, names this
// gateway under a name DNS rebinding cannot take over: an IP address
// (a literal is never looked up), localhost or a name under .localhost
// (browsers resolve those to this machine themselves, RFC 6761), or the
// host of an origin in gateway.controlUi.allowedOrigins (the names the
// owner put the gateway under, a reverse proxy's say).
//
// A page on evil.example whose name the attacker rebinds to 127.0.0.1 is
// same-origin with the gateway as far as the browser knows, Origin and Host
// alike; only the name it sends gives it away.
func (s *Server) hostAllowed(host string) bool {
	name := hostName(host)
	switch {
	case name == "":
		return false
	case net.ParseIP(name) != nil:
		return true
	case name == "localhost" || strings.HasSuffix(name, ".localhost"):
		return true
	}
	for _, o := range s.cfg.ControlUI.AllowedOrigins {
		if u, err := url.Parse(o); err == nil && hostName(u.Host) == name {
			return true
		}
	}
	return false
}

// hostName is the name part of a Host header or URL host: the port, IPv6
// brackets and a trailing dot removed, in lower case.
func hostName(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	return strings.ToLower(strings.TrimSuffix(host, "."))
}

// misdirected is the answer to a request whose Host hostAllowed refuses:
// what to open instead, and the key that makes the name trusted.
func (s *Server) misdirected(host string) string {
	local := "localhost"
	if _, port, err := net.SplitHostPort(host); err == nil && port != "" {
		local = net.JoinHostPort(local, port)
	}
	return fmt.Sprintf("this gateway does not answer to the name %q (a page on another site may be reaching it through DNS rebinding). "+
		"Open it as http://%s/ or by its IP address, or, to use this name (a reverse proxy's, say), "+
		"add the origin the browser shows, such as https://%s, to gateway.controlUi.allowedOrigins",
		hostName(host), local, hostName(host))
}

func isWebSocketUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

func displayName(ci protocol.ClientInfo) string {
	if ci.DisplayName != "" {
		return ci.DisplayName
	}
	return ci.ID
}

// covers reports whether granted scopes allow scope: admin covers every
// scope and write covers read.
func covers(granted []string, scope string) bool {
	return slices.Contains(granted, scope) || slices.Contains(granted, protocol.ScopeAdmin) ||
		scope == protocol.ScopeRead && slices.Contains(granted, protocol.ScopeWrite)
}

func coversAll(granted, want []string) bool {
	for _, s := range want {
		if !covers(granted, s) {
			return false
		}
	}
	return true
}

// grantedScopes is the requested scopes the grant covers, in request order.
func grantedScopes(requested, granted []string) []string {
	out := []string{}
	for _, s := range requested {
		if covers(granted, s) && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// newUUID returns a random version 4 UUID (challenge nonces, connection
// and run ids).
var newUUID = transcript.NewSessionID
