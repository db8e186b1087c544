package queue

import (
	"context"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/core/llm"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/core/tools"
	"github.com/switchboardhq/switchboard/core/transcript"
	"github.com/switchboardhq/switchboard/store"
)

func TestMain(m *testing.M) {
	if os.Getenv(crashChildEnv) != "" {
		os.Exit(crashChild())
	}
	goleak.VerifyTestMain(m)
}

// fakeClock is a Clock whose time moves only when the test advances it.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	c       *fakeClock
	at      time.Time
	f       func()
	stopped bool
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.UnixMilli(1740000000000)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return t
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.stopped
	t.stopped = true
	for i, x := range t.c.timers {
		if x == t {
			t.c.timers = append(t.c.timers[:i], t.c.timers[i+1:]...)
			return was
		}
	}
	return false
}

// Advance moves time forward by d, firing due timers in time order on the
// calling goroutine (a fired timer may arm new ones).
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		sort.SliceStable(c.timers, func(i, j int) bool { return c.timers[i].at.Before(c.timers[j].at) })
		if len(c.timers) == 0 || c.timers[0].at.After(end) {
			c.now = end
			c.mu.Unlock()
			return
		}
		t := c.timers[0]
		c.timers = c.timers[1:]
		t.stopped = true
		if t.at.After(c.now) {
			c.now = t.at
		}
		c.mu.Unlock()
		t.f()
	}
}

// recorder is a Deliverer that records what it was asked to send.
type recorder struct {
	mu      sync.Mutex
	got     []Delivery
	queued  []core.Inbound
	changed chan struct{}
	// hold, when set, makes Deliver wait for it to be closed (a platform
	// pacing its sends).
	hold chan struct{}
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{}, 1024)} }

func (r *recorder) Deliver(ctx context.Context, d Delivery) error {
	r.mu.Lock()
	hold := r.hold
	r.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	r.mu.Lock()
	r.got = append(r.got, d)
	r.mu.Unlock()
	r.changed <- struct{}{}
	return nil
}

func (r *recorder) Queued(_ context.Context, in core.Inbound, _ bool) {
	r.mu.Lock()
	r.queued = append(r.queued, in)
	r.mu.Unlock()
}

func (r *recorder) deliveries() []Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Delivery(nil), r.got...)
}

// waitFor waits until the recorder holds n deliveries, failing after 10s.
func (r *recorder) waitFor(t *testing.T, n int) []Delivery {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		if got := r.deliveries(); len(got) >= n {
			return got
		}
		select {
		case <-r.changed:
		case <-deadline:
			t.Fatalf("waited 10s for %d deliveries, have %+v", n, r.deliveries())
		}
	}
}

// harness is a dispatcher over real parts: the agent runner with a scripted
// model, the SQLite journal, a fake clock, and a recording deliverer.
type harness struct {
	t        *testing.T
	dir      string
	store    *store.SQLite
	provider *llmtest.ScriptedProvider
	runner   *agent.Runner
	rec      *recorder
	clock    *fakeClock
	d        *Dispatcher
	registry *tools.Registry
}

type harnessOptions struct {
	config        Config
	contextWindow int
	lanes         map[string]int
	tools         []tools.Tool
	agentCfg      agent.Config
	dir           string
	noStart       bool
	observers     []Observer
	isOwner       func(core.Inbound) bool
	leases        func(st *store.SQLite) SessionLeases
}

