package gateway

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/core/llm"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/core/tools"
	"github.com/switchboardhq/switchboard/core/transcript"
	"github.com/switchboardhq/switchboard/gateway/auth"
	"github.com/switchboardhq/switchboard/gateway/client"
	"github.com/switchboardhq/switchboard/gateway/events"
	"github.com/switchboardhq/switchboard/gateway/protocol"
	"github.com/switchboardhq/switchboard/queue"
	"github.com/switchboardhq/switchboard/store"
)

// The gateway's speed and memory targets. Every figure includes both ends
// of the socket: clients and server share the machine's cores (except in
// BenchmarkIdleConnections10k, whose server is a process of its own).

// BenchmarkHandshake measures whole connects (upgrade, challenge, connect,
// hello-ok) followed by a normal close, one at a time (token-parallel:
// eight at a time), over loopback with the gateway token. The device
// variant also proves an Ed25519 identity: its first connect pairs the
// device silently (loopback), and each one measured verifies the
// signature, reads the paired device and issues a device token.
func BenchmarkHandshake(b *testing.B) {
	r := newBenchRig(b)
	scopes := []string{protocol.ScopeRead, protocol.ScopeWrite}
	b.Run("token", func(b *testing.B) {
		benchHandshakes(b, client.Options{URL: r.url, Token: r.token, Scopes: scopes, EventBuffer: 16})
	})
	b.Run("token-parallel", func(b *testing.B) {
		// Eight connects at a time, to use every core.
		o := client.Options{URL: r.url, Token: r.token, Scopes: scopes, EventBuffer: 16}
		b.ReportAllocs()
		b.SetParallelism(4)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				c, err := client.Dial(ctx, o)
				cancel()
				if err != nil {
					b.Error(err)
					return
				}
				c.Close()
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "handshakes/s")
	})
	b.Run("device", func(b *testing.B) {
		o := client.Options{URL: r.url, Token: r.token, Scopes: scopes, Device: newBenchDevice(b), EventBuffer: 16}
		c := dialBench(b, o) // pairs the device
		c.Close()
		benchHandshakes(b, o)
	})
}

func benchHandshakes(b *testing.B, o client.Options) {
	b.ReportAllocs()
	for b.Loop() {
		c := dialBench(b, o)
		c.Close()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "handshakes/s")
}

