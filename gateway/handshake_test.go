package gateway

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/gateway/auth"
	"github.com/switchboardhq/switchboard/gateway/client"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// The first acceptance test: a v4 CLI client with a token and
// operator.read gets hello-ok and can call health and status; a v3 client
// likewise.
func TestV4AndV3ClientsConnectAndCallHealthAndStatus(t *testing.T) {
	r := newRig(t, rigOptions{})
	for _, v := range []int{protocol.ProtocolV4, protocol.ProtocolV3} {
		o := r.opts(protocol.ScopeRead)
		o.MinProtocol, o.MaxProtocol = v, v
		o.Client = protocol.ClientInfo{ID: "cli", Version: "1.0.0", Platform: "linux", Mode: "cli"}
		c := r.dial(o)
		var hello map[string]any
		if err := json.Unmarshal(c.HelloRaw(), &hello); err != nil {
			t.Fatal(err)
		}
		if hello["type"] != "hello-ok" || hello["protocol"] != float64(v) {
			t.Fatalf("v%d hello-ok = %s", v, c.HelloRaw())
		}
		_, hasAuth := hello["auth"]
		if v == 4 {
			a := hello["auth"].(map[string]any)
			if a["role"] != "operator" || !slices.Equal(toStrings(a["scopes"]), []string{protocol.ScopeRead}) {
				t.Errorf("v4 hello-ok auth = %v, want operator with operator.read", a)
			}
		} else if hasAuth {
			t.Errorf("v3 hello-ok without a device token carries auth: %s", c.HelloRaw())
		}
		methods := toStrings(hello["features"].(map[string]any)["methods"])
		for _, m := range []string{"health", "status", "chat.send", "chat.history", "cron.list", "last-heartbeat", "set-heartbeats"} {
			if !slices.Contains(methods, m) {
				t.Errorf("features.methods lacks %s", m)
			}
		}
		if slices.Contains(methods, "web.login.start") {
			t.Errorf("features.methods advertises web.login.start, which OpenClaw keeps unadvertised")
		}
		policy := hello["policy"].(map[string]any)
		if policy["maxPayload"] != float64(25<<20) || policy["maxBufferedBytes"] != float64(50<<20) || policy["tickIntervalMs"] != float64(30000) {
			t.Errorf("policy = %v", policy)
		}
		snap := hello["snapshot"].(map[string]any)
		if snap["authMode"] != "token" || snap["stateDir"] != r.dir || snap["sessionDefaults"] == nil {
			t.Errorf("snapshot = %v", snap)
		}
		h := call[map[string]any](t, c, "health", nil)
		if h["ok"] != true {
			t.Errorf("health = %v", h)
		}
		st := call[map[string]any](t, c, "status", nil)
		if st["version"] != "test" || st["authMode"] != "token" {
			t.Errorf("status = %v", st)
		}
		c.Close()
	}
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// v3 and v4 clients side by side receive the same broadcasts: the v4 one
// with its own seq from 1, the v3 one with the process-wide seq, both
// strictly increasing.
func TestV3AndV4ClientsSideBySide(t *testing.T) {
	r := newRig(t, rigOptions{})
	o3 := r.opts(protocol.ScopeRead, protocol.ScopeWrite)
	o3.MaxProtocol = 3
	v3 := r.dial(o3)
	v4 := r.dial(r.opts(protocol.ScopeRead, protocol.ScopeWrite))
	call[map[string]any](t, v3, "chat.history", map[string]any{"sessionKey": "main"}) // shows the session v4 sends to
	r.provider.Push(llmtest.Text("side by side"))
	call[map[string]any](t, v4, "chat.send", map[string]any{"sessionKey": "main", "message": "hi", "idempotencyKey": "sbs-1"})
	for _, c := range []*client.Client{v3, v4} {
		var last int64
		for {
			ev := next(t, c, "", nil)
			if ev.Name == "tick" || ev.Name == "health" {
				continue
			}
			if ev.Seq == nil {
				t.Fatalf("protocol %d: broadcast %s without seq", c.Protocol(), ev.Name)
			}
			if *ev.Seq <= last {
				t.Fatalf("protocol %d: seq %d after %d", c.Protocol(), *ev.Seq, last)
			}
			last = *ev.Seq
			if ev.Name == "chat" && strings.Contains(string(ev.Payload), `"final"`) {
				if !strings.Contains(string(ev.Payload), "side by side") {
					t.Errorf("final = %s", ev.Payload)
				}
				_, hasDeltaText := decode[map[string]any](t, ev.Payload)["deltaText"]
				if hasDeltaText {
					t.Errorf("a final carries deltaText: %s", ev.Payload)
				}
				break
			}
		}
	}
}

func TestHandshakeRejections(t *testing.T) {
	r := newRig(t, rigOptions{cfg: func(c *Config) {
		c.ControlUI.AllowedOrigins = []string{"https://chat.example.com"}
	}})
	for _, tc := range []struct {
		name       string
		opts       func(o *client.Options)
		code       int
		errCode    string
		message    string
		detailCode string
	}{
		{name: "bad params", opts: func(o *client.Options) {
			o.RawConnect = func(p *protocol.ConnectParams) { p.Client.ID = "not-a-client" }
		}, code: 1008, errCode: "INVALID_REQUEST", message: "invalid connect params"},
		{name: "protocol mismatch", opts: func(o *client.Options) {
			o.RawConnect = func(p *protocol.ConnectParams) { p.MinProtocol, p.MaxProtocol = 5, 6 }
		}, code: 1002, errCode: "INVALID_REQUEST", message: "protocol mismatch"},
		{name: "invalid role", opts: func(o *client.Options) { o.Role = "superuser" }, code: 1008, errCode: "INVALID_REQUEST", message: "invalid role"},
		{name: "bad token", opts: func(o *client.Options) { o.Token = strings.Repeat("ab12", 12) },
			code: 1008, errCode: "INVALID_REQUEST", detailCode: protocol.DetailAuthTokenMismatch},
		{name: "missing token", opts: func(o *client.Options) { o.Token = "" },
			code: 1008, errCode: "INVALID_REQUEST", detailCode: protocol.DetailAuthTokenMissing},
		{name: "foreign origin", opts: func(o *client.Options) { o.Header = http.Header{"Origin": {"https://evil.example"}} },
			code: 1008, errCode: "INVALID_REQUEST", detailCode: protocol.DetailControlUIOriginNotAllowed},
		{name: "node without device", opts: func(o *client.Options) { o.Role = "node" },
			code: 1008, errCode: "NOT_PAIRED", detailCode: protocol.DetailDeviceIdentityRequired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := r.opts(protocol.ScopeRead)
			tc.opts(&o)
			ce := r.reject(o)
			if ce.CloseCode != tc.code {
				t.Errorf("close code = %d %q, want %d", ce.CloseCode, ce.CloseReason, tc.code)
			}
			if ce.Err == nil {
				t.Fatalf("no error response before the close")
			}
			if ce.Err.Code != tc.errCode || !strings.Contains(ce.Err.Message, tc.message) {
				t.Errorf("error = %s: %s, want %s containing %q", ce.Err.Code, ce.Err.Message, tc.errCode, tc.message)
			}
			if tc.detailCode != "" && client.Detail(ce, "code") != tc.detailCode {
				t.Errorf("details = %v, want code %s", ce.Err.Details, tc.detailCode)
			}
		})
	}
	// Auth failures tell the client what to do next.
	o := r.opts()
	o.Token = strings.Repeat("cd34", 12)
	ce := r.reject(o)
	if client.Detail(ce, "recommendedNextStep") != protocol.NextUpdateAuthCredentials {
		t.Errorf("details = %v, want recommendedNextStep update_auth_credentials", ce.Err.Details)
	}
	// The gateway's own origin and listed ones are allowed.
	for _, origin := range []string{"http://" + r.gw.Addr().String(), "https://chat.example.com"} {
		o := r.opts()
		o.Header = http.Header{"Origin": {origin}}
		r.dial(o).Close()
	}
}

