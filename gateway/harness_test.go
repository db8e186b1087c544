package gateway

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/core/llm"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/core/tools"
	"github.com/switchboardhq/switchboard/core/tools/exectool"
	"github.com/switchboardhq/switchboard/core/transcript"
	"github.com/switchboardhq/switchboard/gateway/auth"
	"github.com/switchboardhq/switchboard/gateway/client"
	"github.com/switchboardhq/switchboard/gateway/protocol"
	"github.com/switchboardhq/switchboard/heartbeat"
	"github.com/switchboardhq/switchboard/queue"
	"github.com/switchboardhq/switchboard/store"
)

// rig is a gateway with the real store, dispatcher and agent runner behind
// it; the model is a scripted provider.
type rig struct {
	t         *testing.T
	dir       string
	token     string
	clock     *fakeClock
	st        *store.SQLite
	provider  *llmtest.ScriptedProvider
	runner    *agent.Runner
	disp      *queue.Dispatcher
	hb        *heartbeat.Runner
	cron      *heartbeat.Cron
	approvals *exectool.Approvals
	gw        *Server
	url       string
	logs      *logBuffer
	secrets   []string // must never appear in a log line
}

type rigOptions struct {
	cfg   func(*Config)
	queue func(*queue.Config)
	// fakeClock makes the gateway's clock a fakeClock the test advances.
	fakeClock bool
	// heartbeat, when set, attaches a heartbeat runner with this config.
	heartbeat *core.HeartbeatConfig
	// cron attaches the cron service.
	cron bool
	// approvals attaches an exec approval queue.
	approvals bool
}