// BenchmarkFanout1000 broadcasts one chat delta to 1,000 connected clients
// and measures the time until the last of them has read it (target: p99 ≤
// 10 ms). The clients are raw sockets with one reader goroutine each, so
// that the client side stays cheap.
func BenchmarkFanout1000(b *testing.B) {
	const clients = 1000
	r := newBenchRig(b)
	var remaining atomic.Int64
	arrived := make(chan struct{}, 1)
	fl, err := connectFleet(r.url, r.token, clients, fleetBudget, func() {
		if remaining.Add(-1) == 0 {
			arrived <- struct{}{}
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(fl.close)
	payload, err := events.ChatEvent{
		RunID: newUUID(), SessionKey: "agent:main:main", Seq: 12, State: events.StateDelta,
		Message: &events.ChatMessage{Role: "assistant", Timestamp: time.Now().UnixMilli(), Content: []events.ChatContent{{
			Type: "text", Text: strings.Repeat("The quick brown fox jumps over the lazy dog. ", 5),
		}}},
		DeltaText: "over the lazy dog. ",
	}.MarshalFor(protocol.ProtocolV4)
	if err != nil {
		b.Fatal(err)
	}
	ev := outEvent{name: events.EventChat, payload: func(int) []byte { return payload }, dropIfSlow: true}
	fanout := func() time.Duration {
		remaining.Store(clients)
		t0 := time.Now()
		r.gw.hub.broadcast(ev)
		select {
		case <-arrived:
		case <-time.After(30 * time.Second):
			b.Fatalf("%d of %d clients did not receive the event within 30 s", remaining.Load(), clients)
		}
		return time.Since(t0)
	}
	// The connects' presence events may still be queued, and a full queue
	// would drop the event.
	deadline := time.Now().Add(time.Minute)
	for _, queued, writers := queueState(r.gw); queued > 0 || writers > 0; _, queued, writers = queueState(r.gw) {
		if time.Now().After(deadline) {
			b.Fatalf("the gateway still has %d bytes queued for %d clients after a minute", queued, writers)
		}
		<-time.After(time.Millisecond)
	}
	fanout()

	b.ReportAllocs()
	var lat []time.Duration
	for b.Loop() {
		lat = append(lat, fanout())
	}
	reportLatency(b, lat)
}

// BenchmarkChatSendFirstDelta measures chat.send to the first chat delta
// at the client, with a model that answers at once (target: p99 ≤ 2 ms).
// Each run's final, and the dispatcher letting go of the session, are
// awaited before the next send, so that no message is queued behind a run
// (collect mode would hold it for its debounce); only send → first delta
// is in the latency figures. A session's history is part of every turn's
// cost, so the sends go to sessions of up to turnsPerSession turns; the
// first turn of each, which creates the session, is not measured.
func BenchmarkChatSendFirstDelta(b *testing.B) {
	const turnsPerSession = 50
	r := newBenchRig(b)
	c := dialBench(b, client.Options{URL: r.url, Token: r.token, Scopes: []string{protocol.ScopeRead, protocol.ScopeWrite}})
	b.Cleanup(func() { c.Close() })
	runs := 0
	turn := func(key string) time.Duration {
		r.provider.Push(llmtest.Text("Hello", ", world!"))
		runs++
		runID := "bench-" + strconv.Itoa(runs)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		t0 := time.Now()
		if _, err := c.Call(ctx, "chat.send", map[string]any{"sessionKey": key, "message": "hi", "idempotencyKey": runID}); err != nil {
			b.Fatalf("chat.send: %v", err)
		}
		if _, err := c.Next(ctx, chatEventOf(runID, events.StateDelta)); err != nil {
			b.Fatalf("waiting for the first delta: %v", err)
		}
		first := time.Since(t0)
		for {
			ev, err := c.Next(ctx, chatEventOf(runID, ""))
			if err != nil {
				b.Fatalf("waiting for the final: %v", err)
			}
			if bytes.Contains(ev.Payload, []byte(`"state":"final"`)) {
				break
			}
			if !bytes.Contains(ev.Payload, []byte(`"state":"delta"`)) {
				b.Fatalf("run %s ended with %s", runID, ev.Payload)
			}
		}
		r.waitIdle(b)
		return first
	}

	b.ReportAllocs()
	var lat []time.Duration
	for b.Loop() {
		key := "bench-" + strconv.Itoa(len(lat)/turnsPerSession)
		if len(lat)%turnsPerSession == 0 {
			turn(key)
		}
		lat = append(lat, turn(key))
	}
	reportLatency(b, lat)
}

// chatEventOf matches the chat events of runID in state, or in any state
// when state is empty.
func chatEventOf(runID, state string) func(client.Event) bool {
	id, st := []byte(`"runId":`+strconv.Quote(runID)), []byte(`"state":"`+state+`"`)
	return func(e client.Event) bool {
		return e.Name == events.EventChat && bytes.Contains(e.Payload, id) && (state == "" || bytes.Contains(e.Payload, st))
	}
}

// BenchmarkIdleConnections10k measures the memory of a gateway process
// holding 10,000 idle authenticated connections (target: ≤ 150 MB RSS).
// The gateway runs in a child process (TestHelperGatewayProcess), so that
// the clients' memory is not counted; the connections are idle once the
// gateway has written everything it queued for them. Reported: the
// child's RSS then (rss-MB), and per connection the RSS above the
// gateway's before any connected, the live heap and the goroutine stacks
// after a GC, and goroutines; rss-settled-MB is the RSS once the freed
// memory is returned to the OS, where the runtime's scavenger would bring
// an idle process in a few minutes; connect-s is the time from the first
// connect until the gateway was idle with all 10,000. ns/op is one more client's connect and close while the
// 10,000 are connected. SWITCHBOARD_IDLE_CLIENTS sets another number of
// clients (a quicker run, or one that fits a busy machine's budget).
func BenchmarkIdleConnections10k(b *testing.B) {
	clients := 10000
	if v := os.Getenv("SWITCHBOARD_IDLE_CLIENTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("SWITCHBOARD_IDLE_CLIENTS=%q: want a positive number of clients", v)
		}
		clients = n
	}
	gw := startGatewayProcess(b)
	rss0 := gw.rss(b)
	base := gw.stats(b)

	start := time.Now()
	fl, err := connectFleet(gw.url, gw.token, clients, fleetBudget, nil)
	if err != nil {
		b.Fatalf("%v; the gateway's RSS is %.0f MB", err, float64(gw.rss(b))/1e6)
	}
	// Killing the gateway first spares it a presence broadcast per closed
	// client.
	defer fl.close()
	defer gw.stop()
	deadline := time.Now().Add(time.Minute)
	st := gw.stats(b)
	for st.Conns != clients || st.Queued > 0 || st.Writers > 0 {
		if time.Now().After(deadline) {
			b.Fatalf("the gateway did not go idle: %+v", st)
		}
		<-time.After(10 * time.Millisecond)
		st = gw.stats(b)
	}
	connect := time.Since(start)
	rss := gw.rss(b)
	st = gw.stats(b)
	gw.freeOSMemory(b)
	settled := gw.rss(b)

	b.ReportAllocs()
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		ws, err := rawConnect(ctx, gw.url, gw.token, []string{protocol.ScopeRead})
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		ws.CloseNow()
	}
	b.ReportMetric(connect.Seconds(), "connect-s")
	b.ReportMetric(float64(rss)/1e6, "rss-MB")
	b.ReportMetric(float64(settled)/1e6, "rss-settled-MB")
	b.ReportMetric(float64(rss-rss0)/float64(clients), "rss-B/conn")
	b.ReportMetric(float64(int64(st.HeapAlloc)-int64(base.HeapAlloc))/float64(clients), "heap-B/conn")
	b.ReportMetric(float64(int64(st.StackInuse)-int64(base.StackInuse))/float64(clients), "stack-B/conn")
	b.ReportMetric(float64(st.Goroutines-base.Goroutines)/float64(clients), "goroutines/conn")
}

// fleetBudget bounds the connects of a benchmark's clients: they take a
// few seconds when each costs about the same, so running out of it means
// connects grew expensive with the number already connected.
const fleetBudget = 90 * time.Second

// helperEnv makes TestHelperGatewayProcess run a gateway for
// BenchmarkIdleConnections10k.
const helperEnv = "SWITCHBOARD_GATEWAY_BENCH_PROCESS"

// TestHelperGatewayProcess is the gateway process of
// BenchmarkIdleConnections10k; without helperEnv it does nothing. It
// prints "gateway <url> <token>", then answers each line on its stdin:
// "stats" with a JSON line of helperStats (after a GC), "free" with "ok"
// after returning freed memory to the OS. It ends with its stdin.
func TestHelperGatewayProcess(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		return
	}
	r := newBenchRig(t)
	fmt.Printf("gateway %s %s\n", r.url, r.token)
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch in.Text() {
		case "stats":
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			st := helperStats{HeapAlloc: ms.HeapAlloc, StackInuse: ms.StackInuse, Goroutines: runtime.NumGoroutine()}
			st.Conns, st.Queued, st.Writers = queueState(r.gw)
			out, _ := json.Marshal(st)
			fmt.Printf("%s\n", out)
		case "free":
			debug.FreeOSMemory()
			fmt.Println("ok")
		}
	}
}

