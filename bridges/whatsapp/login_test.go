package whatsapp_test

import (
	"errors"
	"strings"
	"testing"

	"go.mau.fi/whatsmeow"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/bridgetest"
	"github.com/switchboardhq/switchboard/bridges/whatsapp"
	"github.com/switchboardhq/switchboard/bridges/whatsapp/whatsapptest"
)

func TestLinkByQRWhileRunning(t *testing.T) {
	r := newRig(t, rigOptions{unlinked: true})
	r.state(bridges.StateLoggedOut)
	ch, err := r.b.LoginStart(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	if ch.QR != r.phone.QRCodes[0] || ch.PairingCode != "" || ch.Linked {
		t.Fatalf("first challenge %+v", ch)
	}
	linker := r.phone.Last()
	linker.RefreshQR("2@fresh-code")
	ch, err = r.b.LoginWait(t.Context())
	if !errors.Is(err, bridges.ErrLoginRefresh) || ch.QR != "2@fresh-code" {
		t.Fatalf("refresh: %+v, %v", ch, err)
	}
	if err := linker.Pair(t.Context(), me); err != nil {
		t.Fatal(err)
	}
	ch, err = r.b.LoginWait(t.Context())
	if err != nil || !ch.Linked || ch.Account != "+15550001111" {
		t.Fatalf("after pairing: %+v, %v", ch, err)
	}
	// The running bridge picks the new device up without a restart.
	r.state(bridges.StateConnected)
	if r.phone.Last() == linker {
		t.Error("the bridge runs on the linking client; want its own")
	}
	if linker.IsConnected() {
		t.Error("the linking client is still connected")
	}
	if jid, ok, err := r.st.Linked(t.Context()); err != nil || !ok || jid.User != me.User {
		t.Errorf("store after linking: %v %v %v", jid, ok, err)
	}
	r.rec.Wait(t, "the connect notice", func() bool { return len(r.rec.Notices()) == 1 })
}

func TestLinkByPhoneNumber(t *testing.T) {
	r := newRig(t, rigOptions{unlinked: true})
	ch, err := r.b.LoginStart(t.Context(), "+1 555 000 1111")
	if err != nil {
		t.Fatal(err)
	}
	linker := r.phone.Last()
	if ch.PairingCode != "ABCD-EFGH" || ch.QR != "" || linker.PairedPhone() != "+1 555 000 1111" {
		t.Fatalf("challenge %+v for phone %q", ch, linker.PairedPhone())
	}
	// QR refreshes do not matter for a pairing code.
	linker.RefreshQR("2@ignored")
	if err := linker.Pair(t.Context(), me); err != nil {
		t.Fatal(err)
	}
	ch, err = r.b.LoginWait(t.Context())
	if err != nil || !ch.Linked {
		t.Fatalf("after pairing: %+v, %v", ch, err)
	}
	if _, err := r.b.LoginStart(t.Context(), "12"); err == nil || !strings.Contains(err.Error(), "international form") {
		t.Errorf("a bad phone number: %v", err)
	}
}

func TestLinkRefusedWhenLinked(t *testing.T) {
	r := newRig(t, rigOptions{})
	r.client()
	if _, err := r.b.LoginStart(t.Context(), ""); !errors.Is(err, whatsapp.ErrAlreadyLinked) {
		t.Errorf("LoginStart on a linked store: %v", err)
	}
	if _, err := r.b.LoginWait(t.Context()); err == nil {
		t.Error("LoginWait without a link under way succeeded")
	}
}

func TestLinkExpires(t *testing.T) {
	r := newRig(t, rigOptions{unlinked: true})
	if _, err := r.b.LoginStart(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	r.phone.Last().EndQR(whatsmeow.QRChannelTimeout)
	_, err := r.b.LoginWait(t.Context())
	if err == nil || !strings.Contains(err.Error(), "start linking again") {
		t.Errorf("expired codes: %v", err)
	}
	if _, ok, _ := r.st.Linked(t.Context()); ok {
		t.Error("linked without a scan")
	}
}

func TestLogout(t *testing.T) {
	r := newRig(t, rigOptions{})
	cli := r.client()
	if err := r.b.Logout(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !cli.LoggedOut() {
		t.Error("WhatsApp was not asked to unlink the device")
	}
	st := r.state(bridges.StateLoggedOut)
	if !strings.Contains(st.LastError, "logged out by the owner") {
		t.Errorf("reason %q", st.LastError)
	}
	sessionEnded(t, cli)
	if _, ok, _ := r.st.Linked(t.Context()); ok {
		t.Error("credentials kept after an explicit logout")
	}
	// Linking again brings it back.
	if _, err := r.b.LoginStart(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	if err := r.phone.Last().Pair(t.Context(), me); err != nil {
		t.Fatal(err)
	}
	if ch, err := r.b.LoginWait(t.Context()); err != nil || !ch.Linked {
		t.Fatalf("relink: %+v %v", ch, err)
	}
	r.state(bridges.StateConnected)
}

func TestLogoutOffline(t *testing.T) {
	phone := whatsapptest.New()
	phone.LogoutErr = errors.New("websocket not connected")
	r := newRig(t, rigOptions{phone: phone})
	r.client()
	err := r.b.Logout(t.Context())
	if err == nil || !strings.Contains(err.Error(), "Linked devices") {
		t.Errorf("offline logout: %v", err)
	}
	if _, ok, _ := r.st.Linked(t.Context()); ok {
		t.Error("the owner asked to log out; local credentials must go even offline")
	}
}

func TestLogoutStoreWithoutBridge(t *testing.T) {
	dir := t.TempDir()
	st, err := whatsapp.OpenStore(t.Context(), whatsapp.StorePath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	phone := whatsapptest.New()
	if err := whatsapp.LogoutStore(t.Context(), st, phone.NewClient, nil); err == nil || !strings.Contains(err.Error(), "no account is linked") {
		t.Errorf("logout of an empty store: %v", err)
	}
	link(t, st)
	if err := whatsapp.LogoutStore(t.Context(), st, phone.NewClient, nil); err != nil {
		t.Fatal(err)
	}
	if !phone.Last().LoggedOut() {
		t.Error("WhatsApp was not told")
	}
	if _, ok, _ := st.Linked(t.Context()); ok {
		t.Error("still linked")
	}
	if !bridgetest.Eventually(func() bool { return !phone.Last().IsConnected() }) {
		t.Error("the logout client stayed connected")
	}
}