func TestFirstFrameMustBeAConnectRequest(t *testing.T) {
	r := newRig(t, rigOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// A valid request that is not connect is answered, then closed.
	c, err := client.DialRaw(ctx, client.Options{URL: r.url})
	if err != nil {
		t.Fatal(err)
	}
	ch := next(t, c, protocol.EventConnectChallenge, nil)
	if ch.Seq != nil || decode[protocol.ChallengePayload](t, ch.Payload).Nonce == "" {
		t.Errorf("challenge = %s", ch.Raw)
	}
	st, err := c.Watch("h1")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Send(ctx, []byte(`{"type":"req","id":"h1","method":"health"}`)); err != nil {
		t.Fatal(err)
	}
	res, err := st.Next(ctx)
	if err != nil || res.OK || res.Error.Message != protocol.MessageFirstRequestMustBeConnect {
		t.Errorf("response = %+v, %v", res, err)
	}
	if code, _ := waitClosed(t, c); code != 1008 {
		t.Errorf("close = %d, want 1008", code)
	}
	c.Close()

	// A frame that is not a request is closed without an answer.
	c, err = client.DialRaw(ctx, client.Options{URL: r.url})
	if err != nil {
		t.Fatal(err)
	}
	next(t, c, protocol.EventConnectChallenge, nil)
	if err := c.Send(ctx, []byte(`{"type":"event","event":"x"}`)); err != nil {
		t.Fatal(err)
	}
	if code, reason := waitClosed(t, c); code != 1008 || reason != protocol.ReasonInvalidRequestFrame {
		t.Errorf("close = %d %q, want 1008 %q", code, reason, protocol.ReasonInvalidRequestFrame)
	}
	c.Close()
}

func TestOversizePreauthFrameCloses1009(t *testing.T) {
	r := newRig(t, rigOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.DialRaw(ctx, client.Options{URL: r.url})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	next(t, c, protocol.EventConnectChallenge, nil)
	big := `{"type":"req","id":"1","method":"connect","params":{"pad":"` + strings.Repeat("x", 70<<10) + `"}}`
	if err := c.Send(ctx, []byte(big)); err != nil {
		t.Fatal(err)
	}
	if code, reason := waitClosed(t, c); code != 1009 || reason != protocol.ReasonPreauthTooLarge {
		t.Errorf("close = %d %q, want 1009 %q", code, reason, protocol.ReasonPreauthTooLarge)
	}
}

func TestHandshakeTimeoutCloses(t *testing.T) {
	r := newRig(t, rigOptions{cfg: func(c *Config) { c.HandshakeTimeoutMs = 100 }})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.DialRaw(ctx, client.Options{URL: r.url})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if code, _ := waitClosed(t, c); code != 1000 {
		t.Errorf("close = %d, want 1000 after the handshake deadline", code)
	}
}

func TestSecretInURLIsRefused(t *testing.T) {
	r := newRig(t, rigOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, resp, err := websocket.Dial(ctx, r.url+"?token="+r.token, nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("dial with ?token= = %v, %v; want HTTP 400", resp, err)
	}
}

func TestRateLimitLocksOutAfterTenFailures(t *testing.T) {
	r := newRig(t, rigOptions{fakeClock: true})
	bad := r.opts()
	bad.Token = strings.Repeat("ef56", 12)
	for i := range 10 {
		ce := r.reject(bad)
		if got := client.Detail(ce, "code"); got != protocol.DetailAuthTokenMismatch {
			t.Fatalf("attempt %d: code %s, want mismatch", i+1, got)
		}
	}
	// Locked out: even the right token is refused, with a retry hint.
	ce := r.reject(r.opts())
	if client.Detail(ce, "code") != protocol.DetailAuthRateLimited || !ce.Err.Retryable || ce.Err.RetryAfterMs == nil || *ce.Err.RetryAfterMs <= 0 {
		t.Fatalf("11th attempt = %+v, want AUTH_RATE_LIMITED with retryAfterMs", ce.Err)
	}
	r.clock.Advance(5*time.Minute + time.Second)
	r.dial(r.opts()).Close()
}

func TestDeviceProofFailures(t *testing.T) {
	r := newRig(t, rigOptions{})
	for _, tc := range []struct {
		reason string
		mutate func(o *client.Options)
	}{
		{auth.ReasonDeviceIDMismatch, func(o *client.Options) {
			o.RawConnect = func(p *protocol.ConnectParams) { p.Device.ID = strings.Repeat("0", 64) }
		}},
		{auth.ReasonSignatureStale, func(o *client.Options) {
			o.Now = func() time.Time { return time.Now().Add(-3 * time.Minute) }
		}},
		{auth.ReasonNonceMissing, func(o *client.Options) {
			o.RawConnect = func(p *protocol.ConnectParams) { p.Device.Nonce = " " }
		}},
		{auth.ReasonNonceMismatch, func(o *client.Options) {
			o.RawConnect = func(p *protocol.ConnectParams) { p.Device.Nonce = "00000000-0000-4000-8000-000000000000" }
		}},
		{auth.ReasonSignature, func(o *client.Options) {
			o.RawConnect = func(p *protocol.ConnectParams) {
				sig, _ := base64.RawURLEncoding.DecodeString(p.Device.Signature)
				sig[0] ^= 0xff
				p.Device.Signature = base64.RawURLEncoding.EncodeToString(sig)
			}
		}},
		{auth.ReasonPublicKey, func(o *client.Options) {
			o.RawConnect = func(p *protocol.ConnectParams) {
				short := make([]byte, 31)
				p.Device.PublicKey = base64.RawURLEncoding.EncodeToString(short)
				p.Device.ID = sha256Hex(short)
			}
		}},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			o := r.opts(protocol.ScopeRead)
			o.Device = newDevice(t)
			tc.mutate(&o)
			ce := r.reject(o)
			if ce.CloseCode != 1008 || ce.Err == nil || ce.Err.Code != "INVALID_REQUEST" || client.Detail(ce, "reason") != tc.reason {
				t.Errorf("rejection = %d %+v, want 1008 with reason %s", ce.CloseCode, ce.Err, tc.reason)
			}
		})
	}
}

func TestLoopbackDevicePairsSilentlyAndReconnectsWithItsToken(t *testing.T) {
	r := newRig(t, rigOptions{})
	dev := newDevice(t)
	o := r.opts(protocol.ScopeRead, protocol.ScopeWrite)
	o.Device = dev
	c := r.dial(o)
	h := c.Hello()
	if h.Auth == nil || h.Auth.DeviceToken == "" || !slices.Equal(h.Auth.Scopes, []string{protocol.ScopeRead, protocol.ScopeWrite}) {
		t.Fatalf("hello-ok auth = %+v, want a device token and the requested scopes", h.Auth)
	}
	r.secrets = append(r.secrets, h.Auth.DeviceToken)
	c.Close()
	// The device token alone authenticates the device.
	o2 := client.Options{URL: r.url, DeviceToken: h.Auth.DeviceToken, Device: dev, Scopes: []string{protocol.ScopeRead}}
	c2 := r.dial(o2)
	if got := c2.Hello().Auth.Scopes; !slices.Equal(got, []string{protocol.ScopeRead}) {
		t.Errorf("scopes with the device token = %v", got)
	}
	call[map[string]any](t, c2, "status", nil)
	// Another device cannot use it.
	o3 := o2
	o3.Device = newDevice(t)
	ce := r.reject(o3)
	if client.Detail(ce, "code") != protocol.DetailAuthDeviceTokenMismatch {
		t.Errorf("foreign device with the token: %+v", ce.Err)
	}
}

func TestRemoteDeviceNeedsPairingApproval(t *testing.T) {
	r := newRig(t, rigOptions{})
	admin := r.dial(r.opts(protocol.ScopeAdmin, protocol.ScopePairing))
	reader := r.dial(r.opts(protocol.ScopeRead))

	dev := newDevice(t)
	o := remote(r.opts(protocol.ScopeRead, protocol.ScopeWrite))
	o.Device = dev
	ce := r.reject(o)
	reqID := client.Detail(ce, "requestId")
	if ce.Err.Code != protocol.CodeNotPaired || client.Detail(ce, "code") != protocol.DetailPairingRequired || reqID == "" || ce.CloseCode != 1008 {
		t.Fatalf("rejection = %d %+v, want NOT_PAIRED PAIRING_REQUIRED with a requestId", ce.CloseCode, ce.Err)
	}
	ev := next(t, admin, "device.pair.requested", nil)
	if p := decode[map[string]any](t, ev.Payload); p["requestId"] != reqID || p["deviceId"] != client.DeviceID(dev) {
		t.Errorf("device.pair.requested = %s", ev.Payload)
	}
	// Pairing events need operator.pairing.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	if ev, err := reader.Next(ctx, func(e client.Event) bool { return strings.HasPrefix(e.Name, "device.pair") }); err == nil {
		t.Errorf("a read-only client received %s", ev.Name)
	}
	cancel()

	list := call[map[string][]map[string]any](t, admin, "device.pair.list", nil)
	if len(list["pending"]) != 1 || list["pending"][0]["requestId"] != reqID {
		t.Fatalf("device.pair.list = %v", list)
	}
	// A pairing-only operator cannot grant write, which it does not hold.
	pairer := r.dial(r.opts(protocol.ScopePairing))
	if e := callErr(t, pairer, "device.pair.approve", map[string]any{"requestId": reqID}); !strings.Contains(e.Message, "cannot grant scopes") {
		t.Errorf("approve beyond own scopes: %s", e.Message)
	}
	call[map[string]any](t, admin, "device.pair.approve", map[string]any{"requestId": reqID})
	next(t, admin, "device.pair.resolved", nil)

	c := r.dial(o)
	if got := c.Hello().Auth; got == nil || got.DeviceToken == "" || !slices.Equal(got.Scopes, []string{protocol.ScopeRead, protocol.ScopeWrite}) {
		t.Errorf("after approval hello-ok auth = %+v", got)
	}
	r.secrets = append(r.secrets, c.Hello().Auth.DeviceToken)
}

