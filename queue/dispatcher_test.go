package queue

import (
	"context"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/store"
)

const keyA core.SessionKey = "agent:main:telegram:direct:42"

func TestIdleMessageRunsAtOnceJournaledAndDelivered(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	h.provider.Push(llmtest.Text("hello Ada"))
	r := h.submit(dmIn(keyA, "m1", "hi"))
	if r.Disposition != Running || r.EntryID == 0 || r.RunID == "" {
		t.Fatalf("receipt = %+v", r)
	}
	got := h.rec.waitFor(t, 1)
	if got[0].Kind != DeliveryReply || got[0].Replies[0].Text != "hello Ada" || got[0].Route.To != "42" || got[0].ReplyToMessageID != "m1" || got[0].RunID != r.RunID {
		t.Errorf("delivery = %+v", got[0])
	}
	h.waitRunsIdle()
	e := h.entries(r.EntryID)[0]
	if e.State != store.JournalDone || e.RunID != r.RunID {
		t.Errorf("journal entry = %+v, want done with the run id", e)
	}
	eventually(t, "the outcome marked delivered", func() bool {
		out, _ := h.store.UndeliveredOutcomes(context.Background())
		return len(out) == 0
	})
	if st := h.d.Stats(); st.Sessions != 0 {
		t.Errorf("an idle session kept dispatcher state: %+v", st)
	}
}

func TestClientRunIDBecomesTheRunID(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	h.provider.Push(llmtest.Text("ok"))
	r, err := h.d.SubmitWith(context.Background(), dmIn(keyA, "m1", "hi"), SubmitOptions{RunID: "client-run-1"})
	if err != nil || r.RunID != "client-run-1" {
		t.Fatalf("receipt = %+v, %v", r, err)
	}
	if got := h.rec.waitFor(t, 1); got[0].RunID != "client-run-1" {
		t.Errorf("delivery run id = %q", got[0].RunID)
	}
}

func TestDuplicateMessageIsAcceptedOnce(t *testing.T) {
	dir := t.TempDir()
	h := newHarness(t, harnessOptions{dir: dir})
	h.provider.Push(llmtest.Text("once"))
	first := h.submit(dmIn(keyA, "m1", "hi"))
	if again := h.submit(dmIn(keyA, "m1", "hi")); again.Disposition != Duplicate {
		t.Fatalf("redelivery = %+v, want duplicate", again)
	}
	h.rec.waitFor(t, 1)
	h.waitRunsIdle()
	h.close()

	// After a restart the recent-id cache is empty; the journal still
	// knows the message.
	h2 := newHarness(t, harnessOptions{dir: dir})
	r := h2.submit(dmIn(keyA, "m1", "hi"))
	if r.Disposition != Duplicate || r.EntryID != first.EntryID {
		t.Errorf("redelivery after restart = %+v, want duplicate of entry %d", r, first.EntryID)
	}
	if n := len(h2.provider.Requests()); n != 0 {
		t.Errorf("the duplicate reached the model %d times", n)
	}
}

// A client's retry with its own run id is checked against the journal,
// which says what became of the message (issue 22, finding 9): a gateway
// client that retries chat.send after a restart learns the outcome.
func TestClientRetryLearnsTheJournalState(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	gate := make(chan struct{})
	h.provider.Push(llmtest.Text("ok").Gated(gate))
	opts := SubmitOptions{RunID: "client-run-1", DedupeKey: "webchat:client-run-1"}
	if r, err := h.d.SubmitWith(context.Background(), dmIn(keyA, "m1", "hi"), opts); err != nil || r.Disposition != Running {
		t.Fatalf("first = %+v, %v", r, err)
	}
	r, err := h.d.SubmitWith(context.Background(), dmIn(keyA, "m1", "hi"), opts)
	if err != nil || r.Disposition != Duplicate || (r.State != store.JournalAccepted && r.State != store.JournalRunning) {
		t.Errorf("retry while the turn runs = %+v, %v; want a duplicate still accepted or running", r, err)
	}
	close(gate)
	h.rec.waitFor(t, 1)
	h.waitRunsIdle()
	eventually(t, "the entry done", func() bool {
		r, err := h.d.SubmitWith(context.Background(), dmIn(keyA, "m1", "hi"), opts)
		return err == nil && r.Disposition == Duplicate && r.State == store.JournalDone
	})
}

func TestHeartbeatWhileBusyIsDroppedNotQueued(t *testing.T) {
	w := newWatcher()
	h := newHarness(t, harnessOptions{observers: []Observer{w}})
	gate := make(chan struct{})
	h.provider.Push(llmtest.Text("slow").Gated(gate))
	h.submit(dmIn(keyA, "m1", "hi"))
	w.waitTurn(t)
	hb := core.Inbound{Kind: core.InboundHeartbeat, SessionKey: keyA, Route: core.Route{Channel: "telegram", To: "42"}, Body: "Read HEARTBEAT.md"}
	if r := h.submit(hb); r.Disposition != Dropped || r.EntryID != 0 {
		t.Fatalf("busy heartbeat = %+v, want dropped without a journal entry", r)
	}
	if st := h.d.Stats(); st.Queued != 0 {
		t.Errorf("the heartbeat was queued: %+v", st)
	}
	close(gate)
	h.rec.waitFor(t, 1)
	h.waitRunsIdle()
	h.clock.Advance(time.Minute)
	if n := len(h.provider.Requests()); n != 1 {
		t.Errorf("model calls = %d, want only the user's", n)
	}
	// Idle: a heartbeat runs.
	h.provider.Push(llmtest.Text("HEARTBEAT_OK"))
	if r := h.submit(hb); r.Disposition != Running {
		t.Errorf("idle heartbeat = %+v", r)
	}
	h.waitRunsIdle()
	eventually(t, "the heartbeat ran", func() bool { return len(h.provider.Requests()) == 2 })
	if len(h.rec.deliveries()) != 1 {
		t.Errorf("a heartbeat ack was delivered: %+v", h.rec.deliveries())
	}
}
