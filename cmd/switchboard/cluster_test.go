package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/bridges/telegram/telegramtest"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/gateway/client"
	"github.com/switchboardhq/switchboard/gateway/protocol"
	"github.com/switchboardhq/switchboard/internal/pgtest"
	"github.com/switchboardhq/switchboard/queue/queuetest"
	"github.com/switchboardhq/switchboard/store/postgres"
)

// modelMeter sits between the daemons and the fake model: it counts the
// requests and the most that were in flight at once.
type modelMeter struct {
	URL string

	mu       sync.Mutex
	inFlight int
	maxIn    int
	bodies   []string
}

func newModelMeter(t *testing.T, model *llmtest.Server) *modelMeter {
	t.Helper()
	target, err := url.Parse(model.BaseURL)
	if err != nil {
		t.Fatal(err)
	}
	m := &modelMeter{}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<22))
		r.Body = io.NopCloser(bytes.NewReader(raw))
		m.mu.Lock()
		m.inFlight++
		m.maxIn = max(m.maxIn, m.inFlight)
		m.bodies = append(m.bodies, string(raw))
		m.mu.Unlock()
		defer func() {
			m.mu.Lock()
			m.inFlight--
			m.mu.Unlock()
		}()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	m.URL = srv.URL
	return m
}

func (m *modelMeter) counts() (requests, inFlight, maxInFlight int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.bodies), m.inFlight, m.maxIn
}

// clusterDaemon starts one instance on the shared database url, with the
// fake model behind meter, Telegram long polling against tg, heartbeats
// every minute and a manual clock.
func clusterDaemon(t *testing.T, name, dbURL string, meter *modelMeter, tg *telegramtest.Server, clock *queuetest.Clock) *runningDaemon {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	writeFile(t, cfg, fmt.Sprintf(`stateDir: %s
store:
  driver: postgres
  url: %s
  instance: %s
  leaseTtl: 2s
gateway:
  port: %d
models:
  providers:
    fake:
      api: anthropic-messages
      baseUrl: %s
      apiKey: test-key
      models:
        - id: scripted
          contextWindow: 200000
          maxTokens: 1024
agents:
  defaults:
    model: {primary: fake/scripted}
    heartbeat: {every: 1m}
messages:
  queue:
    mode: followup
    debounceMs: 0
channels:
  telegram:
    enabled: true
    botToken: ${TG_TOKEN}
    apiUrl: %s
    dmPolicy: open
    allowFrom: ["*"]
    pollTimeoutSeconds: 1
`, filepath.Join(dir, "state"), dbURL, name, freePort(t), meter.URL, tg.URL))
	return launchDaemon(t, cfg, map[string]string{"TG_TOKEN": tg.Token}, []func(*testCLI){func(tc *testCLI) { tc.clock = clock }})
}