func TestTokenClientWithoutDeviceKeepsScopesOnlyOnLoopback(t *testing.T) {
	r := newRig(t, rigOptions{})
	local := r.dial(r.opts(protocol.ScopeRead))
	if got := local.Hello().Auth.Scopes; !slices.Equal(got, []string{protocol.ScopeRead}) {
		t.Errorf("loopback scopes = %v", got)
	}
	far := r.dial(remote(r.opts(protocol.ScopeRead)))
	if got := far.Hello().Auth.Scopes; len(got) != 0 {
		t.Errorf("remote token client without a device kept scopes %v", got)
	}
	e := callErr(t, far, "status", nil)
	if e.Code != protocol.CodeForbidden || !strings.Contains(e.Message, "missing scope: operator.read") {
		t.Errorf("status without scopes = %+v", e)
	}
	call[map[string]any](t, far, "health", nil) // always allowed
}

func TestRotatingTheSecretClosesOldSockets4001(t *testing.T) {
	r := newRig(t, rigOptions{})
	c := r.dial(r.opts(protocol.ScopeRead))
	newTok := auth.NewToken()
	r.secrets = append(r.secrets, newTok)
	if err := r.gw.RotateSecret("token", newTok); err != nil {
		t.Fatal(err)
	}
	if code, reason := waitClosed(t, c); code != protocol.CloseAuthChanged || reason != protocol.ReasonAuthChanged {
		t.Errorf("close = %d %q, want 4001", code, reason)
	}
	if ce := r.reject(r.opts()); client.Detail(ce, "code") != protocol.DetailAuthTokenMismatch {
		t.Errorf("old token after rotation: %+v", ce.Err)
	}
	o := r.opts()
	o.Token = newTok
	r.dial(o).Close()
}

