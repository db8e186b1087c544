package egress_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/egress"
)

// Issue 22, finding 10: cloud metadata endpoints outside the ranges a
// blocklist of special-purpose space covers. Azure's wire server looks
// public; AWS's IPv6 metadata service is in unique-local space, which
// AllowPrivate (for tests and local model servers) must not open.
func TestFinding10_CloudMetadataEndpointsAreBlocked(t *testing.T) {
	for _, s := range []string{"168.63.129.16", "::ffff:168.63.129.16", "fd00:ec2::254"} {
		if !egress.IsBlockedIP(netip.MustParseAddr(s)) {
			t.Errorf("IsBlockedIP(%s) = false, want true", s)
		}
	}
	for _, s := range []string{"168.63.129.15", "168.63.129.17"} {
		if egress.IsBlockedIP(netip.MustParseAddr(s)) {
			t.Errorf("IsBlockedIP(%s) = true, want false (only the wire server is refused)", s)
		}
	}
	res := &fakeResolver{answers: map[string][]string{"wire.example": {"168.63.129.16"}, "imds6.example": {"fd00:ec2::254"}}}
	p := egress.New(egress.Options{AllowPrivate: true, Resolver: res})
	for _, host := range []string{"wire.example", "imds6.example"} {
		if _, err := p.Get(t.Context(), "http://"+host+"/metadata"); err == nil || !strings.Contains(err.Error(), "metadata") {
			t.Errorf("GET %s with AllowPrivate: %v, want a refusal naming the metadata endpoint", host, err)
		}
	}
}

func TestIsBlockedIP(t *testing.T) {
	blocked := []string{
		// IPv4 loopback, private, link-local, shared, special.
		"127.0.0.1", "127.255.255.254", "0.0.0.0", "0.1.2.3",
		"10.0.0.1", "10.255.255.255", "172.16.0.1", "172.31.255.255", "192.168.0.1", "192.168.255.255",
		"169.254.169.254", "169.254.0.1", "100.64.0.1", "100.127.255.255",
		"192.0.0.8", "192.0.2.1", "198.51.100.7", "203.0.113.9", "198.18.0.1", "198.19.255.255", "192.88.99.1",
		"224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255",
		// IPv6 loopback, unspecified, ULA, link-local, site-local, multicast, documentation.
		"::1", "::", "fc00::1", "fd00::1", "fdff:ffff::1", "fe80::1", "fe80::1%eth0", "febf::1", "fec0::1",
		"ff02::1", "ff05::2", "2001:db8::1", "3fff::1", "100::1", "2001:2::1",
		// IPv4 hidden in IPv6.
		"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::ffff:0.0.0.0",
		"::127.0.0.1", "::7f00:1", "::8.8.8.8", // IPv4-compatible: deprecated, all refused
		"64:ff9b::127.0.0.1", "64:ff9b::a9fe:a9fe", "64:ff9b::10.1.2.3", "64:ff9b:1::1",
		"2002:7f00:1::", "2002:a9fe:a9fe::1", "2002:c0a8:101::1",
		"2001:0:4136:e378:8000:63bf:3fff:fdd2", // Teredo
		// Outside global unicast 2000::/3.
		"4000::1", "e000::1",
	}
	allowed := []string{
		"8.8.8.8", "1.1.1.1", "93.184.216.34", "100.63.255.255", "100.128.0.0", "172.15.255.255", "172.32.0.0",
		"169.253.255.255", "192.169.0.1", "11.0.0.1", "223.255.255.255",
		"2606:4700:4700::1111", "2001:4860:4860::8888", "2a00:1450:4001:80b::200e",
		"::ffff:8.8.8.8", "64:ff9b::8.8.8.8", "2002:808:808::1",
	}
	if len(blocked) < 20 {
		t.Fatalf("only %d blocked cases", len(blocked))
	}
	for _, s := range blocked {
		if !egress.IsBlockedIP(netip.MustParseAddr(s)) {
			t.Errorf("IsBlockedIP(%s) = false, want true", s)
		}
	}
	for _, s := range allowed {
		if egress.IsBlockedIP(netip.MustParseAddr(s)) {
			t.Errorf("IsBlockedIP(%s) = true, want false", s)
		}
	}
	if !egress.IsBlockedIP(netip.Addr{}) {
		t.Error("IsBlockedIP(invalid Addr) = false, want true")
	}
}

