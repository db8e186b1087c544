package gateway

import (
	"container/list"
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

// The derived connection cap (LimitsConfig.MaxConnections) leaves
// fdReserveFixed descriptors plus a quarter of the open-file limit to the
// rest of the process: the bridges' HTTP and WebSocket clients, the store
// (SQLite and its WAL), transcripts being written, the model clients'
// connection pools, logs. An attack once filled the fd table with idle
// keep-alive connections and the Telegram bridge failed with "socket: too
// many open files"; the gateway must run out of connections first.
const (
	fdReserveFixed = 256
	minConnections = 32
	maxConnections = 16384 // beyond this, memory rather than fds runs out

	defaultMaxConnectionsPerAddress = 128
	defaultMaxPreauthConnections    = 256
	defaultIdleTimeout              = 60 * time.Second

	// healthReserve connections are admitted over the cap, at most
	// healthReservePerAddress from one address, for overflowDeadline, to
	// ask /healthz or /readyz; anything else gets 503.
	healthReserve           = 16
	healthReservePerAddress = 2
	overflowDeadline        = 2 * time.Second

	// newConnGrace is how long a connection that has sent nothing yet is
	// spared from eviction: a real client's request arrives within a
	// round trip.
	newConnGrace = time.Second

	// The plain HTTP timeouts. Hijacked connections (WebSockets) are
	// exempt: the server clears their deadlines at the upgrade, and
	// ticks and the handshake timeout govern them.
	readHeaderTimeout = 10 * time.Second
	httpReadTimeout   = 30 * time.Second // no handler reads a body
	httpWriteTimeout  = 30 * time.Second
	maxHeaderBytes    = 64 << 10 // generous: localhost cookies of other apps come along
)

// limits are LimitsConfig with its defaults applied.
type limits struct {
	maxConns    int
	perAddr     int
	maxPreauth  int
	decodeBytes int64
	idle        time.Duration
	// clamped is the configured maxConnections when it was lowered to
	// fit the open-file limit, for a warning at Start.
	clamped int
}

// resolveLimits applies the documented defaults; nofile is the soft
// RLIMIT_NOFILE, 0 when unknown.
func resolveLimits(cfg Config, nofile uint64) limits {
	l := limits{
		maxConns:    cfg.Limits.MaxConnections,
		perAddr:     cfg.Limits.MaxConnectionsPerAddress,
		maxPreauth:  cfg.Limits.MaxPreauthConnections,
		decodeBytes: cfg.Limits.MaxDecodeBytes,
		idle:        time.Duration(cfg.Limits.IdleTimeoutMs) * time.Millisecond,
	}
	if l.maxConns <= 0 {
		l.maxConns = defaultMaxConnections(nofile)
	} else if ceiling := int(min(nofile, 1<<30)) - fdReserveFixed - healthReserve; nofile > 0 && l.maxConns > ceiling {
		// A cap the fd table cannot hold is the failure it is meant to
		// prevent.
		l.clamped, l.maxConns = l.maxConns, max(minConnections, ceiling)
	}
	if l.perAddr <= 0 {
		l.perAddr = defaultMaxConnectionsPerAddress
	}
	if l.maxPreauth <= 0 {
		l.maxPreauth = defaultMaxPreauthConnections
	}
	if l.decodeBytes <= 0 {
		l.decodeBytes = 2 * cfg.Policy.MaxPayload
	}
	// The largest message must fit, or its reader would wait forever.
	l.decodeBytes = max(l.decodeBytes, cfg.Policy.MaxPayload)
	if l.idle <= 0 {
		l.idle = defaultIdleTimeout
	}
	return l
}

// defaultMaxConnections derives the connection cap from the open-file
// limit: the limit minus fdReserveFixed minus a quarter of it, within
// [minConnections, maxConnections]. An unknown limit gets 1024's share.
func defaultMaxConnections(nofile uint64) int {
	if nofile == 0 {
		nofile = 1024
	}
	n := int(min(nofile, 1<<30))
	return min(maxConnections, max(minConnections, n-fdReserveFixed-n/4))
}

// connLimiter wraps the gateway's listener and caps the connections it
// hands to the HTTP server, for plain HTTP and WebSocket upgrades alike (a
// hijacked connection stays counted until the WebSocket closes): in total,
// and per client address (addrKey). A trusted proxy's connections carry
// many clients, so they are capped in total only, and the clients it names
// are counted per request by admitClient.
//
// Over the total it first closes an idle keep-alive connection (or one
// that has sent nothing for newConnGrace) to make room, so idle sockets
// cannot hold the port. Failing that, and over the per-address cap, the
// connection may join the health reserve: a few connections admitted
// beyond the cap with a short deadline, answered only on /healthz and
// /readyz (see Server.serveHTTP), so a supervisor's probe still gets its
// answer while the cap is hit. Over everything, it is closed at once.
//
// Accept is called by the HTTP server's one accepting goroutine; the
// counters are also updated from the connections' goroutines, under mu.
type connLimiter struct {
	net.Listener
	proxies proxySet
	max     int
	perAddr int
	now     func() time.Time    // the wall clock
	onLimit func(action string) // counts a limit's action for /metrics

	mu          sync.Mutex
	total       int
	perKey      map[string]int
	overflow    int
	overflowKey map[string]int
	clients     map[string]int // requests and WebSockets per proxied client
	idle        *list.List     // *limitedConn in StateIdle, oldest first
	fresh       *list.List     // *limitedConn in StateNew, oldest first
}

// limitedConn is a connection the connLimiter admitted; closing it gives
// its place back.
type limitedConn struct {
	net.Conn
	l        *connLimiter
	key      string // addrKey of the peer; "" for a trusted proxy
	overflow bool   // admitted into the health reserve
	deadline time.Time

	// Under l.mu.
	el       *list.Element // in l.idle or l.fresh
	since    time.Time     // when it entered l.fresh
	client   string        // the proxied client holding a place, or ""
	hijacked bool
	closed   bool
}

func newConnLimiter(ln net.Listener, proxies proxySet, maxConns, perAddr int, now func() time.Time, onLimit func(string)) *connLimiter {
	return &connLimiter{
		Listener: ln, proxies: proxies, max: maxConns, perAddr: perAddr, now: now, onLimit: onLimit,
		perKey: map[string]int{}, overflowKey: map[string]int{}, clients: map[string]int{},
		idle: list.New(), fresh: list.New(),
	}
}

// Accept returns the next connection within the caps, closing those over
// them.
func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if lc := l.admit(c); lc != nil {
			return lc, nil
		}
		l.onLimit("refused")
		_ = c.Close()
	}
}

