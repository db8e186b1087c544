package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/bridges/telegram/telegramtest"
	"github.com/switchboardhq/switchboard/config"
	"github.com/switchboardhq/switchboard/gateway/client"
	"github.com/switchboardhq/switchboard/gateway/protocol"
	"github.com/switchboardhq/switchboard/heartbeat"
	"github.com/switchboardhq/switchboard/queue/queuetest"
)

// With the echo model, a heartbeat every minute acks silently (the echo of
// the default prompt ends in HEARTBEAT_OK and is short) and delivers an
// alert to Telegram when a system event makes the reply long: the alert
// arrives without the token, acks never reach the chat.
//
// Issue 22, finding 11: this test failed about 1 run in 25 under CPU load
// ("Status:skipped Reason:requests-in-flight"). The runner was right: a
// heartbeat event can reach a client before the dispatcher has released
// the session, and an interval beat that finds the session busy is
// skipped (a wake is retried after WakeRetry). The test advanced the clock
// at once; it now waits for the session to be free first.
func TestFinding11_RunHeartbeatDeliversAlertsAndSuppressesAcks(t *testing.T) {
	tg := telegramtest.New(t)
	state := t.TempDir()
	env := map[string]string{"SWITCHBOARD_STATE_DIR": state, "TG_TOKEN": tg.Token}
	cfgPath := filepath.Join(t.TempDir(), "config.yaml")
	writeFile(t, cfgPath, telegramHeartbeatConfig(t, fmt.Sprintf(`channels:
  telegram:
    enabled: true
    botToken: ${TG_TOKEN}
    apiUrl: %s
    pollTimeoutSeconds: 1
`, tg.URL)))
	clock := queuetest.NewClock(time.Now())
	tc := newTestCLI(env)
	tc.clock = clock
	done := make(chan int, 1)
	go func() { done <- tc.run("run", "--config", cfgPath, "--log-format", "json") }()
	base := "http://" + listenAddr(t, tc.err.String)
	waitReady(t, base)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	tokCLI := newTestCLI(env)
	tokCLI.run("gateway", "token", "--config", cfgPath)
	c, err := client.Dial(ctx, client.Options{URL: strings.Replace(base, "http", "ws", 1) + "/", Token: strings.TrimSpace(tokCLI.out.String()),
		Scopes: []string{protocol.ScopeRead, protocol.ScopeWrite, protocol.ScopeAdmin}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	beat := func() heartbeat.Event {
		t.Helper()
		// The previous heartbeat's event can arrive before its turn has
		// released the session; a beat that found it busy would be skipped
		// (requests-in-flight) and retried a second later, which is not
		// what this test is about. Wait for the session to be free.
		for {
			raw, err := c.Call(ctx, "health", nil)
			if err != nil {
				t.Fatal(err)
			}
			var h struct {
				Queue struct{ Active int } `json:"queue"`
			}
			if err := json.Unmarshal(raw, &h); err != nil {
				t.Fatal(err)
			}
			if h.Queue.Active == 0 {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatalf("the session stayed busy: %v", ctx.Err())
			case <-time.After(10 * time.Millisecond):
			}
		}
		clock.Advance(time.Minute)
		ev, err := c.Next(ctx, func(e client.Event) bool { return e.Name == "heartbeat" })
		if err != nil {
			t.Fatalf("no heartbeat event: %v\n%s", err, tc.err.String())
		}
		var hb heartbeat.Event
		if err := json.Unmarshal(ev.Payload, &hb); err != nil {
			t.Fatal(err)
		}
		return hb
	}

	if ev := beat(); ev.Status != heartbeat.StatusOkToken || ev.Trigger != "interval" {
		t.Fatalf("first heartbeat = %+v, want an ack", ev)
	}
	news := "Deploy finished: " + strings.Repeat("all 42 services are healthy again after the migration. ", 6)
	if _, err := c.Call(ctx, "wake", map[string]any{"mode": "next-heartbeat", "text": news}); err != nil {
		t.Fatal(err)
	}
	if ev := beat(); ev.Status != heartbeat.StatusSent || ev.To != "-1001" {
		t.Fatalf("heartbeat after the event = %+v, want the alert sent", ev)
	}
	sent, err := tg.WaitSent(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if sent[0].ChatID != -1001 || !strings.Contains(sent[0].PlainText, "Deploy finished") || strings.Contains(sent[0].PlainText, "HEARTBEAT_OK") {
		t.Errorf("alert on Telegram = %+v", sent[0])
	}
	if ev := beat(); ev.Status != heartbeat.StatusOkToken {
		t.Fatalf("third heartbeat = %+v, want an ack", ev)
	}
	if got := len(tg.Sent()); got != 1 {
		t.Errorf("Telegram got %d messages, want only the alert", got)
	}
	last, err := c.Call(ctx, "last-heartbeat", nil)
	if err != nil || !strings.Contains(string(last), `"ok-token"`) {
		t.Errorf("last-heartbeat = %s, %v", last, err)
	}
	tc.sigs <- os.Interrupt
	if code := <-done; code != exitOK {
		t.Errorf("exit %d\n%s", code, tc.err.String())
	}
}

// The default agent's heartbeat is agents.defaults.heartbeat with its
// agents.list entry merged over it.
func TestAgentHeartbeatMergesTheListEntry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	writeFile(t, path, `models:
  providers:
    echo: {api: echo}
agents:
  defaults:
    model: {primary: echo/echo}
    heartbeat: {every: 1h, target: last}
  list:
    - id: main
      heartbeat: {every: 5m, to: "-42"}
`)
	cfg, err := config.Load(path, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	h := agentHeartbeat(cfg)
	if h.Every != "5m" || h.Target != "last" || h.To != "-42" {
		t.Errorf("merged heartbeat = %+v", h)
	}
}

// A heartbeat whose target is a channel the configuration leaves off is
// skipped (no-target) and the log says the channel is off and how to turn
// it on, instead of "no bridge provides channel" (the binary carries the
// bridge; it is only off).
func TestHeartbeatToAChannelThatIsOff(t *testing.T) {
	env := map[string]string{"SWITCHBOARD_STATE_DIR": t.TempDir()}
	cfgPath := filepath.Join(t.TempDir(), "config.yaml")
	writeFile(t, cfgPath, telegramHeartbeatConfig(t, ""))
	clock := queuetest.NewClock(time.Now())
	d := launchDaemon(t, cfgPath, env, []func(*testCLI){func(tc *testCLI) { tc.clock = clock }})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tok := d.cli()
	tok.run("gateway", "token", "--config", cfgPath)
	c, err := client.Dial(ctx, client.Options{URL: strings.Replace(d.base, "http", "ws", 1) + "/", Token: strings.TrimSpace(tok.out.String()),
		Scopes: []string{protocol.ScopeRead, protocol.ScopeAdmin}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// An event makes the echo's reply an alert, which must go somewhere.
	if _, err := c.Call(ctx, "wake", map[string]any{"mode": "next-heartbeat", "text": "Deploy finished"}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	ev, err := c.Next(ctx, func(e client.Event) bool { return e.Name == "heartbeat" })
	if err != nil {
		t.Fatalf("no heartbeat event: %v\n%s", err, d.tc.err.String())
	}
	var hb heartbeat.Event
	if err := json.Unmarshal(ev.Payload, &hb); err != nil {
		t.Fatal(err)
	}
	if hb.Status != heartbeat.StatusSkipped || hb.Reason != heartbeat.ReasonNoTarget {
		t.Errorf("heartbeat event = %+v; want skipped, no-target", hb)
	}
	if logs := d.tc.err.String(); !strings.Contains(logs, `heartbeat target is not a chat its channel can reach`) ||
		!strings.Contains(logs, `\"telegram\" is not enabled`) {
		t.Errorf("the daemon's log does not say telegram is off:\n%s", logs)
	}
}

// telegramHeartbeatConfig is a daemon configuration with the echo model and
// a heartbeat every minute to the Telegram chat -1001, on a free port, with
// extra (top-level YAML) appended.
func telegramHeartbeatConfig(t *testing.T, extra string) string {
	t.Helper()
	return fmt.Sprintf(`gateway:
  port: %d
models:
  providers:
    echo: {api: echo}
agents:
  defaults:
    model: {primary: echo/echo}
    heartbeat:
      every: 1m
      target: telegram
      to: "-1001"
`, freePort(t)) + extra
}
