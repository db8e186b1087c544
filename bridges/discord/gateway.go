package discord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/switchboardhq/switchboard/bridges"
)

// Gateway opcodes (Discord's "Gateway Opcodes").
const (
	opDispatch       = 0
	opHeartbeat      = 1
	opIdentify       = 2
	opResume         = 6
	opReconnect      = 7
	opInvalidSession = 9
	opHello          = 10
	opHeartbeatACK   = 11
)

// The gateway's tunables.
const (
	// apiVersion is the gateway version asked for.
	apiVersion = "10"
	// defaultGatewayURL is used when GET /gateway/bot cannot be reached and
	// nothing is cached.
	defaultGatewayURL = "wss://gateway.discord.gg"
	// maxFailedResumes is how many resumes may fail in a row before the
	// session is dropped and the next connection identifies afresh.
	maxFailedResumes = 3
	// defaultHelloTimeout is how long a new connection may take to send
	// Hello before it is given up.
	defaultHelloTimeout = 30 * time.Second
	// readLimit caps one gateway payload (GUILD_CREATE of a big guild).
	readLimit = 8 << 20
	// identifyReserve is how many identifies of the daily budget are kept
	// back: with fewer remaining the gateway waits for the budget's reset
	// instead of risking the token reset Discord imposes at zero.
	identifyReserve = 5
	// closeReconnect is the close code the client uses when it means to
	// resume (any code but 1000 and 1001 keeps the session).
	closeReconnect websocket.StatusCode = 4900
)

// payload is one gateway frame.
type payload struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d"`
	S  *int64          `json:"s,omitempty"`
	T  string          `json:"t,omitempty"`
}

// startLimit is GET /gateway/bot's session_start_limit.
type startLimit struct {
	Remaining int
	ResetAt   time.Time
}

// gateway is the reconnect state machine of one Discord gateway session
// (a single shard): it resumes with the session id, last sequence and
// resume URL; identifies afresh after maxFailedResumes failed resumes, an
// invalid session or the close codes that end a session; backs off with
// jitter up to a minute between attempts; stops for good on the terminal
// close codes; and counts identifies against the daily budget. It never
// gives up on a transient failure.
type gateway struct {
	token   string // without "Bot "
	intents int
	log     *slog.Logger
	backoff bridges.Backoff
	now     func() time.Time
	// sleep waits d or until ctx ends (false then); tests make time
	// virtual with it.
	sleep        func(ctx context.Context, d time.Duration) bool
	helloTimeout time.Duration
	// gatewayBot asks GET /gateway/bot for the URL and the identify budget.
	gatewayBot func(ctx context.Context) (url string, limit startLimit, err error)
	// dispatch handles one event, in order, on the read goroutine.
	dispatch func(ctx context.Context, t string, d json.RawMessage)
	// state reports connection states.
	state func(bridges.State, error)

	mu            sync.Mutex
	gatewayURL    string
	sessionID     string
	resumeURL     string
	seq           int64
	failedResumes int
	identifies    int
	limit         startLimit
}

// outcome is how one connection ended.
type outcome struct {
	resumed     bool // the connection tried to resume
	established bool // READY or RESUMED arrived
	code        int  // the close code, or -1 without one
	invalid     bool // op 9 said the session cannot be resumed
	err         error
}

// run connects and reconnects until ctx ends (nil) or a terminal close
// code stops it (the error, already reported as the state).
func (g *gateway) run(ctx context.Context) error {
	failures := 0
	for {
		o := g.connect(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if st, why := closeState(o.code); st.Terminal() {
			err := errors.New(why)
			g.state(st, err)
			return err
		}
		g.settle(o)
		if o.established {
			failures = 0
		}
		err := o.err
		if err == nil {
			err = fmt.Errorf("discord gateway closed (code %d)", o.code)
		}
		delay := g.backoff.Delay(failures)
		g.state(bridges.StateTransientDisconnect, bridges.RetryIn(err, delay))
		g.log.Info("discord: gateway disconnected; reconnecting", "err", err, "attempt", failures+1, "in", delay.Round(time.Millisecond))
		if !g.sleep(ctx, delay) {
			return nil
		}
		failures++
	}
}

// settle updates the session after a connection ended: which of resume
// and identify the next one does.
func (g *gateway) settle(o outcome) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case o.invalid, o.code == 4007, o.code == 4009:
		g.dropSessionLocked()
	case o.resumed && !o.established:
		g.failedResumes++
		if g.failedResumes >= maxFailedResumes {
			g.log.Info("discord: resume failed repeatedly; identifying afresh", "failures", g.failedResumes)
			g.dropSessionLocked()
		}
	}
}

