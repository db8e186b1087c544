package channels_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/goleak"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/bridgetest"
	"github.com/switchboardhq/switchboard/channels"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/queue"
)

// run is one call of a fake bridge's Start: what the platform does this
// time.
type run func(ctx context.Context, sink bridges.Sink) error

// connectAndRun reports connected and runs until ctx ends, as a healthy
// bridge does.
func connectAndRun(ctx context.Context, sink bridges.Sink) error {
	sink.State(bridges.StateConnected, nil)
	<-ctx.Done()
	return nil
}

// fail returns err at once, as a bridge that cannot reach its platform and
// gives up does.
func fail(err error) run {
	return func(context.Context, bridges.Sink) error { return err }
}

// fakeBridge is an in-memory bridges.Bridge whose Start plays its runs in
// order, one per call; once they are used up it connects and runs until
// ctx ends. It counts calls and returns so tests can tell what the
// supervisor did. Safe for concurrent use.
type fakeBridge struct {
	name string
	runs []run

	mu       sync.Mutex
	starts   int // Start calls
	returned int // Start calls that returned
}

var _ bridges.Bridge = (*fakeBridge)(nil)

func newFake(name string, runs ...run) *fakeBridge { return &fakeBridge{name: name, runs: runs} }

func (b *fakeBridge) Name() string      { return b.name }
func (b *fakeBridge) AccountID() string { return core.DefaultAccountID }

func (b *fakeBridge) Start(ctx context.Context, sink bridges.Sink) error {
	b.mu.Lock()
	r := connectAndRun
	if b.starts < len(b.runs) {
		r = b.runs[b.starts]
	}
	b.starts++
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.returned++
		b.mu.Unlock()
	}()
	return r(ctx, sink)
}

func (b *fakeBridge) Deliver(context.Context, bridges.Outbound) (bridges.Receipt, error) {
	return bridges.Receipt{}, nil
}

func (b *fakeBridge) Status() bridges.Status { return bridges.Status{Channel: b.name} }

// counts returns the Start calls made and returned so far.
func (b *fakeBridge) counts() (starts, returned int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.starts, b.returned
}

// closerBridge is a fakeBridge that owns a resource (a device store) and
// records whether Close came while a Start still ran.
type closerBridge struct {
	*fakeBridge
	mu            sync.Mutex
	closes        int
	closedRunning bool
}

func (b *closerBridge) Close() error {
	starts, returned := b.counts()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closes++
	b.closedRunning = b.closedRunning || starts != returned
	return nil
}

// linkBridge is a fakeBridge linked from the phone: bridges.LoginFlow and
// bridges.Logouter over an in-memory account.
type linkBridge struct {
	*fakeBridge
	challenge bridges.LoginChallenge // what LoginStart shows

	mu      sync.Mutex
	account string
	linked  bool
	waits   []waitResult // what LoginWait returns, in order
	calls   []string
}

type waitResult struct {
	ch  bridges.LoginChallenge
	err error
}

var (
	_ bridges.LoginFlow = (*linkBridge)(nil)
	_ bridges.Logouter  = (*linkBridge)(nil)
)

func (b *linkBridge) LinkedAccount(context.Context) (string, bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.account, b.linked, nil
}

func (b *linkBridge) LoginStart(_ context.Context, phone string) (bridges.LoginChallenge, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls = append(b.calls, "login-start"+phone)
	if b.linked {
		return bridges.LoginChallenge{}, fmt.Errorf("whatsapp: %w", bridges.ErrAlreadyLinked)
	}
	return b.challenge, nil
}

func (b *linkBridge) LoginWait(context.Context) (bridges.LoginChallenge, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls = append(b.calls, "login-wait")
	if len(b.waits) == 0 {
		return bridges.LoginChallenge{}, errors.New("linkBridge: no linking under way")
	}
	w := b.waits[0]
	b.waits = b.waits[1:]
	if w.ch.Linked {
		b.account, b.linked = w.ch.Account, true
	}
	return w.ch, w.err
}

func (b *linkBridge) Logout(context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls = append(b.calls, "logout")
	b.account, b.linked = "", false
	return nil
}

func (b *linkBridge) called() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.calls)
}

// section is a channel's configuration: the shared keys, DMs open to
// anyone so notices and events pass the gate.
type section struct{ bridges.Common }

func (section) IsEnabled() bool { return true }

var openSection = section{bridges.Common{Access: bridges.Access{DMPolicy: bridges.DMOpen, AllowFrom: []string{"*"}}}}

// descriptor registers b as built by its descriptor's New.
func descriptor(b bridges.Bridge) bridges.Descriptor {
	return bridges.Descriptor{
		Channel: b.Name(),
		Label:   strings.ToUpper(b.Name()[:1]) + b.Name()[1:],
		New:     func(bridges.Section, bridges.Env) (bridges.Bridge, error) { return b, nil },
	}
}