func newRig(t *testing.T, o rigOptions) *rig {
	t.Helper()
	ctx := context.Background()
	r := &rig{t: t, dir: t.TempDir(), token: auth.NewToken(), logs: &logBuffer{}}
	r.secrets = append(r.secrets, r.token)
	log := slog.New(slog.NewJSONHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg := DefaultConfig()
	cfg.Port = 0
	cfg.Auth.Token = r.token
	if o.cfg != nil {
		o.cfg(&cfg)
	}
	var now func() time.Time
	if o.fakeClock {
		r.clock = &fakeClock{t: time.Now()}
		now = r.clock.Now
	}
	var err error
	r.st, err = store.Open(ctx, r.dir)
	if err != nil {
		t.Fatal(err)
	}
	r.provider = llmtest.NewScriptedProvider()
	router, err := llm.NewRouter(llm.ModelsConfig{}, llm.RouterOptions{Providers: map[string]llm.Provider{"scripted": r.provider}})
	if err != nil {
		t.Fatal(err)
	}
	r.runner, err = agent.New(agent.Config{Model: core.ModelSelection{Primary: "scripted/m"}, StateDir: r.dir}, agent.Deps{
		Models: router, Sessions: r.st, Tools: &tools.Executor{Registry: tools.NewRegistry()},
		Transcript: transcript.Options{NoSync: true}, Logger: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	r.gw = New(cfg, Deps{Logger: log, StateDir: r.dir, Version: "test", Now: now})
	qc := queue.DefaultConfig()
	if o.queue != nil {
		o.queue(&qc)
	}
	r.disp, err = queue.New(queue.Options{Config: qc, Logger: log}, queue.Deps{
		Runner: r.runner, Journal: r.st, Deliverer: r.gw, Observers: []queue.Observer{r.gw},
	})
	if err != nil {
		t.Fatal(err)
	}
	b := Backend{
		Store: r.st, Dispatcher: r.disp, Runner: r.runner, DefaultModel: "scripted/m",
		Models: []ModelInfo{{ID: "scripted/m", Name: "m", Provider: "scripted"}},
	}
	if o.heartbeat != nil {
		r.hb, err = heartbeat.New(heartbeat.Options{Config: *o.heartbeat, Logger: log},
			heartbeat.Deps{Dispatcher: r.disp, Deliverer: r.gw, Sessions: r.st, State: r.st, OnEvent: r.gw.PublishHeartbeat})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.disp.Observe(r.hb); err != nil {
			t.Fatal(err)
		}
		b.Heartbeat = r.hb
	}
	if o.cron {
		r.cron, err = heartbeat.NewCron(heartbeat.CronOptions{Config: heartbeat.DefaultCronConfig(), Logger: log},
			heartbeat.CronDeps{Store: r.st, Journal: r.st, Dispatcher: r.disp, Heartbeat: r.hb, Deliverer: r.gw, OnEvent: r.gw.PublishCron})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.disp.Observe(r.cron); err != nil {
			t.Fatal(err)
		}
		b.Cron = r.cron
	}
	if o.approvals {
		r.approvals = &exectool.Approvals{OnEvent: r.gw.PublishApproval}
		b.Approvals = r.approvals
	}
	r.gw.Attach(b)
	if err := r.disp.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if r.hb != nil {
		if err := r.hb.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if r.cron != nil {
		if err := r.cron.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.gw.Start(ctx); err != nil {
		t.Fatal(err)
	}
	r.url = "ws://" + r.gw.Addr().String() + "/"
	t.Cleanup(r.close)
	return r
}

func (r *rig) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.gw.Stop(ctx); err != nil {
		r.t.Errorf("gateway Stop: %v", err)
	}
	if r.cron != nil {
		r.cron.Stop(ctx)
	}
	if r.hb != nil {
		r.hb.Stop(ctx)
	}
	if err := r.disp.Stop(ctx); err != nil {
		r.t.Errorf("dispatcher Stop: %v", err)
	}
	r.runner.Close()
	r.st.Close()
	r.assertNoSecretsLogged()
}

// assertNoSecretsLogged fails the test if a token or password reached a
// log line.
func (r *rig) assertNoSecretsLogged() {
	logs := r.logs.String()
	for _, s := range r.secrets {
		if s != "" && strings.Contains(logs, s) {
			r.t.Errorf("a secret appears in the gateway's logs:\n%s", logs)
		}
	}
}

// opts returns client options for an operator over loopback with the
// gateway token.
func (r *rig) opts(scopes ...string) client.Options {
	return client.Options{URL: r.url, Token: r.token, Scopes: scopes, Now: r.now}
}

func (r *rig) now() time.Time {
	if r.clock != nil {
		return r.clock.Now()
	}
	return time.Now()
}

// dial connects and registers the client's close with the test.
func (r *rig) dial(o client.Options) *client.Client {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, o)
	if err != nil {
		r.t.Fatalf("Dial: %v", err)
	}
	r.t.Cleanup(func() { c.Close() })
	return c
}

// reject dials expecting the connect to fail and returns the error.
func (r *rig) reject(o client.Options) *client.ConnectError {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, o)
	if err == nil {
		c.Close()
		r.t.Fatalf("Dial succeeded, want a rejection")
	}
	var ce *client.ConnectError
	if !errors.As(err, &ce) {
		r.t.Fatalf("Dial: %v, want a *client.ConnectError", err)
	}
	return ce
}

// call makes a request that must succeed and decodes its payload.
func call[T any](t *testing.T, c *client.Client, method string, params any) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, err := c.Call(ctx, method, params)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s payload %s: %v", method, raw, err)
	}
	return v
}

// callErr makes a request that must fail and returns its error.
func callErr(t *testing.T, c *client.Client, method string, params any) *protocol.ErrorShape {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, err := c.Call(ctx, method, params)
	if err == nil {
		t.Fatalf("%s succeeded with %s, want an error", method, raw)
	}
	var es *protocol.ErrorShape
	if !errors.As(err, &es) {
		t.Fatalf("%s: %v, want an error response", method, err)
	}
	return es
}

// next waits for the next event matching name and, if given, match.
func next(t *testing.T, c *client.Client, name string, match func(client.Event) bool) client.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ev, err := c.Next(ctx, func(e client.Event) bool { return (name == "" || e.Name == name) && (match == nil || match(e)) })
	if err != nil {
		t.Fatalf("waiting for %s: %v", name, err)
	}
	return ev
}

// waitClosed waits for the server to close c and returns the close code
// and reason.
func waitClosed(t *testing.T, c *client.Client) (int, string) {
	t.Helper()
	select {
	case <-c.Closed():
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not close the connection")
	}
	return c.CloseErr()
}

// newDevice returns a fresh device key.
func newDevice(t *testing.T) ed25519.PrivateKey {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	return priv
}

// remote makes a client look like it connects through a proxy, from
// another machine.
func remote(o client.Options) client.Options {
	o.Header = map[string][]string{"X-Forwarded-For": {"203.0.113.7"}}
	return o
}

// logBuffer collects log output safely across goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func slogTo(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// decode unmarshals an event payload.
func decode[T any](t *testing.T, raw json.RawMessage) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return v
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
