package channels

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/bridges"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/queue"
)

// recBridge is a Bridge that records what it is asked to deliver.
type recBridge struct {
	name string
	outs []bridges.Outbound
}

func (b *recBridge) Name() string                              { return b.name }
func (b *recBridge) AccountID() string                         { return "default" }
func (b *recBridge) Start(context.Context, bridges.Sink) error { return nil }
func (b *recBridge) Status() bridges.Status                    { return bridges.Status{} }
func (b *recBridge) Deliver(_ context.Context, o bridges.Outbound) (bridges.Receipt, error) {
	b.outs = append(b.outs, o)
	return bridges.Receipt{}, nil
}

type recDeliverer struct{ got []queue.Delivery }

func (d *recDeliverer) Deliver(_ context.Context, del queue.Delivery) error {
	d.got = append(d.got, del)
	return nil
}

func TestRouterReplyModes(t *testing.T) {
	delivery := func(batched bool, replies ...core.ReplyPayload) queue.Delivery {
		return queue.Delivery{RunID: "run-1", Route: core.Route{Channel: "telegram", To: "42"}, ReplyToMessageID: "7", Batched: batched, Replies: replies}
	}
	two := []core.ReplyPayload{{Text: "a"}, {Text: "b"}}
	for _, tc := range []struct {
		mode    bridges.ReplyToMode
		batched bool
		want    []string
	}{
		{"", false, []string{"", ""}},
		{bridges.ReplyOff, false, []string{"", ""}},
		{bridges.ReplyFirst, false, []string{"7", ""}},
		{bridges.ReplyAll, false, []string{"7", "7"}},
		{bridges.ReplyBatched, false, []string{"", ""}},
		{bridges.ReplyBatched, true, []string{"7", ""}},
	} {
		b := &recBridge{name: "telegram"}
		r := &Router{}
		r.Add(b, tc.mode, "")
		if err := r.Deliver(t.Context(), delivery(tc.batched, two...)); err != nil {
			t.Fatal(err)
		}
		for i, o := range b.outs {
			if string(o.ReplyToMessageID) != tc.want[i] {
				t.Errorf("mode %q batched %v: reply %d replies to %q, want %q", tc.mode, tc.batched, i, o.ReplyToMessageID, tc.want[i])
			}
		}
	}
}

func TestRouterTagsPrefixLedgerFallback(t *testing.T) {
	b := &recBridge{name: "telegram"}
	fb := &recDeliverer{}
	var ledger bridges.Ledger = nopLedger{}
	r := &Router{Ledger: ledger, Fallback: fb}
	r.Add(b, bridges.ReplyOff, "[bot]")
	err := r.Deliver(t.Context(), queue.Delivery{RunID: "run-9", Route: core.Route{Channel: "Telegram", To: "42"}, Replies: []core.ReplyPayload{
		{Text: "hi", ReplyToID: "55"}, {Text: "", MediaURL: "https://x/a.png", MediaURLs: []string{"https://x/b.png"}},
		{Text: "tagged", ReplyToCurrent: true},
	}, ReplyToMessageID: "77"})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.outs) != 3 {
		t.Fatalf("outs = %+v", b.outs)
	}
	if o := b.outs[2]; o.ReplyToMessageID != "77" {
		t.Errorf("[[reply_to_current]] reply = %+v, want a reply to the current message", o)
	}
	if o := b.outs[0]; o.Text != "[bot] hi" || o.ReplyToMessageID != "55" || o.LedgerKey != "run-9:0" || o.Ledger == nil {
		t.Errorf("first = %+v", o)
	}
	if o := b.outs[1]; o.Text != "" || len(o.MediaURLs) != 2 || o.MediaURLs[0] != "https://x/a.png" || o.LedgerKey != "run-9:1" {
		t.Errorf("second = %+v", o)
	}
	// Notices (no run id) are not in the ledger; unknown channels fall back.
	_ = r.Deliver(t.Context(), queue.Delivery{Route: core.Route{Channel: "telegram", To: "1"}, Replies: []core.ReplyPayload{{Text: "n"}}})
	if o := b.outs[3]; o.Ledger != nil || o.LedgerKey != "" {
		t.Errorf("notice = %+v, want no ledger", o)
	}
	_ = r.Deliver(t.Context(), queue.Delivery{Route: core.Route{Channel: "webchat", To: "x"}})
	if len(fb.got) != 1 {
		t.Errorf("webchat delivery did not reach the fallback")
	}
	if err := (&Router{}).Deliver(t.Context(), queue.Delivery{Route: core.Route{Channel: "slack"}}); err == nil {
		t.Error("delivery to a channel without a bridge and no fallback succeeded")
	}
}