// sleeper is SupervisorOptions.Sleep on virtual time: it records each delay
// asked for and waits until the test releases it (or ctx ends).
type sleeper struct {
	mu    sync.Mutex
	asked []time.Duration
	wake  []chan struct{}
}

func (s *sleeper) Sleep(ctx context.Context, d time.Duration) bool {
	ch := make(chan struct{})
	s.mu.Lock()
	s.asked, s.wake = append(s.asked, d), append(s.wake, ch)
	s.mu.Unlock()
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return false
	}
}

// delays returns the delays asked for so far.
func (s *sleeper) delays() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.asked)
}

// release lets the oldest waiting sleep pass in full.
func (s *sleeper) release(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.wake) == 0 {
		t.Fatal("release: no sleep is waiting")
	}
	close(s.wake[0])
	s.wake = s.wake[1:]
}

// clock is a settable SupervisorOptions.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// dispatcher is the Dispatcher the gates hand messages to; it also takes
// system events and notices. Safe for concurrent use.
type dispatcher struct {
	mu      sync.Mutex
	got     []string
	events  []string
	notices []string
}

var (
	_ channels.Dispatcher       = (*dispatcher)(nil)
	_ channels.EventDispatcher  = (*dispatcher)(nil)
	_ channels.NoticeDispatcher = (*dispatcher)(nil)
)

func (d *dispatcher) Submit(_ context.Context, in *core.Inbound, _ string) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.got = append(d.got, in.Body)
	return false, nil
}

func (d *dispatcher) EnqueueSystemEvent(key core.SessionKey, text, contextKey string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.events = append(d.events, string(key)+"|"+text+"|"+contextKey)
	return true
}

func (d *dispatcher) EnqueueNotice(key core.SessionKey, text, contextKey string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.notices = append(d.notices, string(key)+"|"+text+"|"+contextKey)
	return true
}

func (d *dispatcher) snapshot() (got, events, notices []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.got), slices.Clone(d.events), slices.Clone(d.notices)
}

// fallback is the router's Fallback: deliveries no bridge takes.
type fallback struct {
	mu  sync.Mutex
	got []string
}

func (f *fallback) Deliver(_ context.Context, d queue.Delivery) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, string(d.Route.Channel)+":"+string(d.Route.To))
	return nil
}

func (f *fallback) delivered() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.got)
}

// logBuffer keeps the supervisor's JSON log records; slog writes from the
// bridges' goroutines while the test reads.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// records returns the records logged at level whose message contains msg.
func (l *logBuffer) records(t *testing.T, level, msg string) []map[string]any {
	t.Helper()
	l.mu.Lock()
	text := l.b.String()
	l.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		if rec["level"] == level && strings.Contains(fmt.Sprint(rec["msg"]), msg) {
			out = append(out, rec)
		}
	}
	return out
}

// stateLog records what OnState is told.
type stateLog struct {
	mu  sync.Mutex
	got []bridges.Status
}

func (s *stateLog) on(st bridges.Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, st)
}

// of returns the states channel went through, in order.
func (s *stateLog) of(channel string) []bridges.State {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []bridges.State
	for _, st := range s.got {
		if st.Channel == channel {
			out = append(out, st.State)
		}
	}
	return out
}

// t0 is when every test's clock starts.
var t0 = time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)

// rig is a supervisor with virtual time, a recording dispatcher, a real
// router and captured logs.
type rig struct {
	sup      *channels.Supervisor
	router   *channels.Router
	fallback *fallback
	disp     *dispatcher
	sleep    *sleeper
	clock    *clock
	log      *logBuffer
	states   *stateLog
}

// newRig returns a supervisor with descs added (each with openSection),
// not started; it is stopped when the test ends.
func newRig(t *testing.T, descs ...bridges.Descriptor) *rig {
	t.Helper()
	return newRigWith(t, nil, descs...)
}

// newRigWith is newRig with the supervisor's options changed by opt.
func newRigWith(t *testing.T, opt func(*channels.SupervisorOptions), descs ...bridges.Descriptor) *rig {
	t.Helper()
	r := &rig{fallback: &fallback{}, disp: &dispatcher{}, sleep: &sleeper{}, clock: &clock{t: t0}, log: &logBuffer{}, states: &stateLog{}}
	r.router = &channels.Router{Fallback: r.fallback}
	opts := channels.SupervisorOptions{
		// Delays of 0.75, 1.5, 3 s...: the top of the jitter range pinned.
		Backoff: bridges.Backoff{Initial: time.Second, Max: time.Minute, Rand: func() float64 { return 0.5 }},
		Sleep:   r.sleep.Sleep,
		Now:     r.clock.Now,
		Log:     slog.New(slog.NewJSONHandler(r.log, nil)),
		OnState: r.states.on,
	}
	if opt != nil {
		opt(&opts)
	}
	r.sup = channels.NewSupervisor(opts, channels.SupervisorDeps{Router: r.router, Dispatch: r.disp})
	for _, d := range descs {
		if err := r.sup.Add(d, openSection); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), bridgetest.WaitFor)
		defer cancel()
		if err := r.sup.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return r
}

