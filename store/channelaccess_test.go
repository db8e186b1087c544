package store

import (
	"errors"
	"fmt"
	"testing"
)

// codes returns a code generator yielding the given codes in order.
func codes(cs ...string) func() string {
	i := 0
	return func() string {
		c := cs[i%len(cs)]
		i++
		return c
	}
}

func TestChannelPairingCodeLifecycle(t *testing.T) {
	s := openStore(t, t.TempDir())
	ctx := t.Context()
	const hour = 3_600_000
	req := ChannelPairingCode{Channel: "telegram", AccountID: "default", SenderID: "111", SenderName: "Ada", CreatedAt: 1_000}

	c, created, err := s.CreateChannelPairingCode(ctx, req, 0, 3, codes("abcd2345"))
	if err != nil || !created || c.Code != "ABCD2345" {
		t.Fatalf("first code = %+v, %v, %v; want a new upper-case code", c, created, err)
	}
	// The same sender asking again gets the same code, not a new one.
	again, created, err := s.CreateChannelPairingCode(ctx, req, 0, 3, codes("ZZZZ2222"))
	if err != nil || created || again.Code != c.Code {
		t.Fatalf("second ask = %+v, %v, %v; want the pending code back", again, created, err)
	}
	if ok, _ := s.ChannelSenderAllowed(ctx, "telegram", "default", "111"); ok {
		t.Fatal("sender allowed before approval")
	}
	// Approval is case-insensitive, moves the sender to the allowed list
	// and removes the code.
	sender, err := s.ApproveChannelPairingCode(ctx, "telegram", " abcd2345 ", 0, 5_000)
	if err != nil || sender.SenderID != "111" || sender.SenderName != "Ada" || sender.ApprovedAt != 5_000 {
		t.Fatalf("approve = %+v, %v", sender, err)
	}
	if ok, err := s.ChannelSenderAllowed(ctx, "telegram", "default", "111"); !ok || err != nil {
		t.Fatalf("allowed after approval = %v, %v", ok, err)
	}
	if ok, _ := s.ChannelSenderAllowed(ctx, "telegram", "other-bot", "111"); ok {
		t.Error("approval leaked to another account")
	}
	if _, err := s.ApproveChannelPairingCode(ctx, "telegram", "ABCD2345", 0, 0); !errors.Is(err, ErrUnknownPairingCode) {
		t.Errorf("approving twice: %v, want ErrUnknownPairingCode", err)
	}
	senders, err := s.ListChannelSenders(ctx, "")
	if err != nil || len(senders) != 1 {
		t.Fatalf("senders = %+v, %v", senders, err)
	}
	if err := s.RemoveChannelSender(ctx, "telegram", "default", "111"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.ChannelSenderAllowed(ctx, "telegram", "default", "111"); ok {
		t.Error("sender still allowed after removal")
	}

	// Expired codes cannot be approved and are cleared by the next create.
	old, _, _ := s.CreateChannelPairingCode(ctx, ChannelPairingCode{Channel: "telegram", AccountID: "default", SenderID: "222", CreatedAt: 10_000}, 0, 3, codes("OLDC0DE9"))
	if _, err := s.ApproveChannelPairingCode(ctx, "telegram", old.Code, 10_000+hour+1, 0); !errors.Is(err, ErrUnknownPairingCode) {
		t.Errorf("approving an expired code: %v", err)
	}
	if _, _, err := s.CreateChannelPairingCode(ctx, ChannelPairingCode{Channel: "telegram", AccountID: "default", SenderID: "333", CreatedAt: 10_000 + hour + 2}, 10_000+hour+1, 3, codes("NEWC0DE9")); err != nil {
		t.Fatal(err)
	}
	list, _ := s.ListChannelPairingCodes(ctx, "telegram", 0)
	if len(list) != 1 || list[0].SenderID != "333" {
		t.Errorf("codes after expiry = %+v, want only the new one", list)
	}
	if err := s.RejectChannelPairingCode(ctx, "telegram", "newc0de9"); err != nil {
		t.Errorf("reject: %v", err)
	}
	if err := s.RejectChannelPairingCode(ctx, "telegram", "newc0de9"); !errors.Is(err, ErrUnknownPairingCode) {
		t.Errorf("reject twice: %v", err)
	}
}

func TestChannelPairingCodesCappedPerChannel(t *testing.T) {
	s := openStore(t, t.TempDir())
	ctx := t.Context()
	gen := codes("AAAA2222", "BBBB2222", "CCCC2222", "DDDD2222")
	for i := range 3 {
		if _, created, err := s.CreateChannelPairingCode(ctx, ChannelPairingCode{Channel: "telegram", AccountID: "default", SenderID: fmt.Sprint(i)}, 0, 3, gen); err != nil || !created {
			t.Fatalf("code %d: %v, %v", i, created, err)
		}
	}
	c, created, err := s.CreateChannelPairingCode(ctx, ChannelPairingCode{Channel: "telegram", AccountID: "default", SenderID: "9"}, 0, 3, gen)
	if err != nil || created || c.Code != "" {
		t.Fatalf("fourth pending code = %+v, %v, %v; want none (extras are ignored)", c, created, err)
	}
	// Another channel has its own budget; a taken code is drawn again.
	c, created, err = s.CreateChannelPairingCode(ctx, ChannelPairingCode{Channel: "slack", AccountID: "default", SenderID: "9"}, 0, 3, codes("AAAA2222"))
	if err != nil || !created || c.Code != "AAAA2222" {
		t.Fatalf("slack code = %+v, %v, %v", c, created, err)
	}
	c, created, err = s.CreateChannelPairingCode(ctx, ChannelPairingCode{Channel: "slack", AccountID: "default", SenderID: "10"}, 0, 3, codes("AAAA2222", "EEEE2222"))
	if err != nil || !created || c.Code != "EEEE2222" {
		t.Fatalf("colliding code = %+v, %v, %v; want a second draw", c, created, err)
	}
}
