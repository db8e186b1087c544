package channels

import (
	"errors"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/queue"
)

// Issue 26, finding 6b: a cron announcement to a channel no bridge runs
// for went to the fallback, which only logs it, and the run showed "ok".
// Owned (DeliverOwned) delivers what a bridge takes as Deliver does, and
// fails, naming the channel and account, for what none takes; the web
// chat still goes to the fallback.
func TestFinding6DeliverOwnedRefusesWhatNoBridgeTakes(t *testing.T) {
	b := &recBridge{name: "telegram"}
	fb := &recDeliverer{}
	r := &Router{Fallback: fb}
	r.Add(b, bridges.ReplyOff, "")
	r.Expect("discord")
	r.Settle("discord") // its bridge will not come
	owned := Owned{Router: r}
	del := func(channel, account string) queue.Delivery {
		return queue.Delivery{RunID: "cron-1", Route: core.Route{Channel: core.ChannelName(channel), AccountID: core.AccountID(account), To: "42"},
			Replies: []core.ReplyPayload{{Text: "report"}}}
	}
	if err := owned.Deliver(t.Context(), del("telegram", "")); err != nil || len(b.outs) != 1 {
		t.Fatalf("to a running bridge: %v, bridge got %+v", err, b.outs)
	}
	for _, tc := range []struct{ channel, account, want string }{
		{"telegram", "work", `no telegram bridge for account "work" runs in this daemon`},
		{"slack", "", `no slack bridge for account "default" runs in this daemon`},
		{"discord", "", `no discord bridge for account "default" runs in this daemon`},
	} {
		err := owned.Deliver(t.Context(), del(tc.channel, tc.account))
		if !errors.Is(err, ErrNoBridge) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s#%s: %v, want ErrNoBridge saying %q", tc.channel, tc.account, err, tc.want)
		}
	}
	if len(fb.got) != 0 {
		t.Errorf("the fallback took %+v; an owned delivery must not go there", fb.got)
	}
	if err := owned.Deliver(t.Context(), del(string(core.WebchatChannel), "")); err != nil || len(fb.got) != 1 {
		t.Errorf("web chat: %v, fallback %+v", err, fb.got)
	}
	// Deliver itself is unchanged: what no bridge takes goes to the fallback.
	if err := r.Deliver(t.Context(), del("slack", "")); err != nil || len(fb.got) != 2 {
		t.Errorf("plain Deliver: %v, fallback %+v", err, fb.got)
	}
}