func (r *rig) start(t *testing.T) {
	t.Helper()
	if err := r.sup.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// status returns channel's entry of Statuses (the zero value when none).
func (r *rig) status(channel string) channels.BridgeStatus {
	for _, st := range r.sup.Statuses() {
		if st.Channel == channel {
			return st
		}
	}
	return channels.BridgeStatus{}
}

// waitState waits until channel is in state with Running as given.
func (r *rig) waitState(t *testing.T, channel string, state bridges.State, running bool) channels.BridgeStatus {
	t.Helper()
	var st channels.BridgeStatus
	waitUntil(t, fmt.Sprintf("%s is %s (running %v)", channel, state, running), func() bool {
		st = r.status(channel)
		return st.State == state && st.Running == running
	})
	return st
}

// waitDelays waits until n restart delays were asked for and returns them.
func (r *rig) waitDelays(t *testing.T, n int) []time.Duration {
	t.Helper()
	waitUntil(t, fmt.Sprintf("%d restart delays are asked for", n), func() bool { return len(r.sleep.delays()) >= n })
	return r.sleep.delays()
}

// waitUntil re-checks cond every millisecond until it holds, and fails t
// after bridgetest.WaitFor. It polls because part of what tests wait on
// (Running, Restarts) changes without any hook being called.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(bridgetest.WaitFor)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting until %s", what)
		}
		<-tick.C
	}
}

// A Start that returns on a transient failure is started again after a
// backoff delay that grows with each failure in a row and starts over
// after a run that reached connected, even one that lost its connection
// before returning. While it waits, Statuses shows the restart count, when
// the next one is due and why; OnState sees every change.
func TestSupervisorRestartsTransientFailuresWithBackoff(t *testing.T) {
	refused := errors.New("dial tcp: connection refused")
	dropped := errors.New("websocket closed")
	b := newFake("slack",
		fail(refused), // 0.75 s
		fail(refused), // 1.5 s
		func(_ context.Context, sink bridges.Sink) error { // connected: 0.75 s again
			sink.State(bridges.StateConnected, nil)
			return dropped
		},
		fail(refused), // 1.5 s
		fail(refused), // 3 s
		func(_ context.Context, sink bridges.Sink) error { // connected, then lost: 0.75 s again
			sink.State(bridges.StateConnected, nil)
			sink.State(bridges.StateTransientDisconnect, dropped)
			return dropped
		},
		connectAndRun,
	)
	r := newRig(t, descriptor(b))
	r.start(t)

	r.waitDelays(t, 1)
	st := r.waitState(t, "slack", bridges.StateTransientDisconnect, true)
	if st.Restarts != 1 || !st.RetryAt.Equal(t0.Add(750*time.Millisecond)) {
		t.Errorf("waiting for the first restart: Restarts %d, RetryAt %v; want 1, %v", st.Restarts, st.RetryAt, t0.Add(750*time.Millisecond))
	}
	if !strings.Contains(st.LastError, refused.Error()) || !strings.Contains(st.LastError, "restarting in 750ms") {
		t.Errorf("LastError = %q, want the failure and when the restart is", st.LastError)
	}
	if starts, _ := b.counts(); starts != 1 {
		t.Fatalf("Start was called %d times before the delay passed, want 1", starts)
	}

	r.sleep.release(t)
	r.waitDelays(t, 2)
	st = r.waitState(t, "slack", bridges.StateTransientDisconnect, true)
	if st.Restarts != 2 || !strings.Contains(st.LastError, "restarting in 1.5s") {
		t.Errorf("second failure: Restarts %d, LastError %q; want 2 and a 1.5s delay", st.Restarts, st.LastError)
	}
	for n := 3; n <= 6; n++ {
		r.sleep.release(t)
		r.waitDelays(t, n)
	}
	r.sleep.release(t)

	st = r.waitState(t, "slack", bridges.StateConnected, true)
	if st.Restarts != 6 || !st.RetryAt.IsZero() {
		t.Errorf("connected: Restarts %d, RetryAt %v; want 6 and none due", st.Restarts, st.RetryAt)
	}
	if starts, _ := b.counts(); starts != 7 {
		t.Errorf("Start was called %d times, want 7", starts)
	}
	ms := time.Millisecond
	if got, want := r.sleep.delays(), []time.Duration{750 * ms, 1500 * ms, 750 * ms, 1500 * ms, 3000 * ms, 750 * ms}; !slices.Equal(got, want) {
		t.Errorf("restart delays = %v, want %v", got, want)
	}
	const (
		s = bridges.StateStarting
		c = bridges.StateConnected
		d = bridges.StateTransientDisconnect
	)
	want := []bridges.State{d, s, d, s, c, d, s, d, s, d, s, c, d, s, c}
	if got := r.states.of("slack"); !slices.Equal(got, want) {
		t.Errorf("OnState saw %v\nwant %v", got, want)
	}
}

