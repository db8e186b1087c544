package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// stalledClient connects and then stops reading, so everything the server
// sends piles up in its queue once the socket buffers are full.
func stalledClient(t *testing.T, r *rig) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, r.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(-1)
	if _, _, err := ws.Read(ctx); err != nil { // the challenge
		t.Fatal(err)
	}
	connect, _ := json.Marshal(map[string]any{"type": "req", "id": "c", "method": "connect", "params": map[string]any{
		"minProtocol": 3, "maxProtocol": 4, "client": map[string]any{"id": "test", "version": "1", "platform": "linux", "mode": "test"},
		"auth": map[string]any{"token": r.token}, "scopes": []string{protocol.ScopeRead},
	}})
	if err := ws.Write(ctx, websocket.MessageText, connect); err != nil {
		t.Fatal(err)
	}
	if _, msg, err := ws.Read(ctx); err != nil || !strings.Contains(string(msg), "hello-ok") {
		t.Fatalf("connect: %s %v", msg, err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	return ws
}

// A client that stops reading loses droppable events, is disconnected
// with 1008 "slow consumer" when a non-droppable one does not fit, and
// never slows the others down.
func TestSlowConsumerIsDroppedThenDisconnected(t *testing.T) {
	r := newRig(t, rigOptions{cfg: func(c *Config) { c.Policy.MaxBufferedBytes = 256 << 10 }})
	fast := r.dial(r.opts(protocol.ScopeRead))
	stalled := stalledClient(t, r)
	slow := readyConn(t, r, func(c *conn) bool { return c.params.Client.ID == "test" })
	payload := []byte(`{"pad":"` + strings.Repeat("x", 32<<10) + `"}`)
	// Droppable events: the stalled client's queue fills and further ones
	// are skipped, but it stays connected.
	// Each is broadcast once the fast client has the previous one, so
	// only the stalled client falls behind.
	const n = 400 // ≈13 MB, far beyond socket buffers and the 256 KiB budget
	var last int64
	for i := range n {
		r.gw.hub.broadcast(outEvent{name: "chat", payload: func(int) []byte { return payload }, dropIfSlow: true})
		ev := next(t, fast, "chat", nil)
		if ev.Seq == nil || *ev.Seq <= last {
			t.Fatalf("fast client event %d seq %v after %d", i, ev.Seq, last)
		}
		last = *ev.Seq
	}
	if slow.ctx.Err() != nil {
		t.Fatal("the stalled client was disconnected for droppable events")
	}
	dropped := testCounter(r.gw.metrics.droppedEvents)
	if dropped == 0 {
		t.Fatal("no droppable event was dropped for the stalled client")
	}
	// A non-droppable event that does not fit closes it.
	r.gw.hub.broadcast(outEvent{name: "chat", payload: func(int) []byte { return payload }})
	next(t, fast, "chat", nil)
	select {
	case <-slow.ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the slow consumer was not disconnected")
	}
	if testCounter(r.gw.metrics.slowConsumers) != 1 {
		t.Errorf("slow consumer counter = %v", testCounter(r.gw.metrics.slowConsumers))
	}
	_ = stalled
}

// The close the slow consumer gets is 1008 "slow consumer", once it reads
// again.
func TestSlowConsumerCloseReason(t *testing.T) {
	r := newRig(t, rigOptions{cfg: func(c *Config) { c.Policy.MaxBufferedBytes = 128 << 10 }})
	o := r.opts(protocol.ScopeRead)
	o.EventBuffer = 1
	c := r.dial(o)
	sc := readyConn(t, r, func(*conn) bool { return true })
	// Fill its queue directly past the budget with one non-droppable frame
	// while its writer is busy: a frame bigger than the budget never fits.
	big := make([]byte, 129<<10)
	sc.send(big, false)
	if code, reason := waitClosed(t, c); code != 1008 || reason != protocol.ReasonSlowConsumer {
		t.Errorf("close = %d %q, want 1008 %q", code, reason, protocol.ReasonSlowConsumer)
	}
}

func testCounter(c prometheus.Collector) float64 { return testutil.ToFloat64(c) }

// readyConn waits for the server side of a connection to finish its
// handshake (the client may read hello-ok before the server marks it ready)
// and returns it.
func readyConn(t *testing.T, r *rig, match func(*conn) bool) *conn {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	for {
		for _, c := range r.gw.hub.snapshot() {
			if c.ready.Load() && match(c) {
				return c
			}
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatal("no ready server connection")
		}
	}
}
