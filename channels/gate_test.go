package channels

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/bridges"

	"go.uber.org/goleak"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorder is a Dispatcher that keeps what it is given.
type recorder struct {
	mu     sync.Mutex
	got    []*core.Inbound
	keys   []string
	events []string
}

func (r *recorder) Submit(_ context.Context, in *core.Inbound, key string) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, in)
	r.keys = append(r.keys, key)
	return false, nil
}

func (r *recorder) EnqueueSystemEvent(key core.SessionKey, text, contextKey string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, string(key)+"|"+text+"|"+contextKey)
	return true
}

func (r *recorder) EnqueueNotice(key core.SessionKey, text, contextKey string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, "trusted|"+string(key)+"|"+text+"|"+contextKey)
	return true
}

type gateRig struct {
	gate    *Gate
	store   *store.SQLite
	disp    *recorder
	replies []bridges.Outbound
	now     time.Time
}

func newGateRig(t *testing.T, access bridges.Access) *gateRig {
	t.Helper()
	st, err := store.Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r := &gateRig{store: st, disp: &recorder{}, now: time.UnixMilli(1_700_000_000_000)}
	n := 0
	r.gate = &Gate{
		Channel: "telegram", AccountID: "default", Access: access, Pairing: st, Dispatch: r.disp,
		Reply:   func(_ context.Context, out bridges.Outbound) error { r.replies = append(r.replies, out); return nil },
		History: &GroupHistory{}, Now: func() time.Time { return r.now },
		NewCode: func() string { n++; return fmt.Sprintf("CODE%04d", n) },
	}
	return r
}

func dmFrom(id, text string) bridges.Inbound {
	return bridges.Inbound{Message: &core.Inbound{
		ChatType: core.ChatDirect, Body: text, Sender: core.Sender{ID: id, Name: "User " + id},
		Route: core.Route{Channel: "telegram", To: core.ChatID(id)},
	}}
}

