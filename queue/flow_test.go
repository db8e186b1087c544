package queue

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/core/prompt"
	"github.com/switchboardhq/switchboard/store"
)

// holdFirst starts a run for m1 whose answer waits on the returned channel.
func holdFirst(t *testing.T, h *harness, w *watcher) chan struct{} {
	t.Helper()
	g := make(chan struct{})
	h.provider.Push(llmtest.Text("first answer").Gated(g))
	if r := h.submit(dmIn(keyA, "m1", "first")); r.Disposition != Running {
		t.Fatalf("first = %+v", r)
	}
	w.waitTurn(t)
	return g
}

func modeConfig(m Mode) Config {
	c := DefaultConfig()
	c.Mode = m
	return c
}

func TestCollectMergesQueuedMessagesInTheExactFormat(t *testing.T) {
	w := newWatcher()
	h := newHarness(t, harnessOptions{config: modeConfig(ModeCollect), observers: []Observer{w}})
	g := holdFirst(t, h, w)
	var ins []core.Inbound
	for i, body := range []string{"second", "third", "fourth"} {
		in := dmIn(keyA, "m"+string(rune('2'+i)), body)
		ins = append(ins, in)
		if r := h.submit(in); r.Disposition != Queued {
			t.Fatalf("%s = %+v, want queued", body, r)
		}
	}
	h.provider.Push(llmtest.Text("all three answered"))
	close(g)
	h.waitRunsIdle()
	h.clock.Advance(999 * time.Millisecond)
	if n := len(h.provider.Requests()); n != 1 {
		t.Fatalf("the queue drained before its 1s debounce (%d calls)", n)
	}
	h.clock.Advance(time.Millisecond)
	got := h.rec.waitFor(t, 2)

	bodies := make([]string, len(ins))
	for i := range ins {
		bodies[i] = prompt.Body(&ins[i], prompt.State{Now: h.clock.Now}).Text
	}
	want := "[Queued messages while agent was busy]\n\n---\nQueued #1\n" + bodies[0] +
		"\n\n---\nQueued #2\n" + bodies[1] + "\n\n---\nQueued #3\n" + bodies[2]
	reqs := h.provider.Requests()
	if last := lastUser(reqs[1]); last != want {
		t.Errorf("collect prompt:\n%s\nwant:\n%s", last, want)
	}
	if d := got[1]; !d.Batched || len(d.EntryIDs) != 3 || d.ReplyToMessageID != ins[2].MessageID {
		t.Errorf("collect delivery = %+v", d)
	}
}

func TestCollectAcrossChatsDrainsOneByOne(t *testing.T) {
	w := newWatcher()
	h := newHarness(t, harnessOptions{config: modeConfig(ModeCollect), observers: []Observer{w}})
	g := holdFirst(t, h, w)
	a := dmIn(keyA, "m2", "from chat 42")
	b := dmIn(keyA, "m3", "from chat 43")
	b.Route.To = "43"
	h.submit(a)
	h.submit(b)
	h.provider.Push(llmtest.Text("to 42"), llmtest.Text("to 43"))
	close(g)
	h.waitRunsIdle()
	h.clock.Advance(time.Second)
	h.rec.waitFor(t, 2)
	h.waitRunsIdle()
	h.clock.Advance(time.Second)
	got := h.rec.waitFor(t, 3)
	if got[1].Route.To != "42" || got[2].Route.To != "43" || got[1].Batched || got[2].Batched {
		t.Errorf("cross-chat items were not answered separately in order: %+v / %+v", got[1].Route, got[2].Route)
	}
}

func TestFollowupRunsEachQueuedMessageInOrder(t *testing.T) {
	w := newWatcher()
	h := newHarness(t, harnessOptions{config: modeConfig(ModeFollowup), observers: []Observer{w}})
	g := holdFirst(t, h, w)
	h.submit(dmIn(keyA, "m2", "second"))
	h.submit(dmIn(keyA, "m3", "third"))
	h.provider.Push(llmtest.Text("a2"), llmtest.Text("a3"))
	close(g)
	for n := 2; n <= 3; n++ {
		h.waitRunsIdle()
		h.clock.Advance(time.Second)
		h.rec.waitFor(t, n)
	}
	reqs := h.provider.Requests()
	if !strings.HasSuffix(lastUser(reqs[1]), "second") || !strings.HasSuffix(lastUser(reqs[2]), "third") {
		t.Errorf("followups out of order: %q, %q", lastUser(reqs[1]), lastUser(reqs[2]))
	}
}

