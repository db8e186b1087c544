package discord_test

import (
	"context"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/bridgetest"
	"github.com/switchboardhq/switchboard/bridges/discord"
	"github.com/switchboardhq/switchboard/bridges/discord/discordtest"
)

// holdingSleep records each backoff asked for and holds the bridge there
// until its ctx ends, so a test reads the state of one failure.
type holdingSleep struct {
	mu     sync.Mutex
	delays []time.Duration
}

func (h *holdingSleep) sleep(ctx context.Context, d time.Duration) bool {
	h.mu.Lock()
	h.delays = append(h.delays, d)
	h.mu.Unlock()
	<-ctx.Done()
	return false
}

func (h *holdingSleep) asked() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.delays)
}

// Issue 26, finding 8: with apiUrl pointing at a proxy, the bridge's
// errors named discord.com. They name the host the request went to, in the
// status's detail and its summary, and say when the next attempt is.
func TestFinding8DiscordErrorNamesHost(t *testing.T) {
	srv := discordtest.New(t)
	// A proxy that is down: a port nothing listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := ln.Addr().String()
	ln.Close()

	for _, tc := range []struct {
		name, apiURL, host, summary string
		prepare                     func()
	}{
		{"the proxy is down", "http://" + down + "/api/v9/", down, "cannot reach " + down + " (connection refused)", func() {}},
		{"the proxy answers 503", srv.APIURL, hostOf(t, srv.APIURL), hostOf(t, srv.APIURL) + " answered HTTP 503",
			func() { srv.FailNext(discordtest.RouteGetCurrentUser, 503, 0, "") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.prepare()
			hold := &holdingSleep{}
			r := newRig(t, srv, func(o *discord.Options) { o.HTTPClient, o.APIURL, o.Sleep = nil, tc.apiURL, hold.sleep })
			if !bridgetest.Eventually(func() bool { return hold.asked() == 1 }) {
				t.Fatalf("no backoff after the failure: %+v", r.b.Status())
			}
			st := r.b.Status()
			if st.State != bridges.StateTransientDisconnect || !strings.Contains(st.LastError, tc.host) || strings.Contains(st.LastError, "discord.com") {
				t.Errorf("detail %q (state %s), want it to name %s and not discord.com", st.LastError, st.State, tc.host)
			}
			if st.Summary != tc.summary {
				t.Errorf("summary %q, want %q", st.Summary, tc.summary)
			}
			if st.RetryAt.IsZero() {
				t.Error("no retry time")
			}
			states := r.sink.States()
			if len(states) == 0 || states[len(states)-1].Err == nil || !strings.Contains(states[len(states)-1].Err.Error(), tc.host) {
				t.Errorf("reported states %+v, want the last to name %s", states, tc.host)
			}
		})
	}
}

func hostOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}
