package queue

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/core/tools"
	"github.com/switchboardhq/switchboard/core/tools/toolstest"
	"github.com/switchboardhq/switchboard/store"
)

// busyState puts keyA's session into a run state and returns the release
// that lets the run finish, and the first message's entry id.
type busyState struct {
	name  string
	setup func(t *testing.T, h *harness, w *watcher, gate *toolstest.Gate) (release func(), first int64)
}

var busyStates = []busyState{
	{"streaming", func(t *testing.T, h *harness, w *watcher, _ *toolstest.Gate) (func(), int64) {
		g := make(chan struct{})
		h.provider.Push(llmtest.Text("first answer").Gated(g))
		r := h.submit(dmIn(keyA, "m1", "first question"))
		w.waitTurn(t)
		return func() { close(g) }, r.EntryID
	}},
	{"tool-running", func(t *testing.T, h *harness, w *watcher, gate *toolstest.Gate) (func(), int64) {
		h.provider.Push(llmtest.ToolCalls(llmtest.Call("work", `{}`)), llmtest.Text("first answer"))
		r := h.submit(dmIn(keyA, "m1", "first question"))
		<-gate.Started()
		return func() { gate.Release(tools.TextResult("worked")) }, r.EntryID
	}},
	{"compacting", func(t *testing.T, h *harness, w *watcher, _ *toolstest.Gate) (func(), int64) {
		// A first exchange gives compaction something to summarise.
		h.provider.Push(llmtest.Text("zero answer"))
		h.submit(dmIn(keyA, "m0", "zero question"))
		h.rec.waitFor(t, 1)
		h.waitRunsIdle()
		g := make(chan struct{})
		h.provider.Push(llmtest.Text("a summary").Gated(g), llmtest.Text("first answer"))
		r := h.submit(dmIn(keyA, "m1", "first question"))
		eventually(t, "compaction", func() bool {
			p, _ := h.runner.State(keyA)
			return p == agent.PhaseCompacting
		})
		return func() { close(g) }, r.EntryID
	}},
}

// outcome is what the second message must see.
type outcome int

const (
	sameRun        outcome = iota // steered into the active run
	laterRun                      // queued, answered by a run after the first
	sameAndLater                  // steer-backlog: both
	interruptedRun                // the first run aborted, the second runs next
)

func TestEveryModeInEveryRunState(t *testing.T) {
	table := map[Mode]map[string]struct {
		disp Disposition
		out  outcome
	}{
		ModeSteer: {
			"streaming": {Steered, sameRun}, "tool-running": {Steered, sameRun}, "compacting": {Queued, laterRun},
		},
		ModeFollowup: {
			"streaming": {Queued, laterRun}, "tool-running": {Queued, laterRun}, "compacting": {Queued, laterRun},
		},
		ModeCollect: {
			"streaming": {Queued, laterRun}, "tool-running": {Queued, laterRun}, "compacting": {Queued, laterRun},
		},
		ModeSteerBacklog: {
			"streaming": {Steered, sameAndLater}, "tool-running": {Steered, sameAndLater}, "compacting": {Queued, laterRun},
		},
		ModeInterrupt: {
			"streaming": {Interrupting, interruptedRun}, "tool-running": {Interrupting, interruptedRun}, "compacting": {Interrupting, interruptedRun},
		},
	}
	for _, mode := range []Mode{ModeSteer, ModeFollowup, ModeCollect, ModeSteerBacklog, ModeInterrupt} {
		for _, st := range busyStates {
			want := table[mode][st.name]
			t.Run(fmt.Sprintf("%s/%s", mode, st.name), func(t *testing.T) {
				w := newWatcher()
				gate := toolstest.NewGate("work")
				o := harnessOptions{observers: []Observer{w}, tools: []tools.Tool{gate}}
				if st.name == "compacting" {
					o.contextWindow = 100
					o.agentCfg = agent.Config{ReserveTokens: 1, KeepRecentTokens: 1}
				}
				h := newHarness(t, o)
				release, first := st.setup(t, h, w, gate)

				second, err := h.d.SubmitWith(context.Background(), dmIn(keyA, "m2", "second question"), SubmitOptions{Mode: mode})
				if err != nil {
					t.Fatal(err)
				}
				if second.Disposition != want.disp {
					t.Fatalf("disposition = %s, want %s", second.Disposition, want.disp)
				}
				// Enough answers for whatever runs next.
				h.provider.Push(llmtest.Text("more"), llmtest.Text("more"), llmtest.Text("more"))
				if !(want.out == interruptedRun && st.name == "tool-running") {
					release() // an interrupted tool was cancelled and takes no release
				}
				h.waitRunsIdle()
				h.clock.Advance(2 * time.Second) // past the queue debounce
				eventually(t, "both messages answered", func() bool {
					es := h.entries(first, second.EntryID)
					return len(es) == 2 && es[0].State == store.JournalDone && es[1].State == store.JournalDone && h.d.Stats().Active == 0
				})
				es := h.entries(first, second.EntryID)
				switch want.out {
				case sameRun:
					if es[1].RunID != es[0].RunID {
						t.Errorf("steered message answered by run %s, first by %s; want the same run", es[1].RunID, es[0].RunID)
					}
				case laterRun, interruptedRun:
					if es[1].RunID == es[0].RunID {
						t.Errorf("second message was answered by the first run")
					}
				case sameAndLater:
					if es[1].RunID != es[0].RunID {
						t.Errorf("steer-backlog: the steered copy should complete with the first run")
					}
				}
				// The second message reached the model in some request.
				var seen int
				for _, req := range h.provider.Requests() {
					for _, u := range userTexts(req) {
						if strings.Contains(u, "second question") {
							seen++
							break
						}
					}
				}
				if seen == 0 {
					t.Errorf("the second message never reached the model")
				}
				w.mu.Lock()
				runs := len(w.started)
				w.mu.Unlock()
				wantRuns := map[outcome]int{sameRun: 1, laterRun: 2, sameAndLater: 2, interruptedRun: 2}[want.out]
				if st.name == "compacting" {
					wantRuns++ // the first exchange
				}
				if runs != wantRuns {
					t.Errorf("runs = %d, want %d", runs, wantRuns)
				}
				if want.out == interruptedRun {
					for _, d := range h.rec.deliveries() {
						if d.RunID == es[0].RunID && d.Kind == DeliveryReply {
							t.Errorf("the interrupted run still delivered a reply: %+v", d)
						}
					}
				}
			})
		}
	}
}

// TestIdleMessagesRunInEveryMode checks the decision table's first row: a
// message for an idle session runs at once whatever its mode.
func TestIdleMessagesRunInEveryMode(t *testing.T) {
	for _, mode := range []Mode{ModeSteer, ModeFollowup, ModeCollect, ModeSteerBacklog, ModeInterrupt} {
		h := newHarness(t, harnessOptions{})
		h.provider.Push(llmtest.Text("ok"))
		r, err := h.d.SubmitWith(context.Background(), dmIn(keyA, "m1", "hi"), SubmitOptions{Mode: mode})
		if err != nil || r.Disposition != Running {
			t.Errorf("%s while idle: %+v %v", mode, r, err)
		}
		h.rec.waitFor(t, 1)
	}
}
