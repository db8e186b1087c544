package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/bridges/slack/slacktest"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
)

// `switchboard run` with channels.slack in http mode: a forged request is
// refused; a DM is answered; in a channel an unmentioned message is not
// (it becomes context), a mention is, with a 5,000-character answer split
// at the configured textChunkLimit (3000 here; Slack's 8000 by default); a thread reply gets its own session and the
// answer lands in the thread; a retried event is answered once.
func TestRunAnswersSlackEvents(t *testing.T) {
	long := strings.Repeat("This sentence is part of a long and careful answer. ", 100)
	model := llmtest.NewAnthropicServer(t,
		llmtest.Text("Hi there."),
		llmtest.Text(long),
		llmtest.Text("Answered in the thread."),
	)
	srv := slacktest.New(t)
	const secret = "8f742231b10e8888abcd99yyyzzz85a5"
	port := freePort(t)
	d := startDaemon(t, model, map[string]string{"SLACK_BOT": srv.BotToken, "SLACK_SECRET": secret}, fmt.Sprintf(`channels:
  slack:
    enabled: true
    mode: http
    botToken: ${SLACK_BOT}
    signingSecret: ${SLACK_SECRET}
    apiUrl: %s
    http:
      listen: 127.0.0.1:%d
    dmPolicy: open
    allowFrom: ["*"]
    textChunkLimit: 3000
    groups:
      C100: {}
`, srv.APIURL, port))
	url := fmt.Sprintf("http://127.0.0.1:%d/slack/events", port)
	if !eventually(10*time.Second, func() bool { return strings.Contains(d.readyz(t), `"channel:slack":"connected"`) }) {
		t.Fatalf("/readyz = %s", d.readyz(t))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	post := func(payload any, secret string, opts ...slacktest.DeliveryOption) int {
		t.Helper()
		status, err := srv.PostEvent(ctx, url, secret, payload, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return status
	}

	// Forged: signed with another secret, or stale.
	if got := post(srv.Message("D100", "U9", "forged", slacktest.WithChannelType("im")), "not-the-secret"); got != http.StatusUnauthorized {
		t.Errorf("forged request answered %d, want 401", got)
	}
	if got := post(srv.Message("D100", "U9", "stale", slacktest.WithChannelType("im")), secret, slacktest.SignedAt(time.Now().Add(-301*time.Second))); got != http.StatusUnauthorized {
		t.Errorf("stale request answered %d, want 401", got)
	}

	// DM, delivered twice (Slack's retry): answered once.
	dm := srv.Message("D100", "U9", "hello from slack", slacktest.WithChannelType("im"))
	if got := post(dm, secret); got != http.StatusOK {
		t.Fatalf("DM answered %d", got)
	}
	if got := post(dm, secret, slacktest.WithRetry(1, "http_timeout")); got != http.StatusOK {
		t.Fatalf("retry answered %d", got)
	}
	sent, err := srv.WaitSent(ctx, 1)
	if err != nil {
		t.Fatalf("no DM answer: %v\n%s", err, d.tc.err.String())
	}
	if sent[0].Channel != "D100" || sent[0].Text != "Hi there." {
		t.Errorf("DM answer = %+v", sent[0])
	}

	// Channel: unmentioned, then mentioned.
	post(srv.Message("C100", "U9", "chatter about lunch"), secret)
	mention := srv.AppMention("C100", "U9", "write a long answer please")
	post(mention, secret)
	if err := srv.WaitFor(ctx, func() bool {
		n := 0
		for _, m := range srv.Sent() {
			if m.Channel == "C100" {
				n += len(m.Text)
			}
		}
		return n >= len(strings.TrimSpace(long))-10
	}); err != nil {
		t.Fatalf("the long answer did not arrive: %v (%d sent)\n%s", err, len(srv.Sent()), d.tc.err.String())
	}
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2 (the retry and the unmentioned message are not answered)", len(reqs))
	}
	if body := string(reqs[1].Body); !strings.Contains(body, "chatter about lunch") {
		t.Errorf("the mention's turn lacks the channel history: %.300s", body)
	}
	var joined strings.Builder
	chunks := 0
	for _, m := range srv.Sent() {
		if m.Channel != "C100" {
			continue
		}
		chunks++
		if n := len([]rune(m.Text)); n > 3000 {
			t.Errorf("a chunk of %d characters", n)
		}
		joined.WriteString(m.Text + " ")
	}
	if chunks < 2 || strings.Join(strings.Fields(joined.String()), " ") != strings.Join(strings.Fields(long), " ") {
		t.Errorf("%d chunks; the answer was not kept whole in order", chunks)
	}

	// Thread reply: its own session, answered in the thread.
	root := mention.Event.(*slacktest.MessageEvent).TS
	before := len(srv.Sent())
	post(srv.AppMention("C100", "U9", "and in the thread?", slacktest.InThread(root)), secret)
	if err := srv.WaitFor(ctx, func() bool { return len(srv.Sent()) > before }); err != nil {
		t.Fatalf("no thread answer: %v", err)
	}
	if m := srv.Sent()[before]; m.Channel != "C100" || m.ThreadTS != root || m.Text != "Answered in the thread." {
		t.Errorf("thread answer = %+v, want it in thread %s", m, root)
	}
	if body := string(model.Requests()[2].Body); strings.Contains(body, "write a long answer please") {
		t.Error("the thread's turn carries the channel's conversation: it should be its own session")
	}
	if state, connected := d.channelState(t, "slack"); state != "connected" || !connected {
		t.Errorf("channels.status slack = %s %v", state, connected)
	}
	d.stop(t)
	for _, s := range []string{srv.BotToken, secret} {
		if strings.Contains(d.tc.err.String(), s) {
			t.Error("a Slack secret appears in the daemon's logs")
		}
	}
}
