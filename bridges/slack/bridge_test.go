package slack_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/bridgetest"
	"github.com/switchboardhq/switchboard/bridges/slack"
	"github.com/switchboardhq/switchboard/bridges/slack/slacktest"
	"github.com/switchboardhq/switchboard/core"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newBridge(t *testing.T, srv *slacktest.Server) *slack.Bridge {
	t.Helper()
	b, err := slack.New(slack.Options{BotToken: srv.BotToken, AppToken: srv.AppToken, APIURL: srv.APIURL, HTTPClient: srv.Client(),
		Session: core.SessionConfig{DMScope: core.DMScopePerChannelPeer}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// start runs the bridge until the test ends (stopped before the fake).
func start(t *testing.T, b *slack.Bridge, sink bridges.Sink) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Start(ctx, sink) }()
	t.Cleanup(func() { cancel(); <-done })
	if !bridgetest.Eventually(func() bool { return b.Status().State == bridges.StateConnected }) {
		t.Fatalf("the bridge did not connect: %+v", b.Status())
	}
}

func TestSocketModeMessagesAreNormalizedAndAcked(t *testing.T) {
	srv := slacktest.New(t)
	b := newBridge(t, srv)
	sink := &bridgetest.Sink{}
	start(t, b, sink)

	dm := srv.PushEvent(srv.Message("D100", "U9", "hello there", slacktest.WithChannelType("im")))
	srv.PushEvent(srv.Message("C200", srv.Identity.BotUserID, "my own echo", slacktest.FromBot(srv.Identity.BotID)))
	mention := srv.PushEvent(srv.AppMention("C200", "U9", "what is up?", slacktest.InThread("1700000000.000001")))
	ctx, cancel := context.WithTimeout(context.Background(), bridgetest.WaitFor)
	defer cancel()
	for _, id := range []string{dm, mention} {
		if _, err := srv.WaitAck(ctx, id); err != nil {
			t.Fatalf("envelope %s not acked: %v", id, err)
		}
	}
	got := sink.Inbound()
	if len(got) != 2 {
		t.Fatalf("submitted %d messages, want the DM and the mention (not the bot's own): %+v", len(got), got)
	}
	d := got[0].Message
	if d.SessionKey != "agent:main:slack:direct:u9" || d.ChatType != core.ChatDirect || d.Body != "hello there" || d.Route.To != "D100" {
		t.Errorf("DM = %+v", d)
	}
	m := got[1]
	if m.Message.SessionKey != "agent:main:slack:channel:c200:thread:1700000000.000001" || !m.Message.WasMentioned ||
		strings.Contains(m.Message.Body, "<@") || m.Message.Route.ThreadID != "1700000000.000001" || m.GroupID != "C200" {
		t.Errorf("mention = %+v / %+v", m, m.Message)
	}
	if m.DedupeKey == "" || m.DedupeKey == got[0].DedupeKey {
		t.Errorf("dedupe keys %q and %q must be set and differ", got[0].DedupeKey, m.DedupeKey)
	}
}

func TestDeliverMrkdwnChunksInThread(t *testing.T) {
	srv := slacktest.New(t)
	b, err := slack.New(slack.Options{BotToken: srv.BotToken, AppToken: srv.AppToken, APIURL: srv.APIURL, HTTPClient: srv.Client(), ChunkLimit: 100})
	if err != nil {
		t.Fatal(err)
	}
	text := "**Bold** start and a [link](https://example.com).\n\n" + strings.Repeat("More words in a long paragraph. ", 8)
	rc, err := b.Deliver(t.Context(), bridges.Outbound{Route: core.Route{Channel: "slack", To: "C200", ThreadID: "1700000000.000001"}, Text: text})
	if err != nil {
		t.Fatal(err)
	}
	sent := srv.Sent()
	if len(sent) < 2 || len(rc.MessageIDs) != len(sent) {
		t.Fatalf("sent %d chunks (receipt %d), want the answer split", len(sent), len(rc.MessageIDs))
	}
	for i, m := range sent {
		if m.ThreadTS != "1700000000.000001" || len(m.Text) > 100 {
			t.Errorf("chunk %d: thread %q, %d bytes", i, m.ThreadTS, len(m.Text))
		}
	}
	if !strings.HasPrefix(sent[0].Text, "*Bold*") || !strings.Contains(sent[0].Text, "<https://example.com|link>") {
		t.Errorf("mrkdwn = %q", sent[0].Text)
	}
}

func TestInvalidAuthIsTerminal(t *testing.T) {
	srv := slacktest.New(t)
	b, err := slack.New(slack.Options{BotToken: "xoxb-wrong", AppToken: srv.AppToken, APIURL: srv.APIURL, HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	err = b.Start(t.Context(), &bridgetest.Sink{})
	if err == nil || !strings.Contains(err.Error(), "invalid_auth") {
		t.Fatalf("Start = %v, want invalid_auth", err)
	}
	if st := b.Status(); st.State != bridges.StateBadCredentials {
		t.Errorf("status = %+v", st)
	}
}

func TestEventsAPIOverHTTP(t *testing.T) {
	srv := slacktest.New(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	const secret = "signing-secret-0123456789"
	b, err := slack.New(slack.Options{BotToken: srv.BotToken, APIURL: srv.APIURL, HTTPClient: srv.Client(),
		HTTP: &slack.HTTPOptions{SigningSecret: secret, Listen: addr}})
	if err != nil {
		t.Fatal(err)
	}
	sink := &bridgetest.Sink{}
	start(t, b, sink)
	url := "http://" + addr + slack.DefaultEventsPath
	ctx, cancel := context.WithTimeout(context.Background(), bridgetest.WaitFor)
	defer cancel()

	ev := srv.Message("D100", "U9", "over http", slacktest.WithChannelType("im"))
	if code, err := srv.PostEvent(ctx, url, "wrong-secret", ev); err != nil || code != http.StatusUnauthorized {
		t.Errorf("wrong signature: %d %v, want 401", code, err)
	}
	if code, err := srv.PostEvent(ctx, url, secret, ev); err != nil || code != http.StatusOK {
		t.Fatalf("signed event: %d %v", code, err)
	}
	// Slack's retry of the same event carries the same event_id: the same
	// dedupe key, so the journal takes it once.
	if code, err := srv.PostEvent(ctx, url, secret, ev, slacktest.WithRetry(1, "http_timeout")); err != nil || code != http.StatusOK {
		t.Fatalf("retried event: %d %v", code, err)
	}
	got := sink.Inbound()
	if len(got) != 2 || got[0].Message.Body != "over http" || got[0].DedupeKey == "" || got[0].DedupeKey != got[1].DedupeKey {
		t.Fatalf("submitted = %+v", got)
	}
	// url_verification is answered with its challenge.
	body := []byte(`{"type":"url_verification","token":"t","challenge":"c-123"}`)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	now := time.Now().Unix()
	req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(now, 10))
	req.Header.Set("X-Slack-Signature", slack.Sign(secret, now, body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(answer) != "c-123" {
		t.Errorf("url_verification = %d %q, want the challenge", resp.StatusCode, answer)
	}
}