func TestCheckURL(t *testing.T) {
	accepted := []string{
		"https://hooks.example.com/cron",
		"http://hook.example:8080/path/to?x=1&y=2",
		"https://hook.example./",
		"https://hook.example",
		"https://93.184.216.34/hook",
		"https://[2606:4700:4700::1111]:8443/hook",
		"HTTPS://Hooks.Example.com/cron",
		"https://hook-1.example/x%20y",
	}
	for _, raw := range accepted {
		if err := egress.CheckURL(raw); err != nil {
			t.Errorf("CheckURL(%q) = %v, want nil", raw, err)
		}
	}

	tests := []struct {
		raw     string
		want    []string // substrings of the error
		blocked bool     // errors.Is(err, ErrBlockedAddress)
	}{
		{raw: "", want: []string{"empty", "https://"}},
		{raw: " https://hook.example/", want: []string{"spaces"}},
		{raw: "hooks.example.com/cron", want: []string{"not an absolute URL", "https://"}},
		{raw: "//hooks.example.com/cron", want: []string{"not an absolute URL"}},
		{raw: "hook.example:8080/x", want: []string{`scheme "hook.example"`, "http:// or https://"}},
		{raw: "ftp://hook.example/x", want: []string{`scheme "ftp"`, "http:// or https://"}},
		{raw: "file:///etc/passwd", want: []string{`scheme "file"`}},
		{raw: "javascript:alert(1)", want: []string{`scheme "javascript"`}},
		{raw: "http:hook.example", want: []string{"no host", "http://host/path"}},
		{raw: "https:///cron", want: []string{"no host"}},
		{raw: "https://user:hunter2@hook.example/cron", want: []string{"credentials", "remove them", "https://REDACTED@hook.example/cron"}},
		{raw: "https://tok3n@hook.example/cron", want: []string{"credentials"}},
		{raw: "https://hook.example/cron#s3cret", want: []string{"fragment", "remove it"}},
		{raw: "https://hook.example/cron#", want: []string{"fragment"}},
		{raw: "https://hook.example:0/", want: []string{"port 0", "1 to 65535"}},
		{raw: "https://hook.example:70000/", want: []string{"port 70000", "1 to 65535"}},
		{raw: "https://hook example/", want: []string{"invalid character"}},
		{raw: "http://127.0.0.1/", want: []string{"loopback", "public"}, blocked: true},
		{raw: "http://127.0.0.1:8080/?token=abc", want: []string{"127.0.0.1:8080/?REDACTED", "loopback"}, blocked: true},
		{raw: "http://[::1]/", want: []string{"loopback"}, blocked: true},
		{raw: "http://[::ffff:127.0.0.1]/", want: []string{"loopback"}, blocked: true},
		{raw: "http://[::127.0.0.1]/", want: []string{"IPv4-compatible"}, blocked: true},
		{raw: "http://[64:ff9b::7f00:1]/", want: []string{"NAT64", "127.0.0.1", "loopback"}, blocked: true},
		{raw: "http://[fe80::1%25eth0]/", want: []string{"link-local"}, blocked: true},
		{raw: "http://[fd00::1]/", want: []string{"unique-local"}, blocked: true},
		{raw: "http://169.254.169.254/latest/meta-data/", want: []string{"link-local", "metadata"}, blocked: true},
		{raw: "http://10.1.2.3/", want: []string{"private", "10.0.0.0/8"}, blocked: true},
		{raw: "http://192.168.1.10:8123/api/webhook/x", want: []string{"private"}, blocked: true},
		{raw: "http://100.100.100.100/", want: []string{"carrier-grade NAT"}, blocked: true},
		{raw: "http://0.0.0.0:80/", want: []string{"this network"}, blocked: true},
		{raw: "http://255.255.255.255/", want: []string{"broadcast"}, blocked: true},
		{raw: "http://localhost:8080/", want: []string{"localhost is this machine, a loopback address"}, blocked: true},
		{raw: "http://api.LOCALHOST./", want: []string{"this machine"}, blocked: true},
		{raw: "http://127.1/", want: []string{`"127.1" is not a canonical IP address`, "four decimal numbers"}},
		{raw: "http://2130706433/", want: []string{"not a canonical IP address"}},
		{raw: "http://0x7f.0.0.1/", want: []string{"not a canonical IP address"}},
		{raw: "http://0x7F000001/", want: []string{"not a canonical IP address"}},
		{raw: "http://0177.0.0.1/", want: []string{"not a canonical IP address"}},
		{raw: "http://127.0.0.1./", want: []string{"not a canonical IP address"}},
		{raw: "http://hook.example.123/", want: []string{"not a canonical IP address"}},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			err := egress.CheckURL(tt.raw)
			if err == nil {
				t.Fatal("accepted, want an error")
			}
			msg := err.Error()
			if !errors.Is(err, egress.ErrInvalidURL) {
				t.Errorf("error %q does not wrap ErrInvalidURL", msg)
			}
			if got := errors.Is(err, egress.ErrBlockedAddress); got != tt.blocked {
				t.Errorf("errors.Is(ErrBlockedAddress) = %v, want %v (%q)", got, tt.blocked, msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
			for _, secret := range []string{"hunter2", "tok3n", "token=abc", "s3cret"} {
				if strings.Contains(msg, secret) {
					t.Errorf("error %q leaks %q", msg, secret)
				}
			}
		})
	}
}