// queueState returns the gateway's connections, the bytes queued for them
// and how many have a writer goroutine.
func queueState(s *Server) (conns int, queued int64, writers int) {
	for _, c := range s.hub.snapshot() {
		conns++
		c.mu.Lock()
		queued += c.queued
		if c.writing {
			writers++
		}
		c.mu.Unlock()
	}
	return conns, queued, writers
}

// helperStats is what TestHelperGatewayProcess reports.
type helperStats struct {
	HeapAlloc  uint64 `json:"heapAlloc"`
	StackInuse uint64 `json:"stackInuse"`
	Goroutines int    `json:"goroutines"`
	Conns      int    `json:"conns"`
	Queued     int64  `json:"queued"`  // bytes queued for clients
	Writers    int    `json:"writers"` // connections with a writer goroutine
}

// gatewayProcess is a child process running TestHelperGatewayProcess.
type gatewayProcess struct {
	cmd        *exec.Cmd
	stdin      io.WriteCloser
	out        *bufio.Scanner
	url, token string
	stopOnce   sync.Once
}

func startGatewayProcess(b *testing.B) *gatewayProcess {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperGatewayProcess$", "-test.count=1")
	// The child is killed, so its own temporary directories would stay
	// behind; these are under the benchmark's, removed after the kill.
	cmd.Env = append(os.Environ(), helperEnv+"=1", "TMPDIR="+b.TempDir())
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	p := &gatewayProcess{cmd: cmd, stdin: stdin, out: bufio.NewScanner(stdout)}
	b.Cleanup(p.stop)
	line := p.line(b)
	if _, err := fmt.Sscanf(line, "gateway %s %s", &p.url, &p.token); err != nil {
		b.Fatalf("gateway process said %q: %v", line, err)
	}
	return p
}

// stop kills the gateway process and waits for it.
func (p *gatewayProcess) stop() {
	p.stopOnce.Do(func() {
		_ = p.cmd.Process.Kill()
		_ = p.stdin.Close()
		_ = p.cmd.Wait()
	})
}

