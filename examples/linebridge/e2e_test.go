package linebridge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/bridgetest"
	"github.com/switchboardhq/switchboard/channels"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/examples/linebridge"
	"github.com/switchboardhq/switchboard/examples/linebridge/host"
	"github.com/switchboardhq/switchboard/queue"
	"github.com/switchboardhq/switchboard/store"
)

// These tests run the example program's pipeline (host.Start, as
// cmd/linebridge does) in-process, with the echo model, and talk to it
// over TCP as a person would.

// runs records the runs the dispatcher finished (a queue.Observer).
type runs struct {
	mu      sync.Mutex
	ended   []queue.RunInfo
	changes bridgetest.Changes
}

func (r *runs) RunStarted(queue.RunInfo)                {}
func (r *runs) RunEvent(queue.RunInfo, core.AgentEvent) {}
func (r *runs) RunEnded(info queue.RunInfo, _ *agent.Result, _ error) {
	r.mu.Lock()
	r.ended = append(r.ended, info)
	r.mu.Unlock()
	r.changes.Changed()
}

// wait returns the first n finished runs once there are n.
func (r *runs) wait(t *testing.T, n int) []queue.RunInfo {
	t.Helper()
	var got []queue.RunInfo
	err := r.changes.WaitFor(testCtx(t), func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		got = slices.Clone(r.ended)
		return len(got) >= n
	})
	if err != nil {
		t.Fatalf("waiting for %d runs: have %d", n, len(got))
	}
	return got[:n]
}

// syncBuffer collects log records from many goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startHost runs the example's pipeline with the given access policy, on
// a free port, each queued message answered in a turn of its own at once
// (followup, no debounce) so replies come one per message. It stops at
// the end of the test, with the logs shown if the test failed.
func startHost(t *testing.T, access bridges.Access) (*host.Host, *runs) {
	t.Helper()
	logs := &syncBuffer{}
	rec := &runs{}
	line := linebridge.Config{Enabled: true, Listen: "127.0.0.1:0"}
	line.Access = access
	zero := 0
	h, err := host.Start(t.Context(), host.Options{
		StateDir:  t.TempDir(),
		Line:      line,
		Queue:     queue.Config{Mode: queue.ModeFollowup, DebounceMs: &zero},
		Observers: []queue.Observer{rec},
		Log:       slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), bridgetest.WaitFor)
		defer cancel()
		if err := h.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
		if t.Failed() {
			t.Logf("logs:\n%s", logs.String())
		}
	})
	return h, rec
}