// A bridge that reports stopped and returns nil by itself has not been
// stopped by anyone: whether it is stopped is the supervisor's to say, so
// it is restarted like any failure.
func TestSupervisorRestartsABridgeThatStoppedByItself(t *testing.T) {
	b := newFake("telegram", func(_ context.Context, sink bridges.Sink) error {
		sink.State(bridges.StateStopped, nil)
		return nil
	})
	r := newRig(t, descriptor(b))
	r.start(t)

	r.waitDelays(t, 1)
	st := r.waitState(t, "telegram", bridges.StateTransientDisconnect, true)
	if st.Restarts != 1 || !strings.Contains(st.LastError, "stopped by itself") {
		t.Errorf("Restarts %d, LastError %q; want 1 and why", st.Restarts, st.LastError)
	}
	if slices.Contains(r.states.of("telegram"), bridges.StateStopped) {
		t.Errorf("the bridge's own stopped was taken: OnState saw %v", r.states.of("telegram"))
	}
	r.sleep.release(t)
	r.waitState(t, "telegram", bridges.StateConnected, true)
	if starts, _ := b.counts(); starts != 2 {
		t.Errorf("Start was called %d times, want 2", starts)
	}
}

// A terminal state the bridge reports before Start returns parks it: no
// restart is scheduled, the state and its error stay, the warning is
// logged once. StartBridge (the owner fixed the cause) runs it again.
func TestSupervisorParksTerminalStates(t *testing.T) {
	for _, state := range []bridges.State{bridges.StateBadCredentials, bridges.StateLoggedOut, bridges.StateFailed} {
		t.Run(string(state), func(t *testing.T) {
			cause := errors.New("the platform refused the session: " + string(state))
			b := newFake("discord", func(_ context.Context, sink bridges.Sink) error {
				// Reported twice, as a bridge does from two places: the
				// log still says it once.
				sink.State(state, cause)
				sink.State(state, cause)
				return cause
			})
			r := newRig(t, descriptor(b))
			r.start(t)

			// Running false means the run loop has ended: nothing is left
			// that could restart the bridge.
			st := r.waitState(t, "discord", state, false)
			if starts, _ := b.counts(); starts != 1 {
				t.Errorf("Start was called %d times, want 1", starts)
			}
			if d := r.sleep.delays(); len(d) != 0 {
				t.Errorf("a restart was scheduled after %v", d)
			}
			if st.LastError != cause.Error() || st.Restarts != 0 || !st.RetryAt.IsZero() {
				t.Errorf("parked status = %+v, want LastError %q, no restarts, none due", st, cause)
			}
			if n := len(r.log.records(t, "WARN", "will not be restarted")); n != 1 {
				t.Errorf("the park warning was logged %d times, want 1", n)
			}
			if n := len(r.log.records(t, "WARN", "bridge state")); n != 1 {
				t.Errorf("the state change was logged %d times, want 1", n)
			}

			if err := r.sup.StartBridge("discord", ""); err != nil {
				t.Fatal(err)
			}
			r.waitState(t, "discord", bridges.StateConnected, true)
			if starts, _ := b.counts(); starts != 2 {
				t.Errorf("Start was called %d times after StartBridge, want 2", starts)
			}
		})
	}
}

