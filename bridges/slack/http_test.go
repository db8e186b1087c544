package slack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/bridgetest"
	"github.com/switchboardhq/switchboard/bridges/slack"
	"github.com/switchboardhq/switchboard/bridges/slack/slacktest"
	"github.com/switchboardhq/switchboard/core"
)

const signingSecret = "signing-secret-0123456789"

// httpBridge starts a bridge in HTTP mode whose handler is served by an
// httptest server, and returns the server.
func httpBridge(t *testing.T, srv *slacktest.Server, sink bridges.Sink, budget time.Duration) *httptest.Server {
	t.Helper()
	b, err := slack.New(slack.Options{BotToken: srv.BotToken, APIURL: srv.APIURL, HTTPClient: srv.Client(),
		HTTP: &slack.HTTPOptions{SigningSecret: signingSecret}, Session: core.SessionConfig{DMScope: core.DMScopePerChannelPeer}})
	if err != nil {
		t.Fatal(err)
	}
	if budget > 0 {
		b.SetHTTPBudget(budget)
	}
	start(t, b, sink)
	ts := httptest.NewServer(b)
	t.Cleanup(ts.Close)
	return ts
}

// send posts body with headers to ts and returns the status.
func send(t *testing.T, ts *httptest.Server, body []byte, h http.Header) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, ts.URL, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h.Clone()
	req.Header.Set("Content-Type", "application/json")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// signed returns Slack's signature headers for body at time at.
func signed(body []byte, at time.Time) http.Header {
	ts := strconv.FormatInt(at.Unix(), 10)
	h := http.Header{}
	h.Set("X-Slack-Request-Timestamp", ts)
	h.Set("X-Slack-Signature", slacktest.Signature(signingSecret, ts, body))
	return h
}

func TestHTTPSignatureChecks(t *testing.T) {
	srv := slacktest.New(t)
	sink := &journalSink{}
	ts := httpBridge(t, srv, sink, 0)
	body, err := json.Marshal(srv.Message("D100", "U9", "hello", slacktest.WithChannelType("im")))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	without := func(name string) http.Header {
		h := signed(body, now)
		h.Del(name)
		return h
	}
	withSig := func(sig string) http.Header {
		h := signed(body, now)
		h.Set("X-Slack-Signature", sig)
		return h
	}
	good := signed(body, now).Get("X-Slack-Signature")
	for _, tc := range []struct {
		name string
		body []byte
		h    http.Header
	}{
		{"timestamp 301 s old", body, signed(body, now.Add(-301*time.Second))},
		{"timestamp 301 s in the future", body, signed(body, now.Add(301*time.Second))},
		{"body changed by one byte", bytes.Replace(body, []byte("hello"), []byte("hellp"), 1), signed(body, now)},
		{"no signature header", body, without("X-Slack-Signature")},
		{"no timestamp header", body, without("X-Slack-Request-Timestamp")},
		{"no headers", body, http.Header{}},
		{"v1= prefix", body, withSig("v1=" + strings.TrimPrefix(good, "v0="))},
		{"truncated signature", body, withSig(good[:len(good)-2])},
		{"signed with another secret", body, withSig(slacktest.Signature("other-secret", strconv.FormatInt(now.Unix(), 10), body))},
	} {
		if code := send(t, ts, tc.body, tc.h); code != http.StatusUnauthorized {
			t.Errorf("%s: HTTP %d, want 401", tc.name, code)
		}
	}
	if _, _, attempts := sink.counts(); attempts != 0 {
		t.Fatalf("%d messages reached the sink through bad signatures", attempts)
	}
	// The same body, signed right, goes through.
	if code := send(t, ts, body, signed(body, now)); code != http.StatusOK {
		t.Fatalf("valid request: HTTP %d", code)
	}
	if fresh, _, _ := sink.counts(); len(fresh) != 1 || fresh[0].Message.Body != "hello" {
		t.Errorf("submitted = %+v", fresh)
	}
}