func addr(t *testing.T, h *host.Host) *client {
	t.Helper()
	a, err := h.Addr(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	return dial(t, a)
}

// TestEndToEnd follows one message through every stage: the bridge, the
// gate, the journal, the agent and its transcript, the router and the
// ledger, and back to the client; then two more, answered in order.
func TestEndToEnd(t *testing.T) {
	h, rec := startHost(t, bridges.Access{DMPolicy: bridges.DMOpen, AllowFrom: []string{"*"}})
	ctx := testCtx(t)
	c := addr(t, h)
	chat := c.hello("Ada")

	c.send("hello **world**")
	// OK: journaled (the gate let it through, the dispatcher took it).
	r := c.await([]string{"OK 1"}, 1)[0]
	// The echo model repeats the sender's words, and only them (no
	// metadata block); the markdown came back as plain text.
	if len(r.lines) != 1 || r.last() != "echo: hello world" {
		t.Fatalf("reply = %q, want echo: ... ending in the message as plain text", r.lines)
	}
	msgID := r.id
	if msgID != chat+"/1" {
		t.Errorf("END %q, want %q", msgID, chat+"/1")
	}

	// The queue: one run, for Ada's session, answering one journal entry,
	// which is done and carries the platform's identity of the message.
	run := rec.wait(t, 1)[0]
	key := core.SessionKey("agent:main:line:direct:ada")
	if run.SessionKey != key || run.Route != (core.Route{Channel: "line", AccountID: "default", To: core.ChatID(chat)}) || len(run.EntryIDs) != 1 {
		t.Fatalf("run = %+v, want one entry of %s routed to line:%s", run, key, chat)
	}
	entries, err := h.Store.JournalEntries(ctx, run.EntryIDs...)
	if err != nil || len(entries) != 1 {
		t.Fatalf("journal entries %v: %v, %v", run.EntryIDs, entries, err)
	}
	e := entries[0]
	// The dispatcher journals the inbound inside a record of its own.
	var record struct {
		Inbound core.Inbound `json:"inbound"`
	}
	if err := json.Unmarshal(e.Inbound, &record); err != nil {
		t.Fatal(err)
	}
	in := record.Inbound
	if e.State != store.JournalDone || e.RunID != run.RunID || e.DedupeKey != "line:default:"+chat+":1" ||
		in.Body != "hello **world**" || in.Sender.ID != "ada" || in.Sender.Name != "Ada" || in.ChatType != core.ChatDirect {
		t.Errorf("journal entry = %+v with inbound %+v", e, in)
	}

	// The agent: the transcript holds the turn.
	_, msgs, ok, err := h.Runner.History(ctx, key)
	if err != nil || !ok || len(msgs) != 2 {
		t.Fatalf("History(%s) = %d messages, %v, %v; want the user's and the answer", key, len(msgs), ok, err)
	}
	if u, ok := msgs[0].(*core.UserMessage); !ok || !strings.Contains(u.Text(), "hello **world**") {
		t.Errorf("transcript[0] = %#v, want the user's message", msgs[0])
	}
	if a, ok := msgs[1].(*core.AssistantMessage); !ok || !strings.HasPrefix(a.Text(), "echo: ") {
		t.Errorf("transcript[1] = %#v, want the echo answer", msgs[1])
	}

	// The delivery: the ledger records the sent piece under the run, and
	// the outcome is marked delivered.
	waitFor(t, "the ledger to record the reply", func() bool {
		id, ok, err := h.Store.Sent(ctx, run.RunID+":0:0")
		return err == nil && ok && id == msgID
	})
	waitFor(t, "the outcome to be marked delivered", func() bool {
		out, err := h.Store.UndeliveredOutcomes(ctx)
		return err == nil && len(out) == 0
	})
	st := h.Supervisor.Statuses()
	if len(st) != 1 || st[0].State != bridges.StateConnected || st[0].LastInboundAt.IsZero() || st[0].LastOutboundAt.IsZero() {
		t.Errorf("Statuses = %+v, want line connected, with traffic both ways", st)
	}

	// Two more at once: each is acknowledged, then answered, in order.
	c.send("second")
	c.send("third")
	replies := c.await([]string{"OK 2", "OK 3"}, 2)
	for i, want := range []string{"echo: second", "echo: third"} {
		if got := replies[i].last(); got != want {
			t.Fatalf("reply %d is %q, want %q (reply %q)", i+1, got, want, replies[i].lines)
		}
	}
}

// TestGateRefusesUnlisted checks the access policy sits between the
// bridge and the queue: under an allowlist a sender not on it is
// acknowledged (the platform need not send again) but never journaled or
// answered.
func TestGateRefusesUnlisted(t *testing.T) {
	h, rec := startHost(t, bridges.Access{DMPolicy: bridges.DMAllowlist, AllowFrom: []string{"ada"}})
	ctx := testCtx(t)

	mallory := addr(t, h)
	mallory.hello("mallory")
	mallory.send("let me in")
	mallory.expect("OK 1") // Submit returned: the gate has decided

	ada := addr(t, h)
	ada.hello("Ada")
	ada.send("hi")
	if r := ada.await([]string{"OK 1"}, 1)[0]; r.last() != "echo: hi" {
		t.Fatalf("ada's reply = %q", r.lines)
	}

	// Entry ids grow in acceptance order, and mallory's came first: had it
	// been journaled, it would be below ada's.
	run := rec.wait(t, 1)[0]
	if run.SessionKey != "agent:main:line:direct:ada" || len(run.EntryIDs) != 1 {
		t.Fatalf("run = %+v, want ada's", run)
	}
	var ids []int64
	for id := int64(1); id <= run.EntryIDs[0]; id++ {
		ids = append(ids, id)
	}
	entries, err := h.Store.JournalEntries(ctx, ids...)
	if err != nil || len(entries) != 1 || entries[0].ID != run.EntryIDs[0] {
		t.Fatalf("journal up to ada's entry = %+v, %v; want ada's alone", entries, err)
	}
	if rest := mallory.rest(); len(rest) != 0 {
		t.Errorf("mallory was sent %q, want nothing", rest)
	}
}

// TestPairing checks the gate's answer under the default policy: an
// unknown sender gets a pairing code through the bridge's Deliver, and is
// answered once the owner approves it.
func TestPairing(t *testing.T) {
	h, _ := startHost(t, bridges.Access{})
	ctx := testCtx(t)
	bob := addr(t, h)
	bob.hello("bob")
	bob.send("hi")
	// The gate answers while Submit runs, so before the bridge's OK.
	reply, _ := bob.reply()
	bob.expect("OK 1")
	text := strings.Join(reply, "\n")
	_, after, ok := strings.Cut(text, "switchboard pairing approve line ")
	code, _, _ := strings.Cut(after, "\n")
	if !ok || code == "" {
		t.Fatalf("reply = %q, want a pairing code", reply)
	}
	now := time.Now()
	if _, err := h.Store.ApproveChannelPairingCode(ctx, "line", code, now.Add(-channels.PairingTTL).UnixMilli(), now.UnixMilli()); err != nil {
		t.Fatal(err)
	}
	bob.send("hi again")
	if r := bob.await([]string{"OK 2"}, 1)[0]; r.last() != "echo: hi again" {
		t.Fatalf("after approval: reply = %q", r.lines)
	}
}
