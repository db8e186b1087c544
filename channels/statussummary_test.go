package channels_test

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/bridges"
)

// Issue 26, finding 8: the Channels panel showed raw Go errors and never
// said when a bridge would try again. A bridge's status now carries a
// summary in words, naming the host it used, with the whole error as the
// detail, and when its next attempt is due, whether the bridge backs off
// by itself or the supervisor restarts it.
func TestFinding8ChannelErrorSummary(t *testing.T) {
	refused := &url.Error{Op: "Get", URL: "https://proxy.example:8443/api/v9/users/@me",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
	own := func(ctx context.Context, sink bridges.Sink) error {
		// The bridge backs off by itself for 20 s.
		sink.State(bridges.StateTransientDisconnect, bridges.RetryIn(refused, 20*time.Second))
		<-ctx.Done()
		return nil
	}
	limited := func(ctx context.Context, sink bridges.Sink) error {
		sink.State(bridges.StateTransientDisconnect,
			bridges.RetryIn(bridges.Summarized(errors.New("telegram: too many requests, retry after 7"), "rate limited"), 7*time.Second))
		<-ctx.Done()
		return nil
	}
	discord := newFake("discord", own)
	telegram := newFake("telegram", limited)
	slack := newFake("slack", fail(refused)) // the supervisor restarts it
	r := newRig(t, descriptor(discord), descriptor(telegram), descriptor(slack))
	r.start(t)

	st := r.waitState(t, "discord", bridges.StateTransientDisconnect, true)
	if st.Summary != "cannot reach proxy.example:8443 (connection refused)" {
		t.Errorf("summary = %q", st.Summary)
	}
	if st.LastError != refused.Error() {
		t.Errorf("detail = %q, want the whole error %q", st.LastError, refused.Error())
	}
	if want := t0.Add(20 * time.Second); !st.RetryAt.Equal(want) {
		t.Errorf("RetryAt = %v, want %v", st.RetryAt, want)
	}

	st = r.waitState(t, "telegram", bridges.StateTransientDisconnect, true)
	if st.Summary != "rate limited" || !strings.Contains(st.LastError, "retry after 7") || !st.RetryAt.Equal(t0.Add(7*time.Second)) {
		t.Errorf("rate limited: %+v", st.Status)
	}

	r.waitDelays(t, 1)
	st = r.waitState(t, "slack", bridges.StateTransientDisconnect, true)
	if st.Summary != "cannot reach proxy.example:8443 (connection refused)" || !st.RetryAt.Equal(t0.Add(750*time.Millisecond)) {
		t.Errorf("restarting: %+v", st.Status)
	}
	r.sleep.release(t)
	st = r.waitState(t, "slack", bridges.StateConnected, true)
	if !st.RetryAt.IsZero() {
		t.Errorf("connected, but a retry is still due at %v", st.RetryAt)
	}
}
