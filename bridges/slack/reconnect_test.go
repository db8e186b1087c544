package slack_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/bridgetest"
	"github.com/switchboardhq/switchboard/bridges/slack"
	"github.com/switchboardhq/switchboard/bridges/slack/slacktest"
	"github.com/switchboardhq/switchboard/core"
)

// exactBackoff is the default backoff without jitter: each delay is its
// whole step (1 s, 2 s, 4 s…), so a test can name the delays it expects.
var exactBackoff = bridges.Backoff{Rand: func() float64 { return 1 }}

// sleeps is a Sleep that records each delay and returns at once, so a test
// counts a bridge's backoff without waiting it out.
type sleeps struct {
	mu     sync.Mutex
	delays []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) bool {
	s.mu.Lock()
	s.delays = append(s.delays, d)
	s.mu.Unlock()
	return ctx.Err() == nil
}

func (s *sleeps) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.delays)
}

// running is a Start in progress; the test's cleanup stops it.
type running struct {
	done   chan struct{}
	err    error // Start's result, once done is closed
	cancel context.CancelFunc
}

// run starts b in the background until the test ends (stopped before the
// fake, which was made first).
func run(t *testing.T, b *slack.Bridge, sink bridges.Sink) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(r.done)
		r.err = b.Start(ctx, sink)
	}()
	t.Cleanup(func() { cancel(); <-r.done })
	return r
}

// returned reports whether Start has returned.
func (r *running) returned() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// wait waits for Start to return and gives its result.
func (r *running) wait(t *testing.T) error {
	t.Helper()
	select {
	case <-r.done:
		return r.err
	case <-time.After(bridgetest.WaitFor):
		t.Fatalf("Start did not return within %s", bridgetest.WaitFor)
		return nil
	}
}

// socketOptions are a Socket Mode bridge's options against srv.
func socketOptions(srv *slacktest.Server) slack.Options {
	return slack.Options{BotToken: srv.BotToken, AppToken: srv.AppToken, APIURL: srv.APIURL, HTTPClient: srv.Client(),
		Session: core.SessionConfig{DMScope: core.DMScopePerChannelPeer}, Backoff: exactBackoff}
}

func mustNew(t *testing.T, opts slack.Options) *slack.Bridge {
	t.Helper()
	b, err := slack.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// count returns how many of the sink's reported states are s.
func count(sink *bridgetest.Sink, s bridges.State) int {
	n := 0
	for _, c := range sink.States() {
		if c.State == s {
			n++
		}
	}
	return n
}

// transientErrors returns the errors reported with
// StateTransientDisconnect, oldest first.
func transientErrors(sink *bridgetest.Sink) []error {
	var errs []error
	for _, c := range sink.States() {
		if c.State == bridges.StateTransientDisconnect {
			errs = append(errs, c.Err)
		}
	}
	return errs
}

// deliverDM pushes a direct message over Socket Mode and waits until it is
// acked, that is journaled.
func deliverDM(t *testing.T, srv *slacktest.Server, text string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bridgetest.WaitFor)
	defer cancel()
	id := srv.PushEvent(srv.Message("D100", "U9", text, slacktest.WithChannelType("im")))
	if _, err := srv.WaitAck(ctx, id); err != nil {
		t.Fatalf("%q: %v", text, err)
	}
}

// waitConnected waits until the bridge has reported connected n times,
// failing at once if Start returns instead.
func (r *running) waitConnected(t *testing.T, sink *bridgetest.Sink, n int) {
	t.Helper()
	// Polled: Start returning is not a change the sink reports.
	if !bridgetest.Eventually(func() bool { return count(sink, bridges.StateConnected) >= n || r.returned() }) {
		t.Fatalf("not connected %d times within %s: %+v", n, bridgetest.WaitFor, sink.States())
	}
	if count(sink, bridges.StateConnected) < n {
		t.Fatalf("Start returned %v; states %+v", r.err, sink.States())
	}
}

// waitUp waits until the bridge has reported connected n times and the
// fake holds its nth Socket Mode connection open. Both are needed:
// slack-go reports a connection once its handshake is done, a moment
// before the fake counts it.
func (r *running) waitUp(t *testing.T, srv *slacktest.Server, sink *bridgetest.Sink, n int) {
	t.Helper()
	r.waitConnected(t, sink, n)
	ctx, cancel := context.WithTimeout(context.Background(), bridgetest.WaitFor)
	defer cancel()
	if err := srv.WaitConnected(ctx, n); err != nil {
		t.Fatal(err)
	}
}