func TestOverflowSummaryReachesTheModel(t *testing.T) {
	for _, policy := range []DropPolicy{DropSummarize, DropOld} {
		t.Run(string(policy), func(t *testing.T) {
			cfg := modeConfig(ModeCollect)
			cfg.Cap, cfg.Drop = 2, policy
			w := newWatcher()
			h := newHarness(t, harnessOptions{config: cfg, observers: []Observer{w}})
			g := holdFirst(t, h, w)
			var ids []int64
			for i, body := range []string{"q1 dropped", "q2 dropped", "q3 kept", "q4 kept"} {
				r := h.submit(dmIn(keyA, "m"+string(rune('a'+i)), body))
				if r.Disposition != Queued {
					t.Fatalf("%s = %+v", body, r)
				}
				ids = append(ids, r.EntryID)
			}
			h.provider.Push(llmtest.Text("caught up"))
			close(g)
			h.waitRunsIdle()
			h.clock.Advance(time.Second)
			h.rec.waitFor(t, 2)
			last := lastUser(h.provider.Requests()[1])
			wantHead := "[Queued messages while agent was busy]\n\n[Queue overflow] Dropped 2 messages due to cap."
			if !strings.HasPrefix(last, wantHead) {
				t.Fatalf("prompt does not open with the overflow block:\n%s", last)
			}
			hasLines := strings.Contains(last, "Summary:\n- q1 dropped\n- q2 dropped")
			if hasLines != (policy == DropSummarize) {
				t.Errorf("summary lines present=%v for %s:\n%s", hasLines, policy, last)
			}
			if !strings.Contains(last, "Queued #1\n") || !strings.Contains(last, "q3 kept") || !strings.Contains(last, "q4 kept") {
				t.Errorf("kept items missing:\n%s", last)
			}
			h.waitRunsIdle()
			for _, e := range h.entries(ids...) {
				if e.State != store.JournalDone {
					t.Errorf("entry %d (%s) is %s; every message, dropped ones included, must end done", e.ID, e.Inbound, e.State)
				}
			}
		})
	}
}

func TestDropNewTellsTheSender(t *testing.T) {
	cfg := modeConfig(ModeFollowup)
	cfg.Cap, cfg.Drop = 1, DropNew
	w := newWatcher()
	h := newHarness(t, harnessOptions{config: cfg, observers: []Observer{w}})
	g := holdFirst(t, h, w)
	h.submit(dmIn(keyA, "m2", "fits"))
	r := h.submit(dmIn(keyA, "m3", "does not fit"))
	if r.Disposition != Dropped || r.EntryID == 0 {
		t.Fatalf("over cap = %+v, want dropped (and journaled)", r)
	}
	got := h.rec.waitFor(t, 1)
	if got[0].Kind != DeliveryNotice || !strings.Contains(got[0].Replies[0].Text, "dropped") || got[0].ReplyToMessageID != "m3" {
		t.Errorf("notice = %+v", got[0])
	}
	eventually(t, "the drop recorded", func() bool {
		e := h.entries(r.EntryID)[0]
		return e.State == store.JournalDropped && e.Note != ""
	})
	h.provider.Push(llmtest.Text("second"))
	close(g)
	h.waitRunsIdle()
	h.clock.Advance(time.Second)
	h.rec.waitFor(t, 3)
}

func TestStandaloneDirectiveStoresTheSessionSettingAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	h := newHarness(t, harnessOptions{dir: dir})
	r := h.submit(dmIn(keyA, "d1", "/queue followup debounce:2s cap:5 drop:new"))
	if r.Disposition != DirectiveApplied || r.EntryID != 0 {
		t.Fatalf("directive = %+v", r)
	}
	got := h.rec.waitFor(t, 1)
	if want := "Queue mode set to followup (debounce 2s, cap 5, drop new)."; got[0].Replies[0].Text != want {
		t.Errorf("confirmation = %q, want %q", got[0].Replies[0].Text, want)
	}
	h.close()

	h2 := newHarness(t, harnessOptions{dir: dir})
	rec := record{Inbound: dmIn(keyA, "x", "y")}
	if s := h2.d.settings(&rec); s.Mode != ModeFollowup || s.Debounce != 2*time.Second || s.Cap != 5 || s.Drop != DropNew {
		t.Errorf("after restart the session settings are %+v", s)
	}
	// Another session keeps the defaults; reset clears this one.
	other := record{Inbound: dmIn("agent:main:telegram:direct:7", "x", "y")}
	if s := h2.d.settings(&other); s.Mode != ModeCollect {
		t.Errorf("another session's mode = %s", s.Mode)
	}
	h2.submit(dmIn(keyA, "d2", "/queue reset"))
	h2.rec.waitFor(t, 1)
	if s := h2.d.settings(&rec); s.Mode != ModeCollect || s.Cap != DefaultCap {
		t.Errorf("after /queue reset: %+v", s)
	}
	all, _ := h2.store.AllQueueSettings(context.Background())
	if len(all) != 0 {
		t.Errorf("reset left stored settings: %v", all)
	}
}

