package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/channels"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"

	"github.com/switchboardhq/switchboard/bridges/whatsapp"
	"github.com/switchboardhq/switchboard/bridges/whatsapp/whatsapptest"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
)

// The bot's own number in these tests, and a person writing to it.
var (
	botJID   = types.NewJID("15550001111", types.DefaultUserServer)
	otherJID = types.NewJID("15550002222", types.DefaultUserServer)
	adaJID   = types.NewJID("15557654321", types.DefaultUserServer)
	groupJID = types.NewJID("120363000000000001", types.GroupServer)
)

// whatsappYAML enables the bridge, open to anyone in DMs and in the test
// group (mention required).
const whatsappYAML = `channels:
  whatsapp:
    enabled: true
    dmPolicy: open
    allowFrom: ["*"]
    groups:
      "120363000000000001@g.us": {}
`

// withPhone makes a CLI build its WhatsApp clients on phone.
func withPhone(phone *whatsapptest.Phone) func(*testCLI) {
	return func(tc *testCLI) { tc.whatsappClient = phone.NewClient }
}

// preLink saves a device linked to jid in stateDir's WhatsApp store, as
// an earlier `switchboard whatsapp link` would have.
func preLink(t *testing.T, stateDir string, jid types.JID) {
	t.Helper()
	ctx := context.Background()
	st, err := whatsapp.OpenStore(ctx, whatsapp.StorePath(stateDir))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	dev, err := st.Device(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := whatsapptest.LinkDevice(ctx, dev, jid, types.EmptyJID); err != nil {
		t.Fatal(err)
	}
}

// linkedIn reads the account linked in stateDir's WhatsApp store, opening
// it afresh.
func linkedIn(t *testing.T, stateDir string) (types.JID, bool) {
	t.Helper()
	ctx := context.Background()
	st, err := whatsapp.OpenStore(ctx, whatsapp.StorePath(stateDir))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	jid, ok, err := st.Linked(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return jid.ToNonAD(), ok
}

// rendered is the terminal QR code of code.
func rendered(code string) string {
	var b bytes.Buffer
	channels.RenderQR(&b, code)
	return b.String()
}

// waitOutput waits until the CLI's stdout contains want.
func waitOutput(t *testing.T, tc *testCLI, want string) {
	t.Helper()
	if !eventually(10*time.Second, func() bool { return strings.Contains(tc.out.String(), want) }) {
		t.Fatalf("stdout never showed %.80q; stdout:\n%s\nstderr:\n%s", want, tc.out.String(), tc.err.String())
	}
}

// runAsync runs a command in the background; its exit code arrives on the
// channel.
func runAsync(tc *testCLI, args ...string) <-chan int {
	done := make(chan int, 1)
	go func() { done <- tc.run(args...) }()
	return done
}

// exitOf waits for a background command's exit code.
func exitOf(t *testing.T, tc *testCLI, done <-chan int) int {
	t.Helper()
	select {
	case code := <-done:
		return code
	case <-time.After(20 * time.Second):
		t.Fatalf("the command did not end; stdout:\n%s\nstderr:\n%s", tc.out.String(), tc.err.String())
		return 0
	}
}

// waitChannel waits until /readyz reports the channel in state.
func (d *runningDaemon) waitChannel(t *testing.T, channel, state string) {
	t.Helper()
	want := `"channel:` + channel + `":"` + state + `"`
	if !eventually(10*time.Second, func() bool { return strings.Contains(d.readyz(t), want) }) {
		t.Fatalf("/readyz never showed %s: %s\n%s", want, d.readyz(t), d.tc.err.String())
	}
}

// sentTexts returns the text messages a client sent to chat.
func sentTexts(c *whatsapptest.Client, chat types.JID) []string {
	var out []string
	for _, s := range c.Sent() {
		if s.To.ToNonAD() == chat && s.Text() != "" {
			out = append(out, s.Text())
		}
	}
	return out
}

// `switchboard run` with channels.whatsapp and a linked device: a DM is
// answered; in a group an unmentioned message is not (it becomes
// context), an @mention of the linked number is; channels.status shows
// the bridge connected, and the main session got the connect notice.
func TestRunAnswersWhatsApp(t *testing.T) {
	model := llmtest.NewAnthropicServer(t,
		llmtest.Text("Hi Ada."),
		llmtest.Text("Sunny, by the look of it."),
		llmtest.Text("Noted."),
	)
	state := t.TempDir()
	preLink(t, state, botJID)
	phone := whatsapptest.New()
	d := startDaemon(t, model, map[string]string{"SWITCHBOARD_STATE_DIR": state}, whatsappYAML, withPhone(phone))
	d.waitChannel(t, whatsapp.Channel, "connected")
	wa := phone.Last()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	// DM.
	if !wa.Emit(whatsapptest.Text(adaJID, adaJID, "3EB0DM000001", "hello")) {
		t.Fatalf("the DM was not acked (not journaled):\n%s", d.tc.err.String())
	}
	if err := phone.WaitFor(ctx, func() bool { return len(sentTexts(wa, adaJID)) >= 1 }); err != nil {
		t.Fatalf("no DM answer: %v\n%s", err, d.tc.err.String())
	}
	if got := sentTexts(wa, adaJID); got[0] != "Hi Ada." {
		t.Errorf("DM answer = %q", got)
	}

	// Group: unmentioned, then mentioned.
	wa.Emit(whatsapptest.Text(groupJID, adaJID, "3EB0GR000001", "just chatting about the weather"))
	wa.Emit(whatsapptest.Extended(groupJID, adaJID, "3EB0GR000002", "@15550001111 what will it be like tomorrow?",
		&waE2E.ContextInfo{MentionedJID: []string{botJID.String()}}))
	if err := phone.WaitFor(ctx, func() bool { return len(sentTexts(wa, groupJID)) >= 1 }); err != nil {
		t.Fatalf("no group answer: %v\n%s", err, d.tc.err.String())
	}
	if got := sentTexts(wa, groupJID); len(got) != 1 || got[0] != "Sunny, by the look of it." {
		t.Errorf("group answers = %q", got)
	}
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests after the group messages, want 2 (the unmentioned one is not answered)", len(reqs))
	}
	if body := string(reqs[1].Body); !strings.Contains(body, "just chatting about the weather") || !strings.Contains(body, "what will it be like tomorrow?") {
		t.Errorf("the mention's turn lacks the group history or the message: %.300s", body)
	}

	// One more turn of the main session (DMs share it under the default
	// dmScope), so the connect notice has surely been queued by its start.
	wa.Emit(whatsapptest.Text(adaJID, adaJID, "3EB0DM000002", "one more thing"))
	if err := phone.WaitFor(ctx, func() bool { return len(sentTexts(wa, adaJID)) >= 2 }); err != nil {
		t.Fatalf("no second DM answer: %v", err)
	}
	notice := "WhatsApp connected as +15550001111."
	var noticed int
	for _, r := range model.Requests() {
		noticed += strings.Count(string(r.Body), notice)
	}
	if noticed == 0 {
		t.Errorf("no turn of the main session carried the notice %q", notice)
	}

	if st, connected := d.channelState(t, whatsapp.Channel); st != "connected" || !connected {
		t.Errorf("channels.status whatsapp = %s %v", st, connected)
	}
	d.stop(t)
	if _, ok := linkedIn(t, state); !ok {
		t.Error("the device store lost the linked device on stop")
	}
}

// The device's credentials survive restarts: ten stops and starts against
// one state directory, and the store still holds the linked device each
// time (reliability-security §2.6: only an explicit logout deletes them).
func TestWhatsAppCredentialsSurviveRestarts(t *testing.T) {
	model := llmtest.NewAnthropicServer(t)
	state := t.TempDir()
	preLink(t, state, botJID)
	phone := whatsapptest.New()
	d := startDaemon(t, model, map[string]string{"SWITCHBOARD_STATE_DIR": state}, whatsappYAML, withPhone(phone))
	for run := 1; run <= 10; run++ {
		d.waitChannel(t, whatsapp.Channel, "connected")
		if n := phone.Connects(); n != run {
			t.Errorf("run %d: %d connection attempts in all, want one per run", run, n)
		}
		d.stop(t)
		if jid, ok := linkedIn(t, state); !ok || jid != botJID {
			t.Fatalf("after run %d the store holds %v (linked %v), want %v", run, jid, ok, botJID)
		}
		fi, err := os.Stat(whatsapp.StorePath(state))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("after run %d the device store is %v, %v; want mode 0600", run, fi, err)
		}
		if run < 10 {
			d = launchDaemon(t, d.cfg, d.env, d.setup)
		}
	}
}

