package slack_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	slackapi "github.com/slack-go/slack"
	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/bridgetest"
	"github.com/switchboardhq/switchboard/bridges/slack"
	"github.com/switchboardhq/switchboard/bridges/slack/slacktest"
	"github.com/switchboardhq/switchboard/core"
)

// calls counts the fake's calls of method.
func calls(srv *slacktest.Server, method string) []slacktest.Call {
	var out []slacktest.Call
	for _, c := range srv.Calls() {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

func TestRateLimitHoldsOnlyTheLimitedMethod(t *testing.T) {
	clock := newFakeClock()
	srv := slacktest.New(t, slacktest.WithClock(clock.Now))
	mediaDir := filepath.Join(t.TempDir(), "media", "slack")
	if err := os.MkdirAll(mediaDir, 0o700); err != nil {
		t.Fatal(err)
	}
	chart := filepath.Join(mediaDir, "chart.png")
	if err := os.WriteFile(chart, []byte("png bytes"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := slack.New(slack.Options{BotToken: srv.BotToken, AppToken: srv.AppToken, APIURL: srv.APIURL, HTTPClient: srv.Client(),
		MediaDir: mediaDir, Now: clock.Now, After: clock.After})
	if err != nil {
		t.Fatal(err)
	}
	route := core.Route{Channel: "slack", To: "C200"}
	first, err := b.Deliver(t.Context(), bridges.Outbound{Route: route, Text: "first"})
	if err != nil {
		t.Fatal(err)
	}

	srv.RateLimitNext("chat.postMessage", 30)
	limitedAt := clock.Now()
	type result struct {
		rc  bridges.Receipt
		err error
	}
	results := make(chan result, 2)
	deliver := func(text string) {
		rc, err := b.Deliver(context.Background(), bridges.Outbound{Route: route, Text: text})
		results <- result{rc, err}
	}
	go deliver("second")
	// The 429 holds chat.postMessage: the retry waits for the clock...
	if !bridgetest.Eventually(func() bool { return clock.Waiting() == 1 }) {
		t.Fatalf("the rate-limited post does not wait: %v", srv.Requests())
	}
	// ...and so does another post, which makes no request in the meantime.
	go deliver("third")
	if !bridgetest.Eventually(func() bool { return clock.Waiting() == 2 }) {
		t.Fatalf("a second post does not wait for the same window: %v", srv.Requests())
	}
	// Other methods are not held.
	ctx, cancel := context.WithTimeout(context.Background(), bridgetest.WaitFor)
	defer cancel()
	if err := b.React(ctx, route, first.MessageIDs[0], "👀"); err != nil {
		t.Errorf("reaction during the chat.postMessage window: %v", err)
	}
	if _, err := b.Deliver(ctx, bridges.Outbound{Route: route, MediaURLs: []string{chart}}); err != nil {
		t.Errorf("upload during the chat.postMessage window: %v", err)
	}
	clock.Advance(29 * time.Second)
	if n := len(calls(srv, "chat.postMessage")); n != 2 {
		t.Errorf("%d chat.postMessage calls 29 s into a 30 s window, want 2 (the first and the limited one)", n)
	}
	clock.Advance(time.Second)
	for range 2 {
		select {
		case r := <-results:
			if r.err != nil || len(r.rc.MessageIDs) != 1 {
				t.Errorf("held delivery = %+v, %v", r.rc, r.err)
			}
		case <-time.After(bridgetest.WaitFor):
			t.Fatal("held deliveries did not go out when the window ended")
		}
	}
	posts := calls(srv, "chat.postMessage")
	if len(posts) != 4 {
		t.Fatalf("%d chat.postMessage calls, want 4", len(posts))
	}
	for _, c := range posts[2:] {
		if c.At.Before(limitedAt.Add(30 * time.Second)) {
			t.Errorf("chat.postMessage at %v, inside the window that ends %v", c.At, limitedAt.Add(30*time.Second))
		}
	}
	if n := len(srv.Sent()); n != 3 {
		t.Errorf("%d messages sent, want 3", n)
	}
}

func TestRateLimitGivesUpAfterBoundedAttempts(t *testing.T) {
	clock := newFakeClock()
	srv := slacktest.New(t, slacktest.WithClock(clock.Now))
	b, err := slack.New(slack.Options{BotToken: srv.BotToken, AppToken: srv.AppToken, APIURL: srv.APIURL, HTTPClient: srv.Client(),
		Now: clock.Now, After: clock.After})
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		srv.RateLimitNext("reactions.add", 2)
	}
	done := make(chan error, 1)
	go func() { done <- b.React(context.Background(), core.Route{To: "C200"}, "1700000000.000001", "eyes") }()
	for {
		select {
		case err := <-done:
			var rl *slackapi.RateLimitedError
			if !errors.As(err, &rl) {
				t.Fatalf("React = %v, want the rate limit error", err)
			}
			if n := len(calls(srv, "reactions.add")); n != 5 {
				t.Errorf("%d attempts, want 5", n)
			}
			return
		default:
		}
		if !bridgetest.Eventually(func() bool { return clock.Waiting() > 0 || len(done) > 0 }) {
			t.Fatal("React neither waits nor returns")
		}
		clock.Advance(2 * time.Second)
	}
}

func TestRateLimitWaitEndsWithTheContext(t *testing.T) {
	clock := newFakeClock()
	srv := slacktest.New(t, slacktest.WithClock(clock.Now))
	b, err := slack.New(slack.Options{BotToken: srv.BotToken, AppToken: srv.AppToken, APIURL: srv.APIURL, HTTPClient: srv.Client(),
		Now: clock.Now, After: clock.After})
	if err != nil {
		t.Fatal(err)
	}
	srv.RateLimitNext("chat.postMessage", 60)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := b.Deliver(ctx, bridges.Outbound{Route: core.Route{To: "C200"}, Text: "hi"})
		done <- err
	}()
	if !bridgetest.Eventually(func() bool { return clock.Waiting() == 1 }) {
		t.Fatal("the post does not wait")
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Deliver = %v, want context.Canceled", err)
		}
	case <-time.After(bridgetest.WaitFor):
		t.Fatal("Deliver kept waiting after its context ended")
	}
}
