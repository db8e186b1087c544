package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/tools"
	"github.com/switchboardhq/switchboard/egress"
)

// webServer serves pages by path with the given content types. The test
// client treats its listener, and nothing else, as a public host.
func webServer(t *testing.T, pages map[string][2]string) (*httptest.Server, *tools.WebFetch) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, "/article", http.StatusFound)
			return
		}
		p, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if p[0] == "" {
			w.Header()["Content-Type"] = nil // no header at all, and no sniffing by net/http
		} else {
			w.Header().Set("Content-Type", p[0])
		}
		_, _ = io.WriteString(w, p[1])
	}))
	t.Cleanup(srv.Close)
	ap := netip.MustParseAddrPort(srv.Listener.Addr().String())
	cl := egress.New(egress.Options{AllowAddr: func(a netip.AddrPort) bool { return a == ap }})
	return srv, &tools.WebFetch{Client: cl}
}

func fetch(t *testing.T, tool *tools.WebFetch, args map[string]any) (string, map[string]any, error) {
	t.Helper()
	res, err := tool.Execute(context.Background(), tools.Call{Name: "web_fetch", Args: args}, nil)
	if err != nil {
		return "", nil, err
	}
	var details map[string]any
	if err := json.Unmarshal(res.Details, &details); err != nil {
		t.Fatalf("details %s: %v", res.Details, err)
	}
	return res.Content[0].(*core.TextContent).Text, details, nil
}

const articleHTML = `<!doctype html>
<html><head><title>  The
 Article </title><style>body{color:red}</style>
<script>var secret = "SCRIPT";</script></head>
<body>
<nav><a href="/">Home</a> | <a href="/about">NAVLINK</a></nav>
<main>
<h1>Big   news</h1>
<p>First    paragraph,
 with a <a href="/more?x=1">relative link</a> and <a href="https://other.example/">an absolute one</a>.</p>
<p>Second &amp; last <b>bold</b> paragraph.<br>New line.</p>
<a href="javascript:alert(1)">not a link</a>
<ul><li>one</li><li>two</li></ul>
<pre>keep
   this</pre>
<h2>Sub</h2>
<noscript>NOSCRIPT</noscript>
</main>
<script>document.write("SCRIPT2")</script>
</body></html>`

func TestWebFetchHTML(t *testing.T) {
	srv, tool := webServer(t, map[string][2]string{"/article": {"text/html; charset=utf-8", articleHTML}})
	text, details, err := fetch(t, tool, map[string]any{"url": srv.URL + "/moved"})
	if err != nil {
		t.Fatalf("web_fetch: %v", err)
	}
	want := "URL: " + srv.URL + "/article\nTitle: The Article\n\n" +
		"# Big news\n\n" +
		"First paragraph, with a [relative link](" + srv.URL + "/more?x=1) and [an absolute one](https://other.example/).\n\n" +
		"Second & last bold paragraph.\nNew line.\n\n" +
		"not a link\n\n" +
		"- one\n- two\n\n" +
		"keep\n   this\n\n" +
		"## Sub"
	if text != want {
		t.Errorf("text =\n%s\n\nwant\n%s", text, want)
	}
	for _, bad := range []string{"SCRIPT", "NAVLINK", "NOSCRIPT", "color:red", "javascript:"} {
		if strings.Contains(text, bad) {
			t.Errorf("text contains %q", bad)
		}
	}
	if details["finalUrl"] != srv.URL+"/article" || details["contentType"] != "text/html" || details["title"] != "The Article" {
		t.Errorf("details = %v", details)
	}
}