// whatsappCLI is a configuration with nothing listening on its gateway
// port (no daemon), its state directory, and a CLI on a fake phone.
func whatsappCLI(t *testing.T, phone *whatsapptest.Phone) (cfg, state string, newCLI func() *testCLI) {
	t.Helper()
	state = t.TempDir()
	cfg = testConfig(t, freePort(t))
	env := map[string]string{"SWITCHBOARD_STATE_DIR": state}
	return cfg, state, func() *testCLI {
		tc := newTestCLI(env)
		tc.whatsappClient = phone.NewClient
		return tc
	}
}

// Without a daemon, `whatsapp link` links the device store directly: it
// renders each QR code (a fresh one when the first expires) and reports
// the account once the phone confirms; the store then holds the device.
// Linking again leaves the linked account alone.
func TestWhatsAppLinkByQRWithoutTheDaemon(t *testing.T) {
	phone := whatsapptest.New()
	cfg, state, newCLI := whatsappCLI(t, phone)
	tc := newCLI()
	done := runAsync(tc, "whatsapp", "link", "--config", cfg)
	waitOutput(t, tc, rendered(phone.QRCodes[0]))
	wa := phone.Last()
	wa.RefreshQR(phone.QRCodes[1])
	waitOutput(t, tc, "expired")
	waitOutput(t, tc, rendered(phone.QRCodes[1]))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := wa.Pair(ctx, botJID); err != nil {
		t.Fatal(err)
	}
	if code := exitOf(t, tc, done); code != exitOK || !strings.Contains(tc.out.String(), "Linked as +15550001111.") {
		t.Fatalf("link: exit %d\n%s%s", code, tc.out.String(), tc.err.String())
	}
	if jid, ok := linkedIn(t, state); !ok || jid != botJID {
		t.Errorf("the store holds %v (linked %v), want %v", jid, ok, botJID)
	}
	if wa.IsConnected() {
		t.Error("the linking client is still connected after link returned")
	}

	again := newCLI()
	if code := again.run("whatsapp", "link", "--config", cfg); code != exitFailure ||
		!strings.Contains(again.err.String(), "already linked as +15550001111") || !strings.Contains(again.err.String(), "--force") {
		t.Errorf("link while linked: exit %d: %s", code, again.err.String())
	}
	if jid, ok := linkedIn(t, state); !ok || jid != botJID {
		t.Errorf("a refused link changed the store: %v %v", jid, ok)
	}
}