func TestInvalidDirectiveChangesNothing(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	h.submit(dmIn(keyA, "d1", "/queue cap:0"))
	got := h.rec.waitFor(t, 1)
	if !strings.Contains(got[0].Replies[0].Text, `Invalid cap "0"`) {
		t.Errorf("reply = %q", got[0].Replies[0].Text)
	}
	all, _ := h.store.AllQueueSettings(context.Background())
	if len(all) != 0 {
		t.Errorf("an invalid directive stored settings: %v", all)
	}
}

func TestInlineDirectiveAppliesToItsMessageOnly(t *testing.T) {
	w := newWatcher()
	h := newHarness(t, harnessOptions{config: modeConfig(ModeCollect), observers: []Observer{w}})
	g := holdFirst(t, h, w)
	r := h.submit(dmIn(keyA, "m2", "/queue interrupt answer this instead"))
	if r.Disposition != Interrupting {
		t.Fatalf("inline interrupt = %+v", r)
	}
	h.provider.Push(llmtest.Text("instead"))
	close(g)
	h.rec.waitFor(t, 1)
	if last := lastUser(h.provider.Requests()[1]); !strings.HasSuffix(last, "answer this instead") || strings.Contains(last, "/queue") {
		t.Errorf("the directive was not removed from the message: %q", last)
	}
	all, _ := h.store.AllQueueSettings(context.Background())
	if len(all) != 0 {
		t.Errorf("an inline directive stored a session setting: %v", all)
	}
}

func TestStopAbortsAndClearsTheQueue(t *testing.T) {
	w := newWatcher()
	h := newHarness(t, harnessOptions{config: modeConfig(ModeFollowup), observers: []Observer{w}})
	holdFirst(t, h, w)
	q := h.submit(dmIn(keyA, "m2", "queued"))
	if r := h.submit(dmIn(keyA, "s", "Stop!")); r.Disposition != Stopped {
		t.Fatalf("stop = %+v", r)
	}
	h.waitRunsIdle()
	got := h.rec.waitFor(t, 1)
	if got[0].Kind != DeliveryNotice || got[0].Replies[0].Text != "⏹️ Stopped. 1 queued message was cleared." {
		t.Errorf("stop notice = %+v", got[0].Replies)
	}
	eventually(t, "the cleared message recorded as dropped", func() bool {
		return h.entries(q.EntryID)[0].State == store.JournalDropped
	})
	h.clock.Advance(time.Minute)
	if st := h.d.Stats(); st.Queued != 0 || st.Active != 0 {
		t.Errorf("after stop: %+v", st)
	}
}

func TestSystemEventsReachTheNextPrompt(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	h.d.EnqueueSystemEvent(keyA, "Cron job \"daily-report\" completed (exit 0)", EventOptions{Trusted: true, TS: h.clock.Now().UnixMilli()})
	h.provider.Push(llmtest.Text("noted"), llmtest.Text("again"))
	h.submit(dmIn(keyA, "m1", "anything new?"))
	h.rec.waitFor(t, 1)
	first := lastUser(h.provider.Requests()[0])
	if !strings.HasPrefix(first, "System: [") || !strings.Contains(first, `Cron job "daily-report" completed (exit 0)`) {
		t.Errorf("prompt lacks the system event line:\n%s", first)
	}
	h.waitRunsIdle()
	h.submit(dmIn(keyA, "m2", "and now?"))
	h.rec.waitFor(t, 2)
	if second := lastUser(h.provider.Requests()[1]); strings.Contains(second, "daily-report") {
		t.Errorf("a drained event was shown twice")
	}
}

func TestPendingMessagesReplayAfterAStop(t *testing.T) {
	dir := t.TempDir()
	w := newWatcher()
	h := newHarness(t, harnessOptions{dir: dir, config: modeConfig(ModeFollowup), observers: []Observer{w}})
	g := holdFirst(t, h, w)
	h.submit(dmIn(keyA, "m2", "second"))
	h.submit(dmIn(keyA, "m3", "third"))
	// Stop with an expired deadline: the running turn is cancelled, and
	// nothing is answered or lost.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	h.d.Stop(ctx)
	close(g)
	if n := len(h.rec.deliveries()); n != 0 {
		t.Fatalf("a cancelled run delivered %d replies", n)
	}
	pending, _ := h.store.PendingJournal(context.Background())
	if len(pending) != 3 {
		t.Fatalf("pending after stop = %d, want all 3", len(pending))
	}
	h.close()

	h2 := newHarness(t, harnessOptions{dir: dir, config: modeConfig(ModeFollowup)})
	h2.provider.Push(llmtest.Text("a1"), llmtest.Text("a2"), llmtest.Text("a3"))
	h2.rec.waitFor(t, 1)
	for n := 2; n <= 3; n++ {
		h2.waitRunsIdle()
		h2.clock.Advance(time.Second)
		h2.rec.waitFor(t, n)
	}
	got := h2.rec.deliveries()
	order := []string{string(got[0].ReplyToMessageID), string(got[1].ReplyToMessageID), string(got[2].ReplyToMessageID)}
	if strings.Join(order, ",") != "m1,m2,m3" {
		t.Errorf("replayed out of order: %v", order)
	}
	h2.waitRunsIdle()
	if pending, _ := h2.store.PendingJournal(context.Background()); len(pending) != 0 {
		t.Errorf("still pending after replay: %d", len(pending))
	}
}