// bodies returns the texts of the messages the sink took.
func bodies(sink *bridgetest.Sink) []string {
	var out []string
	for _, m := range sink.Inbound() {
		out = append(out, m.Message.Body)
	}
	return out
}

// TestAuthTestTransientFailuresAreRetried is the outage at start-up: Slack
// answers auth.test with a 503, then the connection is cut, then it is
// rate limited, then it answers. The bridge reports each failure as
// transient, backs off (honouring Retry-After), and goes on to connect.
func TestAuthTestTransientFailuresAreRetried(t *testing.T) {
	srv := slacktest.New(t)
	srv.ServerErrorNext("auth.test", http.StatusServiceUnavailable)
	srv.CutNext("auth.test")
	srv.RateLimitNext("auth.test", 30)
	var slept sleeps
	opts := socketOptions(srv)
	opts.Sleep = slept.sleep
	b := mustNew(t, opts)
	sink := &bridgetest.Sink{}
	r := run(t, b, sink)

	r.waitConnected(t, sink, 1)
	if r.returned() {
		t.Fatalf("Start returned %v", r.err)
	}
	errs := transientErrors(sink)
	if len(errs) != 3 || !strings.Contains(errs[0].Error(), "503") || !strings.Contains(errs[2].Error(), "rate limit") {
		t.Errorf("transient errors = %v, want the 503, the cut and the rate limit", errs)
	}
	if got, want := slept.got(), []time.Duration{time.Second, 2 * time.Second, 30 * time.Second}; !slices.Equal(got, want) {
		t.Errorf("backoff = %v, want %v (the third is Retry-After)", got, want)
	}
	if n := len(calls(srv, "auth.test")); n != 4 {
		t.Errorf("%d auth.test calls, want 4", n)
	}
	deliverDM(t, srv, "after the outage")
	if got := bodies(sink); !slices.Equal(got, []string{"after the outage"}) {
		t.Errorf("received %q", got)
	}
}

// TestAuthTestThatNeverAnswersTimesOut: a network that drops packets holds
// auth.test; the attempt times out and the next one gets through.
func TestAuthTestThatNeverAnswersTimesOut(t *testing.T) {
	srv := slacktest.New(t)
	srv.StallNext("auth.test")
	opts := socketOptions(srv)
	opts.Sleep = (&sleeps{}).sleep
	b := mustNew(t, opts)
	b.SetAuthTimeout(200 * time.Millisecond)
	sink := &bridgetest.Sink{}
	r := run(t, b, sink)

	r.waitConnected(t, sink, 1)
	if errs := transientErrors(sink); len(errs) == 0 || !errors.Is(errs[0], context.DeadlineExceeded) {
		t.Errorf("transient errors = %v, want the first auth.test's timeout", errs)
	}
}

// TestSocketModeReconnects: apps.connections.open fails at start (a 503,
// then a cut connection); later the connection drops, once with the
// reconnect failing soon after it opened, once after it had been up for
// minutes. Each failure is reported and backed off; a long-lived
// connection starts the backoff over; messages flow after every
// reconnect, each taken once.
func TestSocketModeReconnects(t *testing.T) {
	clock := newFakeClock()
	srv := slacktest.New(t)
	srv.ServerErrorNext("apps.connections.open", http.StatusBadGateway)
	srv.CutNext("apps.connections.open")
	var slept sleeps
	opts := socketOptions(srv)
	opts.Sleep, opts.Now, opts.After = slept.sleep, clock.Now, clock.After
	b := mustNew(t, opts)
	sink := &bridgetest.Sink{}
	r := run(t, b, sink)
	ctx, cancel := context.WithTimeout(context.Background(), bridgetest.WaitFor)
	defer cancel()

	r.waitUp(t, srv, sink, 1)
	if got, want := slept.got(), []time.Duration{time.Second, 2 * time.Second}; !slices.Equal(got, want) {
		t.Fatalf("backoff = %v, want %v", got, want)
	}
	deliverDM(t, srv, "one")

	// A drop: slack-go reopens at once, and this time that fails; the
	// connection was young, so the backoff goes on growing.
	srv.ServerErrorNext("apps.connections.open", http.StatusServiceUnavailable)
	if srv.DropConnections() != 1 {
		t.Fatal("no connection to drop")
	}
	// Sent while the bridge is away: the fake holds it for the next
	// connection, as Slack does.
	away := srv.PushEvent(srv.Message("D100", "U9", "two", slacktest.WithChannelType("im")))
	r.waitUp(t, srv, sink, 2)
	if got, want := slept.got(), []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}; !slices.Equal(got, want) {
		t.Fatalf("backoff = %v, want %v", got, want)
	}
	// Journaled and acked on the new connection. (An ack still in flight
	// when a connection drops is lost with it; Slack then redelivers, and
	// the journal's dedupe takes the copy once. The fake does not
	// redeliver, so the test lets the ack land before the next drop.)
	if _, err := srv.WaitAck(ctx, away); err != nil {
		t.Fatal(err)
	}

	// A drop after minutes up: the backoff starts over.
	clock.Advance(5 * time.Minute)
	srv.CutNext("apps.connections.open")
	if srv.DropConnections() != 1 {
		t.Fatal("no connection to drop")
	}
	r.waitUp(t, srv, sink, 3)
	if got, want := slept.got(), []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, time.Second}; !slices.Equal(got, want) {
		t.Fatalf("backoff = %v, want %v", got, want)
	}
	deliverDM(t, srv, "three")

	if r.returned() {
		t.Fatalf("Start returned %v", r.err)
	}
	if got := bodies(sink); !slices.Equal(got, []string{"one", "two", "three"}) {
		t.Errorf("received %q, want each message once, in order", got)
	}
	// Every failure was reported: the two at start, and each drop and its
	// failed reopening.
	if n := count(sink, bridges.StateTransientDisconnect); n != 6 {
		t.Errorf("%d transient states reported, want 6: %+v", n, sink.States())
	}
}

