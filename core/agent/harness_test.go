package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
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

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// clock is a deterministic clock that advances one second per reading.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.UnixMilli(1740000000000)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

// recorder collects a run's events.
type recorder struct {
	mu     sync.Mutex
	events []core.AgentEvent
}

func (r *recorder) sink(ev core.AgentEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
}

// types lists the event types, with message_update runs collapsed to one
// entry so sequences read like the seed's lifecycle.
func (r *recorder) types() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, ev := range r.events {
		t := string(ev.Type)
		if t == string(core.AgentEventMessageUpdate) && len(out) > 0 && out[len(out)-1] == t {
			continue
		}
		out = append(out, t)
	}
	return out
}

// harness is a runner wired to real parts: the fake vendor server through
// the real router and model client, a real tools executor, a real SQLite store, and
// transcripts in a temp state dir.
type harness struct {
	t        *testing.T
	dir      string
	store    *store.SQLite
	server   *llmtest.Server
	registry *tools.Registry
	runner   *agent.Runner
	clock    *clock
}

type harnessOptions struct {
	cfg    agent.Config
	openai bool
	// contextWindow, when set, is the test model's window in tokens.
	contextWindow int
	script        []llmtest.Response
	tools         []tools.Tool
	executor      func(*tools.Executor)
}

func newHarness(t *testing.T, o harnessOptions) *harness {
	t.Helper()
	h := &harness{t: t, dir: t.TempDir(), clock: newClock()}
	st, err := store.Open(context.Background(), h.dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h.store = st

	provider := "anthropic"
	if o.openai {
		provider = "openai"
		h.server = llmtest.NewOpenAIServer(t, o.script...)
	} else {
		h.server = llmtest.NewAnthropicServer(t, o.script...)
	}
	pc := h.server.Config("sk-test-secret")
	if o.contextWindow > 0 {
		pc.Models = []llm.ModelConfig{{ID: "test-model", ContextWindow: o.contextWindow}}
	}
	router, err := llm.NewRouter(llm.ModelsConfig{Providers: map[string]llm.ProviderConfig{
		provider: pc,
	}}, llm.RouterOptions{
		HTTPClient: h.server.Client(),
		Clock:      h.clock.Now,
		Sleep:      func(ctx context.Context, d time.Duration) error { return ctx.Err() },
	})
	if err != nil {
		t.Fatal(err)
	}
	h.registry = tools.NewRegistry()
	for _, tool := range o.tools {
		if err := h.registry.Register(tool); err != nil {
			t.Fatal(err)
		}
	}
	exec := &tools.Executor{Registry: h.registry, Now: h.clock.Now}
	if o.executor != nil {
		o.executor(exec)
	}
	cfg := o.cfg
	if cfg.Model.Primary == "" {
		cfg.Model.Primary = provider + "/test-model"
	}
	cfg.StateDir = h.dir
	r, err := agent.New(cfg, agent.Deps{
		Models:     router,
		Tools:      exec,
		Sessions:   st,
		Now:        h.clock.Now,
		Transcript: transcript.Options{NoSync: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	h.runner = r
	return h
}

const dmKey core.SessionKey = "agent:main:telegram:direct:42"

func dm(body string) core.Inbound {
	return core.Inbound{
		SessionKey: dmKey,
		Route:      core.Route{Channel: "telegram", To: "42"},
		ChatType:   core.ChatDirect,
		Body:       body,
		MessageID:  "m1",
		Sender:     core.Sender{ID: "42", Name: "Ada"},
	}
}

func (h *harness) run(in core.Inbound, rec *recorder) *agent.Result {
	h.t.Helper()
	return h.runTurn(agent.Turn{Inbound: in}, rec)
}

// runTurn runs turn (with rec's sink, if any) and fails the test on error.
func (h *harness) runTurn(turn agent.Turn, rec *recorder) *agent.Result {
	h.t.Helper()
	if rec != nil {
		turn.Sink = rec.sink
	}
	res, err := h.runner.Run(context.Background(), turn)
	if err != nil {
		h.t.Fatalf("Run: %v", err)
	}
	return res
}

// transcriptLines reads the session's transcript file as raw JSON lines.
func (h *harness) transcriptLines(sessionID string) []map[string]any {
	h.t.Helper()
	path, err := transcript.Path(h.dir, "main", sessionID)
	if err != nil {
		h.t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		h.t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			h.t.Fatalf("transcript line is not JSON: %v: %s", err, line)
		}
		out = append(out, m)
	}
	return out
}

func (h *harness) entry(key core.SessionKey) core.SessionEntry {
	h.t.Helper()
	e, ok, err := h.store.GetSession(context.Background(), key)
	if err != nil || !ok {
		h.t.Fatalf("session %s: ok=%v err=%v", key, ok, err)
	}
	return e
}
