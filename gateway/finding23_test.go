package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/gateway/client"
	"github.com/switchboardhq/switchboard/gateway/events"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// countingDial is an HTTP client whose connection counts the bytes read
// from the gateway into n.
func countingDial(n *atomic.Int64) *http.Client {
	d := &net.Dialer{}
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countedConn{Conn: c, n: n}, nil
	}}}
}

type countedConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// Issue 22, finding 2: an 80 KB reply streamed in 64-byte deltas reaches
// every client that shows the session whole, with at most 30 times its
// size read by each and none disconnected. Before, each agent event
// carried the text so far: some 50 MB per client, past the slow-consumer
// limit.
func TestFinding2_ALongReplyReachesEveryFollowerInLinearBytes(t *testing.T) {
	r := newRig(t, rigOptions{})
	const size, chunk = 80 << 10, 64
	reply := strings.Repeat("0123456789abcdef", size/16)
	var parts []string
	for i := 0; i < len(reply); i += chunk {
		parts = append(parts, reply[i:i+chunk])
	}
	r.provider.Push(llmtest.Text(parts...))
	type follower struct {
		c     *client.Client
		bytes atomic.Int64
	}
	fs := make([]*follower, 3)
	for i := range fs {
		f := &follower{}
		o := r.opts(protocol.ScopeRead, protocol.ScopeWrite)
		o.HTTPClient, o.EventBuffer = countingDial(&f.bytes), 1<<14
		o.Caps = []string{protocol.CapStructuredStream}
		f.c = r.dial(o)
		fs[i] = f
	}
	call[map[string]any](t, fs[1].c, "chat.history", map[string]any{"sessionKey": "main"})
	call[map[string]any](t, fs[2].c, "sessions.messages.subscribe", map[string]any{"key": "main"})
	before := make([]int64, len(fs))
	for i, f := range fs {
		before[i] = f.bytes.Load()
	}
	sendChat(t, fs[0].c, "main", "the long one, please", "run-long")
	for i, f := range fs {
		var agentText strings.Builder
		var final string
		for final == "" {
			ev := next(t, f.c, "", func(e client.Event) bool { return e.Name == "chat" || e.Name == "agent" })
			switch ev.Name {
			case "agent":
				p := decode[struct {
					Stream string         `json:"stream"`
					Data   map[string]any `json:"data"`
				}](t, ev.Payload)
				if d, ok := p.Data["delta"].(string); ok && p.Stream == "assistant" {
					agentText.WriteString(d)
				}
			case "chat":
				p := decode[chatPayload](t, ev.Payload)
				if p.State == "final" {
					final = p.text()
				} else if p.State != "delta" {
					t.Fatalf("client %d: chat %s", i, p.State)
				}
			}
		}
		read := f.bytes.Load() - before[i]
		t.Logf("client %d read %d bytes for a %d-byte reply (%.1f×)", i, read, size, float64(read)/size)
		if final != reply || agentText.String() != reply {
			t.Errorf("client %d: final %d bytes, agent deltas %d bytes; want the %d of the reply", i, len(final), agentText.Len(), size)
		}
		if read > 30*size {
			t.Errorf("client %d read %d bytes, %.0f× the reply (at most 30×)", i, read, float64(read)/size)
		}
		select {
		case <-f.c.Closed():
			code, reason := f.c.CloseErr()
			t.Errorf("client %d was disconnected: %d %s", i, code, reason)
		default:
		}
	}
}