// received is what a test webhook server saw of one request.
type received struct {
	method, contentType, userAgent, path string
	body                                 []byte
}

// recordingServer answers 204 and reports each request on a channel.
func recordingServer(t *testing.T) (*httptest.Server, <-chan received) {
	t.Helper()
	ch := make(chan received, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		ch <- received{method: r.Method, contentType: r.Header.Get("Content-Type"), userAgent: r.UserAgent(), path: r.URL.Path, body: b}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	return srv, ch
}

// canary is an HTTP listener that must never be reached; Conns counts the
// connections it accepted.
type canary struct {
	*httptest.Server
	conns atomic.Int64
}

func newCanary(t *testing.T) *canary {
	t.Helper()
	c := &canary{}
	c.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "canary reached")
	}))
	c.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			c.conns.Add(1)
		}
	}
	c.Start()
	t.Cleanup(c.Close)
	return c
}

func (c *canary) Conns() int64 { return c.conns.Load() }

func (c *canary) AddrPort() netip.AddrPort { return listenerAddrPort(c.Server) }

func (c *canary) Port() string { return strconv.Itoa(int(c.AddrPort().Port())) }

func listenerAddrPort(s *httptest.Server) netip.AddrPort {
	return netip.MustParseAddrPort(s.Listener.Addr().String())
}

// fakeResolver answers from a table and records what it was asked.
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][]string
	asked   []string
}

func (r *fakeResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, host)
	ips, ok := r.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []net.IPAddr
	for _, s := range ips {
		a := netip.MustParseAddr(s)
		out = append(out, net.IPAddr{IP: net.IP(a.AsSlice()), Zone: a.Zone()})
	}
	return out, nil
}

func (r *fakeResolver) Asked() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.asked...)
}

func TestPostJSONDelivers(t *testing.T) {
	tests := []struct {
		name, userAgent, wantUA string
	}{
		{name: "default user agent", wantUA: "Switchboard/1"},
		{name: "custom user agent", userAgent: "Switchboard-Test/9", wantUA: "Switchboard-Test/9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, got := recordingServer(t)
			p := egress.New(egress.Options{AllowPrivate: true, UserAgent: tt.userAgent})
			body := []byte(`{"jobId":"daily-report","status":"ok"}`)
			if err := p.PostJSON(context.Background(), srv.URL+"/hooks/cron?token=abc", body); err != nil {
				t.Fatalf("Post: %v", err)
			}
			r := <-got
			if r.method != http.MethodPost || r.contentType != "application/json" || r.userAgent != tt.wantUA || r.path != "/hooks/cron" || string(r.body) != string(body) {
				t.Errorf("server saw %s %s, Content-Type %q, User-Agent %q, body %q; want POST /hooks/cron, application/json, %q, %q",
					r.method, r.path, r.contentType, r.userAgent, r.body, tt.wantUA, body)
			}
		})
	}
}

