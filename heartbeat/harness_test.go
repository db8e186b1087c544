package heartbeat_test

import (
	"context"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/discord"
	"github.com/switchboardhq/switchboard/bridges/slack"
	"github.com/switchboardhq/switchboard/bridges/telegram"
	"github.com/switchboardhq/switchboard/bridges/whatsapp"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/core/llm"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/core/tools"
	"github.com/switchboardhq/switchboard/core/transcript"
	"github.com/switchboardhq/switchboard/egress"
	"github.com/switchboardhq/switchboard/heartbeat"
	"github.com/switchboardhq/switchboard/queue"
	"github.com/switchboardhq/switchboard/queue/queuetest"
	"github.com/switchboardhq/switchboard/store"
)

// epoch is the fake clock's start: a Saturday, 12:00 UTC.
var epoch = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// waitFor bounds every wait on a condition.
const waitFor = 10 * time.Second

// recorder is a Deliverer that records what it was asked to send.
type recorder struct {
	mu      sync.Mutex
	got     []queue.Delivery
	changed chan struct{}
}

// targets are the bridges' own rules for chats, as the daemon passes them:
// a Telegram topic in a target, which chats are direct.
var targets = bridges.Registry{telegram.Descriptor(), slack.Descriptor(), discord.Descriptor(), whatsapp.Descriptor(nil)}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{}, 4096)} }

func (r *recorder) Deliver(_ context.Context, d queue.Delivery) error {
	r.mu.Lock()
	r.got = append(r.got, d)
	r.mu.Unlock()
	r.changed <- struct{}{}
	return nil
}

func (r *recorder) deliveries() []queue.Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]queue.Delivery(nil), r.got...)
}

// rig is a heartbeat runner over real parts: the dispatcher, the agent
// runner with a scripted model, the SQLite store, a manual clock.
type rig struct {
	t        *testing.T
	dir      string
	clock    *queuetest.Clock
	store    *store.SQLite
	provider *llmtest.ScriptedProvider
	agent    *agent.Runner
	disp     *queue.Dispatcher
	rec      *recorder
	hb       *heartbeat.Runner
	cron     *heartbeat.Cron
	events   chan heartbeat.Event
	closed   bool
}

type rigOptions struct {
	cfg       core.HeartbeatConfig
	workspace fstest.MapFS
	dir       string
	noStart   bool
	observers []queue.Observer
	// model replaces the scripted provider (the echo provider, say).
	model llm.Provider
	// cron, when set, adds the cron service with this configuration.
	cron *heartbeat.CronConfig
	// start is the clock's start; zero means epoch.
	start time.Time
	// cronEvents receives the cron events.
	cronEvents chan heartbeat.CronEvent
	// script is pushed to the scripted model before anything starts.
	script []llmtest.Response
	// cronTargets replaces the cron service's targets (every bridge).
	cronTargets core.Targets
	// cronDeliverer replaces the cron service's deliverer (the recorder).
	cronDeliverer queue.Deliverer
}