func TestGatePairsUnknownSenderOnce(t *testing.T) {
	r := newGateRig(t, bridges.Access{})
	ctx := t.Context()
	for range 3 {
		if err := r.gate.Submit(ctx, dmFrom("42", "hello?")); err != nil {
			t.Fatal(err)
		}
	}
	if len(r.disp.got) != 0 {
		t.Fatalf("an unknown sender's message reached the dispatcher: %+v", r.disp.got)
	}
	if len(r.replies) != 1 {
		t.Fatalf("got %d pairing replies for 3 messages, want 1 (the code is sent once)", len(r.replies))
	}
	msg := r.replies[0].Text
	for _, want := range []string{"CODE0001", "switchboard pairing approve telegram CODE0001", "Your telegram user id: 42"} {
		if !strings.Contains(msg, want) {
			t.Errorf("pairing message lacks %q:\n%s", want, msg)
		}
	}
	if r.replies[0].Route.To != "42" {
		t.Errorf("pairing message sent to %+v", r.replies[0].Route)
	}

	// The owner approves; the same sender now gets through.
	if _, err := r.store.ApproveChannelPairingCode(ctx, "telegram", "code0001", 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := r.gate.Submit(ctx, dmFrom("42", "now?")); err != nil {
		t.Fatal(err)
	}
	if len(r.disp.got) != 1 || r.disp.got[0].Body != "now?" {
		t.Fatalf("after approval the dispatcher got %+v", r.disp.got)
	}
}

func TestGatePairingCapAndExpiry(t *testing.T) {
	r := newGateRig(t, bridges.Access{})
	ctx := t.Context()
	for i := range 5 {
		if err := r.gate.Submit(ctx, dmFrom(fmt.Sprint(100+i), "hi")); err != nil {
			t.Fatal(err)
		}
	}
	if len(r.replies) != MaxPendingPairingCodes {
		t.Fatalf("%d codes sent to 5 strangers, want %d", len(r.replies), MaxPendingPairingCodes)
	}
	// An hour later the codes have expired and a new sender gets one.
	r.now = r.now.Add(PairingTTL + time.Second)
	if err := r.gate.Submit(ctx, dmFrom("200", "hi")); err != nil {
		t.Fatal(err)
	}
	if len(r.replies) != MaxPendingPairingCodes+1 {
		t.Fatalf("after expiry %d codes sent, want one more", len(r.replies))
	}
	if _, err := r.store.ApproveChannelPairingCode(ctx, "telegram", "CODE0001", r.now.Add(-PairingTTL).UnixMilli(), 0); err == nil {
		t.Error("an expired code was approved")
	}
}

func TestGateGroupHistoryFeedsNextMention(t *testing.T) {
	r := newGateRig(t, bridges.Access{Groups: map[string]bridges.GroupRule{"-100": {}}})
	ctx := t.Context()
	msg := func(id, text string, mentioned bool) bridges.Inbound {
		return bridges.Inbound{
			Message: &core.Inbound{
				ChatType: core.ChatGroup, Body: text, MessageID: core.MessageID(id), WasMentioned: mentioned,
				Sender: core.Sender{ID: "7", Name: "Bob"}, Route: core.Route{Channel: "telegram", To: "-100"},
			},
			GroupID: "-100", HistoryKey: "telegram:default:group:-100", CanDetectMention: true,
		}
	}
	for i := range 25 {
		if err := r.gate.Submit(ctx, msg(fmt.Sprint(i), fmt.Sprintf("chatter %d", i), false)); err != nil {
			t.Fatal(err)
		}
	}
	if len(r.disp.got) != 0 {
		t.Fatal("unmentioned group messages were answered")
	}
	if err := r.gate.Submit(ctx, msg("25", "@bot what did we say?", true)); err != nil {
		t.Fatal(err)
	}
	if len(r.disp.got) != 1 {
		t.Fatalf("mentioned message not dispatched: %d", len(r.disp.got))
	}
	in := r.disp.got[0]
	if len(in.History) != HistoryShown || !in.HistoryTruncated || in.History[0].Body != "chatter 5" || in.History[HistoryShown-1].Body != "chatter 24" {
		t.Fatalf("history = %d entries (truncated %v), first %+v; want the newest %d", len(in.History), in.HistoryTruncated, in.History[0], HistoryShown)
	}
	if in.History[0].Sender != "Bob (7)" {
		t.Errorf("history sender = %q", in.History[0].Sender)
	}
	// The buffer was taken: the next mention starts empty.
	if err := r.gate.Submit(ctx, msg("26", "@bot again", true)); err != nil {
		t.Fatal(err)
	}
	if h := r.disp.got[1].History; len(h) != 0 {
		t.Errorf("history after a reply = %+v, want empty", h)
	}
}

func TestGateReportsState(t *testing.T) {
	var changes []bridges.State
	tr := bridges.NewTracker("telegram", "default", nil, func(s bridges.Status) { changes = append(changes, s.State) })
	g := &Gate{Channel: "telegram", Tracker: tr}
	g.State(bridges.StateConnected, nil)
	g.State(bridges.StateTransientDisconnect, fmt.Errorf("network down"))
	g.State(bridges.StateTransientDisconnect, fmt.Errorf("still down"))
	if st := tr.Status(); st.State != bridges.StateTransientDisconnect || st.LastError != "still down" {
		t.Errorf("status = %+v", st)
	}
	if len(changes) != 2 {
		t.Errorf("state changes = %v, want connected then transient-disconnect", changes)
	}
}

func TestGateLogsStateChangesOnce(t *testing.T) {
	var buf bytes.Buffer
	g := &Gate{Channel: "telegram", Log: slog.New(slog.NewTextHandler(&buf, nil))}
	// A poller reports connected after every poll; the log wants changes.
	for range 5 {
		g.State(bridges.StateConnected, nil)
	}
	g.State(bridges.StateTransientDisconnect, fmt.Errorf("network down"))
	g.State(bridges.StateTransientDisconnect, fmt.Errorf("network down"))
	g.State(bridges.StateTransientDisconnect, fmt.Errorf("still down"))
	g.State(bridges.StateConnected, nil)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{"state=connected", "err=\"network down\"", "err=\"still down\"", "state=connected"}
	if len(lines) != len(want) {
		t.Fatalf("logged %d lines, want %d:\n%s", len(lines), len(want), buf.String())
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) || strings.Count(lines[i], "channel=") != 1 {
			t.Errorf("line %d = %s, want %s and one channel", i, lines[i], w)
		}
	}
}

func TestGateSystemEventsFollowThePolicy(t *testing.T) {
	r := newGateRig(t, bridges.Access{Groups: map[string]bridges.GroupRule{"-100": {}}})
	ctx := t.Context()
	group := func(id string) bridges.Inbound {
		return bridges.Inbound{
			Message: &core.Inbound{
				SessionKey: core.SessionKey("agent:main:telegram:group:" + id), ChatType: core.ChatGroup,
				Sender: core.Sender{ID: "7"}, Route: core.Route{Channel: "telegram", To: core.ChatID(id)},
			},
			GroupID: id, CanDetectMention: true,
		}
	}
	// An allowlisted group passes without a mention; another group and an
	// unpaired DM sender do not.
	for _, msg := range []bridges.Inbound{group("-100"), group("-200"), dmFrom("99", "")} {
		if err := r.gate.SystemEvent(ctx, msg, "Message edited.", "edit:1"); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"agent:main:telegram:group:-100|Message edited.|edit:1"}
	if !slices.Equal(r.disp.events, want) {
		t.Fatalf("events = %q, want %q", r.disp.events, want)
	}
	if len(r.disp.got) != 0 || len(r.replies) != 0 {
		t.Fatalf("a system event started a turn (%d) or a pairing reply (%d)", len(r.disp.got), len(r.replies))
	}
}

func TestGateNoticeGoesToTheMainSessionTrusted(t *testing.T) {
	r := newGateRig(t, bridges.Access{})
	if err := r.gate.Notice(t.Context(), "ops", "WhatsApp connected as +15550001111.", "whatsapp:connected"); err != nil {
		t.Fatal(err)
	}
	want := []string{"trusted|agent:ops:main|WhatsApp connected as +15550001111.|whatsapp:connected"}
	if !slices.Equal(r.disp.events, want) {
		t.Fatalf("events = %q, want %q", r.disp.events, want)
	}
}
