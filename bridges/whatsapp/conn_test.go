package whatsapp_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/types/events"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/bridgetest"
	"github.com/switchboardhq/switchboard/bridges/whatsapp/whatsapptest"
)

// sessionEnded waits until the bridge let go of cli (its handler is
// removed): the session loop has returned.
func sessionEnded(t *testing.T, cli *whatsapptest.Client) {
	t.Helper()
	if !bridgetest.Eventually(func() bool { return cli.Handlers() == 0 && !cli.IsConnected() }) {
		t.Fatal("the session did not end")
	}
}

// TestTerminalEventsStopReconnecting is matrix row 19: each terminal
// event leaves a readable state and no reconnect attempt, and the
// credentials stay.
func TestTerminalEventsStopReconnecting(t *testing.T) {
	for _, tc := range []struct {
		name  string
		evt   any
		state bridges.State
		want  string
	}{
		{"logged out", &events.LoggedOut{Reason: events.ConnectFailureLoggedOut}, bridges.StateLoggedOut, "switchboard whatsapp link"},
		{"stream replaced", &events.StreamReplaced{}, bridges.StateFailed, "another client opened this WhatsApp session"},
		{"temporary ban", &events.TemporaryBan{Code: events.TempBanSentToTooManyPeople, Expire: time.Hour}, bridges.StateFailed, "temporarily banned"},
		{"client outdated", &events.ClientOutdated{}, bridges.StateFailed, "update Switchboard"},
		{"connect failure", &events.ConnectFailure{Reason: events.ConnectFailureBadUserAgent, Message: "bad ua"}, bridges.StateFailed, "409"},
		{"connect failure logged out", &events.ConnectFailure{Reason: events.ConnectFailureMainDeviceGone}, bridges.StateLoggedOut, "link it again"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, rigOptions{})
			cli := r.client()
			connects, sleeps := r.phone.Connects(), r.sleeps.count()
			cli.Emit(tc.evt)
			st := r.state(tc.state)
			if !strings.Contains(st.LastError, tc.want) {
				t.Errorf("reason %q, want it to mention %q", st.LastError, tc.want)
			}
			sessionEnded(t, cli)
			if n := r.phone.Connects() - connects; n != 0 {
				t.Errorf("%d reconnect attempts after a terminal event", n)
			}
			if n := r.sleeps.count() - sleeps; n != 0 {
				t.Errorf("%d backoff waits after a terminal event", n)
			}
			if !st.State.Terminal() {
				t.Errorf("state %s is not terminal", st.State)
			}
			if _, linked, err := r.st.Linked(t.Context()); err != nil || !linked {
				t.Errorf("credentials gone after %s (linked %v, %v)", tc.name, linked, err)
			}
		})
	}
}

func TestTransientDisconnectReconnects(t *testing.T) {
	r := newRig(t, rigOptions{})
	cli := r.client()
	for i, evt := range []any{
		&events.Disconnected{},
		&events.StreamError{Code: "500"},
		&events.ConnectFailure{Reason: events.ConnectFailureServiceUnavailable},
		&events.KeepAliveTimeout{ErrorCount: 9, LastSuccess: time.Now().Add(-4 * time.Minute)},
	} {
		before := cli.Connects()
		cli.Emit(evt)
		// The bridge backs off, connects again, and is logged in again.
		if !bridgetest.Eventually(func() bool { return cli.Connects() == before+1 && r.b.Status().State == bridges.StateConnected }) {
			t.Fatalf("event %d (%T): connects %d→%d, state %s", i, evt, before, cli.Connects(), r.b.Status().State)
		}
	}
	if n := len(r.phone.Clients()); n != 1 {
		t.Errorf("%d clients, want the same one reconnecting", n)
	}
	if r.sleeps.count() != 4 {
		t.Errorf("%d backoff waits, want one per disconnect", r.sleeps.count())
	}
}

func TestKeepAliveHiccupDoesNotReconnect(t *testing.T) {
	r := newRig(t, rigOptions{})
	cli := r.client()
	before := cli.Connects()
	cli.Emit(&events.KeepAliveTimeout{ErrorCount: 1, LastSuccess: time.Now().Add(-30 * time.Second)})
	r.state(bridges.StateTransientDisconnect)
	cli.Emit(&events.KeepAliveRestored{})
	r.state(bridges.StateConnected)
	if cli.Connects() != before {
		t.Errorf("reconnected on a single missed keepalive")
	}
}

func TestConnectErrorsBackOff(t *testing.T) {
	phone := whatsapptest.New()
	phone.ConnectErr = func(n int) error {
		if n <= 3 {
			return errors.New("dial tcp: connection refused")
		}
		return nil
	}
	r := newRig(t, rigOptions{phone: phone})
	r.client()
	if phone.Connects() != 4 || r.sleeps.count() != 3 {
		t.Errorf("connects %d, waits %d; want 4 and 3", phone.Connects(), r.sleeps.count())
	}
	r.sleeps.mu.Lock()
	defer r.sleeps.mu.Unlock()
	for i := 1; i < len(r.sleeps.calls); i++ {
		if r.sleeps.calls[i] < r.sleeps.calls[i-1]/2 {
			t.Errorf("backoff %v then %v: not growing", r.sleeps.calls[i-1], r.sleeps.calls[i])
		}
	}
}

func TestConnectNoticeOnce(t *testing.T) {
	r := newRig(t, rigOptions{})
	cli := r.client()
	r.rec.Wait(t, "the connect notice", func() bool { return len(r.rec.Notices()) == 1 })
	n := r.rec.Notices()[0]
	if n.Text != "WhatsApp connected as +15550001111." || n.AgentID != "main" {
		t.Errorf("notice %+v", n)
	}
	before := cli.Connects()
	cli.Emit(&events.Disconnected{})
	if !bridgetest.Eventually(func() bool { return cli.Connects() > before && r.b.Status().State == bridges.StateConnected }) {
		t.Fatal("no reconnect")
	}
	if len(r.rec.Notices()) != 1 {
		t.Errorf("%d notices, want one: a reconnect is not news", len(r.rec.Notices()))
	}
}

func TestUnlinkedStoreWaits(t *testing.T) {
	r := newRig(t, rigOptions{unlinked: true})
	st := r.state(bridges.StateLoggedOut)
	if !strings.Contains(st.LastError, "switchboard whatsapp link") {
		t.Errorf("reason %q does not say how to link", st.LastError)
	}
	if r.phone.Connects() != 0 {
		t.Errorf("%d connects without credentials", r.phone.Connects())
	}
}