// TestPostJSONResolvesWithResolver checks that names go through the
// configured resolver, and that AllowPrivate lets loopback through.
func TestPostJSONResolvesWithResolver(t *testing.T) {
	srv, got := recordingServer(t)
	ap := listenerAddrPort(srv)
	res := &fakeResolver{answers: map[string][]string{"hook.example": {ap.Addr().String()}}}
	p := egress.New(egress.Options{AllowPrivate: true, Resolver: res})
	if err := p.PostJSON(context.Background(), fmt.Sprintf("http://hook.example:%d/cron", ap.Port()), []byte(`{}`)); err != nil {
		t.Fatalf("Post: %v", err)
	}
	if r := <-got; r.path != "/cron" {
		t.Errorf("server saw path %q, want /cron", r.path)
	}
	if asked := res.Asked(); len(asked) != 1 || asked[0] != "hook.example" {
		t.Errorf("resolver asked %q, want [hook.example]", asked)
	}
}

func TestPostJSONStatusError(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		body     string
		want     []string
		wantBody string
	}{
		{name: "500 with long body", status: 500, body: strings.Repeat("x", 1000) + "TAILMARK", want: []string{"500", "Internal Server Error"}, wantBody: strings.Repeat("x", 200)},
		{name: "404 with reason", status: 404, body: "no such hook\n", want: []string{"404", "no such hook"}, wantBody: "no such hook"},
		{name: "429 control characters", status: 429, body: "slow\x00down\x1b[31m", want: []string{"429"}, wantBody: "slow down [31m"},
		{name: "304 is not success", status: 304, want: []string{"304"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			p := egress.New(egress.Options{AllowPrivate: true})
			err := p.PostJSON(context.Background(), srv.URL+"/hooks/SECRETPATH?token=SECRETQUERY", []byte(`{}`))
			if err == nil {
				t.Fatal("Post succeeded, want an error")
			}
			msg := err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
			for _, leak := range []string{"SECRET", "TAILMARK", "\x00", "\x1b"} {
				if strings.Contains(msg, leak) {
					t.Errorf("error %q contains %q", msg, leak)
				}
			}
			var se *egress.StatusError
			if !errors.As(err, &se) {
				t.Fatalf("error %q is not a *StatusError", msg)
			}
			if se.StatusCode != tt.status {
				t.Errorf("StatusCode = %d, want %d", se.StatusCode, tt.status)
			}
			if got := strings.TrimSuffix(se.Body, "..."); got != tt.wantBody {
				t.Errorf("Body = %q, want %q", se.Body, tt.wantBody)
			}
		})
	}
}

// redirectChain serves /hop/N by redirecting (307, so the POST and its body
// are kept) to /hop/N-1, and /hop/0 by recording the request.
func redirectChain(t *testing.T) (*httptest.Server, <-chan received, *atomic.Int64) {
	t.Helper()
	var hops atomic.Int64
	ch := make(chan received, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hop/"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		if n > 0 {
			hops.Add(1)
			http.Redirect(w, r, fmt.Sprintf("/hop/%d?token=SECRETQUERY", n-1), http.StatusTemporaryRedirect)
			return
		}
		b, _ := io.ReadAll(r.Body)
		ch <- received{method: r.Method, path: r.URL.Path, body: b}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	return srv, ch, &hops
}

func TestPostJSONRedirects(t *testing.T) {
	tests := []struct {
		redirects int
		wantErr   string
	}{
		{redirects: 0},
		{redirects: 1},
		{redirects: 3},
		{redirects: 4, wantErr: "stopped after 3 redirects"},
		{redirects: 10, wantErr: "stopped after 3 redirects"},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.redirects), func(t *testing.T) {
			srv, final, hops := redirectChain(t)
			p := egress.New(egress.Options{AllowPrivate: true, MaxRedirects: 3})
			err := p.PostJSON(context.Background(), fmt.Sprintf("%s/hop/%d", srv.URL, tt.redirects), []byte(`{"a":1}`))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Post: %v", err)
				}
				if r := <-final; r.method != http.MethodPost || string(r.body) != `{"a":1}` {
					t.Errorf("final hop saw %s %q, want POST {\"a\":1}", r.method, r.body)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Post error = %v, want one containing %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "SECRET") {
				t.Errorf("error %q leaks the query", err)
			}
			if got := hops.Load(); got != 4 {
				t.Errorf("server redirected %d times, want 4 (3 followed, the 4th refused)", got)
			}
			select {
			case r := <-final:
				t.Errorf("final hop reached (%s %s), want the chain cut", r.method, r.path)
			default:
			}
		})
	}
}