func TestNonLoopbackBindWithoutAuthRefusesToStart(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Port = 0
	cfg.Bind = BindLAN
	cfg.Auth.Mode = AuthNone
	err := New(cfg, Deps{StateDir: t.TempDir()}).Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "refusing to bind") {
		t.Fatalf("Start = %v, want a refusal", err)
	}
	cfg.Auth.Mode = AuthToken
	cfg.Auth.Token = "changeme"
	if err := New(cfg, Deps{StateDir: t.TempDir()}).Start(context.Background()); err == nil || !strings.Contains(err.Error(), "too weak") {
		t.Fatalf("Start with a weak token = %v, want a refusal", err)
	}
}

func TestGeneratedTokenIsPersistedAndNeverLogged(t *testing.T) {
	dir := t.TempDir()
	logs := &logBuffer{}
	cfg := DefaultConfig()
	cfg.Port = 0
	s := New(cfg, Deps{StateDir: dir, Logger: slogTo(logs)})
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Stop(context.Background())
	_, tok, _ := s.currentSecret()
	if len(tok) != 48 {
		t.Fatalf("generated token has %d characters, want 48", len(tok))
	}
	if !strings.Contains(logs.String(), "switchboard gateway token") || strings.Contains(logs.String(), tok) {
		t.Errorf("logs must say how to read the token and never contain it:\n%s", logs)
	}
	c, err := client.Dial(context.Background(), client.Options{URL: "ws://" + s.Addr().String() + "/", Token: tok})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}

