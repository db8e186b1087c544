package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/bridges/slack/slacktest"
	"github.com/switchboardhq/switchboard/bridges/telegram/telegramtest"
	"github.com/switchboardhq/switchboard/gateway/client"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// `switchboard run` with channels.telegram enabled answers a Telegram DM
// through the configured Bot API server and reports the bridge on
// channels.status and /readyz.
func TestRunAnswersTelegram(t *testing.T) {
	tg := telegramtest.New(t)
	state := t.TempDir()
	env := map[string]string{"SWITCHBOARD_STATE_DIR": state, "TG_TOKEN": tg.Token}
	cfgPath := testConfig(t, freePort(t))
	f, err := os.OpenFile(cfgPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString(`channels:
  telegram:
    enabled: true
    botToken: ${TG_TOKEN}
    apiUrl: ` + tg.URL + `
    dmPolicy: open
    allowFrom: ["*"]
    pollTimeoutSeconds: 1
`)
	f.Close()

	tc := newTestCLI(env)
	done := make(chan int, 1)
	go func() { done <- tc.run("run", "--config", cfgPath, "--log-format", "json") }()
	base := "http://" + listenAddr(t, tc.err.String)
	waitReady(t, base)

	tg.PushUpdate(tg.TextMessage(42, telegramtest.ChatPrivate, telegramtest.User{ID: 42, FirstName: "Ada"}, "hello from telegram"))
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	sent, err := tg.WaitSent(ctx, 1)
	if err != nil {
		t.Fatalf("no answer on Telegram: %v\n%s", err, tc.err.String())
	}
	if sent[0].ChatID != 42 || !strings.Contains(sent[0].PlainText, "hello from telegram") {
		t.Errorf("answer = %+v, want the echo of the message", sent[0])
	}

	tokCLI := newTestCLI(env)
	tokCLI.run("gateway", "token", "--config", cfgPath)
	c, err := client.Dial(ctx, client.Options{URL: strings.Replace(base, "http", "ws", 1) + "/", Token: strings.TrimSpace(tokCLI.out.String()),
		Scopes: []string{protocol.ScopeRead, protocol.ScopeWrite}})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := c.Call(ctx, "channels.status", nil)
	if err != nil {
		t.Fatal(err)
	}
	// send reaches a Telegram chat by target.
	if _, err := c.Call(ctx, "send", map[string]any{"to": "telegram:42", "message": "**heads up**", "idempotencyKey": "s-1"}); err != nil {
		t.Fatalf("send: %v", err)
	}
	c.Close()
	if sent, err := tg.WaitSent(ctx, 2); err != nil || sent[1].ChatID != 42 || !strings.Contains(sent[1].PlainText, "heads up") {
		t.Errorf("send to telegram:42 = %+v, %v", sent, err)
	}
	var status struct {
		ChannelAccounts map[string][]struct {
			State     string
			Connected bool
		}
	}
	_ = json.Unmarshal(raw, &status)
	if acc := status.ChannelAccounts["telegram"]; len(acc) != 1 || acc[0].State != "connected" || !acc[0].Connected {
		t.Errorf("channels.status = %s", raw)
	}
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"channel:telegram":"connected"`) {
		t.Errorf("/readyz = %d %s", resp.StatusCode, body)
	}

	tc.sigs <- os.Interrupt
	if code := <-done; code != exitOK {
		t.Fatalf("run exit %d: %s", code, tc.err.String())
	}
	if strings.Contains(tc.err.String(), tg.Token) {
		t.Error("the bot token appears in the daemon's logs")
	}
}

// `switchboard run` with channels.slack enabled answers a Slack DM in
// Socket Mode through the configured API.
func TestRunAnswersSlack(t *testing.T) {
	srv := slacktest.New(t)
	state := t.TempDir()
	env := map[string]string{"SWITCHBOARD_STATE_DIR": state, "SLACK_BOT": srv.BotToken, "SLACK_APP": srv.AppToken}
	cfgPath := testConfig(t, freePort(t))
	f, err := os.OpenFile(cfgPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString(`channels:
  slack:
    enabled: true
    botToken: ${SLACK_BOT}
    appToken: ${SLACK_APP}
    apiUrl: ` + srv.APIURL + `
    dmPolicy: open
    allowFrom: ["*"]
`)
	f.Close()
	tc := newTestCLI(env)
	done := make(chan int, 1)
	go func() { done <- tc.run("run", "--config", cfgPath, "--log-format", "json") }()
	waitReady(t, "http://"+listenAddr(t, tc.err.String))
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := srv.WaitConnected(ctx, 1); err != nil {
		t.Fatalf("the bridge never opened Socket Mode: %v\n%s", err, tc.err.String())
	}
	id := srv.PushEvent(srv.Message("D100", "U9", "hello from slack", slacktest.WithChannelType("im")))
	if _, err := srv.WaitAck(ctx, id); err != nil {
		t.Fatalf("event not acked: %v", err)
	}
	sent, err := srv.WaitSent(ctx, 1)
	if err != nil {
		t.Fatalf("no answer on Slack: %v\n%s", err, tc.err.String())
	}
	if sent[0].Channel != "D100" || !strings.Contains(sent[0].Text, "hello from slack") {
		t.Errorf("answer = %+v, want the echo in the DM", sent[0])
	}
	tc.sigs <- os.Interrupt
	if code := <-done; code != exitOK {
		t.Fatalf("run exit %d: %s", code, tc.err.String())
	}
	for _, secret := range []string{srv.BotToken, srv.AppToken} {
		if strings.Contains(tc.err.String(), secret) {
			t.Error("a Slack token appears in the daemon's logs")
		}
	}
}