// TestPostJSONRefusesBlockedTargets runs the production policy
// (AllowPrivate false) against names and literals that lead to a loopback
// canary: every delivery is refused before a connection is made.
func TestPostJSONRefusesBlockedTargets(t *testing.T) {
	c := newCanary(t)
	res := &fakeResolver{answers: map[string][]string{
		"hook.example":      {"127.0.0.1"},
		"mapped.example":    {"::ffff:127.0.0.1"},
		"ten.example":       {"10.0.0.1"},
		"metadata.example":  {"169.254.169.254"},
		"loopback6.example": {"::1"},
		"nat64.example":     {"64:ff9b::7f00:1"},
	}}
	tests := []struct {
		name, url string
		resolves  bool // the resolver is asked
	}{
		{name: "name resolving to 127.0.0.1", url: "http://hook.example:" + c.Port() + "/cron?token=SECRETQUERY", resolves: true},
		{name: "name resolving to ::ffff:127.0.0.1", url: "http://mapped.example:" + c.Port() + "/?token=SECRETQUERY", resolves: true},
		{name: "name resolving to 10.0.0.1", url: "http://ten.example:" + c.Port() + "/?token=SECRETQUERY", resolves: true},
		{name: "name resolving to metadata", url: "http://metadata.example/latest/meta-data/?token=SECRETQUERY", resolves: true},
		{name: "name resolving to ::1", url: "http://loopback6.example:" + c.Port() + "/?token=SECRETQUERY", resolves: true},
		{name: "name resolving to NAT64 loopback", url: "http://nat64.example:" + c.Port() + "/?token=SECRETQUERY", resolves: true},
		{name: "literal 127.0.0.1", url: "http://127.0.0.1:" + c.Port() + "/?token=SECRETQUERY"},
		{name: "literal ::ffff:127.0.0.1", url: "http://[::ffff:127.0.0.1]:" + c.Port() + "/?token=SECRETQUERY"},
		{name: "literal ::127.0.0.1", url: "http://[::127.0.0.1]:" + c.Port() + "/?token=SECRETQUERY"},
		{name: "shorthand 127.1", url: "http://127.1:" + c.Port() + "/?token=SECRETQUERY"},
		{name: "decimal 2130706433", url: "http://2130706433:" + c.Port() + "/?token=SECRETQUERY"},
	}
	p := egress.New(egress.Options{Resolver: res})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(res.Asked())
			err := p.PostJSON(context.Background(), tt.url, []byte(`{}`))
			if err == nil {
				t.Fatal("Post succeeded, want a refusal")
			}
			if strings.Contains(err.Error(), "SECRET") {
				t.Errorf("error %q leaks the query", err)
			}
			if !errors.Is(err, egress.ErrBlockedAddress) && !errors.Is(err, egress.ErrInvalidURL) {
				t.Errorf("error %q is neither ErrBlockedAddress nor ErrInvalidURL", err)
			}
			if asked := len(res.Asked()) > before; asked != tt.resolves {
				t.Errorf("resolver asked = %v, want %v", asked, tt.resolves)
			}
			if n := c.Conns(); n != 0 {
				t.Errorf("canary saw %d connections, want 0", n)
			}
		})
	}
	if err := p.PostJSON(context.Background(), "http://hook.example:"+c.Port()+"/", nil); !errors.Is(err, egress.ErrBlockedAddress) || !strings.Contains(err.Error(), "hook.example resolves to 127.0.0.1, which is a loopback address") {
		t.Errorf("error %v does not explain the refusal", err)
	}
}

// publicAsWell is the production policy plus one listener the test treats
// as a public host, so refusals can be checked without real egress.
func publicAsWell(public ...netip.AddrPort) func(netip.AddrPort) bool {
	return func(ap netip.AddrPort) bool {
		for _, p := range public {
			if ap == p {
				return true
			}
		}
		return !egress.IsBlockedIP(ap.Addr())
	}
}