// StopBridge ends a running bridge's Start and waits for it; the bridge is
// stopped until StartBridge. Naming a bridge the supervisor does not run
// is ErrNoBridge.
func TestSupervisorStopAndStartBridge(t *testing.T) {
	b := newFake("telegram")
	r := newRig(t, descriptor(b))
	r.start(t)
	r.waitState(t, "telegram", bridges.StateConnected, true)

	if err := r.sup.StopBridge(t.Context(), "Telegram", ""); err != nil {
		t.Fatal(err)
	}
	// StopBridge returned, so Start has: no waiting here.
	if starts, returned := b.counts(); starts != 1 || returned != 1 {
		t.Fatalf("after StopBridge: %d Starts, %d returned; want 1, 1", starts, returned)
	}
	if st := r.status("telegram"); st.State != bridges.StateStopped || st.Running {
		t.Errorf("after StopBridge: %+v, want stopped, not running", st)
	}
	if d := r.sleep.delays(); len(d) != 0 {
		t.Errorf("a stopped bridge is to be restarted after %v", d)
	}

	if err := r.sup.StartBridge("telegram", "default"); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, "telegram", bridges.StateConnected, true)
	if starts, _ := b.counts(); starts != 2 {
		t.Errorf("Start was called %d times, want 2", starts)
	}
	// A running bridge is left alone.
	if err := r.sup.StartBridge("telegram", ""); err != nil {
		t.Fatal(err)
	}
	if starts, _ := b.counts(); starts != 2 {
		t.Errorf("StartBridge on a running bridge started it again (%d Starts)", starts)
	}

	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"StopBridge unknown channel", func() error { return r.sup.StopBridge(t.Context(), "pager", "") }},
		{"StartBridge unknown channel", func() error { return r.sup.StartBridge("pager", "") }},
		{"StartBridge unknown account", func() error { return r.sup.StartBridge("telegram", "work") }},
		{"Bridge unknown channel", func() error { _, err := r.sup.Bridge("pager", ""); return err }},
	} {
		if err := tc.call(); !errors.Is(err, channels.ErrNoBridge) {
			t.Errorf("%s: %v, want ErrNoBridge", tc.name, err)
		}
	}
}

// Stop ends every bridge, then closes those that own resources, only after
// their Start returned.
func TestSupervisorStopClosesAfterStartReturns(t *testing.T) {
	ended := make(chan struct{})  // the closer's Start saw ctx end
	finish := make(chan struct{}) // lets it return
	closer := &closerBridge{fakeBridge: newFake("whatsapp", func(ctx context.Context, sink bridges.Sink) error {
		sink.State(bridges.StateConnected, nil)
		<-ctx.Done()
		close(ended)
		<-finish // still releasing what it started
		return nil
	})}
	plain := newFake("slack")
	r := newRig(t, descriptor(closer), descriptor(plain))
	r.start(t)
	r.waitState(t, "whatsapp", bridges.StateConnected, true)
	r.waitState(t, "slack", bridges.StateConnected, true)

	stopped := make(chan error, 1)
	go func() { stopped <- r.sup.Stop(t.Context()) }()
	<-ended
	close(finish)
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	closer.mu.Lock()
	closes, closedRunning := closer.closes, closer.closedRunning
	closer.mu.Unlock()
	if closes != 1 || closedRunning {
		t.Errorf("Close called %d times (while Start ran: %v), want once, after Start returned", closes, closedRunning)
	}
	for _, st := range r.sup.Statuses() {
		if st.State != bridges.StateStopped || st.Running {
			t.Errorf("after Stop: %s is %s (running %v)", st.Channel, st.State, st.Running)
		}
	}
	if err := r.sup.StartBridge("slack", ""); err == nil {
		t.Error("StartBridge after Stop started a bridge")
	}
}

// A descriptor whose New refuses its configuration fails Start, naming
// the channel; the replies the router held for it, and for the bridges
// after it that Start never built, go to the fallback instead of waiting
// for a bridge that will not come.
func TestSupervisorStartFailsWhenABridgeCannotBeBuilt(t *testing.T) {
	refused := errors.New("botToken is empty; set channels.telegram.botToken")
	running := newFake("slack")
	r := newRig(t,
		descriptor(running),
		bridges.Descriptor{Channel: "telegram", New: func(bridges.Section, bridges.Env) (bridges.Bridge, error) {
			return nil, refused
		}},
		descriptor(newFake("discord")),
	)
	deliver := func(channel string) <-chan error {
		done := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(t.Context(), bridgetest.WaitFor)
			defer cancel()
			done <- r.router.Deliver(ctx, queue.Delivery{Route: core.Route{Channel: core.ChannelName(channel), To: "42"}, Replies: []core.ReplyPayload{{Text: "hi"}}})
		}()
		return done
	}
	// Held while the bridges are expected.
	held := deliver("telegram")

	err := r.sup.Start(t.Context())
	if !errors.Is(err, refused) || !strings.HasPrefix(err.Error(), "telegram: ") {
		t.Fatalf("Start = %v, want the telegram bridge's error", err)
	}
	if err := <-held; err != nil {
		t.Fatalf("held delivery: %v", err)
	}
	for _, channel := range []string{"telegram", "discord"} {
		if err := <-deliver(channel); err != nil {
			t.Fatalf("delivery to %s after Start failed: %v", channel, err)
		}
	}
	if got, want := r.fallback.delivered(), []string{"telegram:42", "telegram:42", "discord:42"}; !slices.Equal(got, want) {
		t.Errorf("fallback got %v, want %v", got, want)
	}
}

