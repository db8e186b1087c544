package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchboardhq/switchboard/gateway/auth"
	"github.com/switchboardhq/switchboard/gateway/protocol"
	"github.com/switchboardhq/switchboard/gateway/webui"
	"github.com/switchboardhq/switchboard/store"
)

// ReadinessFunc reports whether every component of the process has started,
// with a short state per component name ("ready", "starting", an error). The
// gateway calls it for each /readyz request; it must be cheap and must not do
// IO.
type ReadinessFunc func() (ready bool, components map[string]string)

// Deps are what the gateway needs from the rest of the process at
// construction. What it needs to answer methods (the dispatcher, the
// sessions) comes later, with Attach.
type Deps struct {
	// Logger receives the gateway's logs. Nil discards them.
	Logger *slog.Logger
	// Readiness backs /readyz. Nil means ready as soon as the listener is up.
	Readiness ReadinessFunc
	// Gauges are point-in-time values exported on /metrics as
	// switchboard_state{name=…} (queue depth, per-bridge state). Nil means
	// none.
	Gauges func() map[string]float64
	// Collectors are further Prometheus collectors exported on /metrics
	// (the bridge supervisor's state gauge and restart counter). They are
	// collected at scrape time, from the scrape's goroutine.
	Collectors []prometheus.Collector
	// Version is the server version announced in hello-ok.
	Version string
	// StateDir is the state directory: the generated gateway token lives
	// there, and hello-ok's snapshot names it.
	StateDir string
	// ConfigPath is the configuration file, for hello-ok's snapshot.
	ConfigPath string
	// TokenCommand is the command line that prints the gateway token, as
	// the user can run it ("bin/switchboard gateway token --config …"),
	// for the log line that announces a generated token; empty means
	// "switchboard gateway token".
	TokenCommand string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Server is the gateway: HTTP (/healthz, /readyz, /metrics) and the
// WebSocket protocol on one port. Create it with New, Attach the backend,
// then Start and Stop it; it is not restartable.
type Server struct {
	cfg     Config
	deps    Deps
	log     *slog.Logger
	mux     *http.ServeMux
	page    http.Handler // the web chat page (package webui)
	http    *http.Server
	hub     *hub
	metrics *metrics
	limiter *auth.RateLimiter
	limits  limits
	proxies proxySet
	decode  *decodeBudget
	conns   *connLimiter // set by Start
	now     func() time.Time
	started time.Time
	methods map[string]method
	dedupe  *dedupe
	runs    *runTracker
	relay   Relay // nil: one instance
	// logins are the one-time sign-in codes LoginCode minted.
	logins loginCodes

	backend atomic.Pointer[Backend]

	secretMu  sync.RWMutex
	authMode  string
	secret    string
	secretGen int64

	presenceVersion atomic.Int64
	presencePending atomic.Bool
	healthVersion   atomic.Int64
	stopping        atomic.Bool
	// warnedForwarding is set once forwarding headers from an untrusted
	// peer have been warned about.
	warnedForwarding atomic.Bool

	// connWG counts connection handlers and writer goroutines, so Stop
	// returns only when none is left.
	connWG sync.WaitGroup

	mu     sync.Mutex
	ln     net.Listener
	done   chan struct{}
	cancel context.CancelFunc
	loops  sync.WaitGroup
}

// New builds a gateway server from its configuration. It does no IO
// beyond reading the process's open-file limit, which the default
// connection cap is derived from.
func New(cfg Config, deps Deps) *Server {
	log := deps.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	def := DefaultConfig()
	if cfg.Policy.MaxPayload <= 0 {
		cfg.Policy.MaxPayload = def.Policy.MaxPayload
	}
	if cfg.Policy.MaxBufferedBytes <= 0 {
		cfg.Policy.MaxBufferedBytes = def.Policy.MaxBufferedBytes
	}
	if cfg.Policy.TickIntervalMs <= 0 {
		cfg.Policy.TickIntervalMs = def.Policy.TickIntervalMs
	}
	if cfg.HandshakeTimeoutMs <= 0 {
		cfg.HandshakeTimeoutMs = def.HandshakeTimeoutMs
	}
	now := deps.Now
	if now == nil {
		now = time.Now
	}
	if deps.Version == "" {
		deps.Version = "dev"
	}
	lim := resolveLimits(cfg, openFileLimit())
	s := &Server{
		cfg: cfg, deps: deps, log: log, now: now,
		mux:     http.NewServeMux(),
		hub:     newHub(lim.maxPreauth),
		limiter: auth.NewRateLimiter(auth.RateLimitConfig{}),
		limits:  lim,
		proxies: newProxySet(cfg.TrustedProxies),
		decode:  newDecodeBudget(lim.decodeBytes),
		dedupe:  newDedupe(now),
		started: now(),
	}
	s.runs = newRunTracker(s)
	s.metrics = newMetrics(s.gauges, deps.Collectors...)
	s.methods = s.registry()
	s.authMode = string(cfg.EffectiveAuthMode())
	switch cfg.EffectiveAuthMode() {
	case AuthToken:
		s.secret = cfg.Auth.Token
	case AuthPassword:
		s.secret = cfg.Auth.Password
	}
	s.mux.HandleFunc("GET /healthz", s.handleHealthz)
	s.mux.HandleFunc("GET /readyz", s.handleReadyz)
	s.mux.Handle("GET /metrics", s.metrics.handler())
	s.page = webui.Index()
	s.mux.HandleFunc("GET /{$}", s.handleRoot)
	s.mux.Handle("GET "+webui.AssetsPrefix, webui.Assets())
	// Every timeout bounds how long a client that sends nothing holds a
	// file descriptor: a keep-alive connection after one /healthz used to
	// stay open forever. A hijacked connection (a WebSocket) has its
	// deadlines cleared by the upgrade, so none of these cut it.
	s.http = &http.Server{
		Handler:           http.HandlerFunc(s.serveHTTP),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       httpReadTimeout,
		WriteTimeout:      httpWriteTimeout,
		IdleTimeout:       lim.idle,
		MaxHeaderBytes:    maxHeaderBytes,
		ConnContext:       connContext,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	return s
}

// Handler returns the gateway's HTTP handler, for tests and for embedding
// programs that run their own listener (where the connection caps, which
// live in Start's listener, do not apply).
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

// ErrAddrInUse is wrapped by Start when another process holds the port.
var ErrAddrInUse = errors.New("address already in use")

// Start checks the auth settings, binds the listener and serves in the
// background until Stop. It refuses to listen beyond loopback without auth,
// and in token mode without a configured token it uses the one kept in the
// state directory, creating it on first start. A port in use is reported
// as an error wrapping ErrAddrInUse that says what to change.
func (s *Server) Start(ctx context.Context) error {
	if err := s.prepareAuth(); err != nil {
		return err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.cfg.Addr())
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("gateway: listen on %s: %w (is another switchboard running? change gateway.port)", s.cfg.Addr(), ErrAddrInUse)
		}
		return fmt.Errorf("gateway: listen on %s: %w", s.cfg.Addr(), err)
	}
	if s.limits.clamped > 0 {
		s.log.Warn("gateway: gateway.limits.maxConnections is above what the open-file limit can hold beside the rest of the process; lowered",
			"configured", s.limits.clamped, "used", s.limits.maxConns, "openFileLimit", openFileLimit())
	}
	conns := newConnLimiter(ln, s.proxies, s.limits.maxConns, s.limits.perAddr, time.Now, func(action string) {
		s.metrics.limits.WithLabelValues(action).Inc()
	})
	s.http.ConnState = conns.connState
	loopCtx, cancel := context.WithCancel(context.Background())
	s.mu.Lock()
	s.ln = ln
	s.conns = conns
	s.done = make(chan struct{})
	s.cancel = cancel
	s.mu.Unlock()
	s.loops.Add(1)
	go s.maintenance(loopCtx)
	go func() {
		defer close(s.done)
		if err := s.http.Serve(conns); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("gateway: serve stopped", "err", err)
		}
	}()
	s.log.Info("gateway listening", "addr", ln.Addr().String(), "url", "http://"+ln.Addr().String()+"/", "auth", s.authMode,
		"maxConnections", s.limits.maxConns, "maxConnectionsPerAddress", s.limits.perAddr, "trustedProxies", len(s.proxies))
	return nil
}

