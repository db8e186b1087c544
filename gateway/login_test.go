package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// fakeLogin is a backend's login hooks: LoginStart answers from start,
// LoginWait from what the test pushes on answers.
type fakeLogin struct {
	start   func(LoginRequest) (LoginResult, error)
	answers chan loginAnswer

	mu     sync.Mutex
	starts []LoginRequest
	waits  []LoginRequest
}

type loginAnswer struct {
	res LoginResult
	err error
}

func newFakeLogin() *fakeLogin {
	return &fakeLogin{answers: make(chan loginAnswer, 4)}
}

func (f *fakeLogin) LoginStart(_ context.Context, req LoginRequest) (LoginResult, error) {
	f.mu.Lock()
	f.starts = append(f.starts, req)
	f.mu.Unlock()
	return f.start(req)
}

func (f *fakeLogin) LoginWait(ctx context.Context, req LoginRequest) (LoginResult, error) {
	f.mu.Lock()
	f.waits = append(f.waits, req)
	f.mu.Unlock()
	select {
	case a := <-f.answers:
		return a.res, a.err
	case <-ctx.Done():
		return LoginResult{}, ctx.Err()
	}
}

func (f *fakeLogin) lastStart() LoginRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.starts[len(f.starts)-1]
}

// withLogin attaches the rig's backend again with f's hooks.
func (r *rig) withLogin(f *fakeLogin) {
	b := *r.gw.backend.Load()
	b.LoginStart, b.LoginWait = f.LoginStart, f.LoginWait
	r.gw.Attach(b)
}

// web.login.start hands the first QR code (or, for a phone number, the
// pairing code) with the request's defaults filled in; web.login.wait
// reports a fresh QR code, then the link, and answers "still waiting"
// when its timeout passes first. The connection serves other requests
// while a wait is pending.
func TestWebLoginStartAndWait(t *testing.T) {
	r := newRig(t, rigOptions{})
	f := newFakeLogin()
	f.start = func(req LoginRequest) (LoginResult, error) {
		if req.Phone != "" {
			return LoginResult{Message: "Enter the code on the phone.", PairingCode: "ABCD-EFGH"}, nil
		}
		return LoginResult{Message: "Scan the QR code.", QR: "2@qr-1", QRDataURL: "data:image/png;base64,UVIx"}, nil
	}
	r.withLogin(f)
	admin := r.dial(r.opts(protocol.ScopeAdmin))

	got := call[map[string]any](t, admin, "web.login.start", map[string]any{"timeoutMs": 5000, "verbose": true})
	if got["qr"] != "2@qr-1" || got["qrDataUrl"] != "data:image/png;base64,UVIx" || got["message"] != "Scan the QR code." || got["pairingCode"] != nil {
		t.Errorf("web.login.start = %v", got)
	}
	if req := f.lastStart(); req != (LoginRequest{AccountID: "default"}) {
		t.Errorf("the backend got %+v, want the defaults", req)
	}

	got = call[map[string]any](t, admin, "web.login.start", map[string]any{"channel": "whatsapp", "accountId": "work", "phone": "+15551234567", "force": true})
	if got["pairingCode"] != "ABCD-EFGH" || got["qr"] != nil || got["message"] != "Enter the code on the phone." {
		t.Errorf("web.login.start with a phone = %v", got)
	}
	if req := f.lastStart(); req != (LoginRequest{Channel: "whatsapp", AccountID: "work", Phone: "+15551234567", Force: true}) {
		t.Errorf("the backend got %+v", req)
	}

	// A wait pending does not hold up the connection's other requests.
	type waitResult struct {
		payload map[string]any
		err     error
	}
	pending := make(chan waitResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		raw, err := admin.Call(ctx, "web.login.wait", map[string]any{})
		var p map[string]any
		if err == nil {
			err = json.Unmarshal(raw, &p)
		}
		pending <- waitResult{p, err}
	}()
	if h := call[map[string]any](t, admin, "health", nil); h["ts"] == nil {
		t.Errorf("health while a wait is pending = %v", h)
	}
	f.answers <- loginAnswer{res: LoginResult{Message: "A new QR code replaced the previous one.", QR: "2@qr-2", QRDataURL: "data:image/png;base64,UVIy"}}
	w := <-pending
	if w.err != nil || w.payload["connected"] != false || w.payload["qr"] != "2@qr-2" || w.payload["qrDataUrl"] != "data:image/png;base64,UVIy" {
		t.Errorf("web.login.wait after a refresh = %v, %v", w.payload, w.err)
	}

	f.answers <- loginAnswer{res: LoginResult{Connected: true, Account: "+15550001111", Message: "Linked as +15550001111."}}
	got = call[map[string]any](t, admin, "web.login.wait", map[string]any{"timeoutMs": 10000, "accountId": "default"})
	if got["connected"] != true || got["account"] != "+15550001111" || got["message"] != "Linked as +15550001111." || got["qr"] != nil {
		t.Errorf("web.login.wait once linked = %v", got)
	}

	// A client repeating its start params is not refused; they mean
	// nothing to a wait.
	got = call[map[string]any](t, admin, "web.login.wait", map[string]any{"timeoutMs": 20, "accountId": "work", "force": true})
	if got["connected"] != false || !strings.Contains(got["message"].(string), "Still waiting") {
		t.Errorf("web.login.wait past its timeout = %v", got)
	}
	f.mu.Lock()
	lastWait := f.waits[len(f.waits)-1]
	f.mu.Unlock()
	if lastWait != (LoginRequest{AccountID: "work"}) {
		t.Errorf("the backend's wait got %+v", lastWait)
	}

	f.answers <- loginAnswer{err: errors.New("whatsapp: no code was scanned in time; start linking again")}
	if e := callErr(t, admin, "web.login.wait", nil); e.Code != protocol.CodeInvalidRequest || !strings.Contains(e.Message, "start linking again") {
		t.Errorf("web.login.wait when linking ended = %+v", e)
	}
}

