package linebridge_test

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/bridgetest"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/examples/linebridge"
)

// running is a bridge whose Start runs against a recording sink.
type running struct {
	b      *linebridge.Bridge
	sink   *bridgetest.Sink
	cancel context.CancelFunc
	done   chan error
}

// start builds a bridge on a free port and runs it until stop or the end
// of the test; Start must then return nil.
func start(t *testing.T, opts linebridge.Options) *running {
	t.Helper()
	if opts.Listen == "" {
		opts.Listen = "127.0.0.1:0"
	}
	opts.Session = core.SessionConfig{DMScope: core.DMScopePerChannelPeer}
	b, err := linebridge.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{b: b, sink: &bridgetest.Sink{}, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- b.Start(ctx, r.sink) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

// stop ends Start and waits for it; safe to call twice.
func (r *running) stop(t *testing.T) {
	t.Helper()
	if r.cancel == nil {
		return
	}
	r.cancel()
	r.cancel = nil
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("Start returned %v, want nil", err)
		}
	case <-time.After(bridgetest.WaitFor):
		t.Fatal("Start did not return after its context ended")
	}
}

func (r *running) dial(t *testing.T) *client {
	t.Helper()
	a, err := r.b.Addr(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	return dial(t, a)
}

// lastState is the state the bridge reported last.
func (r *running) lastState() bridges.State {
	s := r.sink.States()
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1].State
}

func TestInboundIsSubmittedBeforeOK(t *testing.T) {
	r := start(t, linebridge.Options{})
	r.sink.Wait(t, "connected", func() bool { return r.lastState() == bridges.StateConnected })
	c := r.dial(t)
	chat := c.hello("Ada")
	c.send("  hello  ")
	c.send("") // blank: not a message
	c.send("again")
	c.expect("OK 1")
	// OK is written after Submit returned, so the sink has the message.
	got := r.sink.Inbound()
	if len(got) == 0 {
		t.Fatal("OK came before the sink had the message")
	}
	in := got[0].Message
	want := core.Route{Channel: "line", AccountID: "default", To: core.ChatID(chat)}
	if in.Route != want || in.Body != "hello" || in.MessageID != "1" || in.Sender.ID != "ada" || in.Sender.Name != "Ada" ||
		in.SessionKey != "agent:main:line:direct:ada" || in.ChatType != core.ChatDirect || got[0].DedupeKey != "line:default:"+chat+":1" {
		t.Errorf("submitted %+v (dedupe %q)", in, got[0].DedupeKey)
	}
	c.expect("OK 2")
	if got := r.sink.Inbound(); len(got) != 2 || got[1].Message.Body != "again" || got[1].Message.MessageID != "2" {
		t.Errorf("second message: %+v", got)
	}
}

func TestRefusedSubmitIsNotAcknowledged(t *testing.T) {
	r := start(t, linebridge.Options{})
	c := r.dial(t)
	c.hello("ada")
	r.sink.FailNext(1)
	c.send("lost?")
	if l := c.line(); !strings.HasPrefix(l, "ERR 1 ") {
		t.Fatalf("got %q, want ERR 1 ...", l)
	}
	c.send("lost?") // the client sends it again, as ERR asks
	c.expect("OK 2")
	if got := r.sink.Inbound(); len(got) != 1 || got[0].Message.Body != "lost?" {
		t.Errorf("sink has %+v, want the message once", got)
	}
}

func TestHelloRequired(t *testing.T) {
	r := start(t, linebridge.Options{})
	for _, first := range []string{"hi there", "HELLO", "HELLO ada:x", "HELLO " + strings.Repeat("a", 33)} {
		c := r.dial(t)
		c.send(first)
		if l := c.line(); !strings.HasPrefix(l, "ERR say HELLO") {
			t.Errorf("after %q: got %q, want ERR say HELLO ...", first, l)
		}
		if rest := c.rest(); len(rest) != 0 {
			t.Errorf("after %q: got %q, then want the connection closed", first, rest)
		}
	}
	if got := r.sink.Inbound(); len(got) != 0 {
		t.Errorf("sink has %+v, want nothing", got)
	}
}