// prepareAuth applies the startup rules of openclaw-facts §1.14.
func (s *Server) prepareAuth() error {
	mode := s.cfg.EffectiveAuthMode()
	if !s.cfg.Loopback() && mode == AuthNone {
		return fmt.Errorf("gateway: refusing to bind gateway to %s without auth: set gateway.auth.mode to token or password, or bind to loopback", s.cfg.Addr())
	}
	if err := s.cfg.Validate(); err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	switch mode {
	case AuthToken:
		if s.cfg.Auth.Token == "" {
			if s.deps.StateDir == "" {
				return errors.New("gateway: token auth needs gateway.auth.token or a state directory to keep a generated token in")
			}
			tok, created, err := store.GatewayToken(s.deps.StateDir)
			if err != nil {
				return fmt.Errorf("gateway: %w", err)
			}
			if created {
				cmd := s.deps.TokenCommand
				if cmd == "" {
					cmd = "switchboard gateway token"
				}
				s.log.Warn("generated a gateway token; clients must send it in their connect request. Print it with: " + cmd)
			}
			s.setSecret(string(AuthToken), tok)
			return nil
		}
		if auth.WeakToken(s.cfg.Auth.Token) {
			return fmt.Errorf("gateway: gateway.auth.token is too weak (at least %d characters, not a placeholder or pattern); remove it to have one generated, or set a random one", auth.MinTokenLength)
		}
	case AuthPassword:
		if auth.WeakToken(s.cfg.Auth.Password) {
			return fmt.Errorf("gateway: gateway.auth.password is too weak (at least %d characters, not a placeholder or pattern)", auth.MinTokenLength)
		}
	}
	return nil
}