// Finding 5 of issue 22: with auth.mode none, a page on evil.example that
// rebinds its name to 127.0.0.1 is same-origin with the gateway as far as
// the browser knows (Origin and Host both evil.example), connected from
// loopback with operator.admin and patched the configuration. The Host it
// sends is refused before the upgrade.
func TestFinding5_RebindedHostIsRefused(t *testing.T) {
	r := newRig(t, rigOptions{cfg: func(c *Config) {
		c.Auth.Mode = AuthNone
		c.ControlUI.AllowedOrigins = []string{"https://chat.example.com"}
	}})
	addr := r.gw.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	// rebound reaches the gateway whatever name the URL has, as the
	// browser does once the attacker's DNS answers 127.0.0.1.
	rebound := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}}
	t.Cleanup(rebound.CloseIdleConnections)
	dial := func(host, origin string) (*client.Client, error) {
		o := r.opts(protocol.ScopeAdmin)
		o.URL, o.HTTPClient = "ws://"+host+"/", rebound
		o.Header = http.Header{"Origin": {origin}}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return client.Dial(ctx, o)
	}

	for _, host := range []string{
		"evil.example:" + port,
		"EVIL.example.:" + port,
		"localhost.evil.example:" + port,
		"chat.example.com.evil.example:" + port,
		"127.0.0.1.nip.io:" + port,
	} {
		c, err := dial(host, "http://"+host)
		if err == nil {
			c.Close()
			t.Errorf("Host %s: a rebound page connected with scopes %v", host, c.Hello().Auth.Scopes)
			continue
		}
		if !strings.Contains(err.Error(), "421") {
			t.Errorf("Host %s: %v, want 421 Misdirected Request", host, err)
		}
	}

	// The refusal says what to open instead and which key trusts a name.
	req, err := http.NewRequest("GET", "http://evil.example:"+port+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", base64.StdEncoding.EncodeToString([]byte("0123456789abcdef")))
	resp, err := rebound.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("upgrade under a rebound name: %s, want 421", resp.Status)
	} else if body, _ := io.ReadAll(resp.Body); !strings.Contains(string(body), "gateway.controlUi.allowedOrigins") ||
		!strings.Contains(string(body), "http://localhost:"+port+"/") {
		t.Errorf("refusal = %s", body)
	}
	resp.Body.Close()

	// The names of this machine and the configured ones still connect.
	for _, tc := range []struct{ host, origin string }{
		{"127.0.0.1:" + port, "http://127.0.0.1:" + port},
		{"localhost:" + port, "http://localhost:" + port},
		{"switchboard.localhost:" + port, "http://switchboard.localhost:" + port},
		{"[::1]:" + port, "http://[::1]:" + port},
		{"chat.example.com", "https://chat.example.com"},
	} {
		c, err := dial(tc.host, tc.origin)
		if err != nil {
			t.Errorf("Host %s: %v", tc.host, err)
			continue
		}
		if got := c.Hello().Auth.Scopes; !slices.Equal(got, []string{protocol.ScopeAdmin}) {
			t.Errorf("Host %s: scopes %v", tc.host, got)
		}
		c.Close()
	}
}