func (p *gatewayProcess) line(b *testing.B) string {
	b.Helper()
	if !p.out.Scan() {
		b.Fatalf("the gateway process ended: %v", p.out.Err())
	}
	return p.out.Text()
}

func (p *gatewayProcess) ask(b *testing.B, cmd string) string {
	b.Helper()
	if _, err := io.WriteString(p.stdin, cmd+"\n"); err != nil {
		b.Fatal(err)
	}
	return p.line(b)
}

func (p *gatewayProcess) stats(b *testing.B) helperStats {
	b.Helper()
	var st helperStats
	if line := p.ask(b, "stats"); json.Unmarshal([]byte(line), &st) != nil {
		b.Fatalf("gateway process stats: %q", line)
	}
	return st
}

func (p *gatewayProcess) freeOSMemory(b *testing.B) {
	b.Helper()
	if line := p.ask(b, "free"); line != "ok" {
		b.Fatalf("gateway process free: %q", line)
	}
}

// rss returns the process's resident set size in bytes.
func (p *gatewayProcess) rss(b *testing.B) int64 {
	b.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	for l := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				b.Fatalf("VmRSS %q: %v", v, err)
			}
			return kb << 10
		}
	}
	b.Fatal("no VmRSS in /proc/<pid>/status")
	return 0
}

// fleet is many raw clients, each with a goroutine that reads and discards
// what the gateway sends.
type fleet struct {
	conns   []*websocket.Conn
	readers sync.WaitGroup
}

// close drops every connection and waits for the readers.
func (f *fleet) close() {
	for _, ws := range f.conns {
		ws.CloseNow()
	}
	f.readers.Wait()
}

// connectFleet connects n raw clients with the token and read scope, a few
// at a time (the gateway admits protocol.MaxPreauthSocketsPerIP sockets
// per address before their connect), calling onChat, if set, whenever one
// reads a chat event. If the connects take longer than budget, the error
// says how their cost grew.
func connectFleet(url, token string, n int, budget time.Duration, onChat func()) (*fleet, error) {
	const dialers = 8
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	f := &fleet{}
	var (
		mu     sync.Mutex
		done   []time.Duration // since start, in the order connects finished
		errs   []error
		next   atomic.Int64
		dialWG sync.WaitGroup
	)
	start := time.Now()
	for range dialers {
		dialWG.Go(func() {
			for next.Add(1) <= int64(n) && ctx.Err() == nil {
				ws, err := rawConnect(ctx, url, token, []string{protocol.ScopeRead})
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				f.conns = append(f.conns, ws)
				done = append(done, time.Since(start))
				mu.Unlock()
				f.readers.Go(func() { discardReader(ws, onChat) })
			}
		})
	}
	dialWG.Wait()
	if len(f.conns) == n {
		return f, nil
	}
	f.close()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("connected %d of %d clients in %v; %s", len(done), n, budget, connectGrowth(done))
	}
	return nil, fmt.Errorf("connected %d of %d clients: %w", len(done), n, errors.Join(errs...))
}

// connectGrowth describes how the time per connect changed during a fleet's
// connects.
func connectGrowth(done []time.Duration) string {
	const window = 100
	if len(done) < 2*window {
		return "too few connects to compare"
	}
	first := done[window-1] / window
	last := (done[len(done)-1] - done[len(done)-1-window]) / window
	return fmt.Sprintf("the first %d connects took %v each, the last %d %v each", window, first, window, last)
}

// rawConnect dials url and completes the connect handshake by hand (v4,
// token, the given scopes), without the client package: benchmarks keep
// thousands of these, and the client side must stay cheap.
func rawConnect(ctx context.Context, url, token string, scopes []string) (*websocket.Conn, error) {
	ws, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		return nil, err
	}
	ws.SetReadLimit(-1)
	if _, _, err := ws.Read(ctx); err != nil { // the challenge
		ws.CloseNow()
		return nil, fmt.Errorf("challenge: %w", err)
	}
	connect, _ := json.Marshal(map[string]any{"type": "req", "id": "c", "method": "connect", "params": map[string]any{
		"minProtocol": protocol.ProtocolV4, "maxProtocol": protocol.ProtocolV4,
		"client": map[string]any{"id": "test", "version": "1", "platform": "linux", "mode": "test"},
		"auth":   map[string]any{"token": token}, "scopes": scopes,
	}})
	if err := ws.Write(ctx, websocket.MessageText, connect); err != nil {
		ws.CloseNow()
		return nil, err
	}
	// No event comes before hello-ok: the connection is not ready until
	// it is queued.
	_, msg, err := ws.Read(ctx)
	if err != nil || !bytes.HasPrefix(msg, []byte(`{"type":"res","id":"c","ok":true`)) {
		ws.CloseNow()
		return nil, fmt.Errorf("connect: %.300s %v", msg, err)
	}
	return ws, nil
}