// Issue 22, finding 2: a client that does not read while a run streams
// keeps one chat delta of the run queued, the newest, standing alone
// (replace and the whole text in deltaText); nothing is dropped and it
// stays connected. Before, every delta queued behind the last until the
// buffer was full, then they were dropped.
func TestFinding2_AStalledClientsChatDeltasCoalesce(t *testing.T) {
	r := newRig(t, rigOptions{cfg: func(c *Config) { c.Policy.MaxBufferedBytes = 8 << 20 }})
	ws := stalledClient(t, r)
	// A bound, not a measure: some 50 MB of snapshots are encoded below,
	// which under -race on a loaded machine takes seconds.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, _ := json.Marshal(map[string]any{"type": "req", "id": "h", "method": "chat.history", "params": map[string]any{"sessionKey": "main"}})
	if err := ws.Write(ctx, websocket.MessageText, req); err != nil {
		t.Fatal(err)
	}
	for {
		_, msg, err := ws.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(msg), `"id":"h"`) {
			break
		}
	}
	sc := readyConn(t, r, func(c *conn) bool { return c.params.Client.ID == "test" })
	// 100 deltas of a text growing by 10 KB: 50 MB if each were queued.
	var text string
	for i := range 100 {
		text += strings.Repeat(string(rune('a'+i%26)), 10<<10)
		r.gw.broadcastChat(events.ChatEvent{RunID: "run-s", SessionKey: "agent:main:main", Seq: int64(i + 1), State: events.StateDelta,
			Message: &events.ChatMessage{Role: "assistant", Content: []events.ChatContent{{Type: "text", Text: text}}}, DeltaText: text[len(text)-10<<10:]}, true)
	}
	sc.mu.Lock()
	queued := 0
	var body []byte
	for _, f := range sc.queue {
		if f.coalesce != "" {
			queued++
			body = f.body
		}
	}
	sc.mu.Unlock()
	if dropped := testCounter(r.gw.metrics.droppedEvents); dropped != 0 {
		t.Fatalf("%v deltas dropped", dropped)
	}
	if queued > 1 || testCounter(r.gw.metrics.coalescedEvents) == 0 {
		t.Fatalf("%d deltas of the run queued, %v coalesced; want the newest only", queued, testCounter(r.gw.metrics.coalescedEvents))
	}
	if queued == 1 {
		var p chatPayload
		if err := json.Unmarshal(body, &p); err != nil {
			t.Fatal(err)
		}
		if p.text() != text || p.DeltaText == nil || *p.DeltaText != text || !p.Replace {
			t.Fatalf("the queued delta: %d bytes of text, deltaText %v, replace %v; want the whole snapshot standing alone", len(p.text()), p.DeltaText != nil, p.Replace)
		}
	}
	if sc.ctx.Err() != nil {
		t.Fatal("the stalled client was disconnected")
	}
	// Reading again, it gets the newest text, then the final.
	r.gw.broadcastChat(events.ChatEvent{RunID: "run-s", SessionKey: "agent:main:main", Seq: 101, State: events.StateFinal,
		Message: &events.ChatMessage{Role: "assistant", Content: []events.ChatContent{{Type: "text", Text: text}}}}, false)
	var last chatPayload
	var seq int64
	for last.State != "final" {
		_, msg, err := ws.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			Event   string      `json:"event"`
			Seq     int64       `json:"seq"`
			Payload chatPayload `json:"payload"`
		}
		if json.Unmarshal(msg, &f) != nil || f.Seq == 0 {
			continue
		}
		if seq != 0 && f.Seq != seq+1 {
			t.Fatalf("seq %d after %d: coalescing left a gap", f.Seq, seq)
		}
		seq = f.Seq
		if f.Event != "chat" {
			continue
		}
		if f.Payload.State == "delta" {
			last = f.Payload
			continue
		}
		if last.text() != text {
			t.Fatalf("the last delta before the final has %d bytes, want %d", len(last.text()), len(text))
		}
		last = f.Payload
	}
}