func TestHostAllowed(t *testing.T) {
	s := &Server{cfg: Config{ControlUI: ControlUIConfig{AllowedOrigins: []string{"https://chat.example.com", "http://box.lan:18789"}}}}
	for _, tc := range []struct {
		host string
		want bool
	}{
		{"127.0.0.1:18789", true},
		{"127.0.0.1", true},
		{"10.1.2.3:18789", true}, // an address is never looked up
		{"[::1]:18789", true},
		{"[::1]", true},
		{"localhost:18789", true},
		{"LocalHost.:18789", true},
		{"app.localhost:18789", true},
		{"chat.example.com", true},
		{"CHAT.example.com:443", true},
		{"box.lan:18789", true},
		{"box.lan:1", true}, // a rebinding page must use the gateway's port anyway
		{"", false},
		{"evil.example:18789", false},
		{"localhost.evil.example:18789", false},
		{"notlocalhost:18789", false},
		{"example.com", false},
		{"chat.example.com.evil.example", false},
		{"[evil.example]:18789", false},
	} {
		if got := s.hostAllowed(tc.host); got != tc.want {
			t.Errorf("hostAllowed(%q) = %v, want %v", tc.host, got, tc.want)
		}
	}
}

// Finding 6 of issue 22: a remote token client without a device has its
// scopes cleared, yet on protocol 3 it received every chat and agent event.
// It now gets none, as on protocol 4; open events (presence) still reach it.
func TestFinding6_V3ClientWithoutScopesGetsNoChatEvents(t *testing.T) {
	r := newRig(t, rigOptions{})
	for _, v := range []int{protocol.ProtocolV3, protocol.ProtocolV4} {
		o := remote(r.opts(protocol.ScopeRead, protocol.ScopeWrite))
		o.MinProtocol, o.MaxProtocol = v, v
		far := r.dial(o)
		if far.Protocol() != v {
			t.Fatalf("negotiated v%d, want v%d", far.Protocol(), v)
		}
		writer := r.dial(r.opts(protocol.ScopeRead, protocol.ScopeWrite))
		r.provider.Push(llmtest.Text("a private answer"))
		key := "finding6-" + strconv.Itoa(v)
		call[map[string]any](t, writer, "chat.send", map[string]any{"sessionKey": "main", "message": "a private question", "idempotencyKey": key})
		next(t, writer, "chat", func(e client.Event) bool { return strings.Contains(string(e.Payload), `"final"`) })

		// A client connecting after the run changes presence, an open
		// event: once far sees it, every event of the run is behind it.
		mo := r.opts()
		mo.Client = protocol.ClientInfo{ID: "cli", Version: "1.0.0", Platform: "linux", Mode: "cli", DisplayName: key}
		marker := r.dial(mo)
		for {
			ev := next(t, far, "", nil)
			if ev.Name == protocol.EventPresence && strings.Contains(string(ev.Payload), key) {
				break
			}
			if ev.Name != protocol.EventPresence && ev.Name != protocol.EventTick && ev.Name != protocol.EventHealth {
				t.Fatalf("v%d client without scopes received %s: %s", v, ev.Name, ev.Raw)
			}
		}
		for _, c := range []*client.Client{far, writer, marker} {
			c.Close()
		}
	}
}