func TestDeliver(t *testing.T) {
	r := start(t, linebridge.Options{ChunkLimit: 20})
	c := r.dial(t)
	chat := c.hello("ada")
	ctx := testCtx(t)
	route := core.Route{Channel: "line", To: core.ChatID(chat)}
	out := bridges.Outbound{
		Route:     route,
		Text:      "**Bold** and `code`.\n\nA second paragraph, long enough to split.",
		MediaURLs: []string{"https://example.com/cat.png"},
		Ledger:    &ledger{}, LedgerKey: "run1:0",
	}
	rc, err := r.b.Deliver(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	var ids []bridges.MessageID
	for range rc.MessageIDs {
		lines, id := c.reply()
		got, ids = append(got, lines), append(ids, bridges.MessageID(id))
	}
	want := [][]string{{"Bold and code."}, {"A second paragraph,"}, {"long enough to"}, {"split."}, {"[attachment: https://example.com/cat.png]"}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("client read %q, want %q", got, want)
	}
	if len(ids) != len(want) || ids[0] != bridges.MessageID(chat+"/1") || !slices.Equal(ids, rc.MessageIDs) {
		t.Errorf("END ids %q, receipt %q", ids, rc.MessageIDs)
	}

	// Delivered again with the same ledger: everything is recorded as
	// sent, so nothing more is written, and the same ids come back.
	again, err := r.b.Deliver(ctx, out)
	if err != nil || !slices.Equal(again.MessageIDs, rc.MessageIDs) {
		t.Errorf("second Deliver = %q, %v; want the recorded ids", again.MessageIDs, err)
	}
	if err := r.b.Typing(ctx, route); err != nil {
		t.Fatal(err)
	}
	if l, err := c.read(); err != nil || l != "TYPING" {
		t.Errorf("after the repeated Deliver and Typing: read %q, %v; want TYPING alone", l, err)
	}

	// A chat without a connection, or whose connection closed, is an error.
	if _, err := r.b.Deliver(ctx, bridges.Outbound{Route: core.Route{Channel: "line", To: "0-1"}, Text: "hi"}); !errors.Is(err, linebridge.ErrUnknownChat) {
		t.Errorf("Deliver to an unknown chat: %v, want ErrUnknownChat", err)
	}
	c.rest()
	waitFor(t, "the closed connection to be forgotten", func() bool {
		_, err := r.b.Deliver(ctx, bridges.Outbound{Route: route, Text: "hi"})
		return errors.Is(err, linebridge.ErrUnknownChat)
	})
	// A reply the ledger has whole needs no connection: nothing is missing.
	if again, err := r.b.Deliver(ctx, out); err != nil || !slices.Equal(again.MessageIDs, rc.MessageIDs) {
		t.Errorf("Deliver of a recorded reply to a closed chat = %q, %v; want the recorded ids", again.MessageIDs, err)
	}
	if st := r.b.Status(); !st.LastInboundAt.IsZero() || st.LastOutboundAt.IsZero() {
		t.Errorf("Status = %+v, want outbound activity only", st)
	}
}

func TestStopClosesConnections(t *testing.T) {
	// A client that never says HELLO must not hold Start up for an hour.
	r := start(t, linebridge.Options{HelloTimeout: time.Hour})
	silent := r.dial(t)
	talking := r.dial(t)
	// Connections are accepted in the order they came: the talking one
	// welcomed means the silent one waits for its HELLO.
	talking.hello("ada")
	r.stop(t)
	for _, c := range []*client{talking, silent} {
		if _, err := c.read(); err == nil {
			t.Error("a connection is still open after Start returned")
		}
	}
	if s := r.lastState(); s != bridges.StateStopped {
		t.Errorf("last state %q, want stopped", s)
	}
}

// flakyListener fails its first fails Accepts the way a process out of
// file descriptors does, then works.
type flakyListener struct {
	net.Listener
	mu    sync.Mutex
	fails int
}

func (l *flakyListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	fail := l.fails > 0
	if fail {
		l.fails--
	}
	l.mu.Unlock()
	if fail {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: syscall.EMFILE}
	}
	return l.Listener.Accept()
}

