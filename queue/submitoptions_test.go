package queue

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
)

// results is an Observer keeping each run's result by run id.
type results struct {
	mu   sync.Mutex
	runs map[string]*agent.Result
	done chan string
}

func newResults() *results {
	return &results{runs: map[string]*agent.Result{}, done: make(chan string, 16)}
}

func (r *results) RunStarted(RunInfo)                {}
func (r *results) RunEvent(RunInfo, core.AgentEvent) {}
func (r *results) RunEnded(info RunInfo, res *agent.Result, _ error) {
	r.mu.Lock()
	r.runs[info.RunID] = res
	r.mu.Unlock()
	r.done <- info.RunID
}

func (r *results) wait(t *testing.T, id string) *agent.Result {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case got := <-r.done:
			if got == id {
				r.mu.Lock()
				defer r.mu.Unlock()
				return r.runs[id]
			}
		case <-deadline:
			t.Fatalf("run %s did not end", id)
		}
	}
}

func TestNoDeliverHandsRepliesToObserversOnly(t *testing.T) {
	res := newResults()
	h := newHarness(t, harnessOptions{observers: []Observer{res}})
	h.provider.Push(llmtest.Text("the report"))
	in := core.Inbound{Kind: core.InboundCron, SessionKey: "agent:main:cron:j1:run:r1", Route: core.Route{Channel: "telegram", To: "42"}, Body: "report"}
	r, err := h.d.SubmitWith(context.Background(), in, SubmitOptions{RunID: "cron-r1", NoDeliver: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.EntryID == 0 {
		t.Fatalf("a cron turn must be journaled: %+v", r)
	}
	got := res.wait(t, "cron-r1")
	if got == nil || len(got.Replies) != 1 || got.Replies[0].Text != "the report" {
		t.Fatalf("observer result = %+v", got)
	}
	h.waitRunsIdle()
	if d := h.rec.deliveries(); len(d) != 0 {
		t.Errorf("NoDeliver replies were delivered: %+v", d)
	}
	// Recorded as handled: nothing is redelivered after a restart.
	outs, err := h.store.UndeliveredOutcomes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 0 {
		t.Errorf("undelivered outcomes = %+v, want none", outs)
	}
}

func TestSubmitTimeoutBoundsTheTurn(t *testing.T) {
	res := newResults()
	h := newHarness(t, harnessOptions{observers: []Observer{res}})
	gate := make(chan struct{}) // never opened: only the timeout ends the turn
	h.provider.Push(llmtest.Text("never").Gated(gate))
	hb := core.Inbound{Kind: core.InboundHeartbeat, SessionKey: keyA, Body: "poll"}
	if _, err := h.d.SubmitWith(context.Background(), hb, SubmitOptions{RunID: "hb1", Timeout: 20 * time.Millisecond, NoDeliver: true}); err != nil {
		t.Fatal(err)
	}
	got := res.wait(t, "hb1")
	if got == nil || !got.TimedOut {
		t.Fatalf("result = %+v, want a timed-out turn", got)
	}
}