// Issue 26, finding 10: every CLI call added a "gateway client connected"
// line to the daemon's terminal. A command-line client (mode cli) is
// logged at debug; apps and pages (ui, webchat) stay at info.
func TestFinding10CLIConnectionsLogAtDebug(t *testing.T) {
	r := newRig(t, rigOptions{})
	cliOpts := r.opts(protocol.ScopeRead)
	cliOpts.Client = protocol.ClientInfo{ID: protocol.ClientCLI, Version: "1", Platform: "linux", Mode: protocol.ModeCLI}
	r.dial(cliOpts)
	uiOpts := r.opts(protocol.ScopeRead)
	uiOpts.Client = protocol.ClientInfo{ID: protocol.ClientTUI, Version: "1", Platform: "linux", Mode: protocol.ModeUI}
	r.dial(uiOpts)
	// The server logs after hello-ok has left, so the lines may trail the
	// dials: wait for both.
	var cliLevel, uiLevel string
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for (cliLevel == "" || uiLevel == "") && time.Now().Before(deadline) {
		<-tick.C
		for _, line := range strings.Split(r.logs.String(), "\n") {
			var rec struct{ Level, Msg, Client string }
			if json.Unmarshal([]byte(line), &rec) != nil || rec.Msg != "gateway client connected" {
				continue
			}
			switch rec.Client {
			case protocol.ClientCLI:
				cliLevel = rec.Level
			case protocol.ClientTUI:
				uiLevel = rec.Level
			}
		}
	}
	if cliLevel != "DEBUG" || uiLevel != "INFO" {
		t.Errorf("connect logged at %q for the CLI and %q for the TUI, want DEBUG and INFO:\n%s", cliLevel, uiLevel, r.logs.String())
	}
}
