package gateway

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/gateway/client"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// TestEventFrameSharesThePayload: a client's frame holds the broadcast's
// payload itself, not a copy, and its parts join into the frame the
// protocol describes.
func TestEventFrameSharesThePayload(t *testing.T) {
	payload := []byte(`{"presence":[]}`)
	f := eventFrame("presence", payload, 7, &protocol.StateVersion{Presence: 2, Health: 3})
	if &f.body[0] != &payload[0] {
		t.Error("the frame copied the payload")
	}
	got := string(f.head) + string(f.body) + string(f.tail)
	want := `{"type":"event","event":"presence","payload":{"presence":[]},"seq":7,"stateVersion":{"presence":2,"health":3}}`
	if got != want || f.len() != len(want) {
		t.Errorf("frame = %s (len %d), want %s", got, f.len(), want)
	}
	if g := eventFrame("tick", nil, -1, nil); string(g.head)+string(g.body)+string(g.tail) != `{"type":"event","event":"tick"}` {
		t.Errorf("frame without payload or seq = %s%s%s", g.head, g.body, g.tail)
	}
}

// TestLargeBroadcastArrivesWhole: a payload larger than one WebSocket
// frame (sent as fragments of one message, without a copy per client)
// reaches every client whole, with each client's own seq, and a small
// event after it too.
func TestLargeBroadcastArrivesWhole(t *testing.T) {
	r := newRig(t, rigOptions{})
	a := r.dial(r.opts(protocol.ScopeRead))
	b := r.dial(r.opts(protocol.ScopeRead))

	text := strings.Repeat("0123456789", 5000) // 50 KB, over singleFrameBytes
	big, _ := json.Marshal(map[string]any{"presence": []map[string]string{{"text": text}}})
	small := []byte(`{"presence":[{"text":"small"}]}`)
	r.gw.hub.broadcast(outEvent{name: protocol.EventPresence, payload: func(int) []byte { return big }})
	r.gw.hub.broadcast(outEvent{name: protocol.EventPresence, payload: func(int) []byte { return small }})

	for _, c := range []*client.Client{a, b} {
		ev := next(t, c, protocol.EventPresence, func(e client.Event) bool { return len(e.Payload) > len(text) })
		var p struct {
			Presence []struct{ Text string } `json:"presence"`
		}
		if err := json.Unmarshal(ev.Payload, &p); err != nil || len(p.Presence) != 1 || p.Presence[0].Text != text {
			t.Fatalf("large payload arrived as %d bytes: %v", len(ev.Payload), err)
		}
		if ev.Seq == nil {
			t.Error("the large event has no seq")
		}
		after := next(t, c, protocol.EventPresence, func(e client.Event) bool { return strings.Contains(string(e.Payload), `"small"`) })
		if after.Seq == nil || *after.Seq <= *ev.Seq {
			t.Errorf("seq after the large event = %v, large %v", after.Seq, ev.Seq)
		}
	}
}

// TestEventRightAfterHelloIsNotMissed: an event broadcast as soon as a
// client has read its hello-ok reaches it. The connection used to be
// marked ready only after hello-ok was queued, so a broadcast in between
// skipped a client that had already seen hello-ok (the large-broadcast
// test above lost its event that way under load).
func TestEventRightAfterHelloIsNotMissed(t *testing.T) {
	r := newRig(t, rigOptions{})
	for i := range 200 {
		c := r.dial(r.opts(protocol.ScopeRead))
		marker := []byte(`{"presence":[{"text":"m` + strconv.Itoa(i) + `"}]}`)
		r.gw.hub.broadcast(outEvent{name: protocol.EventPresence, payload: func(int) []byte { return marker }})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := c.Next(ctx, func(e client.Event) bool {
			return e.Name == protocol.EventPresence && string(e.Payload) == string(marker)
		})
		cancel()
		if err != nil {
			t.Fatalf("connection %d missed the event broadcast right after its hello-ok: %v", i, err)
		}
		c.Close()
	}
}