// setSecret installs the shared secret. Changing it closes every socket
// that authenticated with the old one with 4001 "gateway auth changed".
func (s *Server) setSecret(mode, secret string) {
	s.secretMu.Lock()
	changed := s.authMode != mode || !auth.Equal(secret, s.secret)
	s.authMode, s.secret = mode, secret
	if changed {
		s.secretGen++
	}
	gen := s.secretGen
	s.secretMu.Unlock()
	if !changed {
		return
	}
	for _, c := range s.hub.snapshot() {
		if c.ready.Load() && c.secretGen != gen {
			c.closeAsync(protocol.CloseAuthChanged, protocol.ReasonAuthChanged)
		}
	}
}

// RotateSecret replaces the shared token or password (mode "token" or
// "password") and disconnects every client that authenticated with the old
// one (close 4001), as a configuration reload does.
func (s *Server) RotateSecret(mode, secret string) error {
	if mode != string(AuthToken) && mode != string(AuthPassword) && mode != string(AuthNone) {
		return fmt.Errorf("gateway: unknown auth mode %q", mode)
	}
	if mode == string(AuthNone) && !s.cfg.Loopback() {
		return errors.New("gateway: auth mode none is allowed only on a loopback bind")
	}
	if mode != string(AuthNone) && auth.WeakToken(secret) {
		return fmt.Errorf("gateway: the new %s is too weak", mode)
	}
	s.setSecret(mode, secret)
	return nil
}