// Issue 22, finding 3: a session's chat and agent events go only to the
// clients that follow it (sent to it, loaded its history, subscribed to
// its messages); a client following nothing gets none, and one that
// unsubscribes stops getting them. Before, every client got every
// session's events.
func TestFinding3_EventsGoOnlyToTheClientsFollowingTheSession(t *testing.T) {
	r := newRig(t, rigOptions{})
	dial := func() *client.Client {
		o := r.opts(protocol.ScopeRead, protocol.ScopeWrite)
		o.EventBuffer = 1 << 12
		return r.dial(o)
	}
	alpha, beta, idle, viewer := dial(), dial(), dial(), dial()
	if res := call[map[string]any](t, viewer, "sessions.messages.subscribe", map[string]any{"key": "alpha"}); res["subscribed"] != true || res["key"] != "agent:main:alpha" {
		t.Fatalf("sessions.messages.subscribe = %v", res)
	}
	r.provider.Push(llmtest.Text("to alpha"), llmtest.Text("to beta"), llmtest.Text("alpha again"))
	sendChat(t, alpha, "alpha", "hi", "run-a")
	chatEvents(t, alpha, "run-a")
	sendChat(t, beta, "beta", "hi", "run-b")
	chatEvents(t, beta, "run-b")

	// Each client's events up to a marker broadcast to all after both
	// runs: what it was sent of them.
	marker := 0
	seen := func(c *client.Client) map[string]int {
		marker++
		ts := -marker
		payload := []byte(fmt.Sprintf(`{"ts":%d}`, ts))
		r.gw.hub.broadcast(outEvent{name: protocol.EventTick, payload: func(int) []byte { return payload }})
		out := map[string]int{}
		for {
			ev := next(t, c, "", nil)
			if ev.Name == protocol.EventTick && strings.Contains(string(ev.Payload), fmt.Sprintf(`"ts":%d`, ts)) {
				return out
			}
			var p struct {
				RunID string `json:"runId"`
			}
			_ = json.Unmarshal(ev.Payload, &p)
			if ev.Name == "chat" || ev.Name == "agent" {
				out[ev.Name+":"+p.RunID]++
			}
		}
	}
	for name, tc := range map[string]struct {
		c         *client.Client
		want, not []string
	}{
		"alpha's sender": {c: alpha, not: []string{"run-b"}},
		"beta's sender":  {c: beta, not: []string{"run-a"}},
		"a client idle":  {c: idle, not: []string{"run-a", "run-b"}},
		"alpha's viewer": {c: viewer, want: []string{"run-a"}, not: []string{"run-b"}},
	} {
		got := seen(tc.c)
		for _, id := range tc.not {
			if got["chat:"+id]+got["agent:"+id] > 0 {
				t.Errorf("%s got %d chat and %d agent events of %s", name, got["chat:"+id], got["agent:"+id], id)
			}
		}
		for _, id := range tc.want {
			if got["chat:"+id] == 0 || got["agent:"+id] == 0 {
				t.Errorf("%s got %d chat and %d agent events of %s, want its run", name, got["chat:"+id], got["agent:"+id], id)
			}
		}
	}
	// Unsubscribed, the viewer misses alpha's next run; alpha's sender
	// gets it.
	call[map[string]any](t, viewer, "sessions.messages.unsubscribe", map[string]any{"key": "alpha"})
	sendChat(t, alpha, "alpha", "again", "run-a2")
	chatEvents(t, alpha, "run-a2")
	if got := seen(viewer); got["chat:run-a2"]+got["agent:run-a2"] > 0 {
		t.Errorf("after unsubscribing the viewer still got run-a2: %v", got)
	}
}

// A client follows at most maxFollowsPerConn sessions, the longest ago
// followed going first, and its sessions are forgotten when it leaves.
func TestFollowedSessionsAreBoundedAndForgotten(t *testing.T) {
	r := newRig(t, rigOptions{})
	c := r.dial(r.opts(protocol.ScopeRead))
	sc := readyConn(t, r, func(*conn) bool { return true })
	h := r.gw.hub
	key := func(i int) core.SessionKey { return core.SessionKey(fmt.Sprintf("agent:main:s%d", i)) }
	for i := range maxFollowsPerConn {
		h.follow(sc, key(i))
	}
	h.follow(sc, key(0)) // refreshed: s1 is now the oldest
	h.follow(sc, key(maxFollowsPerConn))
	h.mu.RLock()
	n, has0, has1, hasNew := len(sc.follows), h.followers[key(0)] != nil, h.followers[key(1)] != nil, h.followers[key(maxFollowsPerConn)] != nil
	h.mu.RUnlock()
	if n != maxFollowsPerConn || !has0 || has1 || !hasNew {
		t.Fatalf("%d followed; s0 %v, s1 %v, the newest %v: want the bound, s1 evicted", n, has0, has1, hasNew)
	}
	c.Close()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	for {
		h.mu.RLock()
		left := len(h.followers)
		h.mu.RUnlock()
		if left == 0 {
			return
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("%d sessions still indexed after the client left", left)
		}
	}
}