// A delivery for a channel whose bridge is expected waits for it, as the
// replies a restart interrupted do while the daemon is starting; Settle
// sends held deliveries to the fallback; a cancelled wait is an error the
// dispatcher keeps the outcome for.
func TestRouterHoldsDeliveriesForExpectedBridges(t *testing.T) {
	b := &recBridge{name: "telegram"}
	fb := &recDeliverer{}
	r := &Router{Fallback: fb}
	r.Expect("telegram")
	r.Expect("slack")
	del := func(channel string) queue.Delivery {
		return queue.Delivery{RunID: "run-1", Route: core.Route{Channel: core.ChannelName(channel), To: "42"}, Replies: []core.ReplyPayload{{Text: "hi"}}}
	}
	done := make(chan error, 1)
	go func() { done <- r.Deliver(t.Context(), del("telegram")) }()
	// Not delivered while the bridge is missing: not to the fallback
	// either (which logged it as undeliverable before Expect existed).
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := r.Deliver(ctx, del("telegram")); err == nil || !strings.Contains(err.Error(), "the telegram bridge has not started") {
		t.Fatalf("cancelled wait = %v", err)
	}
	select {
	case err := <-done:
		t.Fatalf("delivered before the bridge was added: %v", err)
	default:
	}
	r.Add(b, bridges.ReplyOff, "")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(b.outs) != 1 || b.outs[0].Text != "hi" || len(fb.got) != 0 {
		t.Fatalf("bridge got %+v, fallback %+v", b.outs, fb.got)
	}
	// A bridge that will not come: its deliveries go to the fallback.
	go func() { done <- r.Deliver(t.Context(), del("slack")) }()
	r.Settle("slack")
	if err := <-done; err != nil || len(fb.got) != 1 {
		t.Fatalf("settled: err %v, fallback %+v", err, fb.got)
	}
	// Channels never expected go straight to the fallback.
	if err := r.Deliver(t.Context(), del("webchat")); err != nil || len(fb.got) != 2 {
		t.Fatalf("webchat: err %v, fallback %+v", err, fb.got)
	}
}

type nopLedger struct{}

func (nopLedger) Sent(context.Context, string) (string, bool, error) { return "", false, nil }
func (nopLedger) Record(context.Context, string, string) error       { return nil }

type mapLedger map[string]string

func (m mapLedger) Sent(_ context.Context, k string) (string, bool, error) {
	v, ok := m[k]
	return v, ok, nil
}
func (m mapLedger) Record(_ context.Context, k, id string) error { m[k] = id; return nil }

func TestSendOnce(t *testing.T) {
	ledger := mapLedger{"run-1:0:0": "100"}
	out := bridges.Outbound{Ledger: ledger, LedgerKey: "run-1:0"}
	sends := 0
	send := func() (bridges.MessageID, error) { sends++; return bridges.MessageID(fmt.Sprint(200 + sends)), nil }
	if id, err := bridges.SendOnce(t.Context(), out, "0", send); id != "100" || err != nil || sends != 0 {
		t.Errorf("recorded piece: %q %v, %d sends; want the recorded id and no send", id, err, sends)
	}
	if id, err := bridges.SendOnce(t.Context(), out, "1", send); id != "201" || err != nil || ledger["run-1:0:1"] != "201" {
		t.Errorf("new piece: %q %v, ledger %v", id, err, ledger)
	}
	if id, _ := bridges.SendOnce(t.Context(), out, "1", send); id != "201" || sends != 1 {
		t.Errorf("repeated piece sent again (%d sends)", sends)
	}
	if id, _ := bridges.SendOnce(t.Context(), bridges.Outbound{}, "0", send); id != "202" || len(ledger) != 2 {
		t.Errorf("without a ledger: %q, ledger %v", id, ledger)
	}
}

func TestRouterModeByChatTypeAndSlackTags(t *testing.T) {
	opts := bridges.RouteOptions{
		Mode:           bridges.ReplyOff,
		ByChatType:     map[core.ChatType]bridges.ReplyToMode{core.ChatDirect: bridges.ReplyAll},
		OffIgnoresTags: true,
	}
	for _, tc := range []struct {
		name  string
		key   core.SessionKey
		reply core.ReplyPayload
		want  string
	}{
		{"direct uses its override", "agent:main:slack:direct:u9", core.ReplyPayload{Text: "a"}, "7"},
		{"main (a DM under dmScope main) is direct", "agent:main:main", core.ReplyPayload{Text: "a"}, "7"},
		{"channel falls back to off", "agent:main:slack:channel:c1", core.ReplyPayload{Text: "a"}, ""},
		{"off ignores tags on Slack", "agent:main:slack:channel:c1", core.ReplyPayload{Text: "a", ReplyToID: "99"}, ""},
		{"override honours tags", "agent:main:slack:direct:u9", core.ReplyPayload{Text: "a", ReplyToID: "99"}, "99"},
	} {
		b := &recBridge{name: "slack"}
		r := &Router{}
		r.AddWith(b, opts)
		d := queue.Delivery{SessionKey: tc.key, Route: core.Route{Channel: "slack", To: "C1"}, ReplyToMessageID: "7", Replies: []core.ReplyPayload{tc.reply}}
		if err := r.Deliver(t.Context(), d); err != nil {
			t.Fatal(err)
		}
		if got := string(b.outs[0].ReplyToMessageID); got != tc.want {
			t.Errorf("%s: replies to %q, want %q", tc.name, got, tc.want)
		}
	}
	// Elsewhere a tag works in off.
	b := &recBridge{name: "telegram"}
	r := &Router{}
	r.Add(b, bridges.ReplyOff, "")
	_ = r.Deliver(t.Context(), queue.Delivery{Route: core.Route{Channel: "telegram", To: "1"}, Replies: []core.ReplyPayload{{Text: "a", ReplyToID: "99"}}})
	if got := b.outs[0].ReplyToMessageID; got != "99" {
		t.Errorf("telegram tag in off: %q, want 99", got)
	}
}