// TestPostJSONRefusesMixedAnswers checks that one blocked address in a
// DNS answer refuses the delivery even when another address is acceptable:
// the canary stands in for the public address, so a poster that dialled it
// would be seen.
func TestPostJSONRefusesMixedAnswers(t *testing.T) {
	c := newCanary(t)
	tests := []struct {
		name      string
		answer    []string
		wantErr   bool
		wantConns int64
	}{
		{name: "public only (control)", answer: []string{"127.0.0.1"}, wantConns: 1},
		{name: "public then private", answer: []string{"127.0.0.1", "10.0.0.1"}, wantErr: true},
		{name: "private then public", answer: []string{"192.168.1.1", "127.0.0.1"}, wantErr: true},
		{name: "public then metadata", answer: []string{"127.0.0.1", "169.254.169.254"}, wantErr: true},
		{name: "public then mapped loopback", answer: []string{"127.0.0.1", "::ffff:127.0.0.2"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := c.Conns()
			res := &fakeResolver{answers: map[string][]string{"hook.example": tt.answer}}
			p := egress.New(egress.Options{Resolver: res, AllowAddr: publicAsWell(c.AddrPort())})
			err := p.PostJSON(context.Background(), "http://hook.example:"+c.Port()+"/", []byte(`{}`))
			if tt.wantErr != (err != nil) || (err != nil && !errors.Is(err, egress.ErrBlockedAddress)) {
				t.Errorf("Post error = %v, want ErrBlockedAddress: %v", err, tt.wantErr)
			}
			if n := c.Conns() - before; n != tt.wantConns {
				t.Errorf("canary saw %d connections, want %d", n, tt.wantConns)
			}
		})
	}
}

// TestPostJSONRefusesRedirectToPrivate lets the first hop reach a
// "public" server, which redirects to the loopback canary in several
// spellings: each hop is held to the same rules.
func TestPostJSONRefusesRedirectToPrivate(t *testing.T) {
	c := newCanary(t)
	var location atomic.Value
	var frontHits atomic.Int64
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		frontHits.Add(1)
		http.Redirect(w, r, location.Load().(string), http.StatusFound)
	}))
	defer front.Close()
	res := &fakeResolver{answers: map[string][]string{
		"public.example":  {"127.0.0.1"},
		"private.example": {"127.0.0.1"},
	}}
	p := egress.New(egress.Options{Resolver: res, AllowAddr: publicAsWell(listenerAddrPort(front))})
	frontURL := fmt.Sprintf("http://public.example:%d/hook?token=SECRETQUERY", listenerAddrPort(front).Port())
	tests := []struct{ name, location string }{
		{name: "name resolving to loopback", location: "http://private.example:" + c.Port() + "/?token=SECRETQUERY"},
		{name: "literal loopback", location: "http://127.0.0.1:" + c.Port() + "/?token=SECRETQUERY"},
		{name: "mapped loopback", location: "http://[::ffff:127.0.0.1]:" + c.Port() + "/"},
		{name: "metadata service", location: "http://169.254.169.254/latest/meta-data/"},
		{name: "localhost", location: "http://localhost:" + c.Port() + "/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			location.Store(tt.location)
			before := frontHits.Load()
			err := p.PostJSON(context.Background(), frontURL, []byte(`{}`))
			if !errors.Is(err, egress.ErrBlockedAddress) {
				t.Errorf("Post error = %v, want ErrBlockedAddress", err)
			}
			if err != nil && strings.Contains(err.Error(), "SECRET") {
				t.Errorf("error %q leaks the query", err)
			}
			if n := frontHits.Load() - before; n != 1 {
				t.Errorf("front server hit %d times, want 1", n)
			}
			if n := c.Conns(); n != 0 {
				t.Errorf("canary saw %d connections, want 0", n)
			}
		})
	}
}