// `whatsapp link --phone` prints the pairing code WhatsApp gave for that
// number instead of a QR code.
func TestWhatsAppLinkByPhoneWithoutTheDaemon(t *testing.T) {
	phone := whatsapptest.New()
	cfg, state, newCLI := whatsappCLI(t, phone)
	tc := newCLI()
	done := runAsync(tc, "whatsapp", "link", "--config", cfg, "--phone", "+15550001111")
	waitOutput(t, tc, "Pairing code: ABCD-EFGH")
	wa := phone.Last()
	if got := wa.PairedPhone(); strings.TrimPrefix(got, "+") != "15550001111" {
		t.Errorf("WhatsApp was asked for a code for %q", got)
	}
	if strings.Contains(tc.out.String(), rendered(phone.QRCodes[0])) {
		t.Error("a QR code was printed in phone mode")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := wa.Pair(ctx, botJID); err != nil {
		t.Fatal(err)
	}
	if code := exitOf(t, tc, done); code != exitOK || !strings.Contains(tc.out.String(), "Linked as +15550001111.") {
		t.Fatalf("link --phone: exit %d\n%s%s", code, tc.out.String(), tc.err.String())
	}
	if _, ok := linkedIn(t, state); !ok {
		t.Error("the store holds no device after linking by phone")
	}

	bad := newCLI()
	if code := bad.run("whatsapp", "link", "--config", cfg, "--phone", "555-CALL-NOW"); code != exitUsage || !strings.Contains(bad.err.String(), "international form") {
		t.Errorf("link with a bad number: exit %d: %s", code, bad.err.String())
	}
}

// Without a daemon, `whatsapp logout` tells WhatsApp and deletes the
// device; `whatsapp status` reports the account, then none.
func TestWhatsAppLogoutAndStatusWithoutTheDaemon(t *testing.T) {
	phone := whatsapptest.New()
	cfg, state, newCLI := whatsappCLI(t, phone)

	st := newCLI()
	if code := st.run("whatsapp", "status", "--config", cfg); code != exitOK ||
		!strings.Contains(st.out.String(), "WhatsApp: not linked") || !strings.Contains(st.out.String(), "daemon is not running") {
		t.Errorf("status before linking: exit %d\n%s%s", code, st.out.String(), st.err.String())
	}
	if _, err := os.Stat(whatsapp.StorePath(state)); !os.IsNotExist(err) {
		t.Errorf("status created the device store: %v", err)
	}
	none := newCLI()
	if code := none.run("whatsapp", "logout", "--config", cfg); code != exitFailure || !strings.Contains(none.err.String(), "nothing to log out") {
		t.Errorf("logout with nothing linked: exit %d: %s", code, none.err.String())
	}

	preLink(t, state, botJID)
	st = newCLI()
	if code := st.run("whatsapp", "status", "--config", cfg); code != exitOK || !strings.Contains(st.out.String(), "WhatsApp: linked as +15550001111") {
		t.Errorf("status when linked: exit %d\n%s%s", code, st.out.String(), st.err.String())
	}
	out := newCLI()
	if code := out.run("whatsapp", "logout", "--config", cfg); code != exitOK || !strings.Contains(out.out.String(), "Logged out") {
		t.Fatalf("logout: exit %d\n%s%s", code, out.out.String(), out.err.String())
	}
	if !phone.Last().LoggedOut() {
		t.Error("WhatsApp was not told of the logout")
	}
	if _, ok := linkedIn(t, state); ok {
		t.Error("the device is still in the store after logout")
	}
}

// With the daemon running the bridge, `whatsapp link` goes through
// web.login.start and web.login.wait: the QR codes come from the bridge,
// the bridge connects as soon as the phone confirms, --force relinks, and
// `whatsapp logout` and `whatsapp status` act on the running bridge.
func TestWhatsAppLinkThroughTheDaemon(t *testing.T) {
	model := llmtest.NewAnthropicServer(t)
	state := t.TempDir()
	phone := whatsapptest.New()
	d := startDaemon(t, model, map[string]string{"SWITCHBOARD_STATE_DIR": state}, whatsappYAML, withPhone(phone))
	d.waitChannel(t, whatsapp.Channel, "logged-out")
	st := d.cli()
	if code := st.run("whatsapp", "status", "--config", d.cfg); code != exitOK ||
		!strings.Contains(st.out.String(), "WhatsApp: not linked") || !strings.Contains(st.out.String(), "Bridge: logged-out (") {
		t.Errorf("status before linking: exit %d\n%s%s", code, st.out.String(), st.err.String())
	}

	link := d.cli()
	done := runAsync(link, "whatsapp", "link", "--config", d.cfg)
	waitOutput(t, link, rendered(phone.QRCodes[0]))
	wa := phone.Last()
	wa.RefreshQR(phone.QRCodes[1])
	waitOutput(t, link, rendered(phone.QRCodes[1]))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := wa.Pair(ctx, botJID); err != nil {
		t.Fatal(err)
	}
	if code := exitOf(t, link, done); code != exitOK || !strings.Contains(link.out.String(), "Linked as +15550001111.") {
		t.Fatalf("link: exit %d\n%s%s", code, link.out.String(), link.err.String())
	}
	d.waitChannel(t, whatsapp.Channel, "connected")
	st = d.cli()
	if code := st.run("whatsapp", "status", "--config", d.cfg); code != exitOK ||
		!strings.Contains(st.out.String(), "WhatsApp: linked as +15550001111") || !strings.Contains(st.out.String(), "Bridge: connected") {
		t.Errorf("status when linked: exit %d\n%s%s", code, st.out.String(), st.err.String())
	}

	again := d.cli()
	if code := again.run("whatsapp", "link", "--config", d.cfg); code != exitFailure || !strings.Contains(again.err.String(), "already linked as +15550001111") {
		t.Errorf("link while linked: exit %d: %s", code, again.err.String())
	}

	// --force logs the account out, then links another.
	bridgeClient := phone.Last()
	relink := d.cli()
	done = runAsync(relink, "whatsapp", "link", "--config", d.cfg, "--force")
	waitOutput(t, relink, rendered(phone.QRCodes[0]))
	if !bridgeClient.LoggedOut() {
		t.Error("--force did not log the linked account out first")
	}
	if err := phone.Last().Pair(ctx, otherJID); err != nil {
		t.Fatal(err)
	}
	if code := exitOf(t, relink, done); code != exitOK || !strings.Contains(relink.out.String(), "Linked as +15550002222.") {
		t.Fatalf("link --force: exit %d\n%s%s", code, relink.out.String(), relink.err.String())
	}
	d.waitChannel(t, whatsapp.Channel, "connected")

	out := d.cli()
	if code := out.run("whatsapp", "logout", "--config", d.cfg); code != exitOK || !strings.Contains(out.out.String(), "Logged out") {
		t.Fatalf("logout: exit %d\n%s%s", code, out.out.String(), out.err.String())
	}
	d.waitChannel(t, whatsapp.Channel, "logged-out")
	if _, ok := linkedIn(t, state); ok {
		t.Error("the device is still in the store after logout through the daemon")
	}
	d.stop(t)
}
