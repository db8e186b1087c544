package egress_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboardhq/switchboard/egress"
)

// blockedTargets are the addresses of reliability-security.md §1.2.E that
// must never be dialled, each spelled as an attacker would.
var blockedTargets = []string{
	"127.0.0.1", "127.0.0.2", "0.0.0.0", "::", "::1",
	"::ffff:127.0.0.1", "::ffff:0.0.0.0", "::127.0.0.1",
	"64:ff9b::7f00:1", "2002:7f00:1::", "2001::1",
	"169.254.169.254", "::ffff:169.254.169.254", "64:ff9b::a9fe:a9fe", "fd00:ec2::254",
	"100.64.0.1", "10.0.0.1", "172.16.0.1", "192.168.1.1", "fd00::1",
	"fe80::1", "fec0::1", "224.0.0.1", "255.255.255.255", "198.18.0.1", "192.0.0.170",
}

// TestGetRefusesBlockedTargets asks for every blocked target on the
// canary's port three ways: as a literal through Get, as a literal through
// HTTPClient, and as a name whose DNS answer is the target. All are refused
// with ErrBlockedAddress and the canary sees no connection.
func TestGetRefusesBlockedTargets(t *testing.T) {
	if len(blockedTargets) < 20 {
		t.Fatalf("only %d blocked targets", len(blockedTargets))
	}
	c := newCanary(t)
	answers := map[string][]string{}
	for i, a := range blockedTargets {
		answers[fmt.Sprintf("t%d.example", i)] = []string{a}
	}
	res := &fakeResolver{answers: answers}
	cl := egress.New(egress.Options{Resolver: res})
	for i, a := range blockedTargets {
		literal := "http://" + netip.AddrPortFrom(netip.MustParseAddr(a), c.AddrPort().Port()).String() + "/?token=SECRETQUERY"
		name := fmt.Sprintf("http://t%d.example:%s/?token=SECRETQUERY", i, c.Port())
		for _, tc := range []struct {
			how string
			get func() (*http.Response, error)
		}{
			{"Get literal", func() (*http.Response, error) { return cl.Get(context.Background(), literal) }},
			{"HTTPClient literal", func() (*http.Response, error) { return cl.HTTPClient().Get(literal) }},
			{"Get name", func() (*http.Response, error) { return cl.Get(context.Background(), name) }},
		} {
			resp, err := tc.get()
			if err == nil {
				resp.Body.Close()
				t.Errorf("%s %s: fetched, want a refusal", tc.how, a)
				continue
			}
			if !errors.Is(err, egress.ErrBlockedAddress) {
				t.Errorf("%s %s: error %v, want ErrBlockedAddress", tc.how, a, err)
			}
			// http.Client's own *url.Error names the whole URL; only the
			// Client's methods redact it.
			if tc.how != "HTTPClient literal" && strings.Contains(err.Error(), "SECRET") {
				t.Errorf("%s %s: error %q leaks the query", tc.how, a, err)
			}
		}
	}
	if n := c.Conns(); n != 0 {
		t.Errorf("canary saw %d connections, want 0", n)
	}
}

// TestGetRefusesRedirectToPrivate has a "public" server redirect Get and
// HTTPClient requests to the loopback canary and the metadata service.
func TestGetRefusesRedirectToPrivate(t *testing.T) {
	c := newCanary(t)
	var location atomic.Value
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, location.Load().(string), http.StatusFound)
	}))
	defer front.Close()
	res := &fakeResolver{answers: map[string][]string{
		"public.example":  {"127.0.0.1"},
		"private.example": {"127.0.0.1"},
	}}
	cl := egress.New(egress.Options{Resolver: res, AllowAddr: publicAsWell(listenerAddrPort(front))})
	frontURL := fmt.Sprintf("http://public.example:%d/page", listenerAddrPort(front).Port())
	for _, loc := range []string{
		"http://private.example:" + c.Port() + "/",
		"http://127.0.0.1:" + c.Port() + "/",
		"http://[::ffff:127.0.0.1]:" + c.Port() + "/",
		"http://[2002:7f00:1::]:" + c.Port() + "/",
		"http://169.254.169.254/latest/meta-data/",
	} {
		location.Store(loc)
		for how, get := range map[string]func() (*http.Response, error){
			"Get":        func() (*http.Response, error) { return cl.Get(context.Background(), frontURL) },
			"HTTPClient": func() (*http.Response, error) { return cl.HTTPClient().Get(frontURL) },
		} {
			resp, err := get()
			if err == nil {
				resp.Body.Close()
			}
			if !errors.Is(err, egress.ErrBlockedAddress) {
				t.Errorf("%s redirected to %s: error %v, want ErrBlockedAddress", how, loc, err)
			}
		}
	}
	if n := c.Conns(); n != 0 {
		t.Errorf("canary saw %d connections, want 0", n)
	}
}

