package gateway

import (
	"container/list"
	"errors"
	"strconv"
	"sync"

	"github.com/coder/websocket"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// hub tracks connected clients and fans events out to them. Broadcasting
// never blocks: each client has its own bounded queue (conn.send).
//
// It also counts the unauthenticated sockets, per address
// (protocol.MaxPreauthSocketsPerIP) and in all (maxPreauth): each holds
// a goroutine and up to 64 KiB of message for as long as the handshake
// timeout, and a total cap alone would let a flood of idle sockets keep
// the owner from connecting. So over the total the hub closes one of the
// flood instead of refusing the newcomer: the oldest socket of the address
// holding the most.
type hub struct {
	mu    sync.RWMutex
	conns map[*conn]struct{}
	// followers indexes the authenticated clients by the sessions they
	// follow (conn.follows, also under mu): a session's chat and agent
	// events cost work for these clients only.
	followers map[core.SessionKey]map[*conn]struct{}
	tick      uint64 // orders conn.follows by recency, under mu

	bmu     sync.Mutex // serialises broadcasts
	seq     int64      // process-wide event seq (protocol v3), under bmu
	scratch []*conn    // a broadcast's recipients, under bmu

	preauthMu    sync.Mutex
	preauth      map[string]int // unauthenticated sockets per addrKey
	preauthTotal int
	maxPreauth   int
	// preauthOrder holds the unauthenticated connections, oldest first:
	// the candidates for eviction. A connection leaves it when it
	// authenticates, is evicted or ends.
	preauthOrder *list.List
	evicting     int // evicted connections not yet ended
}

// Errors of enterPreauth; their text is the HTTP 429 body.
var (
	errPreauthAddress = errors.New("too many unauthenticated connections from this address")
	errPreauthTotal   = errors.New("too many unauthenticated connections; try again later")
)

// reasonPreauthEvicted is the close reason of a socket closed to make room
// under the preauth cap (code 1013, try again later).
const reasonPreauthEvicted = "too many unauthenticated connections"

// newHub returns a hub that admits at most maxPreauth unauthenticated
// sockets before it evicts.
func newHub(maxPreauth int) *hub {
	return &hub{conns: map[*conn]struct{}{}, followers: map[core.SessionKey]map[*conn]struct{}{},
		preauth: map[string]int{}, maxPreauth: maxPreauth, preauthOrder: list.New()}
}

// add registers a connection accepted by serveWS; unauthenticated, it is
// a candidate for eviction until authenticated or remove.
func (h *hub) add(c *conn) {
	h.mu.Lock()
	h.conns[c] = struct{}{}
	h.mu.Unlock()
	h.preauthMu.Lock()
	if !c.ready.Load() && !c.evicted {
		c.preauthEl = h.preauthOrder.PushBack(c)
	}
	h.preauthMu.Unlock()
}

// remove forgets a connection that has ended and gives back what it held
// of the shared budgets (its decode reservation).
func (h *hub) remove(c *conn) {
	h.mu.Lock()
	delete(h.conns, c)
	for key := range c.follows {
		h.dropFollowerLocked(key, c)
	}
	c.follows = nil
	h.mu.Unlock()
	h.preauthMu.Lock()
	if c.preauthEl != nil {
		h.preauthOrder.Remove(c.preauthEl)
		c.preauthEl = nil
	}
	if c.evicted {
		c.evicted = false
		h.evicting--
	}
	h.preauthMu.Unlock()
	c.releaseDecode()
}

// authenticated takes c off the eviction candidates; call it before c is
// marked ready.
func (h *hub) authenticated(c *conn) {
	h.preauthMu.Lock()
	if c.preauthEl != nil {
		h.preauthOrder.Remove(c.preauthEl)
		c.preauthEl = nil
	}
	h.preauthMu.Unlock()
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

// maxFollowsPerConn bounds the sessions one client follows; past it, the
// one it followed longest ago is dropped.
const maxFollowsPerConn = 1024

// follow makes c get the chat and agent events of session key: c sent to
// it, loaded its history or subscribed to its messages. Following again
// refreshes it. A connection that has ended follows nothing.
func (h *hub) follow(c *conn, key core.SessionKey) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.conns[c]; !ok {
		return
	}
	h.tick++
	if _, ok := c.follows[key]; !ok {
		if c.follows == nil {
			c.follows = map[core.SessionKey]uint64{}
		}
		if len(c.follows) >= maxFollowsPerConn {
			var oldest core.SessionKey
			first := true
			for k, t := range c.follows {
				if first || t < c.follows[oldest] {
					oldest, first = k, false
				}
			}
			delete(c.follows, oldest)
			h.dropFollowerLocked(oldest, c)
		}
		set := h.followers[key]
		if set == nil {
			set = map[*conn]struct{}{}
			h.followers[key] = set
		}
		set[c] = struct{}{}
	}
	c.follows[key] = h.tick
}

// unfollow stops c getting session key's chat and agent events.
func (h *hub) unfollow(c *conn, key core.SessionKey) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := c.follows[key]; ok {
		delete(c.follows, key)
		h.dropFollowerLocked(key, c)
	}
}

func (h *hub) dropFollowerLocked(key core.SessionKey, c *conn) {
	if set := h.followers[key]; set != nil {
		delete(set, c)
		if len(set) == 0 {
			delete(h.followers, key)
		}
	}
}

// recipients lists the clients an event may go to, into the broadcast
// scratch slice (called under bmu): a session's followers for a session
// event, every client for the others.
func (h *hub) recipients(session core.SessionKey) []*conn {
	out := h.scratch[:0]
	h.mu.RLock()
	if session != "" {
		for c := range h.followers[session] {
			out = append(out, c)
		}
	} else {
		for c := range h.conns {
			out = append(out, c)
		}
	}
	h.mu.RUnlock()
	return out
}