// admit counts c in, evicting an idle connection if that makes room, or
// returns nil when c must be closed.
func (l *connLimiter) admit(c net.Conn) *limitedConn {
	key := c.RemoteAddr().String()
	if peer, ok := peerAddr(key); ok {
		key = addrKey(peer.String())
		if l.proxies.contains(peer) {
			key = ""
		}
	}
	for {
		l.mu.Lock()
		addrOK := key == "" || l.perKey[key] < l.perAddr
		if addrOK && l.total < l.max {
			l.total++
			if key != "" {
				l.perKey[key]++
			}
			l.mu.Unlock()
			return &limitedConn{Conn: c, l: l, key: key}
		}
		var victim *limitedConn
		if addrOK {
			victim = l.victimLocked()
		}
		if victim == nil {
			lc := l.overflowLocked(c, key)
			l.mu.Unlock()
			if lc != nil {
				l.onLimit("health_reserve")
				_ = c.SetDeadline(lc.deadline)
			}
			return lc
		}
		l.mu.Unlock()
		l.onLimit("evicted_idle")
		// Its HTTP server goroutine sees the read fail and ends; Close
		// gives its place back before the loop looks again.
		_ = victim.Close()
	}
}

// victimLocked takes the oldest idle keep-alive connection, or the oldest
// that has sent nothing for newConnGrace, off its list.
func (l *connLimiter) victimLocked() *limitedConn {
	var lc *limitedConn
	if e := l.idle.Front(); e != nil {
		lc = e.Value.(*limitedConn)
	} else if e := l.fresh.Front(); e != nil && l.now().Sub(e.Value.(*limitedConn).since) >= newConnGrace {
		lc = e.Value.(*limitedConn)
	}
	if lc != nil {
		l.unlistLocked(lc)
	}
	return lc
}

// overflowLocked admits c into the health reserve, or returns nil.
func (l *connLimiter) overflowLocked(c net.Conn, key string) *limitedConn {
	if l.overflow >= healthReserve || (key != "" && l.overflowKey[key] >= healthReservePerAddress) {
		return nil
	}
	l.overflow++
	if key != "" {
		l.overflowKey[key]++
	}
	return &limitedConn{Conn: c, l: l, key: key, overflow: true, deadline: l.now().Add(overflowDeadline)}
}

func (l *connLimiter) unlistLocked(lc *limitedConn) {
	if lc.el != nil {
		l.idle.Remove(lc.el)
		l.fresh.Remove(lc.el)
		lc.el = nil
	}
}