// TestGetMixedAnswers checks Get against a DNS answer with one acceptable
// and one private address: refused, and the acceptable one (the canary) is
// not dialled either.
func TestGetMixedAnswers(t *testing.T) {
	c := newCanary(t)
	res := &fakeResolver{answers: map[string][]string{"mixed.example": {"127.0.0.1", "10.0.0.1"}}}
	cl := egress.New(egress.Options{Resolver: res, AllowAddr: publicAsWell(c.AddrPort())})
	resp, err := cl.Get(context.Background(), "http://mixed.example:"+c.Port()+"/")
	if err == nil {
		resp.Body.Close()
	}
	if !errors.Is(err, egress.ErrBlockedAddress) || !strings.Contains(err.Error(), "10.0.0.1") {
		t.Errorf("Get error = %v, want ErrBlockedAddress naming 10.0.0.1", err)
	}
	if n := c.Conns(); n != 0 {
		t.Errorf("canary saw %d connections, want 0", n)
	}
}

// streamingServer writes total bytes in chunks without a Content-Length and
// counts what it managed to write.
func streamingServer(t *testing.T, total int64) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var written atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat("m", 32<<10))
		for written.Load() < total {
			n, err := w.Write(chunk[:min(int64(len(chunk)), total-written.Load())])
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	return srv, &written
}

// TestGetCapsResponse streams 64 MiB of "media" at a 1 MiB cap: the body
// yields exactly the cap, then ErrTooLarge, and the server's writes fail
// long before the end because nothing past the cap is read.
func TestGetCapsResponse(t *testing.T) {
	const total, limit = 64 << 20, 1 << 20
	srv, written := streamingServer(t, total)
	cl := egress.New(egress.Options{AllowPrivate: true, MaxResponseBytes: limit})
	resp, err := cl.Get(context.Background(), srv.URL+"/big.bin")
	if err != nil {
		srv.Close()
		t.Fatalf("Get: %v", err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	srv.Close() // waits for the handler
	if !errors.Is(err, egress.ErrTooLarge) {
		t.Errorf("reading the body: %v, want ErrTooLarge", err)
	}
	if n != limit {
		t.Errorf("read %d bytes, want exactly the cap %d", n, limit)
	}
	if w := written.Load(); w >= total {
		t.Errorf("server wrote all %d bytes: the body was read past the cap", w)
	}
}

// TestGetResponseAtCap reads a body of exactly MaxResponseBytes in full.
func TestGetResponseAtCap(t *testing.T) {
	const limit = 100 << 10
	srv, _ := streamingServer(t, limit)
	defer srv.Close()
	cl := egress.New(egress.Options{AllowPrivate: true, MaxResponseBytes: limit})
	resp, err := cl.Get(context.Background(), srv.URL)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || len(b) != limit {
		t.Errorf("ReadAll = %d bytes, %v; want %d, nil", len(b), err, limit)
	}
}

// TestGetRefusesAnnouncedSize refuses a response whose Content-Length is
// over the cap before reading its body.
func TestGetRefusesAnnouncedSize(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "2048")
		_, _ = w.Write(make([]byte, 2048))
	}))
	defer srv.Close()
	cl := egress.New(egress.Options{AllowPrivate: true, MaxResponseBytes: 1024})
	resp, err := cl.Get(context.Background(), srv.URL+"/?token=SECRETQUERY")
	if err == nil {
		resp.Body.Close()
	}
	if !errors.Is(err, egress.ErrTooLarge) || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("Get error = %v, want ErrTooLarge without the query", err)
	}
}

// TestGetUserAgent checks the default User-Agent and that a caller's own
// is kept.
func TestGetUserAgent(t *testing.T) {
	got := make(chan string, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.UserAgent()
	}))
	defer srv.Close()
	cl := egress.New(egress.Options{AllowPrivate: true})
	resp, err := cl.Get(context.Background(), srv.URL)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	resp.Body.Close()
	if ua := <-got; ua != egress.DefaultUserAgent {
		t.Errorf("User-Agent = %q, want %q", ua, egress.DefaultUserAgent)
	}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL, nil)
	req.Header.Set("User-Agent", "Mine/2")
	resp, err = cl.Do(req)
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	resp.Body.Close()
	if ua := <-got; ua != "Mine/2" {
		t.Errorf("User-Agent = %q, want Mine/2", ua)
	}
}