// TestSocketModeDropIsReported: a connection that drops and is reopened at
// once is still reported, so the status shows the blip.
func TestSocketModeDropIsReported(t *testing.T) {
	srv := slacktest.New(t)
	opts := socketOptions(srv)
	opts.Sleep = (&sleeps{}).sleep
	b := mustNew(t, opts)
	sink := &bridgetest.Sink{}
	r := run(t, b, sink)
	r.waitUp(t, srv, sink, 1)

	if srv.DropConnections() != 1 {
		t.Fatal("no connection to drop")
	}
	r.waitUp(t, srv, sink, 2)
	errs := transientErrors(sink)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "connection ended") {
		t.Errorf("transient errors = %v, want the drop", errs)
	}
	deliverDM(t, srv, "still here")
}

// TestRefusedTokensAreTerminal: invalid_auth on either token ends Start
// with StateBadCredentials after one request, without backing off.
func TestRefusedTokensAreTerminal(t *testing.T) {
	for _, tc := range []struct {
		method, code, field string
	}{
		{"auth.test", "invalid_auth", "botToken"},
		{"auth.test", "account_inactive", "botToken"},
		{"apps.connections.open", "invalid_auth", "appToken"},
		{"apps.connections.open", "token_revoked", "appToken"},
	} {
		t.Run(tc.method+"/"+tc.code, func(t *testing.T) {
			srv := slacktest.New(t)
			srv.FailNext(tc.method, tc.code)
			var slept sleeps
			opts := socketOptions(srv)
			opts.Sleep = slept.sleep
			b := mustNew(t, opts)
			sink := &bridgetest.Sink{}
			err := run(t, b, sink).wait(t)
			if err == nil || !strings.Contains(err.Error(), tc.code) || !strings.Contains(err.Error(), "channels.slack."+tc.field) {
				t.Fatalf("Start = %v, want %s naming channels.slack.%s", err, tc.code, tc.field)
			}
			if st := b.Status(); st.State != bridges.StateBadCredentials {
				t.Errorf("status = %+v", st)
			}
			if n := len(calls(srv, tc.method)); n != 1 {
				t.Errorf("%d %s calls, want 1", n, tc.method)
			}
			if got := slept.got(); len(got) != 0 {
				t.Errorf("backed off %v before giving up", got)
			}
			if n := count(sink, bridges.StateTransientDisconnect); n != 0 {
				t.Errorf("reported %d transient states: %+v", n, sink.States())
			}
		})
	}
}

