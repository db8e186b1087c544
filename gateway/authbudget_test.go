package gateway

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/gateway/client"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// TestFinding7_GlobalAuthBudget (issue 22, finding 7): failed
// authentications are budgeted over all addresses together, not only per
// address. Seven addresses guessing nine times each (under the
// per-address lockout of ten) get 60 guesses checked; then every guess is
// refused unchecked until the budget refills at one a second. The owner's
// paired device still connects meanwhile; a token-only client waits like
// everyone, and gets in once a token is back. Sixty addresses used to get
// about 1,800 guesses a second.
func TestFinding7_GlobalAuthBudget(t *testing.T) {
	r := newRig(t, rigOptions{fakeClock: true})
	from := func(o client.Options, ip string) client.Options {
		o.HTTPClient = httpClientFrom(t, ip)
		return o
	}
	// The owner's device pairs before the attack (loopback pairs
	// silently).
	dev := newDevice(t)
	owner := r.opts(protocol.ScopeRead)
	owner.Device = dev
	r.dial(owner).Close()

	bad := r.opts()
	bad.Token = strings.Repeat("ef56", 12)
	checked, refused := 0, 0
	for i := range 63 {
		ip := fmt.Sprintf("127.0.0.%d", 2+i%7)
		switch code := client.Detail(r.reject(from(bad, ip)), "code"); code {
		case protocol.DetailAuthTokenMismatch:
			checked++
		case protocol.DetailAuthRateLimited:
			refused++
		default:
			t.Fatalf("guess %d from %s: %s", i+1, ip, code)
		}
	}
	if checked != 60 || refused != 3 {
		t.Fatalf("63 guesses from 7 addresses: %d checked, %d refused; want 60 and 3", checked, refused)
	}
	// A fresh address with the right token: refused too, unchecked.
	ce := r.reject(from(r.opts(), "127.0.0.20"))
	if client.Detail(ce, "code") != protocol.DetailAuthRateLimited || ce.Err.RetryAfterMs == nil || *ce.Err.RetryAfterMs > 1000 {
		t.Fatalf("token-only owner while the budget is spent: %+v, want AUTH_RATE_LIMITED within a second", ce.Err)
	}
	// The paired device, signing this socket's challenge, connects.
	r.dial(from(owner, "127.0.0.21")).Close()
	// One second later one guess's worth is back: the right token gets
	// in.
	r.clock.Advance(time.Second)
	r.dial(from(r.opts(), "127.0.0.20")).Close()
}