func (h *hub) count() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.conns)
}

// enterPreauth counts a new unauthenticated socket from ip, before its
// upgrade. Over the per-address cap it refuses; over the total it evicts
// the oldest unauthenticated socket of the address holding the most
// (closed with 1013), and refuses only when none can be: every counted
// socket is still upgrading, or as many are already being evicted as the
// cap, which bounds the sockets counted at twice the cap.
func (h *hub) enterPreauth(ip string) error {
	key := addrKey(ip)
	h.preauthMu.Lock()
	if h.preauth[key] >= protocol.MaxPreauthSocketsPerIP {
		h.preauthMu.Unlock()
		return errPreauthAddress
	}
	var victim *conn
	if h.preauthTotal-h.evicting >= h.maxPreauth {
		if h.evicting < h.maxPreauth {
			victim = h.victimLocked()
		}
		if victim == nil {
			h.preauthMu.Unlock()
			return errPreauthTotal
		}
		h.preauthOrder.Remove(victim.preauthEl)
		victim.preauthEl = nil
		victim.evicted = true
		h.evicting++
	}
	h.preauth[key]++
	h.preauthTotal++
	h.preauthMu.Unlock()
	if victim != nil {
		victim.srv.metrics.limits.WithLabelValues("preauth_evicted").Inc()
		victim.closeNow(websocket.StatusTryAgainLater, reasonPreauthEvicted)
	}
	return nil
}

// victimLocked picks the socket to evict: the oldest of those from the
// address with the most unauthenticated sockets, so a client alone on its
// address is the last to go.
func (h *hub) victimLocked() *conn {
	most := 0
	for e := h.preauthOrder.Front(); e != nil; e = e.Next() {
		most = max(most, h.preauth[addrKey(e.Value.(*conn).ip)])
	}
	for e := h.preauthOrder.Front(); e != nil; e = e.Next() {
		if c := e.Value.(*conn); h.preauth[addrKey(c.ip)] == most {
			return c
		}
	}
	return nil
}

// leavePreauth uncounts an unauthenticated socket from ip: it
// authenticated, failed or ended.
func (h *hub) leavePreauth(ip string) {
	key := addrKey(ip)
	h.preauthMu.Lock()
	defer h.preauthMu.Unlock()
	h.preauthTotal--
	if h.preauth[key]--; h.preauth[key] <= 0 {
		delete(h.preauth, key)
	}
}

// outEvent is one event to fan out.
type outEvent struct {
	name string
	// payload renders the payload for a protocol version; the hub calls
	// it at most once per version.
	payload    func(protocol int) []byte
	dropIfSlow bool
	// session, when set, makes the event one of a session's chat and agent
	// events: it goes only to the clients following that session
	// (hub.follow), as OpenClaw's clients only render the session they
	// show; sessions.changed tells everyone else that something ran.
	session core.SessionKey
	// coalesce, when set, names the stream of cumulative snapshots the
	// event belongs to (a run's chat deltas): a client's queued, unwritten
	// snapshot of the stream is replaced by this one rather than queued
	// behind it, in the form whole renders (the snapshot standing alone).
	// Only with dropIfSlow.
	coalesce string
	whole    func(protocol int) []byte
	// to filters recipients beyond the scope guard (nil: every client).
	to func(c *conn) bool
	// stateVersion is sent with presence and health events.
	stateVersion *protocol.StateVersion
}

// broadcast sends ev to every authenticated client allowed to see it, or
// for a session's event to the clients following the session. v3 clients
// share one process-wide seq (a client filtered out sees a gap, as in
// OpenClaw); v4 clients get their own strictly increasing seq.
//
// Broadcasts are serialised, so every client receives them in seq order;
// one costs a queue append per recipient and never waits for a socket.
func (h *hub) broadcast(ev outEvent) {
	h.bmu.Lock()
	defer h.bmu.Unlock()
	h.seq++
	v3seq := h.seq
	var bodies [5][]byte
	var co *coalescing
	if ev.coalesce != "" && ev.whole != nil {
		co = &coalescing{key: ev.coalesce, render: ev.whole}
	}
	h.scratch = h.recipients(ev.session)
	defer clear(h.scratch) // hold no connection past the broadcast
	for _, c := range h.scratch {
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
		c.sendEvent(ev.name, bodies[p], v3seq, ev.stateVersion, ev.dropIfSlow, co)
	}
}

// coalescing is what a client's queue needs to fold a snapshot into the
// queued one of the same stream: the stream's key and the snapshot as a
// whole, rendered once per protocol version for all the clients of one
// broadcast.
type coalescing struct {
	key    string
	render func(protocol int) []byte
	bodies [5][]byte
	mu     sync.Mutex // clients' queues call whole under their own locks
}

// whole is the snapshot standing alone, for a client of protocol p.
func (co *coalescing) whole(p int) []byte {
	co.mu.Lock()
	defer co.mu.Unlock()
	i := p
	if i < 0 || i >= len(co.bodies) {
		i = 0
	}
	if co.bodies[i] == nil {
		co.bodies[i] = co.render(p)
	}
	return co.bodies[i]
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
	// coalesce is outEvent.coalesce: while queued, the frame's body may be
	// replaced by a newer snapshot of the same stream.
	coalesce string
}

// len is the frame's size in bytes.
func (f frame) len() int { return len(f.head) + len(f.body) + len(f.tail) }

// preauthCount returns the unauthenticated sockets counted, for /metrics.
func (h *hub) preauthCount() int {
	h.preauthMu.Lock()
	defer h.preauthMu.Unlock()
	return h.preauthTotal
}
