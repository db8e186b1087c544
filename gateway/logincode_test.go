package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// The sign-in link `switchboard run` prints (issue 26: "a URL that logs the
// browser in once"): its code pairs a browser with a device identity on
// this machine once and gives it a device token for later connects; from
// another machine, and when spent, expired or unknown, it is refused. The
// gateway never logs a code.
func TestLoginCodeSignsABrowserInOnce(t *testing.T) {
	r := newRig(t, rigOptions{fakeClock: true})
	code, err := r.gw.LoginCode()
	if err != nil {
		t.Fatal(err)
	}
	r.secrets = append(r.secrets, code)
	dev := newDevice(t)
	o := r.opts(protocol.ScopeRead, protocol.ScopeWrite)
	o.Token, o.BootstrapToken, o.Device = "", code, dev

	// From elsewhere (a proxy reports another address) the code is
	// refused, and stays good here.
	if ce := r.reject(remote(o)); ce.Err.Code == "" {
		t.Fatalf("a sign-in code from another machine was taken: %+v", ce)
	}

	c := r.dial(o)
	h := c.Hello()
	if h.Auth == nil || h.Auth.DeviceToken == "" {
		t.Fatalf("hello-ok after a sign-in code carries no device token: %+v", h.Auth)
	}
	r.secrets = append(r.secrets, h.Auth.DeviceToken)
	if !strings.Contains(strings.Join(h.Auth.Scopes, " "), protocol.ScopeWrite) {
		t.Errorf("scopes after a sign-in code = %v, want the asked-for write scope", h.Auth.Scopes)
	}
	call[map[string]any](t, c, "sessions.list", map[string]any{})
	c.Close()

	// The same code again, even from the same device, is refused.
	if ce := r.reject(o); ce.Err.Code != protocol.CodeInvalidRequest {
		t.Errorf("second use of a code: %+v", ce.Err)
	}
	// The device token it earned signs in from now on.
	o.BootstrapToken, o.DeviceToken = "", h.Auth.DeviceToken
	r.dial(o).Close()

	// A code past its lifetime is worth nothing.
	late, err := r.gw.LoginCode()
	if err != nil {
		t.Fatal(err)
	}
	r.secrets = append(r.secrets, late)
	r.clock.Advance(LoginCodeTTL + time.Second)
	o2 := remote(r.opts(protocol.ScopeRead))
	o2.Token, o2.BootstrapToken, o2.Device = "", late, newDevice(t)
	if ce := r.reject(o2); ce.Err.Code != protocol.CodeInvalidRequest {
		t.Errorf("expired code: %+v", ce.Err)
	}
	// A browser without a device key is told to paste the token, and its
	// code stays good.
	fresh, err := r.gw.LoginCode()
	if err != nil {
		t.Fatal(err)
	}
	r.secrets = append(r.secrets, fresh)
	o3 := r.opts(protocol.ScopeRead)
	o3.Token, o3.BootstrapToken = "", fresh
	if ce := r.reject(o3); !strings.Contains(ce.Err.Message, "paste the gateway token") {
		t.Errorf("code without a device identity: %+v", ce.Err)
	}
	o3.Device = newDevice(t)
	r.dial(o3).Close()
	if !strings.Contains(r.logs.String(), "one-time link") {
		t.Errorf("the sign-in is not logged:\n%s", r.logs.String())
	}
}
