package heartbeat_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboardhq/switchboard/egress"
	"github.com/switchboardhq/switchboard/heartbeat"
)

// The SSRF policy is egress's and tested there; these tests cover the
// webhook defaults: user agent, response cap, redirect limit, and that a
// status error keeps the URL's secrets out of the message.

func TestWebhookPostDefaults(t *testing.T) {
	ua := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ua <- r.UserAgent()
		// A 2xx answer larger than the cap is cut off, not an error.
		_, _ = w.Write(make([]byte, 2*heartbeat.DefaultWebhookMaxResponseBytes))
	}))
	defer srv.Close()
	p := heartbeat.NewWebhookClient(egress.Options{AllowPrivate: true})
	if err := p.PostJSON(context.Background(), srv.URL+"/cron", []byte(`{}`)); err != nil {
		t.Fatalf("Post: %v", err)
	}
	if got := <-ua; got != heartbeat.DefaultWebhookUserAgent {
		t.Errorf("User-Agent = %q, want %q", got, heartbeat.DefaultWebhookUserAgent)
	}
}

func TestWebhookPostStatusError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such hook", http.StatusNotFound)
	}))
	defer srv.Close()
	p := heartbeat.NewWebhookClient(egress.Options{AllowPrivate: true})
	err := p.PostJSON(context.Background(), srv.URL+"/hooks/SECRETPATH?token=SECRETQUERY", []byte(`{}`))
	var se *egress.StatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusNotFound || se.Body != "no such hook" {
		t.Fatalf("Post error = %v, want a 404 StatusError quoting the body", err)
	}
	if msg := err.Error(); strings.Contains(msg, "SECRET") {
		t.Errorf("error %q names the URL's secrets", msg)
	}
}

func TestWebhookPostFollowsThreeRedirects(t *testing.T) {
	var hops atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hop/"))
		if n > 0 {
			hops.Add(1)
			http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), http.StatusTemporaryRedirect)
		}
	}))
	defer srv.Close()
	p := heartbeat.NewWebhookClient(egress.Options{AllowPrivate: true})
	if err := p.PostJSON(context.Background(), srv.URL+"/hop/3", []byte(`{}`)); err != nil {
		t.Errorf("Post with 3 redirects: %v", err)
	}
	if err := p.PostJSON(context.Background(), srv.URL+"/hop/4", []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "stopped after 3 redirects") {
		t.Errorf("Post with 4 redirects = %v, want stopped after 3", err)
	}
}