// The sink a bridge runs with passes the gate's optional interfaces on:
// bridges find them by type assertion, so an edit notice (Slack) and the
// connect notice (WhatsApp) reach the dispatcher. It replaces the old
// daemon's stateSink test.
func TestSupervisorSinkPassesNoticesAndSystemEvents(t *testing.T) {
	sinkErrs := make(chan error, 3)
	b := newFake("slack", func(ctx context.Context, sink bridges.Sink) error {
		sink.State(bridges.StateConnected, nil)
		ns, ok := sink.(bridges.NoticeSink)
		if !ok {
			sinkErrs <- errors.New("the bridge's sink hides NoticeSink")
			<-ctx.Done()
			return nil
		}
		es, ok := sink.(bridges.SystemEventSink)
		if !ok {
			sinkErrs <- errors.New("the bridge's sink hides SystemEventSink")
			<-ctx.Done()
			return nil
		}
		dm := bridges.Inbound{Message: &core.Inbound{
			SessionKey: "agent:main:slack:direct:u1", ChatType: core.ChatDirect, Body: "hello",
			Sender: core.Sender{ID: "U1"}, Route: core.Route{Channel: "slack", To: "D1"},
		}}
		sinkErrs <- ns.Notice(ctx, "main", "Slack connected as @bot.", "slack:connected")
		sinkErrs <- es.SystemEvent(ctx, dm, "Message edited.", "edit:1")
		sinkErrs <- sink.Submit(ctx, dm)
		<-ctx.Done()
		return nil
	})
	r := newRig(t, descriptor(b))
	r.start(t)
	for range 3 {
		if err := <-sinkErrs; err != nil {
			t.Fatal(err)
		}
	}
	got, events, notices := r.disp.snapshot()
	if want := []string{"agent:main:main|Slack connected as @bot.|slack:connected"}; !slices.Equal(notices, want) {
		t.Errorf("notices = %q, want %q", notices, want)
	}
	if want := []string{"agent:main:slack:direct:u1|Message edited.|edit:1"}; !slices.Equal(events, want) {
		t.Errorf("system events = %q, want %q", events, want)
	}
	if want := []string{"hello"}; !slices.Equal(got, want) {
		t.Errorf("messages = %q, want %q", got, want)
	}
}

// The collector shows each bridge's state as one series per state (1 for
// the current one), its restarts, and how long it has been in its state.
func TestSupervisorCollector(t *testing.T) {
	r := newRig(t, descriptor(newFake("telegram")), descriptor(newFake("slack", fail(errors.New("slack is down")))))
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(r.sup.Collector())
	r.start(t)
	r.waitState(t, "telegram", bridges.StateConnected, true)
	r.waitDelays(t, 1)
	r.waitState(t, "slack", bridges.StateTransientDisconnect, true)
	r.clock.advance(90 * time.Second)

	if n := testutil.CollectAndCount(r.sup.Collector(), "switchboard_bridge_state"); n != 2*9 {
		t.Errorf("switchboard_bridge_state has %d series, want 9 states × 2 bridges", n)
	}
	m := scrape(t, reg)
	for series, want := range map[string]float64{
		`switchboard_bridge_state{account="default",channel="telegram",state="connected"}`:            1,
		`switchboard_bridge_state{account="default",channel="telegram",state="starting"}`:             0,
		`switchboard_bridge_state{account="default",channel="telegram",state="transient-disconnect"}`: 0,
		`switchboard_bridge_state{account="default",channel="slack",state="transient-disconnect"}`:    1,
		`switchboard_bridge_state{account="default",channel="slack",state="connected"}`:               0,
		`switchboard_bridge_state{account="default",channel="slack",state="bad-credentials"}`:         0,
		`switchboard_bridge_restarts_total{account="default",channel="telegram"}`:                     0,
		`switchboard_bridge_restarts_total{account="default",channel="slack"}`:                        1,
		`switchboard_bridge_state_seconds{account="default",channel="telegram"}`:                      90,
		`switchboard_bridge_state_seconds{account="default",channel="slack"}`:                         90,
	} {
		if got, ok := m[series]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", series, got, ok, want)
		}
	}
	ones := 0
	for series, v := range m {
		if strings.HasPrefix(series, "switchboard_bridge_state{") {
			ones += int(v)
		}
	}
	if ones != 2 {
		t.Errorf("%d state series are 1, want one per bridge", ones)
	}

	r.sleep.release(t)
	r.waitState(t, "slack", bridges.StateConnected, true)
	m = scrape(t, reg)
	if got := m[`switchboard_bridge_state{account="default",channel="slack",state="connected"}`]; got != 1 {
		t.Errorf("slack connected = %v after the restart, want 1", got)
	}
	if got := m[`switchboard_bridge_restarts_total{account="default",channel="slack"}`]; got != 1 {
		t.Errorf("slack restarts = %v after the restart, want 1", got)
	}
}