// failingDeliverer fails every delivery.
type failingDeliverer struct{}

func (failingDeliverer) Deliver(context.Context, Delivery) error { return context.DeadlineExceeded }

func TestUndeliveredOutcomeIsRedeliveredWithoutRunningAgain(t *testing.T) {
	dir := t.TempDir()
	h := newHarness(t, harnessOptions{dir: dir})
	h.d.deps.Deliverer = failingDeliverer{}
	h.provider.Push(llmtest.Text("the answer"))
	r := h.submit(dmIn(keyA, "m1", "question"))
	h.waitRunsIdle()
	eventually(t, "the entry done", func() bool { return h.entries(r.EntryID)[0].State == store.JournalDone })
	out, _ := h.store.UndeliveredOutcomes(context.Background())
	if len(out) != 1 {
		t.Fatalf("undelivered outcomes = %d", len(out))
	}
	h.close()

	h2 := newHarness(t, harnessOptions{dir: dir})
	got := h2.rec.waitFor(t, 1)
	if got[0].Replies[0].Text != "the answer" || got[0].ReplyToMessageID != "m1" {
		t.Errorf("redelivery = %+v", got[0])
	}
	if n := len(h2.provider.Requests()); n != 0 {
		t.Errorf("the model ran again %d times", n)
	}
	eventually(t, "marked delivered", func() bool {
		out, _ := h2.store.UndeliveredOutcomes(context.Background())
		return len(out) == 0
	})
}

func TestLaneCapLimitsConcurrentRunsAcrossSessions(t *testing.T) {
	w := newWatcher()
	h := newHarness(t, harnessOptions{lanes: map[string]int{LaneMain: 1}, observers: []Observer{w}})
	g := make(chan struct{})
	h.provider.Push(llmtest.Text("a").Gated(g), llmtest.Text("b"))
	h.submit(dmIn(keyA, "m1", "first"))
	w.waitTurn(t)
	other := dmIn("agent:main:telegram:direct:7", "m2", "other session")
	if r := h.submit(other); r.Disposition != Running {
		t.Fatalf("other session = %+v; its session lane is free", r)
	}
	eventually(t, "the second run waiting for the main lane", func() bool { return h.d.LaneWaiting(LaneMain) == 1 })
	if n := len(h.provider.Requests()); n != 1 {
		t.Errorf("a second run started despite the lane cap (%d calls)", n)
	}
	close(g)
	h.rec.waitFor(t, 2)
}

func TestRecordRoundTripKeepsSubmitOptions(t *testing.T) {
	m := ModeInterrupt
	rec := record{Inbound: dmIn(keyA, "m", "b"), ClientRunID: "c1", Override: Override{Mode: &m}, Lane: LaneCron}
	raw, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	var back record
	if err := json.Unmarshal(raw, &back); err != nil || back.ClientRunID != "c1" || back.Override.Mode == nil || *back.Override.Mode != ModeInterrupt || back.Lane != LaneCron {
		t.Errorf("round trip = %+v %v", back, err)
	}
}

func TestQueuedMessageSignalsTheChat(t *testing.T) {
	cfg := modeConfig(ModeCollect)
	cfg.Ack = true
	w := newWatcher()
	h := newHarness(t, harnessOptions{config: cfg, observers: []Observer{w}})
	g := holdFirst(t, h, w)
	h.submit(dmIn(keyA, "m2", "waiting"))
	eventually(t, "the queued signal", func() bool {
		h.rec.mu.Lock()
		defer h.rec.mu.Unlock()
		return len(h.rec.queued) == 1 && h.rec.queued[0].MessageID == "m2"
	})
	h.provider.Push(llmtest.Text("done"))
	close(g)
	h.waitRunsIdle()
	h.clock.Advance(time.Second)
	h.rec.waitFor(t, 2)
}
