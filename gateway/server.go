package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"
)

// ReadinessFunc reports whether every component of the process has started,
// with a short state per component name ("ready", "starting", an error). The
// gateway calls it for each /readyz request; it must be cheap and must not do
// IO.
type ReadinessFunc func() (ready bool, components map[string]string)

// Deps are what the gateway needs from the rest of the process.
type Deps struct {
	// Logger receives the gateway's logs. Nil discards them.
	Logger *slog.Logger
	// Readiness backs /readyz. Nil means ready as soon as the listener is up.
	Readiness ReadinessFunc
}

// Server is the gateway's HTTP listener. Create it with New, then Start and
// Stop it; it is not restartable.
type Server struct {
	cfg  Config
	deps Deps
	log  *slog.Logger
	mux  *http.ServeMux
	http *http.Server

	mu   sync.Mutex
	ln   net.Listener
	done chan struct{}
}

// New builds a gateway server from its configuration. It does no IO.
func New(cfg Config, deps Deps) *Server {
	log := deps.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, deps: deps, log: log, mux: http.NewServeMux()}
	s.mux.HandleFunc("GET /healthz", s.handleHealthz)
	s.mux.HandleFunc("GET /readyz", s.handleReadyz)
	s.http = &http.Server{
		Handler:           s.mux,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	return s
}

// Handler returns the gateway's HTTP handler, for tests and for embedding
// programs that run their own listener.
func (s *Server) Handler() http.Handler { return s.mux }

// ErrAddrInUse is wrapped by Start when another process holds the port.
var ErrAddrInUse = errors.New("address already in use")

// Start binds the listener and serves in the background until Stop. A port in
// use is reported as an error wrapping ErrAddrInUse that says what to change.
func (s *Server) Start(ctx context.Context) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.cfg.Addr())
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("gateway: listen on %s: %w (is another switchboard running? change gateway.port)", s.cfg.Addr(), ErrAddrInUse)
		}
		return fmt.Errorf("gateway: listen on %s: %w", s.cfg.Addr(), err)
	}
	s.mu.Lock()
	s.ln = ln
	s.done = make(chan struct{})
	s.mu.Unlock()
	go func() {
		defer close(s.done)
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("gateway: serve stopped", "err", err)
		}
	}()
	s.log.Info("gateway listening", "addr", ln.Addr().String(), "url", "http://"+ln.Addr().String()+"/")
	return nil
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

// Stop stops accepting connections and waits for in-flight requests until ctx
// ends, then closes what is left.
func (s *Server) Stop(ctx context.Context) error {
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	if done == nil {
		return nil
	}
	err := s.http.Shutdown(ctx)
	if err != nil {
		// Deadline passed: drop the stragglers rather than hang shutdown.
		_ = s.http.Close()
	}
	<-done
	return err
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

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