// scrape reads reg as /metrics serves it: series (name and labels, as
// written) to value.
func scrape(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}).
		ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("/metrics: %d %s", rec.Code, rec.Body)
	}
	out := map[string]float64{}
	for line := range strings.Lines(rec.Body.String()) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

// newLinkRig is a supervisor running a linkable WhatsApp fake beside a
// Slack fake configured with a token.
func newLinkRig(t *testing.T, wa *linkBridge) *rig {
	t.Helper()
	r := newRig(t, descriptor(newFake("slack")), descriptor(wa))
	r.start(t)
	return r
}

// Login and logout go to the bridge's LoginFlow and Logouter: an account
// already linked is left alone unless forced, which logs it out first; a
// finished linking starts a parked bridge again; bridges configured with a
// token say where their credentials are.
func TestSupervisorLogin(t *testing.T) {
	code := bridges.LoginChallenge{PairingCode: "ABCD-EFGH", Instructions: "On your phone: Linked devices > Link with phone number."}

	t.Run("linked without force: a message only", func(t *testing.T) {
		wa := &linkBridge{fakeBridge: newFake("whatsapp"), challenge: code, account: "+15551234567", linked: true}
		r := newLinkRig(t, wa)
		// No channel named: the one bridge linked from the phone.
		res, err := r.sup.LoginStart(t.Context(), "", "", "", false)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Message, "already linked as +15551234567") || res.PairingCode != "" || res.QR != "" {
			t.Errorf("LoginStart = %+v, want only a message", res)
		}
		if calls := wa.called(); len(calls) != 0 {
			t.Errorf("the bridge was asked %v", calls)
		}
	})

	t.Run("linked with force: logout, then link", func(t *testing.T) {
		wa := &linkBridge{fakeBridge: newFake("whatsapp"), challenge: code, account: "+15551234567", linked: true}
		r := newLinkRig(t, wa)
		res, err := r.sup.LoginStart(t.Context(), "whatsapp", "", "+15557654321", true)
		if err != nil {
			t.Fatal(err)
		}
		if res.PairingCode != "ABCD-EFGH" || res.Message != code.Instructions || res.QR != "" {
			t.Errorf("LoginStart = %+v, want the pairing code and its instructions", res)
		}
		if got, want := wa.called(), []string{"logout", "login-start+15557654321"}; !slices.Equal(got, want) {
			t.Errorf("the bridge was asked %v, want %v", got, want)
		}
	})

	t.Run("QR code", func(t *testing.T) {
		wa := &linkBridge{fakeBridge: newFake("whatsapp"), challenge: bridges.LoginChallenge{QR: "2@abc,def", Instructions: "Scan it."}}
		r := newLinkRig(t, wa)
		res, err := r.sup.LoginStart(t.Context(), "whatsapp", "", "", false)
		if err != nil {
			t.Fatal(err)
		}
		if res.QR != "2@abc,def" || !strings.HasPrefix(res.QRImage, "data:image/png;base64,") || res.Message != "Scan it." {
			t.Errorf("LoginStart = %+v, want the QR code as text and image", res)
		}
	})

	t.Run("wait: a fresh QR code", func(t *testing.T) {
		wa := &linkBridge{fakeBridge: newFake("whatsapp"), waits: []waitResult{{bridges.LoginChallenge{QR: "2@next"}, bridges.ErrLoginRefresh}}}
		r := newLinkRig(t, wa)
		res, err := r.sup.LoginWait(t.Context(), "whatsapp", "")
		if err != nil {
			t.Fatal(err)
		}
		if res.QR != "2@next" || res.Linked || !strings.Contains(res.Message, "expired") {
			t.Errorf("LoginWait = %+v, want the new QR code", res)
		}
	})

	t.Run("wait: linked starts the parked bridge", func(t *testing.T) {
		wa := &linkBridge{
			fakeBridge: newFake("whatsapp", func(_ context.Context, sink bridges.Sink) error {
				err := errors.New("logged out from the phone")
				sink.State(bridges.StateLoggedOut, err)
				return err
			}),
			waits: []waitResult{{ch: bridges.LoginChallenge{Linked: true, Account: "+15551234567"}}},
		}
		r := newLinkRig(t, wa)
		r.waitState(t, "whatsapp", bridges.StateLoggedOut, false)
		res, err := r.sup.LoginWait(t.Context(), "whatsapp", "")
		if err != nil {
			t.Fatal(err)
		}
		if !res.Linked || res.Account != "+15551234567" {
			t.Errorf("LoginWait = %+v, want linked as +15551234567", res)
		}
		r.waitState(t, "whatsapp", bridges.StateConnected, true)
		if starts, _ := wa.counts(); starts != 2 {
			t.Errorf("Start was called %d times, want 2", starts)
		}
	})

	t.Run("a bridge with a token", func(t *testing.T) {
		wa := &linkBridge{fakeBridge: newFake("whatsapp")}
		r := newLinkRig(t, wa)
		if _, err := r.sup.LoginStart(t.Context(), "slack", "", "", false); err == nil || !strings.Contains(err.Error(), "not linked by QR code") {
			t.Errorf("LoginStart on slack = %v, want that it is not linked by QR code", err)
		}
		if _, err := r.sup.LoginWait(t.Context(), "slack", ""); err == nil || !strings.Contains(err.Error(), "not linked by QR code") {
			t.Errorf("LoginWait on slack = %v, want that it is not linked by QR code", err)
		}
		if err := r.sup.Logout(t.Context(), "slack", ""); err == nil || !strings.Contains(err.Error(), "channels.slack") {
			t.Errorf("Logout on slack = %v, want it to name channels.slack", err)
		}
		if err := r.sup.Logout(t.Context(), "pager", ""); !errors.Is(err, channels.ErrNoBridge) {
			t.Errorf("Logout on an unknown channel = %v, want ErrNoBridge", err)
		}
		if err := r.sup.Logout(t.Context(), "whatsapp", ""); err != nil || !slices.Equal(wa.called(), []string{"logout"}) {
			t.Errorf("Logout on whatsapp = %v, calls %v; want one logout", err, wa.called())
		}
	})

	t.Run("no bridge linked from the phone", func(t *testing.T) {
		r := newRig(t, descriptor(newFake("slack")))
		r.start(t)
		if _, err := r.sup.LoginStart(t.Context(), "", "", "", false); !errors.Is(err, channels.ErrNoBridge) {
			t.Errorf("LoginStart without a channel = %v, want ErrNoBridge", err)
		}
	})
}