func TestAcceptErrorsBackOff(t *testing.T) {
	var mu sync.Mutex
	var delays []time.Duration
	r := start(t, linebridge.Options{
		ListenFunc: func(ctx context.Context, network, address string) (net.Listener, error) {
			var lc net.ListenConfig
			ln, err := lc.Listen(ctx, network, address)
			if err != nil {
				return nil, err
			}
			return &flakyListener{Listener: ln, fails: 3}, nil
		},
		Backoff: bridges.Backoff{Initial: time.Second, Max: 4 * time.Second, Rand: func() float64 { return 1 }},
		Sleep: func(ctx context.Context, d time.Duration) bool {
			mu.Lock()
			delays = append(delays, d)
			mu.Unlock()
			return ctx.Err() == nil
		},
	})
	c := r.dial(t) // accepted after the three failures
	c.hello("ada")
	c.send("hi")
	c.expect("OK 1")
	mu.Lock()
	got := delays
	mu.Unlock()
	if want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}; !slices.Equal(got, want) {
		t.Errorf("waited %v between accepts, want %v", got, want)
	}
	var seen []bridges.State
	for _, s := range r.sink.States() {
		if len(seen) == 0 || seen[len(seen)-1] != s.State {
			seen = append(seen, s.State)
		}
	}
	want := []bridges.State{bridges.StateStarting, bridges.StateConnected, bridges.StateTransientDisconnect, bridges.StateConnected}
	if !slices.Equal(seen, want) {
		t.Errorf("states %v, want %v", seen, want)
	}
	if st := r.b.Status(); !strings.Contains(st.LastError, "too many open files") {
		t.Errorf("LastError = %q, want the accept error", st.LastError)
	}
}

func TestListenAgainAfterTheListenerFails(t *testing.T) {
	var mu sync.Mutex
	var listeners []net.Listener
	r := start(t, linebridge.Options{
		ListenFunc: func(ctx context.Context, network, address string) (net.Listener, error) {
			mu.Lock()
			defer mu.Unlock()
			if len(listeners) == 1 {
				listeners = append(listeners, nil)
				return nil, errors.New("address in use")
			}
			var lc net.ListenConfig
			ln, err := lc.Listen(ctx, network, address)
			listeners = append(listeners, ln)
			return ln, err
		},
		Sleep: func(ctx context.Context, _ time.Duration) bool { return ctx.Err() == nil },
	})
	first, err := r.b.Addr(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	listeners[0].Close() // pulled from under the bridge
	mu.Unlock()
	waitFor(t, "the bridge to listen again", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(listeners) == 3
	})
	second, err := r.b.Addr(testCtx(t))
	if err != nil || second.String() == first.String() {
		t.Fatalf("Addr = %v, %v; want a new listener's", second, err)
	}
	c := dial(t, second)
	c.hello("ada")
	c.send("still here")
	c.expect("OK 1")
	r.sink.Wait(t, "connected again", func() bool { return r.lastState() == bridges.StateConnected })
}

// ledger is an in-memory bridges.Ledger.
type ledger struct {
	mu   sync.Mutex
	sent map[string]string
}

func (l *ledger) Sent(_ context.Context, key string) (string, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	id, ok := l.sent[key]
	return id, ok, nil
}

func (l *ledger) Record(_ context.Context, key, id string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sent == nil {
		l.sent = map[string]string{}
	}
	l.sent[key] = id
	return nil
}