func TestWebFetchTextTypes(t *testing.T) {
	srv, tool := webServer(t, map[string][2]string{
		"/a.txt":  {"text/plain", "plain <b>text</b>\n"},
		"/a.md":   {"text/markdown; charset=utf-8", "# Heading\n\nbody"},
		"/a.json": {"application/json", `{"a":1}`},
		"/sniff":  {"", "no content type, just text"},
	})
	for path, want := range map[string]string{
		"/a.txt":  "plain <b>text</b>",
		"/a.md":   "# Heading\n\nbody",
		"/a.json": `{"a":1}`,
		"/sniff":  "no content type, just text",
	} {
		text, _, err := fetch(t, tool, map[string]any{"url": srv.URL + path})
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if w := "URL: " + srv.URL + path + "\n\n" + want; text != w {
			t.Errorf("%s: text = %q, want %q", path, text, w)
		}
	}
}

func TestWebFetchRefusesOtherTypes(t *testing.T) {
	srv, tool := webServer(t, map[string][2]string{
		"/img.png": {"image/png", "\x89PNG\r\n\x1a\n"},
		"/bad":     {"text/html; charset=\"", "x"},
	})
	for _, path := range []string{"/img.png", "/bad"} {
		_, _, err := fetch(t, tool, map[string]any{"url": srv.URL + path})
		if !errors.Is(err, tools.ErrUnsupportedContentType) {
			t.Errorf("%s: error %v, want ErrUnsupportedContentType", path, err)
		}
	}
}

func TestWebFetchTruncates(t *testing.T) {
	long := strings.Repeat("é", 120)
	srv, tool := webServer(t, map[string][2]string{"/long": {"text/plain", long}})
	text, details, err := fetch(t, tool, map[string]any{"url": srv.URL + "/long", "maxChars": 100})
	if err != nil {
		t.Fatalf("web_fetch: %v", err)
	}
	if !strings.Contains(text, strings.Repeat("é", 100)+"\n\n[Truncated: showing the first 100 of 120 characters") ||
		strings.Contains(text, strings.Repeat("é", 101)) {
		t.Errorf("text = %q", text)
	}
	if details["truncated"] != true || details["chars"] != float64(120) {
		t.Errorf("details = %v", details)
	}
}

func TestWebFetchErrors(t *testing.T) {
	srv, tool := webServer(t, map[string][2]string{})
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"no url", map[string]any{}, "url must be"},
		{"url not a string", map[string]any{"url": 3.0}, "url must be"},
		{"maxChars zero", map[string]any{"url": srv.URL, "maxChars": 0.0}, "maxChars must be"},
		{"maxChars fraction", map[string]any{"url": srv.URL, "maxChars": 1.5}, "maxChars must be"},
		{"not found", map[string]any{"url": srv.URL + "/missing"}, "answered 404"},
		{"bad scheme", map[string]any{"url": "file:///etc/passwd"}, "scheme"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := fetch(t, tool, tt.args)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want one containing %q", err, tt.want)
			}
		})
	}
	if _, err := (&tools.WebFetch{}).Execute(context.Background(), tools.Call{Args: map[string]any{"url": srv.URL}}, nil); err == nil {
		t.Error("web_fetch without a client succeeded")
	}
}

// TestWebFetchRefusesPrivate runs the production policy: a loopback
// server, by literal address and by a name resolving to it, and the
// metadata service are refused, and the server sees no connection.
func TestWebFetchRefusesPrivate(t *testing.T) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "private data")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	tool := &tools.WebFetch{Client: egress.New(egress.Options{Resolver: loopbackResolver{}})}
	for _, u := range []string{srv.URL + "/", "http://intranet.example:" + port + "/", "http://169.254.169.254/latest/meta-data/"} {
		_, _, err := fetch(t, tool, map[string]any{"url": u})
		if !errors.Is(err, egress.ErrBlockedAddress) {
			t.Errorf("web_fetch %s: error %v, want ErrBlockedAddress", u, err)
		}
	}
	if n := conns.Load(); n != 0 {
		t.Errorf("private server saw %d connections, want 0", n)
	}
}

// loopbackResolver resolves every name to 127.0.0.1.
type loopbackResolver struct{}

func (loopbackResolver) LookupIPAddr(context.Context, string) ([]net.IPAddr, error) {
	return []net.IPAddr{{IP: net.IPv4(127, 0, 0, 1)}}, nil
}
