package gateway

import (
	"strconv"
	"sync"

	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// hub tracks connected clients and fans events out to them. Broadcasting
// never blocks: each client has its own bounded queue (conn.send).
type hub struct {
	mu    sync.RWMutex
	conns map[*conn]struct{}
	bmu   sync.Mutex // serialises broadcasts
	seq   int64      // process-wide event seq (protocol v3), under bmu

	preauthMu sync.Mutex
	preauth   map[string]int // unauthenticated sockets per IP
}

func newHub() *hub {
	return &hub{conns: map[*conn]struct{}{}, preauth: map[string]int{}}
}

func (h *hub) add(c *conn) {
	h.mu.Lock()
	h.conns[c] = struct{}{}
	h.mu.Unlock()
}

func (h *hub) remove(c *conn) {
	h.mu.Lock()
	delete(h.conns, c)
	h.mu.Unlock()
}

func (h *hub) snapshot() []*conn {
	h.mu.RLock()
	defer h.mu.RUnlock()
	out := make([]*conn, 0, len(h.conns))
	for c := range h.conns {
		out = append(out, c)
	}
	return out
}

func (h *hub) count() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.conns)
}

func (h *hub) enterPreauth(ip string) bool {
	h.preauthMu.Lock()
	defer h.preauthMu.Unlock()
	if h.preauth[ip] >= protocol.MaxPreauthSocketsPerIP {
		return false
	}
	h.preauth[ip]++
	return true
}

func (h *hub) leavePreauth(ip string) {
	h.preauthMu.Lock()
	defer h.preauthMu.Unlock()
	if h.preauth[ip]--; h.preauth[ip] <= 0 {
		delete(h.preauth, ip)
	}
}

// outEvent is one event to fan out.
type outEvent struct {
	name string
	// payload renders the payload for a protocol version; the hub calls
	// it at most once per version.
	payload    func(protocol int) []byte
	dropIfSlow bool
	// to filters recipients beyond the scope guard (nil: every client).
	to func(c *conn) bool
	// stateVersion is sent with presence and health events.
	stateVersion *protocol.StateVersion
}

// broadcast sends ev to every authenticated client allowed to see it. v3
// clients share one process-wide seq (a client filtered out sees a gap, as
// in OpenClaw); v4 clients get their own strictly increasing seq.
//
// Broadcasts are serialised, so every client receives them in seq order;
// one costs a queue append per client and never waits for a socket.
func (h *hub) broadcast(ev outEvent) {
	h.bmu.Lock()
	defer h.bmu.Unlock()
	h.seq++
	v3seq := h.seq
	var bodies [5][]byte
	for _, c := range h.snapshot() {
		if !c.ready.Load() || !protocol.EventAllowed(ev.name, c.role, c.scopes, c.protocol) {
			continue
		}
		if ev.to != nil && !ev.to(c) {
			continue
		}
		p := c.protocol
		if p < 0 || p >= len(bodies) {
			p = 0
		}
		if bodies[p] == nil {
			bodies[p] = ev.payload(c.protocol)
		}
		c.sendEvent(ev.name, bodies[p], v3seq, ev.stateVersion, ev.dropIfSlow)
	}
}

// eventFrame is {"type":"event","event":name,"payload":payload,"seq":n,
// "stateVersion":{…}} without re-encoding the payload; seq < 0 omits it, and
// a nil sv omits stateVersion. The payload is not copied: a broadcast's
// clients share it, and only the few bytes around it are their own (a
// presence list of 200 entries to 10,000 clients was 400 MB of copies).
func eventFrame(name string, payload []byte, seq int64, sv *protocol.StateVersion) frame {
	b := make([]byte, 0, len(name)+96)
	b = append(b, `{"type":"event","event":`...)
	b = strconv.AppendQuote(b, name)
	if len(payload) > 0 {
		b = append(b, `,"payload":`...)
	}
	head := len(b)
	if seq >= 0 {
		b = append(b, `,"seq":`...)
		b = strconv.AppendInt(b, seq, 10)
	}
	if sv != nil {
		b = append(b, `,"stateVersion":{"presence":`...)
		b = strconv.AppendInt(b, sv.Presence, 10)
		b = append(b, `,"health":`...)
		b = strconv.AppendInt(b, sv.Health, 10)
		b = append(b, '}')
	}
	b = append(b, '}')
	return frame{head: b[:head:head], body: payload, tail: b[head:]}
}

// frame is one outbound message: head, body and tail written in that
// order. body may be shared with other clients' frames; none of the three
// is modified after it is queued.
type frame struct {
	head, body, tail []byte
}

// len is the frame's size in bytes.
func (f frame) len() int { return len(f.head) + len(f.body) + len(f.tail) }

func (h *hub) preauthCount() int {
	h.preauthMu.Lock()
	defer h.preauthMu.Unlock()
	n := 0
	for _, v := range h.preauth {
		n += v
	}
	return n
}