func (g *gateway) dropSessionLocked() {
	g.sessionID, g.resumeURL, g.seq, g.failedResumes = "", "", 0, 0
}

// Identifies reports how many Identify payloads were sent.
func (g *gateway) Identifies() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.identifies
}

// connect runs one connection to its end.
func (g *gateway) connect(ctx context.Context) (o outcome) {
	o.code = -1
	g.mu.Lock()
	resume := g.sessionID != ""
	url := g.resumeURL
	g.mu.Unlock()
	o.resumed = resume
	if !resume {
		var err error
		if url, err = g.identifyURL(ctx); err != nil {
			o.err = err
			return o
		}
	}
	if url == "" {
		url = g.cachedURL()
	}
	conn, _, err := websocket.Dial(ctx, withQuery(url), nil)
	if err != nil {
		o.err = fmt.Errorf("discord gateway: %w", err)
		return o
	}
	defer conn.CloseNow()
	conn.SetReadLimit(readLimit)

	interval, err := g.hello(ctx, conn)
	if err != nil {
		o.code, o.err = closeCode(err), err
		return o
	}
	hb := &heartbeater{conn: conn, interval: interval, seq: &atomic.Int64{}}
	if err := g.login(ctx, conn, resume, hb); err != nil {
		o.err = err
		return o
	}
	hbCtx, stop := context.WithCancel(ctx)
	hbDone := make(chan struct{})
	go func() { defer close(hbDone); hb.run(hbCtx) }()
	defer func() { stop(); <-hbDone }()

	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			if ctx.Err() != nil {
				_ = conn.Close(websocket.StatusNormalClosure, "shutting down")
				return o
			}
			o.code, o.err = closeCode(err), fmt.Errorf("discord gateway: %w", err)
			if hb.zombie.Load() {
				o.err = errors.New("discord gateway: no heartbeat ACK; the connection was a zombie")
			}
			return o
		}
		var p payload
		if err := json.Unmarshal(data, &p); err != nil {
			g.log.Warn("discord: unreadable gateway payload", "err", err)
			continue
		}
		if p.S != nil {
			hb.seq.Store(*p.S)
			g.mu.Lock()
			g.seq = *p.S
			g.mu.Unlock()
		}
		switch p.Op {
		case opDispatch:
			switch p.T {
			case "READY":
				var r struct {
					SessionID        string `json:"session_id"`
					ResumeGatewayURL string `json:"resume_gateway_url"`
				}
				_ = json.Unmarshal(p.D, &r)
				g.mu.Lock()
				g.sessionID, g.resumeURL, g.failedResumes = r.SessionID, r.ResumeGatewayURL, 0
				g.mu.Unlock()
				o.established = true
				g.state(bridges.StateConnected, nil)
			case "RESUMED":
				g.mu.Lock()
				g.failedResumes = 0
				g.mu.Unlock()
				o.established = true
				g.state(bridges.StateConnected, nil)
			}
			g.dispatch(ctx, p.T, p.D)
		case opHeartbeat:
			hb.beat(ctx)
		case opHeartbeatACK:
			hb.acked.Store(true)
		case opReconnect:
			o.err = errors.New("discord asked the gateway to reconnect")
			_ = conn.Close(closeReconnect, "reconnect requested")
			return o
		case opInvalidSession:
			var resumable bool
			_ = json.Unmarshal(p.D, &resumable)
			o.invalid = !resumable
			o.err = fmt.Errorf("discord invalidated the gateway session (resumable %v)", resumable)
			_ = conn.Close(closeReconnect, "invalid session")
			return o
		}
	}
}

