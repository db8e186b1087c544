package heartbeat_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/core/llm"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/heartbeat"
	"github.com/switchboardhq/switchboard/queue"
)

func TestScheduledHeartbeatsFollowThePhase(t *testing.T) {
	r := newRig(t, rigOptions{cfg: core.HeartbeatConfig{Every: "1m"}})
	phase := heartbeat.Phase("test-seed", "main", time.Minute)
	next, ok := r.hb.NextRun()
	if !ok || next != heartbeat.NextDue(epoch, time.Minute, phase) {
		t.Fatalf("next run = %v %v, want %v", next, ok, heartbeat.NextDue(epoch, time.Minute, phase))
	}
	for i := range 3 {
		r.provider.Push(llmtest.Text("HEARTBEAT_OK"))
		waitIdle(t, r)
		due, _ := r.hb.NextRun()
		r.clock.AdvanceTo(due)
		ev := r.nextEvent()
		if ev.Status != heartbeat.StatusOkToken || ev.Trigger != "interval" {
			t.Fatalf("tick %d: %+v", i, ev)
		}
		if ms := due.UnixMilli() % time.Minute.Milliseconds(); ms != phase.Milliseconds() {
			t.Errorf("tick %d at %v: offset %dms, want the phase %v", i, due, ms, phase)
		}
	}
	if n := r.modelCalls(); n != 3 {
		t.Errorf("model calls = %d, want 3", n)
	}
}

func TestWakesCoalesce(t *testing.T) {
	r := newRig(t, rigOptions{cfg: core.HeartbeatConfig{Every: "1h"}})
	r.provider.Push(llmtest.Text("HEARTBEAT_OK"))
	for range 5 {
		r.hb.Wake("wake")
		r.clock.Advance(10 * time.Millisecond)
	}
	r.clock.Advance(heartbeat.WakeCoalesce)
	if ev := r.nextEvent(); ev.Trigger != "wake" || ev.Status != heartbeat.StatusOkToken {
		t.Fatalf("wake = %+v", ev)
	}
	r.clock.Advance(heartbeat.WakeCoalesce)
	if n := r.modelCalls(); n != 1 {
		t.Errorf("5 wakes made %d heartbeats, want 1", n)
	}
}

func TestWakeWhileBusyRetriesAndNeverInterrupts(t *testing.T) {
	r := newRig(t, rigOptions{cfg: core.HeartbeatConfig{Every: "1h"}})
	gate := make(chan struct{})
	r.provider.Push(llmtest.Text("user answer").Gated(gate))
	if _, err := r.disp.Submit(context.Background(), core.Inbound{SessionKey: r.hb.SessionKey(), Route: core.Route{Channel: "telegram", To: "42"}, ChatType: core.ChatDirect, Body: "hi", MessageID: "u1"}); err != nil {
		t.Fatal(err)
	}
	r.hb.Wake("wake")
	r.clock.Advance(heartbeat.WakeCoalesce)
	if ev := r.nextEvent(); ev.Status != heartbeat.StatusSkipped || ev.Reason != heartbeat.ReasonRequestsInFlight {
		t.Fatalf("wake during a user turn = %+v", ev)
	}
	close(gate)
	got := waitDeliveries(t, r, 1)
	if got[0].Replies[0].Text != "user answer" {
		t.Fatalf("the user turn was disturbed: %+v", got)
	}
	waitIdle(t, r)
	r.provider.Push(llmtest.Text("HEARTBEAT_OK"))
	r.clock.Advance(heartbeat.WakeRetry)
	if ev := r.nextEvent(); ev.Status != heartbeat.StatusOkToken {
		t.Errorf("retried wake = %+v", ev)
	}
}

func TestBusyMainLaneSkips(t *testing.T) {
	r := newRig(t, rigOptions{})
	// Fill the main lane (4 slots) with other sessions' turns and queue a
	// fifth: the lane has waiting work.
	gate := make(chan struct{})
	for i := range 5 {
		r.provider.Push(llmtest.Text("x").Gated(gate))
		key := core.SessionKey(fmt.Sprintf("agent:main:telegram:direct:%d", i))
		if _, err := r.disp.Submit(context.Background(), core.Inbound{SessionKey: key, Route: core.Route{Channel: "telegram", To: "1"}, Body: "hi", MessageID: core.MessageID(fmt.Sprint(i))}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(waitFor)
	for r.disp.LaneWaiting(queue.LaneMain) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no run waited for the main lane")
		}
		runtime.Gosched()
	}
	if ev := r.runNow(); ev.Status != heartbeat.StatusSkipped || ev.Reason != heartbeat.ReasonRequestsInFlight {
		t.Errorf("heartbeat with a busy main lane = %+v", ev)
	}
	close(gate)
	waitDeliveries(t, r, 5)
}