// An account already linked: the backend's message alone comes back,
// without a code and without an error.
func TestWebLoginStartWhenLinked(t *testing.T) {
	r := newRig(t, rigOptions{})
	f := newFakeLogin()
	f.start = func(req LoginRequest) (LoginResult, error) {
		if !req.Force {
			return LoginResult{Message: "WhatsApp is already linked as +15550001111; use force to relink."}, nil
		}
		return LoginResult{Message: "Scan the QR code.", QR: "2@qr-new"}, nil
	}
	r.withLogin(f)
	admin := r.dial(r.opts(protocol.ScopeAdmin))
	got := call[map[string]any](t, admin, "web.login.start", nil)
	if len(got) != 1 || !strings.Contains(got["message"].(string), "already linked as +15550001111") {
		t.Errorf("web.login.start when linked = %v", got)
	}
	if got := call[map[string]any](t, admin, "web.login.start", map[string]any{"force": true}); got["qr"] != "2@qr-new" {
		t.Errorf("web.login.start with force = %v", got)
	}
}

// web.login.* need operator.admin, are not advertised (OpenClaw does not
// advertise them), check their params, and answer UNAVAILABLE when no
// bridge links accounts.
func TestWebLoginScopeParamsAndUnavailable(t *testing.T) {
	r := newRig(t, rigOptions{})
	writer := r.dial(r.opts(protocol.ScopeRead, protocol.ScopeWrite))
	admin := r.dial(r.opts(protocol.ScopeAdmin))
	for _, m := range []string{"web.login.start", "web.login.wait"} {
		if req, ok := protocol.ScopeOf(m); !ok || req != protocol.RequireAdmin {
			t.Errorf("%s scope = %v", m, req)
		}
		if e := callErr(t, writer, m, nil); e.Message != "missing scope: operator.admin" {
			t.Errorf("%s without admin: %+v", m, e)
		}
		if slices.Contains(admin.Hello().Features.Methods, m) {
			t.Errorf("%s is advertised in hello-ok", m)
		}
		if e := callErr(t, admin, m, nil); e.Code != protocol.CodeUnavailable || !strings.Contains(e.Message, "enable one under channels:") {
			t.Errorf("%s without a login backend: %+v", m, e)
		}
		if e := callErr(t, admin, m, map[string]any{"timeoutMs": -1}); !strings.Contains(e.Message, "timeoutMs must be between 1 and") {
			t.Errorf("%s with a negative timeout: %+v", m, e)
		}
		if e := callErr(t, admin, m, map[string]any{"timeoutMs": "soon"}); !strings.Contains(e.Message, "timeoutMs must be a number") {
			t.Errorf("%s with a string timeout: %+v", m, e)
		}
	}
}
