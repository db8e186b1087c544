package agent_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/core/llm"
	"github.com/switchboardhq/switchboard/core/transcript"
	"github.com/switchboardhq/switchboard/store"
)

// instant is a provider that answers at once with a fixed text, through the
// same MessageBuilder the real providers use.
type instant struct{}

func (instant) Stream(_ context.Context, req *llm.Request, emit func(core.AssistantMessageEvent)) (*core.AssistantMessage, error) {
	b := llm.NewMessageBuilder("instant", "instant", req.Model, time.UnixMilli(1740000000000), emit)
	b.Start()
	i := b.StartText()
	b.AppendText(i, "ok")
	b.End(i)
	return b.Done(core.StopReasonStop)
}

// BenchmarkRunTurn measures one whole turn with an instant model on a warm
// session: the sessions-index update in SQLite, transcript append (no
// fsync), prompt assembly, the history pipeline, the loop and reply
// assembly. Turns rotate over 256 sessions so each transcript stays short.
func BenchmarkRunTurn(b *testing.B) {
	st, err := store.Open(context.Background(), b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	benchmarkTurns(b, st)
}

func benchmarkTurns(b *testing.B, index core.SessionIndex) {
	dir := b.TempDir()
	router, err := llm.NewRouter(llm.ModelsConfig{}, llm.RouterOptions{Providers: map[string]llm.Provider{"instant": instant{}}})
	if err != nil {
		b.Fatal(err)
	}
	r, err := agent.New(agent.Config{Model: core.ModelSelection{Primary: "instant/x"}, StateDir: dir}, agent.Deps{
		Models: router, Sessions: index, Transcript: transcript.Options{NoSync: true},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	in := dm("hello there")
	keys := make([]core.SessionKey, 256)
	for i := range keys {
		keys[i] = core.SessionKey(fmt.Sprintf("agent:main:telegram:direct:%d", i))
		in.SessionKey = keys[i]
		if _, err := r.Run(context.Background(), agent.Turn{Inbound: in}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		in.SessionKey = keys[i%len(keys)]
		res, err := r.Run(context.Background(), agent.Turn{Inbound: in})
		if err != nil || len(res.Replies) != 1 {
			b.Fatalf("run: %v %+v", err, res)
		}
	}
}

// memIndex is an in-memory sessions index, to measure the runner without
// SQLite's write latency.
type memIndex struct {
	mu sync.Mutex
	m  map[core.SessionKey]core.SessionEntry
}

func (x *memIndex) GetSession(_ context.Context, k core.SessionKey) (core.SessionEntry, bool, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	e, ok := x.m[k]
	return e, ok, nil
}

func (x *memIndex) PutSession(_ context.Context, e core.SessionEntry) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.m[e.Key] = e
	return nil
}

func (x *memIndex) ListSessions(context.Context, int) ([]core.SessionEntry, error) { return nil, nil }
func (x *memIndex) DeleteSession(context.Context, core.SessionKey) error           { return nil }

// BenchmarkLoopOverhead is BenchmarkRunTurn with the sessions index in
// memory: what the runner itself costs per turn (prompt assembly, history
// pipeline, loop, events, transcript append without fsync, replies).
func BenchmarkLoopOverhead(b *testing.B) {
	benchmarkTurns(b, &memIndex{m: map[core.SessionKey]core.SessionEntry{}})
}