// Stop leaves no goroutine behind, whatever state each bridge was in:
// connected, waiting to restart, parked, or stopped on demand.
func TestSupervisorStopLeavesNoGoroutines(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	r := newRig(t,
		descriptor(newFake("telegram")),
		descriptor(newFake("slack", fail(errors.New("down")))),
		descriptor(newFake("discord", func(_ context.Context, sink bridges.Sink) error {
			sink.State(bridges.StateBadCredentials, errors.New("401"))
			return errors.New("401")
		})),
		descriptor(newFake("whatsapp")),
	)
	r.start(t)
	r.waitState(t, "telegram", bridges.StateConnected, true)
	r.waitDelays(t, 1)
	r.waitState(t, "discord", bridges.StateBadCredentials, false)
	if err := r.sup.StopBridge(t.Context(), "whatsapp", ""); err != nil {
		t.Fatal(err)
	}
	if err := r.sup.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// A bridge the Standby option picks is built but not started: it stays in
// standby, listed by StandbyBridges, until StartBridge (its instance won
// the connection's lease), and StandbyBridge stops it back into standby
// (the lease was lost), while the other bridges run as usual.
func TestStandbyBridgesStartOnlyWhenTold(t *testing.T) {
	single, shared := newFake("single"), newFake("shared")
	r := newRigWith(t, func(o *channels.SupervisorOptions) {
		o.Standby = func(d bridges.Descriptor, _ bridges.Section) bool { return d.Channel == "single" }
	}, descriptor(single), descriptor(shared))
	r.start(t)
	r.waitState(t, "shared", bridges.StateConnected, true)
	r.waitState(t, "single", bridges.StateStandby, false)
	if starts, _ := single.counts(); starts != 0 {
		t.Fatalf("a standby bridge was started %d times", starts)
	}
	if got := r.sup.StandbyBridges(); len(got) != 1 || got[0] != (channels.BridgeRef{Channel: "single", AccountID: core.DefaultAccountID}) {
		t.Fatalf("StandbyBridges = %+v", got)
	}
	if err := r.sup.StartBridge("single", ""); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, "single", bridges.StateConnected, true)
	if err := r.sup.StandbyBridge(t.Context(), "single", ""); err != nil {
		t.Fatal(err)
	}
	st := r.waitState(t, "single", bridges.StateStandby, false)
	if starts, returned := single.counts(); starts != 1 || returned != 1 {
		t.Fatalf("after standby: %d starts, %d returned; want its one run ended", starts, returned)
	}
	if st.LastError != "" {
		t.Errorf("standby shows an error: %q", st.LastError)
	}
	r.waitState(t, "shared", bridges.StateConnected, true)
}