func newRig(t *testing.T, o rigOptions) *rig {
	t.Helper()
	start := o.start
	if start.IsZero() {
		start = epoch
	}
	r := &rig{t: t, dir: o.dir, clock: queuetest.NewClock(start), provider: llmtest.NewScriptedProvider(), rec: newRecorder(), events: make(chan heartbeat.Event, 1024)}
	if r.dir == "" {
		r.dir = t.TempDir()
	}
	r.provider.Push(o.script...)
	st, err := store.Open(context.Background(), r.dir)
	if err != nil {
		t.Fatal(err)
	}
	r.store = st
	var model llm.Provider = r.provider
	if o.model != nil {
		model = o.model
	}
	router, err := llm.NewRouter(llm.ModelsConfig{}, llm.RouterOptions{Providers: map[string]llm.Provider{"scripted": model}})
	if err != nil {
		t.Fatal(err)
	}
	registry := tools.NewRegistry()
	cronTool := &heartbeat.CronTool{}
	registry.MustRegister(cronTool)
	r.agent, err = agent.New(agent.Config{Model: core.ModelSelection{Primary: "scripted/m"}, StateDir: r.dir,
		Heartbeat: agent.HeartbeatConfig{Enabled: true, AckMaxChars: o.cfg.AckMaxChars}},
		agent.Deps{Models: router, Sessions: st, Now: r.clock.Now, Transcript: transcript.Options{NoSync: true},
			Tools: &tools.Executor{Registry: registry}})
	if err != nil {
		t.Fatal(err)
	}
	var ws = o.workspace
	opts := heartbeat.Options{Config: o.cfg, Seed: "test-seed", Clock: r.clock}
	if ws != nil {
		opts.Workspace = ws
	}
	owners, err := tools.NewOwners([]string{"telegram:" + ownerID})
	if err != nil {
		t.Fatal(err)
	}
	r.disp, err = queue.New(queue.Options{Config: queue.DefaultConfig(), Clock: r.clock},
		queue.Deps{Runner: r.agent, Journal: st, Deliverer: r.rec, Observers: o.observers, IsOwner: owners.IsOwner})
	if err != nil {
		t.Fatal(err)
	}
	r.hb, err = heartbeat.New(opts, heartbeat.Deps{
		Dispatcher: r.disp, Deliverer: r.rec, Sessions: st, State: st, Targets: targets,
		OnEvent: func(ev heartbeat.Event) {
			select {
			case r.events <- ev:
			default: // a test that does not read events must not stall the runner
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.disp.Observe(r.hb); err != nil {
		t.Fatal(err)
	}
	if o.cron != nil {
		var cronTargets core.Targets = targets
		if o.cronTargets != nil {
			cronTargets = o.cronTargets
		}
		var cronDeliverer queue.Deliverer = r.rec
		if o.cronDeliverer != nil {
			cronDeliverer = o.cronDeliverer
		}
		r.cron, err = heartbeat.NewCron(heartbeat.CronOptions{Config: *o.cron, Clock: r.clock}, heartbeat.CronDeps{
			Store: st, Journal: st, Dispatcher: r.disp, Heartbeat: r.hb, Deliverer: cronDeliverer, Sessions: st, Targets: cronTargets,
			Webhook: heartbeat.NewWebhookClient(egress.Options{AllowPrivate: true, Resolver: testResolver{}}),
			OnEvent: func(ev heartbeat.CronEvent) {
				if o.cronEvents != nil {
					o.cronEvents <- ev
				}
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.disp.Observe(r.cron); err != nil {
			t.Fatal(err)
		}
		cronTool.Cron = r.cron
		if err := r.cron.Load(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.disp.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.close)
	if !o.noStart {
		if err := r.hb.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		if r.cron != nil {
			if err := r.cron.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	return r
}

func (r *rig) close() {
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	r.stop(ctx)
}

// stop stops everything, giving running turns until ctx ends.
func (r *rig) stop(ctx context.Context) {
	if r.closed {
		return
	}
	r.closed = true
	if r.cron != nil {
		r.cron.Stop(ctx)
	}
	r.hb.Stop(ctx)
	r.disp.Stop(ctx)
	r.agent.Close()
	r.store.Close()
}

// run runs one heartbeat by hand.
func (r *rig) run() heartbeat.Event {
	r.t.Helper()
	// The dispatcher reports a run's end to observers before it marks the
	// session idle; a heartbeat right after the last would find it busy.
	waitIdle(r.t, r)
	ev := r.runNow()
	// And after: the next submission must find the session idle too.
	waitIdle(r.t, r)
	return ev
}

// runNow runs one heartbeat by hand without waiting for the dispatcher to
// go idle first.
func (r *rig) runNow() heartbeat.Event {
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	return r.hb.RunOnce(ctx, "manual")
}

// nextEvent waits for the next heartbeat event.
func (r *rig) nextEvent() heartbeat.Event {
	r.t.Helper()
	select {
	case ev := <-r.events:
		return ev
	case <-time.After(waitFor):
		r.t.Fatal("no heartbeat event")
	}
	return heartbeat.Event{}
}

// modelCalls counts the model requests.
func (r *rig) modelCalls() int { return len(r.provider.Requests()) }

func boolp(b bool) *bool { return &b }

var queueTrusted = queue.EventOptions{Trusted: true}

// lastUserText is the text of the last user message of a model request.
func lastUserText(req llm.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if u, ok := req.Messages[i].(*core.UserMessage); ok {
			return u.Text()
		}
	}
	return ""
}

// waitDeliveries waits for n deliveries.
func waitDeliveries(t *testing.T, r *rig, n int) []queue.Delivery {
	t.Helper()
	deadline := time.After(waitFor)
	for {
		if got := r.rec.deliveries(); len(got) >= n {
			return got
		}
		select {
		case <-r.rec.changed:
		case <-deadline:
			t.Fatalf("waited for %d deliveries, have %+v", n, r.rec.deliveries())
		}
	}
}

// waitIdle waits until the dispatcher has no active run.
func waitIdle(t *testing.T, r *rig) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for r.disp.Stats().Active > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the dispatcher stayed busy")
		}
		runtime.Gosched()
	}
}

// crash stops the rig as abruptly as the dispatcher allows: turns under
// way are cancelled and stay pending in the journal, as after a kill.
func (r *rig) crash() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r.stop(ctx)
}

// testResolver resolves every "*.test" host to 127.0.0.1, where httptest
// servers listen.
type testResolver struct{}

func (testResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	if strings.HasSuffix(host, ".test") {
		return []net.IPAddr{{IP: net.IPv4(127, 0, 0, 1)}}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// toolResultText joins the text of the tool results in msgs.
func toolResultText(msgs []core.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		if tr, ok := m.(*core.ToolResultMessage); ok {
			b.WriteString(tr.Content.Text())
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// toolCall is a tools.Call with args.
func toolCall(args map[string]any) tools.Call { return tools.Call{Name: "cron", Args: args} }

// ownerID is the Telegram sender the rig's dispatcher counts as the owner
// (commands.ownerAllowFrom), who may use the cron tool.
const ownerID = "42"
