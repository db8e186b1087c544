package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
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
	"github.com/switchboardhq/switchboard/gateway/protocol"
	"github.com/switchboardhq/switchboard/queue"
	"github.com/switchboardhq/switchboard/store"
)

// benchRig is newRig for benchmarks (newRig needs a *testing.T): the real
// store, dispatcher and agent behind a gateway on a free loopback port, a
// scripted model, and logs discarded so that they cost nothing.
type benchRig struct {
	token    string
	url      string
	provider *llmtest.ScriptedProvider
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
	disp, err := queue.New(queue.Options{Config: queue.DefaultConfig()}, queue.Deps{
		Runner: runner, Journal: st, Deliverer: r.gw, Observers: []queue.Observer{r.gw},
	})
	if err != nil {
		tb.Fatal(err)
	}
	r.gw.Attach(Backend{
		Store: st, Dispatcher: disp, Runner: runner, DefaultModel: "scripted/m",
		Models: []ModelInfo{{ID: "scripted/m", Name: "m", Provider: "scripted"}},
	})
	if err := disp.Start(ctx); err != nil {
		tb.Fatal(err)
	}
	if err := r.gw.Start(ctx); err != nil {
		tb.Fatal(err)
	}
	r.url = "ws://" + r.gw.Addr().String() + "/"
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := r.gw.Stop(ctx); err != nil {
			tb.Errorf("gateway Stop: %v", err)
		}
		if err := disp.Stop(ctx); err != nil {
			tb.Errorf("dispatcher Stop: %v", err)
		}
		runner.Close()
		st.Close()
	})
	return r
}

// rawConnect dials url and completes the connect handshake by hand with
// the shared token, without the client package: the benchmarks keep
// thousands of these, and the client package's per-connection work would
// dominate the measurements.
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
		"minProtocol": 4, "maxProtocol": 4, "client": map[string]any{"id": "test", "version": "1", "platform": "linux", "mode": "test"},
		"auth": map[string]any{"token": token}, "scopes": scopes,
	}})
	if err := ws.Write(ctx, websocket.MessageText, connect); err != nil {
		ws.CloseNow()
		return nil, err
	}
	_, msg, err := ws.Read(ctx)
	if err != nil || !bytes.Contains(msg, []byte(`"ok":true`)) {
		ws.CloseNow()
		return nil, fmt.Errorf("connect: %.200s %v", msg, err)
	}
	return ws, nil
}

// chatFramePrefix starts every chat event frame the hub writes
// (eventFrame).
var chatFramePrefix = []byte(`{"type":"event","event":"chat"`)

// discardReader reads ws until it ends, discarding every frame, and calls
// onChat for each chat event.
func discardReader(ws *websocket.Conn, onChat func()) {
	buf := make([]byte, len(chatFramePrefix))
	for {
		_, r, err := ws.Reader(context.Background())
		if err != nil {
			return
		}
		n, _ := io.ReadFull(r, buf)
		if _, err := io.Copy(io.Discard, r); err != nil {
			return
		}
		if n == len(buf) && bytes.Equal(buf, chatFramePrefix) && onChat != nil {
			onChat()
		}
	}
}

func BenchmarkConnectScaling(b *testing.B) {
	for _, n := range []int{800} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			r := newBenchRig(b)
			ctx := context.Background()
			var wg sync.WaitGroup
			var frames atomic.Int64
			start := time.Now()
			conns := make([]*websocket.Conn, 0, n)
			for range n {
				ws, err := rawConnect(ctx, r.url, r.token, []string{protocol.ScopeRead})
				if err != nil {
					b.Fatal(err)
				}
				conns = append(conns, ws)
				wg.Go(func() { discardReader(ws, func() { frames.Add(1) }) })
			}
			b.Logf("%d conns in %v", n, time.Since(start))
			start = time.Now()
			for _, ws := range conns {
				ws.CloseNow()
			}
			wg.Wait()
			b.Logf("closed in %v", time.Since(start))
		})
	}
}