func (s *Server) currentSecret() (mode, secret string, gen int64) {
	s.secretMu.RLock()
	defer s.secretMu.RUnlock()
	return s.authMode, s.secret, s.secretGen
}

// Addr returns the bound address, or nil before Start.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Stop sends every client a shutdown event, stops accepting connections,
// closes the sockets once their queued frames are written, and waits for
// in-flight work until ctx ends, then closes what is left.
func (s *Server) Stop(ctx context.Context) error {
	s.mu.Lock()
	done, cancel := s.done, s.cancel
	// Under mu, so no connection handler joins connWG after the wait
	// below begins (serveWS checks stopping under mu).
	s.stopping.Store(true)
	s.mu.Unlock()
	if done == nil {
		return nil
	}
	cancel()
	s.loops.Wait()
	payload, _ := json.Marshal(protocol.ShutdownPayload{Reason: "gateway stopping"})
	s.hub.broadcast(outEvent{name: protocol.EventShutdown, payload: func(int) []byte { return payload }})
	for _, c := range s.hub.snapshot() {
		c.closeAsync(protocol.CloseNormal, "gateway stopping")
	}
	err := s.http.Shutdown(ctx)
	waited := make(chan struct{})
	go func() { s.connWG.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-ctx.Done():
		// Deadline passed: drop the stragglers rather than hang shutdown.
		_ = s.http.Close()
		for _, c := range s.hub.snapshot() {
			c.cancel()
			_ = c.ws.CloseNow()
		}
		<-waited
		if err == nil {
			err = ctx.Err()
		}
	}
	<-done
	s.runs.stop()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// maintenance sends ticks and health events and prunes the idempotency
// cache until the server stops.
func (s *Server) maintenance(ctx context.Context) {
	defer s.loops.Done()
	tick := time.NewTicker(time.Duration(s.cfg.Policy.TickIntervalMs) * time.Millisecond)
	defer tick.Stop()
	health := time.NewTicker(healthInterval)
	defer health.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			s.broadcastTick()
		case <-health.C:
			s.dedupe.prune()
			s.limiter.Len() // prunes lazily
			s.broadcastHealth()
		}
	}
}

// healthInterval is how often the health event is sent
// (HEALTH_REFRESH_INTERVAL_MS).
const healthInterval = 60 * time.Second

func (s *Server) broadcastTick() {
	payload, _ := json.Marshal(protocol.TickPayload{Ts: s.now().UnixMilli()})
	s.hub.broadcast(outEvent{name: protocol.EventTick, payload: func(int) []byte { return payload }, dropIfSlow: true})
}

func (s *Server) broadcastHealth() {
	s.healthVersion.Add(1)
	payload, _ := json.Marshal(s.healthSnapshot(context.Background()))
	sv := s.stateVersion()
	s.hub.broadcast(outEvent{name: protocol.EventHealth, payload: func(int) []byte { return payload }, dropIfSlow: true, stateVersion: &sv})
}

func (s *Server) stateVersion() protocol.StateVersion {
	return protocol.StateVersion{Presence: s.presenceVersion.Load(), Health: s.healthVersion.Load()}
}

func (s *Server) handleHealthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"ok": true})
}

func (s *Server) handleReadyz(w http.ResponseWriter, _ *http.Request) {
	ready, components := true, map[string]string{}
	if s.deps.Readiness != nil {
		ready, components = s.deps.Readiness()
	}
	code := http.StatusOK
	if !ready {
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, map[string]any{"ready": ready, "components": components})
}

// handleRoot upgrades WebSocket requests and serves the web chat page to
// plain GETs of /.
func (s *Server) handleRoot(w http.ResponseWriter, r *http.Request) {
	if isWebSocketUpgrade(r) {
		s.serveWS(w, r)
		return
	}
	s.page.ServeHTTP(w, r)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// hostname is the machine's name for hello-ok's server.host.
var hostname = sync.OnceValue(func() string {
	h, _ := os.Hostname()
	return h
})