// TestHeartbeatUserRace fires heartbeats at random moments while user
// messages stream into many sessions, the main one included (matrix row
// 16): every user message is answered, none is aborted or dropped, and a
// heartbeat never runs while the main session is busy.
func TestHeartbeatUserRace(t *testing.T) {
	// The echo model answers user turns with their own text, and the
	// heartbeat prompt (which ends in HEARTBEAT_OK) with an ack.
	tr := &sessionTracker{active: map[core.SessionKey]int{}}
	r := newRig(t, rigOptions{cfg: core.HeartbeatConfig{Every: "1m", Target: "telegram", To: "-1"},
		model: llm.NewEcho("scripted", llm.ProviderOptions{}), observers: []queue.Observer{tr}})
	const sessions, perSession = 50, 20 // matrix row 16: 1,000 user messages across 50 sessions
	var wg sync.WaitGroup
	for s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := r.hb.SessionKey()
			if s > 0 {
				key = core.SessionKey(fmt.Sprintf("agent:main:telegram:direct:%d", s))
			}
			for m := range perSession {
				in := core.Inbound{SessionKey: key, Route: core.Route{Channel: "telegram", To: core.ChatID(fmt.Sprint(s))}, ChatType: core.ChatDirect,
					Body: fmt.Sprintf("msg %d/%d", s, m), MessageID: core.MessageID(fmt.Sprintf("%d-%d", s, m))}
				if _, err := r.disp.SubmitWith(context.Background(), in, queue.SubmitOptions{Mode: queue.ModeFollowup}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	// Heartbeats fire back to back on their own goroutine for the whole
	// run (most are skipped while the sessions are busy, some run in the
	// gaps), and wakes at random moments.
	stop := make(chan struct{})
	var hbs sync.WaitGroup
	hbs.Add(1)
	go func() {
		defer hbs.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			r.runNow()
			runtime.Gosched()
		}
	}()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		if rng.IntN(2) == 0 {
			r.hb.Wake("wake")
		}
		r.clock.Advance(time.Duration(rng.IntN(400)) * time.Millisecond)
	}
	wg.Wait()
	// Drain: followups run as earlier turns end; keep time moving for
	// debounce and retry timers until every user message is answered and
	// a heartbeat has run (once the load subsides, one must).
	deadline := time.Now().Add(60 * time.Second)
	answered := func() int {
		n := 0
		for _, d := range r.rec.deliveries() {
			for _, p := range d.Replies {
				if strings.HasPrefix(p.Text, "echo:") && strings.Contains(p.Text, "msg ") {
					n++
				}
			}
		}
		return n
	}
	heartbeats := func() int {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		return tr.heartbeats
	}
	for answered() < sessions*perSession || heartbeats() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("answered %d of %d user messages; %d heartbeats ran", answered(), sessions*perSession, heartbeats())
		}
		r.clock.Advance(100 * time.Millisecond)
	}
	close(stop)
	hbs.Wait()
	waitIdle(t, r)
	for _, d := range r.rec.deliveries() {
		for _, p := range d.Replies {
			if strings.Contains(p.Text, "aborted") || p.IsError {
				t.Errorf("a turn failed or was aborted: %+v", d)
			}
		}
	}
	if n := answered(); n != sessions*perSession {
		t.Errorf("answered %d user messages, want exactly %d", n, sessions*perSession)
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.overlaps > 0 {
		t.Errorf("%d runs overlapped another run of the same session", tr.overlaps)
	}
}

// sessionTracker counts runs that overlap another run of their session.
type sessionTracker struct {
	mu         sync.Mutex
	active     map[core.SessionKey]int
	overlaps   int
	heartbeats int
}

func (s *sessionTracker) RunStarted(info queue.RunInfo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active[info.SessionKey]++
	if s.active[info.SessionKey] > 1 {
		s.overlaps++
	}
	if info.Kind == core.InboundHeartbeat {
		s.heartbeats++
	}
}

func (s *sessionTracker) RunEvent(queue.RunInfo, core.AgentEvent) {}

func (s *sessionTracker) RunEnded(info queue.RunInfo, _ *agent.Result, _ error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active[info.SessionKey]--
}