// readyComponents reads the daemon's /readyz components.
func readyComponents(t *testing.T, d *runningDaemon) map[string]string {
	t.Helper()
	resp, err := http.Get(d.base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Components map[string]string `json:"components"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	return body.Components
}

// findPoller waits until one of a and b has Telegram connected and the
// other in standby, and returns them in that order.
func findPoller(t *testing.T, a, b *runningDaemon) (poller, standby *runningDaemon) {
	t.Helper()
	if !eventually(20*time.Second, func() bool {
		ca, cb := readyComponents(t, a)["channel:telegram"], readyComponents(t, b)["channel:telegram"]
		switch {
		case ca == "connected" && cb == "standby":
			poller, standby = a, b
		case cb == "connected" && ca == "standby":
			poller, standby = b, a
		}
		return poller != nil
	}) {
		t.Fatalf("want one poller and one standby: a %v, b %v", readyComponents(t, a), readyComponents(t, b))
	}
	return poller, standby
}

// Issue 23: two instances on one PostgreSQL race for the same Telegram
// poller, the same session, the same heartbeat and the same cron instant,
// and each time exactly one wins; when the poller's instance drains, the
// other takes the connection over within seconds. (A writer fenced out of
// a session is refused by the store: store/storetest's Leases suite, and
// queue's TestAFencedOutRunDeliversNothing.)
func TestClusterTwoInstancesShareTheWork(t *testing.T) {
	dbURL := pgtest.Database(t)
	gate := make(chan struct{})
	model := llmtest.NewAnthropicServer(t, llmtest.Text("first answer").Gated(gate), llmtest.Text("second answer"))
	meter := newModelMeter(t, model)
	tg := telegramtest.New(t)
	clockA, clockB := queuetest.NewClock(time.Now()), queuetest.NewClock(time.Now())
	a := clusterDaemon(t, "node-a", dbURL, meter, tg, clockA)
	b := clusterDaemon(t, "node-b", dbURL, meter, tg, clockB)
	st, err := postgres.Open(t.Context(), dbURL, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	// The poller: one instance connected, the other in standby, one
	// long poll at a time and never a conflict.
	poller, standby := findPoller(t, a, b)
	if !eventually(20*time.Second, func() bool { return tg.LongPolls() == 1 }) {
		t.Fatalf("long polls: %d, want 1", tg.LongPolls())
	}
	leases, err := st.ListLeases(ctx, "conn:")
	if err != nil || len(leases) != 1 || leases[0].Fence != 1 {
		t.Fatalf("connection leases: %+v, %v; want one, taken once", leases, err)
	}

	// switchboard cluster status shows both instances up and who polls.
	tc := a.cli()
	if code := tc.run("cluster", "status", "--config", a.cfg, "--json"); code != exitOK {
		t.Fatalf("cluster status: exit %d: %s", code, tc.err.String())
	}
	var rep clusterStatus
	if err := json.Unmarshal([]byte(tc.out.String()), &rep); err != nil {
		t.Fatalf("cluster status --json: %v\n%s", err, tc.out.String())
	}
	up := map[string]string{}
	for _, in := range rep.Instances {
		if in.State == "up" {
			up[in.ID] = in.Name
		}
	}
	if len(up) != 2 || len(rep.Connections) != 1 || rep.Connections[0].Name != "telegram/default" || up[rep.Connections[0].Owner] == "" ||
		up[rep.Connections[0].Owner] != map[*runningDaemon]string{a: "node-a", b: "node-b"}[poller] {
		t.Fatalf("cluster status = %+v; want node-a and node-b up, telegram held by the poller", rep)
	}
	// Each instance's /metrics says which leases it holds.
	for _, d := range []*runningDaemon{poller, standby} {
		resp, err := http.Get(d.base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := `switchboard_state{name="cluster_connection_leases"} 0`
		if d == poller {
			want = `switchboard_state{name="cluster_lease:conn:telegram/default"} 1`
		}
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics of the %s lacks %s", map[bool]string{true: "poller", false: "standby"}[d == poller], want)
		}
	}
	tc = a.cli()
	if code := tc.run("cluster", "status", "--config", a.cfg); code != exitOK || !strings.Contains(tc.out.String(), "telegram/default") ||
		!strings.Contains(tc.out.String(), "node-b") {
		t.Fatalf("cluster status: exit %d\n%s%s", code, tc.out.String(), tc.err.String())
	}

	// channels.status answers for the cluster: the standby instance shows
	// Telegram as the poller's instance reports it.
	sc := standby.dial(t, ctx, protocol.ScopeRead)
	if !eventually(20*time.Second, func() bool {
		raw, err := sc.Call(ctx, "channels.status", map[string]any{})
		return err == nil && strings.Contains(string(raw), `"state":"connected"`) && !strings.Contains(string(raw), `"state":"standby"`)
	}) {
		raw, err := sc.Call(ctx, "channels.status", map[string]any{})
		t.Fatalf("channels.status on the standby instance: %s, %v; want telegram connected (on the poller)", raw, err)
	}
	sc.Close()

	// The session: a message on each instance for the same session while
	// the first turn runs. Only the lease holder calls the model; the
	// other instance's message is handed over and answered after.
	ca := a.dial(t, ctx, protocol.ScopeRead, protocol.ScopeWrite, protocol.ScopeAdmin)
	defer ca.Close()
	cb := b.dial(t, ctx, protocol.ScopeRead, protocol.ScopeWrite)
	defer cb.Close()
	if _, err := ca.Call(ctx, "chat.send", map[string]any{"sessionKey": "main", "message": "one", "idempotencyKey": "race-1"}); err != nil {
		t.Fatal(err)
	}
	if !eventually(20*time.Second, func() bool { n, _, _ := meter.counts(); return n == 1 }) {
		t.Fatal("the first turn never reached the model")
	}
	if _, err := cb.Call(ctx, "chat.send", map[string]any{"sessionKey": "main", "message": "two", "idempotencyKey": "race-2"}); err != nil {
		t.Fatal(err)
	}
	if !eventually(20*time.Second, func() bool {
		return strings.Contains(a.tc.err.String(), "adopted messages accepted by another instance")
	}) {
		t.Fatalf("instance a never adopted b's message\n%s", b.tc.err.String())
	}
	if n, _, _ := meter.counts(); n != 1 {
		t.Fatalf("%d model requests while the first turn held the session; want 1", n)
	}
	close(gate)
	if !eventually(30*time.Second, func() bool {
		pending, err := st.PendingJournal(ctx)
		return err == nil && len(pending) == 0
	}) {
		t.Fatal("messages still pending after both turns")
	}
	if n, _, maxIn := meter.counts(); n != 2 || maxIn != 1 {
		t.Fatalf("model requests %d, at most %d at once; want 2, one at a time", n, maxIn)
	}
	// b's client sees the answer to its message, run on a, streamed and
	// final, through the relay.
	for _, state := range []string{"delta", "final"} {
		ev, err := cb.Next(ctx, func(e client.Event) bool {
			return e.Name == "chat" && strings.Contains(string(e.Payload), `"state":"`+state+`"`) && strings.Contains(string(e.Payload), "race-2")
		})
		if err != nil {
			t.Fatalf("b's client got no %s chat event for its message run on a: %v", state, err)
		}
		if !strings.Contains(string(ev.Payload), "second answer") {
			t.Errorf("relayed %s = %s", state, ev.Payload)
		}
	}
	// chat.send is idempotent across instances: a's message retried on b
	// is recognised, not run again.
	raw, err := cb.Call(ctx, "chat.send", map[string]any{"sessionKey": "main", "message": "one", "idempotencyKey": "race-1"})
	if err != nil {
		t.Fatalf("retry of race-1 on b: %v", err)
	}
	if !strings.Contains(string(raw), `"status":"ok"`) {
		t.Errorf("retry of a finished message on b = %s; want its outcome, ok", raw)
	}
	if n, _, _ := meter.counts(); n != 2 {
		t.Fatalf("a retry on another instance ran the model again (%d requests): %s", n, raw)
	}
	if pending, _ := st.PendingJournal(ctx); len(pending) != 0 {
		t.Fatalf("a retry on another instance was journaled again: %+v", pending)
	}
	outcomes, err := st.UndeliveredOutcomes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outcomes {
		if strings.Contains(string(o.Delivery), "answer") {
			t.Errorf("an answer stayed undelivered: %s", o.Delivery)
		}
	}

	// The heartbeat and a cron instant: both instances are due at once;
	// one runs each.
	model.Push(llmtest.Text("HEARTBEAT_OK"), llmtest.Text("cron ran"))
	before, _, _ := meter.counts()
	if _, err := ca.Call(ctx, "cron.add", map[string]any{
		"id": "race", "name": "race", "schedule": map[string]any{"kind": "every", "everyMs": 60 * 1000},
		"sessionTarget": "isolated", "payload": map[string]any{"kind": "agentTurn", "message": "cron turn"},
		"delivery": map[string]any{"mode": "none"},
	}); err != nil {
		t.Fatal(err)
	}
	// b learns the job a added from the store (Cron.Refresh, every lease
	// length), so both are due at the same instant and race for it.
	if !eventually(20*time.Second, func() bool {
		raw, err := cb.Call(ctx, "cron.list", map[string]any{})
		return err == nil && strings.Contains(string(raw), `"race"`)
	}) {
		t.Fatal("instance b never learned the job a added")
	}
	for _, c := range []*queuetest.Clock{clockA, clockB} {
		// One minute: one heartbeat instant and one cron instant each
		// (the manual clock fires every instant it passes).
		c.Advance(time.Minute)
	}
	if !eventually(30*time.Second, func() bool { n, _, _ := meter.counts(); return n >= before+2 }) {
		n, _, _ := meter.counts()
		t.Fatalf("%d model requests after the instant; want the heartbeat and the cron turn", n-before)
	}
	jobs, err := st.CronJobs(ctx)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("cron jobs: %+v, %v", jobs, err)
	}
	if !eventually(20*time.Second, func() bool {
		runs, err := st.CronRuns(ctx, jobs[0].ID, 10)
		return err == nil && len(runs) == 1 && runs[0].FinishedAt != 0
	}) {
		runs, _ := st.CronRuns(ctx, jobs[0].ID, 10)
		t.Fatalf("cron runs of the instant: %+v; want exactly one, finished", runs)
	}
	hbLease, _ := st.ListLeases(ctx, "heartbeat:")
	if len(hbLease) != 1 || hbLease[0].Fence != 1 {
		t.Errorf("heartbeat leases %+v: want one claim", hbLease)
	}
	if n, _, _ := meter.counts(); n != before+2 {
		t.Errorf("%d model requests for one heartbeat and one cron instant on two instances; want 2", n-before)
		meter.mu.Lock()
		for i, b := range meter.bodies[before:min(len(meter.bodies), before+6)] {
			var req struct {
				Messages []json.RawMessage `json:"messages"`
			}
			_ = json.Unmarshal([]byte(b), &req)
			last := ""
			if len(req.Messages) > 0 {
				last = string(req.Messages[len(req.Messages)-1])
			}
			t.Logf("request %d: %d messages, last %.200s", before+i, len(req.Messages), last)
		}
		meter.mu.Unlock()
	}

	// The poller's instance drains; the other takes Telegram over within
	// seconds (the lease is released, not left to expire), and answers.
	poller, standby = findPoller(t, a, b)
	model.Push(llmtest.Text("from the new poller"))
	connBefore, err := st.ListLeases(ctx, "conn:")
	if err != nil || len(connBefore) != 1 {
		t.Fatalf("connection leases before the drain: %+v, %v", connBefore, err)
	}
	drained := time.Now()
	poller.stop(t)
	if !eventually(10*time.Second, func() bool { return readyComponents(t, standby)["channel:telegram"] == "connected" }) {
		t.Fatalf("the standby instance did not take Telegram over: %v", readyComponents(t, standby))
	}
	t.Logf("Telegram moved %s after the drain", time.Since(drained).Round(time.Millisecond))
	tg.PushUpdate(tg.TextMessage(42, telegramtest.ChatPrivate, telegramtest.User{ID: 42, FirstName: "Ada"}, "still there?"))
	sent, err := tg.WaitSent(ctx, 1)
	if err != nil || !strings.Contains(sent[0].PlainText, "from the new poller") {
		t.Fatalf("answer after the move: %+v, %v", sent, err)
	}
	if leases, _ := st.ListLeases(ctx, "conn:"); len(leases) != 1 || leases[0].Fence != connBefore[0].Fence+1 {
		t.Errorf("connection lease after the move: %+v; want it taken once more than %+v", leases, connBefore[0])
	}
}