func TestHTTPReplayedRequestIsProcessedOnce(t *testing.T) {
	srv := slacktest.New(t)
	sink := &journalSink{}
	ts := httpBridge(t, srv, sink, 0)
	body, err := json.Marshal(srv.Message("D100", "U9", "once", slacktest.WithChannelType("im")))
	if err != nil {
		t.Fatal(err)
	}
	h := signed(body, time.Now())
	for i := range 5 {
		if code := send(t, ts, body, h); code != http.StatusOK {
			t.Errorf("replay %d: HTTP %d, want 200", i+1, code)
		}
	}
	if fresh, dups, _ := sink.counts(); len(fresh) != 1 || dups != 4 {
		t.Errorf("%d new, %d duplicates; want the event processed once", len(fresh), dups)
	}
}

func TestHTTPRetries(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), bridgetest.WaitFor)
	defer cancel()

	t.Run("a retry whose first attempt never arrived is processed", func(t *testing.T) {
		srv := slacktest.New(t)
		sink := &journalSink{}
		url := httpBridge(t, srv, sink, 0).URL
		ev := srv.Message("D100", "U9", "first attempt lost", slacktest.WithChannelType("im"))
		if code, err := srv.PostEvent(ctx, url, signingSecret, ev, slacktest.WithRetry(1, "http_timeout")); err != nil || code != http.StatusOK {
			t.Fatalf("retry: %d %v", code, err)
		}
		if fresh, _, _ := sink.counts(); len(fresh) != 1 || fresh[0].Message.Body != "first attempt lost" {
			t.Errorf("submitted = %+v", fresh)
		}
	})

	t.Run("retries of a processed event are acked, not processed", func(t *testing.T) {
		srv := slacktest.New(t)
		sink := &journalSink{}
		url := httpBridge(t, srv, sink, 0).URL
		ev := srv.Message("C200", "U9", "hi", slacktest.WithChannelType("channel"))
		if code, err := srv.PostEvent(ctx, url, signingSecret, ev); err != nil || code != http.StatusOK {
			t.Fatalf("first attempt: %d %v", code, err)
		}
		for n := 1; n <= 3; n++ {
			if code, err := srv.PostEvent(ctx, url, signingSecret, ev, slacktest.WithRetry(n, "http_timeout")); err != nil || code != http.StatusOK {
				t.Errorf("retry %d: %d %v", n, code, err)
			}
		}
		if fresh, dups, _ := sink.counts(); len(fresh) != 1 || dups != 3 {
			t.Errorf("%d new, %d duplicates; want one processing", len(fresh), dups)
		}
	})

	t.Run("a failed submit is answered 500 and the retry is processed", func(t *testing.T) {
		srv := slacktest.New(t)
		sink := &journalSink{fails: 1}
		url := httpBridge(t, srv, sink, 0).URL
		ev := srv.Message("D100", "U9", "keep me", slacktest.WithChannelType("im"))
		if code, err := srv.PostEvent(ctx, url, signingSecret, ev); err != nil || code < 300 {
			t.Fatalf("failed submit answered %d %v, want non-2xx so Slack retries", code, err)
		}
		if code, err := srv.PostEvent(ctx, url, signingSecret, ev, slacktest.WithRetry(1, "http_error")); err != nil || code != http.StatusOK {
			t.Fatalf("retry: %d %v", code, err)
		}
		if fresh, _, attempts := sink.counts(); len(fresh) != 1 || fresh[0].Message.Body != "keep me" || attempts != 2 {
			t.Errorf("new %+v after %d attempts", fresh, attempts)
		}
	})

	t.Run("a stuck journal is answered 500 within the budget", func(t *testing.T) {
		srv := slacktest.New(t)
		sink := &journalSink{stuck: true}
		url := httpBridge(t, srv, sink, 50*time.Millisecond).URL
		ev := srv.Message("D100", "U9", "slow disk", slacktest.WithChannelType("im"))
		// Without the budget the request would hang until ctx ends.
		if code, err := srv.PostEvent(ctx, url, signingSecret, ev); err != nil || code != http.StatusInternalServerError {
			t.Fatalf("stuck journal: %d %v, want 500", code, err)
		}
		sink.set(0, false)
		if code, err := srv.PostEvent(ctx, url, signingSecret, ev, slacktest.WithRetry(1, "http_error")); err != nil || code != http.StatusOK {
			t.Fatalf("retry: %d %v", code, err)
		}
		if fresh, _, _ := sink.counts(); len(fresh) != 1 || fresh[0].Message.Body != "slow disk" {
			t.Errorf("submitted = %+v", fresh)
		}
	})
}
