package gateway

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/gateway/client"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

func TestClientAddr(t *testing.T) {
	for _, tc := range []struct {
		name     string
		trusted  []string
		peer     string
		header   http.Header
		ip       string
		loopback bool
	}{
		{"direct loopback", nil, "127.0.0.1:5000", nil, "127.0.0.1", true},
		{"direct remote", nil, "203.0.113.7:5000", nil, "203.0.113.7", false},
		{"ipv6 peer", nil, "[2001:db8::1]:5000", nil, "2001:db8::1", false},
		{"header from an untrusted peer is ignored, and not loopback", nil, "127.0.0.1:5000",
			http.Header{"X-Forwarded-For": {"198.51.100.9"}}, "127.0.0.1", false},
		{"trusted proxy", []string{"127.0.0.1"}, "127.0.0.1:5000",
			http.Header{"X-Forwarded-For": {"198.51.100.9"}}, "198.51.100.9", false},
		{"rightmost untrusted hop, not the client's own claim", []string{"127.0.0.1"}, "127.0.0.1:5000",
			http.Header{"X-Forwarded-For": {"10.9.9.9, 198.51.100.9"}}, "198.51.100.9", false},
		{"a chain of trusted proxies", []string{"127.0.0.1", "10.0.0.0/8"}, "127.0.0.1:5000",
			http.Header{"X-Forwarded-For": {"198.51.100.9, 10.1.2.3"}}, "198.51.100.9", false},
		{"several header lines", []string{"127.0.0.1"}, "127.0.0.1:5000",
			http.Header{"X-Forwarded-For": {"203.0.113.1", "198.51.100.9"}}, "198.51.100.9", false},
		{"forwarded for a client that is loopback is still not loopback", []string{"127.0.0.1"}, "127.0.0.1:5000",
			http.Header{"X-Forwarded-For": {"127.0.0.1"}}, "127.0.0.1", false},
		{"Forwarded without X-Forwarded-For", []string{"127.0.0.1"}, "127.0.0.1:5000",
			http.Header{"Forwarded": {`for=192.0.2.60;proto=http, for="[2001:db8::7]:4711"`}}, "2001:db8::7", false},
		{"X-Forwarded-For wins over Forwarded", []string{"127.0.0.1"}, "127.0.0.1:5000",
			http.Header{"Forwarded": {"for=192.0.2.60"}, "X-Forwarded-For": {"198.51.100.9"}}, "198.51.100.9", false},
		{"unreadable hop: the proxy's address stands", []string{"127.0.0.1"}, "127.0.0.1:5000",
			http.Header{"X-Forwarded-For": {"198.51.100.9, garbage"}}, "127.0.0.1", false},
		{"ipv4-mapped peer matches an ipv4 entry", []string{"127.0.0.1"}, "[::ffff:127.0.0.1]:5000",
			http.Header{"X-Forwarded-For": {"198.51.100.9"}}, "198.51.100.9", false},
		{"X-Real-Ip alone makes a request non-local but names no one", []string{"127.0.0.1"}, "127.0.0.1:5000",
			http.Header{"X-Real-Ip": {"198.51.100.9"}}, "127.0.0.1", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.TrustedProxies = tc.trusted
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			s := New(cfg, Deps{})
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = tc.peer
			r.Header = tc.header
			if r.Header == nil {
				r.Header = http.Header{}
			}
			ip, loopback := s.clientAddr(r)
			if ip != tc.ip || loopback != tc.loopback {
				t.Errorf("clientAddr = %s, %v; want %s, %v", ip, loopback, tc.ip, tc.loopback)
			}
		})
	}
}

func TestTrustedProxiesValidate(t *testing.T) {
	cfg := DefaultConfig()
	cfg.TrustedProxies = []string{"10.0.0.0/8", "::1", "nginx.local", "10.0.0.1/33"}
	err := cfg.Validate()
	if err == nil || !strings.Contains(err.Error(), "trustedProxies[2]") || !strings.Contains(err.Error(), "trustedProxies[3]") ||
		strings.Contains(err.Error(), "trustedProxies[0]") || strings.Contains(err.Error(), "trustedProxies[1]") {
		t.Errorf("Validate = %v, want entries 2 and 3 refused", err)
	}
}

func TestAddrKeyGroupsIPv6By64(t *testing.T) {
	if a, b := addrKey("2001:db8:1:2::1"), addrKey("2001:db8:1:2:ffff::9"); a != b {
		t.Errorf("one /64: keys %s and %s", a, b)
	}
	if a, b := addrKey("2001:db8:1:2::1"), addrKey("2001:db8:1:3::1"); a == b {
		t.Errorf("two /64s share key %s", a)
	}
	if k := addrKey("::ffff:192.0.2.1"); k != "192.0.2.1" {
		t.Errorf("mapped IPv4 key = %s", k)
	}
}

// TestFinding7_TrustedProxyAddress (issue 22, finding 7): behind a trusted
// reverse proxy the failed-auth lockout counts the client the proxy names,
// so ten wrong guesses lock out their sender and not the owner behind the
// same proxy. Every client used to share the proxy's address, and the
// owner was locked out for five minutes.
func TestFinding7_TrustedProxyAddress(t *testing.T) {
	r := newRig(t, rigOptions{fakeClock: true, cfg: func(c *Config) { c.TrustedProxies = []string{"127.0.0.1"} }})
	via := func(o client.Options, xff string) client.Options {
		o.Header = http.Header{"X-Forwarded-For": {xff}}
		return o
	}
	bad := r.opts()
	bad.Token = strings.Repeat("ef56", 12)
	for i := range 10 {
		// The attacker claims addresses of its own; the proxy appends
		// the one it saw.
		if got := client.Detail(r.reject(via(bad, "192.0.2."+strconv.Itoa(i)+", 203.0.113.9")), "code"); got != protocol.DetailAuthTokenMismatch {
			t.Fatalf("attempt %d: %s, want a token mismatch", i+1, got)
		}
	}
	if got := client.Detail(r.reject(via(r.opts(), "203.0.113.9")), "code"); got != protocol.DetailAuthRateLimited {
		t.Fatalf("the guessing address after ten failures: %s, want locked out", got)
	}
	// The owner, behind the same proxy, connects.
	r.dial(via(r.opts(), "198.51.100.4")).Close()
}

// TestFinding7_TrustedProxyAddressCountsForConnectionCaps: behind a
// trusted proxy the per-address connection cap counts the clients it
// names, not the proxy, for WebSockets as long as they are open.
func TestFinding7_TrustedProxyAddressCountsForConnectionCaps(t *testing.T) {
	r := newRig(t, rigOptions{cfg: func(c *Config) {
		c.TrustedProxies = []string{"127.0.0.1"}
		c.Limits.MaxConnectionsPerAddress = 2
	}})
	via := func(xff string) client.Options {
		o := r.opts()
		o.Header = http.Header{"X-Forwarded-For": {xff}}
		return o
	}
	r.dial(via("203.0.113.9"))
	r.dial(via("203.0.113.9"))
	if resp, _ := get(t, r.gw.Addr().String(), "", "/", http.Header{"X-Forwarded-For": {"203.0.113.9"}}); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a third connection for one client through the proxy = %d, want 503", resp.StatusCode)
	}
	// Another client through the same proxy, and the proxy's own
	// connections beyond two, are fine.
	r.dial(via("198.51.100.4"))
	if resp, _ := get(t, r.gw.Addr().String(), "", "/healthz", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("the proxy's own request = %d, want 200", resp.StatusCode)
	}
}
