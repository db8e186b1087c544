package whatsapp_test

import (
	"testing"

	"go.mau.fi/whatsmeow/types/events"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/bridgetest"
	"github.com/switchboardhq/switchboard/bridges/whatsapp"
	"github.com/switchboardhq/switchboard/bridges/whatsapp/whatsapptest"
)

// TestCredentialsSurviveRestarts is matrix row 19's restart path: the
// device store keeps the linked device across 10 restarts, including
// ones after a disconnect, a takeover and a stop mid-reconnect; only an
// explicit logout deletes it.
func TestCredentialsSurviveRestarts(t *testing.T) {
	path := whatsapp.StorePath(t.TempDir())
	phone := whatsapptest.New()
	first := newRig(t, rigOptions{path: path, phone: phone})
	first.client()
	first.shutdown()
	for i := range 10 {
		r := newRig(t, rigOptions{path: path, phone: phone, unlinked: true})
		cli := r.client() // logged in from the stored credentials
		if cli.Device.ID == nil || cli.Device.ID.User != me.User {
			t.Fatalf("restart %d: device %v", i, cli.Device.ID)
		}
		switch i % 3 {
		case 0:
			cli.Emit(&events.Disconnected{})
		case 1:
			cli.Emit(&events.StreamReplaced{})
			r.state(bridges.StateFailed)
		}
		r.shutdown()
		st, err := whatsapp.OpenStore(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		jid, ok, err := st.Linked(t.Context())
		st.Close()
		if err != nil || !ok || jid.User != me.User {
			t.Fatalf("after restart %d: linked %v %v (%v)", i, ok, jid, err)
		}
	}
	if !bridgetest.Eventually(func() bool {
		for _, c := range phone.Clients() {
			if c.IsConnected() {
				return false
			}
		}
		return true
	}) {
		t.Error("a client stayed connected after its bridge stopped")
	}
}