// chatFramePrefix starts every chat event frame (eventFrame).
var chatFramePrefix = []byte(`{"type":"event","event":"chat"`)

// discardReader reads ws until it ends, discarding every message, and calls
// onChat, if set, for each chat event.
func discardReader(ws *websocket.Conn, onChat func()) {
	head := make([]byte, len(chatFramePrefix))
	for {
		_, r, err := ws.Reader(context.Background())
		if err != nil {
			return
		}
		n, _ := io.ReadFull(r, head)
		if _, err := io.Copy(io.Discard, r); err != nil {
			return
		}
		if onChat != nil && n == len(head) && bytes.Equal(head, chatFramePrefix) {
			onChat()
		}
	}
}

// reportLatency reports the median and 99th percentile of lat in ms.
func reportLatency(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	at := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))]) / 1e6 }
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}

// benchRig is newRig for benchmarks, which newRig's *testing.T rules out:
// the real store, dispatcher and agent behind a gateway on a free
// loopback port, a scripted model, and no logging, which would otherwise
// be part of every figure.
type benchRig struct {
	token    string
	url      string
	provider *llmtest.ScriptedProvider
	disp     *queue.Dispatcher
	gw       *Server
}

func newBenchRig(tb testing.TB) *benchRig {
	tb.Helper()
	ctx := context.Background()
	dir := tb.TempDir()
	r := &benchRig{token: auth.NewToken(), provider: llmtest.NewScriptedProvider()}
	cfg := DefaultConfig()
	cfg.Port = 0
	cfg.Auth.Token = r.token
	// Thousands of clients, all from loopback.
	cfg.Limits.MaxConnections = 1 << 20 // lowered to what the open-file limit holds
	cfg.Limits.MaxConnectionsPerAddress = 1 << 20
	st, err := store.Open(ctx, dir)
	if err != nil {
		tb.Fatal(err)
	}
	router, err := llm.NewRouter(llm.ModelsConfig{}, llm.RouterOptions{Providers: map[string]llm.Provider{"scripted": r.provider}})
	if err != nil {
		tb.Fatal(err)
	}
	runner, err := agent.New(agent.Config{Model: core.ModelSelection{Primary: "scripted/m"}, StateDir: dir}, agent.Deps{
		Models: router, Sessions: st, Tools: &tools.Executor{Registry: tools.NewRegistry()},
		Transcript: transcript.Options{NoSync: true},
	})
	if err != nil {
		tb.Fatal(err)
	}
	r.gw = New(cfg, Deps{StateDir: dir, Version: "bench"})
	r.disp, err = queue.New(queue.Options{Config: queue.DefaultConfig()}, queue.Deps{
		Runner: runner, Journal: st, Deliverer: r.gw, Observers: []queue.Observer{r.gw},
	})
	if err != nil {
		tb.Fatal(err)
	}
	r.gw.Attach(Backend{
		Store: st, Dispatcher: r.disp, Runner: runner, DefaultModel: "scripted/m",
		Models: []ModelInfo{{ID: "scripted/m", Name: "m", Provider: "scripted"}},
	})
	if err := r.disp.Start(ctx); err != nil {
		tb.Fatal(err)
	}
	if err := r.gw.Start(ctx); err != nil {
		tb.Fatal(err)
	}
	r.url = "ws://" + r.gw.Addr().String() + "/"
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := r.gw.Stop(ctx); err != nil {
			tb.Errorf("gateway Stop: %v", err)
		}
		if err := r.disp.Stop(ctx); err != nil {
			tb.Errorf("dispatcher Stop: %v", err)
		}
		runner.Close()
		st.Close()
	})
	return r
}

// waitIdle waits until the dispatcher has no run and no queued message.
func (r *benchRig) waitIdle(tb testing.TB) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for st := r.disp.Stats(); st.Active > 0 || st.Queued > 0; st = r.disp.Stats() {
		if time.Now().After(deadline) {
			tb.Fatalf("the dispatcher did not go idle: %+v", st)
		}
		<-time.After(20 * time.Microsecond)
	}
}

// dialBench connects with the client package.
func dialBench(tb testing.TB, o client.Options) *client.Client {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, o)
	if err != nil {
		tb.Fatalf("Dial: %v", err)
	}
	return c
}

func newBenchDevice(tb testing.TB) ed25519.PrivateKey {
	tb.Helper()
	_, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		tb.Fatal(err)
	}
	return priv
}