// TestPostJSONChecksAgainAtDial makes the policy change its mind between
// the check of the resolved address and the connect: the dial-time check on
// the socket's address must refuse, before any connection is made.
func TestPostJSONChecksAgainAtDial(t *testing.T) {
	c := newCanary(t)
	var asked atomic.Int64
	allowOnce := func(ap netip.AddrPort) bool { return asked.Add(1) == 1 && ap == c.AddrPort() }
	res := &fakeResolver{answers: map[string][]string{"hook.example": {"127.0.0.1"}}}
	p := egress.New(egress.Options{Resolver: res, AllowAddr: allowOnce})
	err := p.PostJSON(context.Background(), "http://hook.example:"+c.Port()+"/", []byte(`{}`))
	if !errors.Is(err, egress.ErrBlockedAddress) || !strings.Contains(err.Error(), "connecting to 127.0.0.1") {
		t.Errorf("Post error = %v, want a dial-time ErrBlockedAddress", err)
	}
	if n := asked.Load(); n != 2 {
		t.Errorf("policy asked %d times, want 2 (resolved address, then socket address)", n)
	}
	if n := c.Conns(); n != 0 {
		t.Errorf("canary saw %d connections, want 0", n)
	}
}

// TestPostJSONRedactsTarget checks every kind of failure for the URL's
// secrets: the query, the path and credentials never appear in an error.
func TestPostJSONRedactsTarget(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "nope", http.StatusBadGateway)
	}))
	defer failing.Close()
	res := &fakeResolver{answers: map[string][]string{}}
	tests := []struct {
		name, url    string
		allowPrivate bool
		want         string
	}{
		{name: "status", url: failing.URL + "/services/SECRETPATH?token=SECRETQUERY", allowPrivate: true, want: failing.URL + "/...: status 502"},
		{name: "connection refused", url: closedURL + "/SECRETPATH?token=SECRETQUERY", allowPrivate: true, want: closedURL + "/..."},
		{name: "blocked", url: failing.URL + "/SECRETPATH?token=SECRETQUERY", want: "loopback"},
		{name: "unresolvable", url: "https://nowhere.example/SECRETPATH?token=SECRETQUERY", want: "https://nowhere.example/...: resolve nowhere.example"},
		{name: "credentials", url: "https://user:SECRETPASS@hook.example/SECRETPATH?token=SECRETQUERY", want: "credentials"},
		{name: "unparsable", url: "https://user:SECRETPASS@hook example/?token=SECRETQUERY", want: "REDACTED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := egress.New(egress.Options{AllowPrivate: tt.allowPrivate, Resolver: res})
			err := p.PostJSON(context.Background(), tt.url, []byte(`{}`))
			if err == nil {
				t.Fatal("Post succeeded, want an error")
			}
			if msg := err.Error(); strings.Contains(msg, "SECRET") || !strings.Contains(msg, tt.want) {
				t.Errorf("error %q: want %q in it and no SECRET", msg, tt.want)
			}
		})
	}
}

// TestPostJSONCapsResponse sends a 64 MiB 200 body: Post reads up to
// MaxResponseBytes and hangs up, so the server's writes fail long before
// the end.
func TestPostJSONCapsResponse(t *testing.T) {
	const total = 64 << 20
	var written atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat("y", 32<<10))
		for written.Load() < total {
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	p := egress.New(egress.Options{AllowPrivate: true, MaxResponseBytes: 1024})
	err := p.PostJSON(context.Background(), srv.URL, []byte(`{}`))
	srv.Close() // waits for the handler
	if err != nil {
		t.Fatalf("Post: %v", err)
	}
	if n := written.Load(); n >= total {
		t.Errorf("server wrote all %d bytes: the response was read past MaxResponseBytes", n)
	}
}

// TestPostJSONTimeout has the server hold the response until the client
// gives up: the delivery fails as a timeout.
func TestPostJSONTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body) // the server notices a closed connection only after the body
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	p := egress.New(egress.Options{AllowPrivate: true, Timeout: 50 * time.Millisecond})
	err := p.PostJSON(context.Background(), srv.URL+"/?token=SECRETQUERY", []byte(`{}`))
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("Post error = %v, want a timeout", err)
	}
	if strings.Contains(err.Error(), "SECRET") {
		t.Errorf("error %q leaks the query", err)
	}
}

// TestPostJSONContextCanceled checks that the caller's context ends a
// delivery.
func TestPostJSONContextCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body) // the server notices a closed connection only after the body
		cancel()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	p := egress.New(egress.Options{AllowPrivate: true})
	if err := p.PostJSON(ctx, srv.URL, []byte(`{}`)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Post error = %v, want context.Canceled", err)
	}
}