// TestHTTPModeRetriesAuthTest: in HTTP mode the listener is up from the
// start and answers 503 (Slack retries) while auth.test fails; once it
// succeeds, events are taken.
func TestHTTPModeRetriesAuthTest(t *testing.T) {
	srv := slacktest.New(t)
	srv.ServerErrorNext("auth.test", http.StatusServiceUnavailable)
	srv.CutNext("auth.test")
	addr := freeAddr(t)
	// The first backoff waits for the test, which meanwhile posts an event.
	backingOff, resume := make(chan struct{}), make(chan struct{})
	var once sync.Once
	opts := slack.Options{BotToken: srv.BotToken, APIURL: srv.APIURL, HTTPClient: srv.Client(), Backoff: exactBackoff,
		HTTP: &slack.HTTPOptions{SigningSecret: signingSecret, Listen: addr}, Session: core.SessionConfig{DMScope: core.DMScopePerChannelPeer},
		Sleep: func(ctx context.Context, d time.Duration) bool {
			once.Do(func() {
				close(backingOff)
				select {
				case <-resume:
				case <-ctx.Done():
				}
			})
			return ctx.Err() == nil
		}}
	b := mustNew(t, opts)
	sink := &bridgetest.Sink{}
	r := run(t, b, sink)
	url := "http://" + addr + slack.DefaultEventsPath
	ctx, cancel := context.WithTimeout(context.Background(), bridgetest.WaitFor)
	defer cancel()

	select {
	case <-backingOff:
	case <-r.done:
		t.Fatalf("Start returned %v after a failed auth.test", r.err)
	case <-ctx.Done():
		t.Fatal("the bridge did not back off")
	}
	early := srv.Message("D100", "U9", "too early", slacktest.WithChannelType("im"))
	if code, err := srv.PostEvent(ctx, url, signingSecret, early); err != nil || code != http.StatusServiceUnavailable {
		t.Errorf("event before auth.test succeeded: %d %v, want 503", code, err)
	}
	close(resume)
	r.waitConnected(t, sink, 1)
	ev := srv.Message("D100", "U9", "over http", slacktest.WithChannelType("im"))
	if code, err := srv.PostEvent(ctx, url, signingSecret, ev); err != nil || code != http.StatusOK {
		t.Fatalf("event: %d %v", code, err)
	}
	if got := bodies(sink); !slices.Equal(got, []string{"over http"}) {
		t.Errorf("received %q", got)
	}
	if n := count(sink, bridges.StateTransientDisconnect); n != 2 {
		t.Errorf("%d transient states, want 2", n)
	}
	if r.returned() {
		t.Fatalf("Start returned %v", r.err)
	}
}

// TestHTTPListenFailureIsTerminal: an address that cannot be bound is the
// owner's to fix: StateFailed, an error naming the setting, no retries
// and no call to Slack.
func TestHTTPListenFailureIsTerminal(t *testing.T) {
	srv := slacktest.New(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	var slept sleeps
	b := mustNew(t, slack.Options{BotToken: srv.BotToken, APIURL: srv.APIURL, HTTPClient: srv.Client(), Sleep: slept.sleep,
		HTTP: &slack.HTTPOptions{SigningSecret: signingSecret, Listen: taken.Addr().String()}})
	err = run(t, b, &bridgetest.Sink{}).wait(t)
	if err == nil || !strings.Contains(err.Error(), "channels.slack.http.listen") || !strings.Contains(err.Error(), taken.Addr().String()) {
		t.Fatalf("Start = %v, want an error naming the address and channels.slack.http.listen", err)
	}
	if st := b.Status(); st.State != bridges.StateFailed {
		t.Errorf("status = %+v, want failed", st)
	}
	if n := len(srv.Requests()); n != 0 || len(slept.got()) != 0 {
		t.Errorf("%d calls to Slack, backoff %v; want neither", n, slept.got())
	}
}

// TestStopDuringBackoff: ctx ending while the bridge waits out its
// backoff (after a failed auth.test, or a failed Socket Mode connection)
// makes Start return nil at once, the hour-long wait notwithstanding.
func TestStopDuringBackoff(t *testing.T) {
	for _, method := range []string{"auth.test", "apps.connections.open"} {
		t.Run(method, func(t *testing.T) {
			srv := slacktest.New(t)
			srv.ServerErrorNext(method, http.StatusServiceUnavailable)
			waiting := make(chan struct{})
			var once sync.Once
			opts := socketOptions(srv)
			opts.Backoff = bridges.Backoff{Initial: time.Hour, Max: time.Hour}
			opts.Sleep = func(ctx context.Context, d time.Duration) bool {
				once.Do(func() { close(waiting) })
				return bridges.Sleep(ctx, d)
			}
			b := mustNew(t, opts)
			sink := &bridgetest.Sink{}
			r := run(t, b, sink)
			select {
			case <-waiting:
			case <-r.done:
				t.Fatalf("Start returned %v instead of backing off", r.err)
			case <-time.After(bridgetest.WaitFor):
				t.Fatal("the bridge did not back off")
			}
			r.cancel()
			if err := r.wait(t); err != nil {
				t.Errorf("Start = %v, want nil", err)
			}
			if st := b.Status(); st.State != bridges.StateStopped {
				t.Errorf("status = %+v, want stopped", st)
			}
		})
	}
}

// freeAddr returns a local address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