func newHarness(t *testing.T, o harnessOptions) *harness {
	t.Helper()
	h := &harness{t: t, dir: o.dir, clock: newFakeClock(), rec: newRecorder(), provider: llmtest.NewScriptedProvider()}
	if h.dir == "" {
		h.dir = t.TempDir()
	}
	st, err := store.Open(context.Background(), h.dir)
	if err != nil {
		t.Fatal(err)
	}
	h.store = st
	models := llm.ModelsConfig{}
	if o.contextWindow > 0 {
		models.Providers = map[string]llm.ProviderConfig{"scripted": {API: llm.APIEcho, Models: []llm.ModelConfig{{ID: "m", ContextWindow: o.contextWindow}}}}
	}
	router, err := llm.NewRouter(models, llm.RouterOptions{Providers: map[string]llm.Provider{"scripted": h.provider}})
	if err != nil {
		t.Fatal(err)
	}
	h.registry = tools.NewRegistry()
	for _, tool := range o.tools {
		h.registry.MustRegister(tool)
	}
	cfg := o.agentCfg
	cfg.Model.Primary = "scripted/m"
	cfg.StateDir = h.dir
	h.runner, err = agent.New(cfg, agent.Deps{
		Models: router, Sessions: st,
		Tools:      &tools.Executor{Registry: h.registry},
		Transcript: transcript.Options{NoSync: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	qc := o.config
	if qc.Mode == "" {
		qc = mergeConfig(DefaultConfig(), qc)
	}
	var leases SessionLeases
	if o.leases != nil {
		leases = o.leases(st)
	}
	h.d, err = New(Options{Config: qc, Clock: h.clock, Lanes: o.lanes}, Deps{Runner: h.runner, Journal: st, Deliverer: h.rec, Observers: o.observers, IsOwner: o.isOwner, Leases: leases})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.close)
	if !o.noStart {
		if err := h.d.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// mergeConfig fills the zero fields of c from def.
func mergeConfig(def, c Config) Config {
	if c.Mode != "" {
		def.Mode = c.Mode
	}
	if c.ByChannel != nil {
		def.ByChannel = c.ByChannel
	}
	return def
}

func (h *harness) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h.d.Stop(ctx)
	h.runner.Close()
	h.store.Close()
}

func dmIn(key core.SessionKey, id, body string) core.Inbound {
	return core.Inbound{
		SessionKey: key,
		Route:      core.Route{Channel: "telegram", To: "42"},
		ChatType:   core.ChatDirect,
		Body:       body,
		MessageID:  core.MessageID(id),
		Sender:     core.Sender{ID: "42", Name: "Ada"},
	}
}

func (h *harness) submit(in core.Inbound) Receipt {
	h.t.Helper()
	r, err := h.d.Submit(context.Background(), in)
	if err != nil {
		h.t.Fatalf("Submit: %v", err)
	}
	return r
}

// watcher is an Observer that lets a test wait for run milestones.
type watcher struct {
	mu      sync.Mutex
	started []RunInfo
	ended   []RunInfo
	turns   chan RunInfo // a turn_start (the run is streaming)
}

func newWatcher() *watcher { return &watcher{turns: make(chan RunInfo, 64)} }

func (w *watcher) RunStarted(info RunInfo) {
	w.mu.Lock()
	w.started = append(w.started, info)
	w.mu.Unlock()
}

func (w *watcher) RunEvent(info RunInfo, ev core.AgentEvent) {
	if ev.Type == core.AgentEventTurnStart {
		w.turns <- info
	}
}

func (w *watcher) RunEnded(info RunInfo, _ *agent.Result, _ error) {
	w.mu.Lock()
	w.ended = append(w.ended, info)
	w.mu.Unlock()
}

func (w *watcher) waitTurn(t *testing.T) RunInfo {
	t.Helper()
	select {
	case info := <-w.turns:
		return info
	case <-time.After(10 * time.Second):
		t.Fatal("no turn started within 10s")
	}
	return RunInfo{}
}

// userTexts returns the text of every user message of a model request.
func userTexts(req llm.Request) []string {
	var out []string
	for _, m := range req.Messages {
		if u, ok := m.(*core.UserMessage); ok {
			out = append(out, u.Text())
		}
	}
	return out
}

// lastUser is the text of the request's last user message.
func lastUser(req llm.Request) string {
	us := userTexts(req)
	if len(us) == 0 {
		return ""
	}
	return us[len(us)-1]
}

// eventually polls cond until it holds, failing the test after 10s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("timed out after 10s waiting for %s", what)
		}
	}
}

// waitRunsIdle waits until no run is active (queued messages may wait for
// their debounce).
func (h *harness) waitRunsIdle() {
	h.t.Helper()
	eventually(h.t, "no active run", func() bool { return h.d.Stats().Active == 0 })
}

// entries reads journal entries by id.
func (h *harness) entries(ids ...int64) []store.JournalEntry {
	h.t.Helper()
	es, err := h.store.JournalEntries(context.Background(), ids...)
	if err != nil {
		h.t.Fatal(err)
	}
	return es
}