// connState is the HTTP server's ConnState hook: it keeps the lists of
// connections that may be evicted.
func (l *connLimiter) connState(c net.Conn, st http.ConnState) {
	lc, ok := c.(*limitedConn)
	if !ok || lc.overflow {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if lc.closed {
		return
	}
	l.unlistLocked(lc)
	switch st {
	case http.StateNew:
		lc.since = l.now()
		lc.el = l.fresh.PushBack(lc)
	case http.StateIdle:
		lc.el = l.idle.PushBack(lc)
	case http.StateHijacked:
		lc.hijacked = true
	}
}

// admitClient counts a request from a proxied client against the
// per-address cap, and reports false when the client is over it. The
// place is held until releaseClient, or, for a request upgraded to a
// WebSocket, until the connection closes.
func (l *connLimiter) admitClient(lc *limitedConn, client string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.clients[client] >= l.perAddr {
		return false
	}
	l.clients[client]++
	lc.client = client
	return true
}

// releaseClient gives back the place of lc's request unless the request
// took the connection over (a WebSocket), which keeps it until Close.
func (l *connLimiter) releaseClient(lc *limitedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !lc.hijacked {
		l.dropClientLocked(lc)
	}
}

func (l *connLimiter) dropClientLocked(lc *limitedConn) {
	if lc.client == "" {
		return
	}
	if l.clients[lc.client]--; l.clients[lc.client] <= 0 {
		delete(l.clients, lc.client)
	}
	lc.client = ""
}

// open returns the connections counted, reserve included, for /metrics.
func (l *connLimiter) open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total + l.overflow
}

// Close gives the connection's place back and closes it.
func (c *limitedConn) Close() error {
	l := c.l
	l.mu.Lock()
	if !c.closed {
		c.closed = true
		l.unlistLocked(c)
		l.dropClientLocked(c)
		if c.overflow {
			l.overflow--
			if c.key != "" {
				if l.overflowKey[c.key]--; l.overflowKey[c.key] <= 0 {
					delete(l.overflowKey, c.key)
				}
			}
		} else {
			l.total--
			if c.key != "" {
				if l.perKey[c.key]--; l.perKey[c.key] <= 0 {
					delete(l.perKey, c.key)
				}
			}
		}
	}
	l.mu.Unlock()
	return c.Conn.Close()
}

// The deadline setters keep a reserve connection's deadline: the HTTP
// server sets its own before each read and write, and would extend it.

// SetDeadline sets both deadlines, never past a reserve connection's.
func (c *limitedConn) SetDeadline(t time.Time) error {
	return c.Conn.SetDeadline(c.clamp(t))
}

// SetReadDeadline sets the read deadline, never past a reserve
// connection's.
func (c *limitedConn) SetReadDeadline(t time.Time) error {
	return c.Conn.SetReadDeadline(c.clamp(t))
}

// SetWriteDeadline sets the write deadline, never past a reserve
// connection's.
func (c *limitedConn) SetWriteDeadline(t time.Time) error {
	return c.Conn.SetWriteDeadline(c.clamp(t))
}

func (c *limitedConn) clamp(t time.Time) time.Time {
	if c.overflow && (t.IsZero() || t.After(c.deadline)) {
		return c.deadline
	}
	return t
}

// connCtxKey finds a request's *limitedConn in its context.
type connCtxKey struct{}

// connContext is the HTTP server's ConnContext hook.
func connContext(ctx context.Context, c net.Conn) context.Context {
	if lc, ok := c.(*limitedConn); ok {
		return context.WithValue(ctx, connCtxKey{}, lc)
	}
	return ctx
}

// serveHTTP is the gateway's HTTP handler: the connection caps' part of
// each request, then the routes. A connection in the health reserve gets
// /healthz and /readyz and is closed after; anything else gets 503 with
// Retry-After. A request through a trusted proxy counts against its
// client's per-address cap.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	lc, _ := r.Context().Value(connCtxKey{}).(*limitedConn)
	if lc == nil {
		s.mux.ServeHTTP(w, r)
		return
	}
	if lc.overflow {
		w.Header().Set("Connection", "close")
		if r.Method == http.MethodGet && (r.URL.Path == "/healthz" || r.URL.Path == "/readyz") {
			s.mux.ServeHTTP(w, r)
			return
		}
		busy(w, "the gateway is at its connection limit")
		return
	}
	if lc.key == "" { // from a trusted proxy
		ip, _ := s.clientAddr(r)
		if !lc.l.admitClient(lc, addrKey(ip)) {
			s.metrics.limits.WithLabelValues("client_refused").Inc()
			busy(w, "too many connections from this address")
			return
		}
		defer lc.l.releaseClient(lc)
	}
	s.mux.ServeHTTP(w, r)
}

// busy answers 503 with a Retry-After.
func busy(w http.ResponseWriter, why string) {
	w.Header().Set("Retry-After", "5")
	http.Error(w, why+"; try again later", http.StatusServiceUnavailable)
}