// identifyURL refreshes the gateway URL and identify budget from GET
// /gateway/bot before a fresh identify, waiting out an exhausted budget.
func (g *gateway) identifyURL(ctx context.Context) (string, error) {
	url, limit, err := g.gatewayBot(ctx)
	g.mu.Lock()
	defer g.mu.Unlock()
	if err != nil {
		g.log.Warn("discord: GET /gateway/bot failed; using the cached gateway URL", "err", err)
		if g.gatewayURL == "" {
			g.gatewayURL = defaultGatewayURL
		}
		return g.gatewayURL, nil
	}
	g.gatewayURL, g.limit = url, limit
	if limit.Remaining <= identifyReserve && limit.ResetAt.After(g.now()) {
		return "", fmt.Errorf("discord: only %d identifies left in today's budget; waiting until %s before identifying again", limit.Remaining, limit.ResetAt.UTC().Format(time.RFC3339))
	}
	return url, nil
}

func (g *gateway) cachedURL() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gatewayURL == "" {
		return defaultGatewayURL
	}
	return g.gatewayURL
}

// withQuery adds the version and encoding to a gateway URL.
func withQuery(url string) string {
	url = strings.TrimRight(url, "/") + "/"
	return url + "?v=" + apiVersion + "&encoding=json"
}

// closeCode extracts a WebSocket close code (-1 when there is none).
func closeCode(err error) int {
	return int(websocket.CloseStatus(err))
}

// hello reads Hello and returns the heartbeat interval.
func (g *gateway) hello(ctx context.Context, conn *websocket.Conn) (time.Duration, error) {
	timeout := g.helloTimeout
	if timeout <= 0 {
		timeout = defaultHelloTimeout
	}
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, data, err := conn.Read(hctx)
	if err != nil {
		if ctx.Err() == nil && hctx.Err() != nil {
			return 0, fmt.Errorf("discord gateway: no Hello within %s", timeout)
		}
		return 0, fmt.Errorf("discord gateway: %w", err)
	}
	var p payload
	var h struct {
		HeartbeatInterval int64 `json:"heartbeat_interval"`
	}
	if json.Unmarshal(data, &p) != nil || p.Op != opHello || json.Unmarshal(p.D, &h) != nil || h.HeartbeatInterval <= 0 {
		return 0, errors.New("discord gateway: the first payload was not Hello")
	}
	return time.Duration(h.HeartbeatInterval) * time.Millisecond, nil
}

// login sends Resume or Identify.
func (g *gateway) login(ctx context.Context, conn *websocket.Conn, resume bool, hb *heartbeater) error {
	g.mu.Lock()
	var frame any
	if resume {
		hb.seq.Store(g.seq)
		frame = map[string]any{"op": opResume, "d": map[string]any{"token": g.token, "session_id": g.sessionID, "seq": g.seq}}
	} else {
		g.identifies++
		if g.limit.Remaining > 0 {
			g.limit.Remaining--
		}
		frame = map[string]any{"op": opIdentify, "d": map[string]any{
			"token": g.token, "intents": g.intents, "shard": [2]int{0, 1},
			"properties": map[string]string{"os": "linux", "browser": "switchboard", "device": "switchboard"},
		}}
	}
	n := g.identifies
	g.mu.Unlock()
	if !resume {
		g.log.Info("discord: identifying", "identifies", n)
	}
	b, _ := json.Marshal(frame)
	if err := conn.Write(ctx, websocket.MessageText, b); err != nil {
		return fmt.Errorf("discord gateway: %w", err)
	}
	return nil
}

// heartbeater sends heartbeats at Hello's interval (the first after a
// random fraction of it) and closes a connection whose previous heartbeat
// got no ACK, with a code that keeps the session resumable.
type heartbeater struct {
	conn     *websocket.Conn
	interval time.Duration
	seq      *atomic.Int64
	acked    atomic.Bool
	zombie   atomic.Bool
	writeMu  sync.Mutex
}

func (h *heartbeater) run(ctx context.Context) {
	h.acked.Store(true)
	t := time.NewTimer(time.Duration(rand.Float64() * float64(h.interval)))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !h.acked.Swap(false) {
			h.zombie.Store(true)
			_ = h.conn.Close(closeReconnect, "heartbeat ACK missing")
			return
		}
		h.beat(ctx)
		t.Reset(h.interval)
	}
}

// beat sends one heartbeat with the last sequence number.
func (h *heartbeater) beat(ctx context.Context) {
	var d any
	if s := h.seq.Load(); s > 0 {
		d = s
	}
	b, _ := json.Marshal(map[string]any{"op": opHeartbeat, "d": d})
	h.writeMu.Lock()
	defer h.writeMu.Unlock()
	_ = h.conn.Write(ctx, websocket.MessageText, b)
}
