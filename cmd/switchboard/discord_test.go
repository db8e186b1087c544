package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/bridges/discord/discordtest"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/gateway/client"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// runningDaemon is `switchboard run` in-process, for end-to-end tests of
// the bridges.
type runningDaemon struct {
	tc   *testCLI
	base string
	cfg  string
	env  map[string]string
	// setup prepares each run's CLI (fakes to inject).
	setup []func(*testCLI)
	done  chan int
	// exited is set once the exit code was taken from done.
	exited bool
}

// startDaemon runs the daemon, heartbeats off, with a fake Anthropic
// model playing its script and channelsYAML (a `channels:` section)
// appended to the config; setup, if any, prepares the CLI that runs it
// (e.g. a fake WhatsApp).
func startDaemon(t *testing.T, model *llmtest.Server, env map[string]string, channelsYAML string, setup ...func(*testCLI)) *runningDaemon {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	writeFile(t, cfg, fmt.Sprintf(`stateDir: %s
gateway:
  port: %d
models:
  providers:
    fake:
      api: anthropic-messages
      baseUrl: %s
      apiKey: test-key
      models:
        - id: scripted
          contextWindow: 200000
          maxTokens: 1024
agents:
  defaults:
    model: {primary: fake/scripted}
    # Off: a beat falls at a moment hashed from the device id, anywhere in
    # the 30 minutes, and one during a test took the model's one scripted
    # answer (the outage test failed 1 run in 20 so).
    heartbeat: {every: 0m}
messages:
  queue:
    debounceMs: 0
%s`, filepath.Join(dir, "state"), freePort(t), model.BaseURL, channelsYAML))
	return launchDaemon(t, cfg, env, setup)
}

// launchDaemon runs `switchboard run` with the config file cfg and waits
// until it is ready.
func launchDaemon(t *testing.T, cfg string, env map[string]string, setup []func(*testCLI)) *runningDaemon {
	t.Helper()
	d := &runningDaemon{tc: newTestCLI(env), cfg: cfg, env: env, setup: setup, done: make(chan int, 1)}
	for _, f := range setup {
		f(d.tc)
	}
	go func() { d.done <- d.tc.run("run", "--config", cfg, "--log-format", "json") }()
	d.base = "http://" + listenAddr(t, d.tc.err.String)
	waitReady(t, d.base)
	t.Cleanup(func() {
		if d.exited {
			return
		}
		d.tc.sigs <- os.Interrupt
		<-d.done
	})
	return d
}

// readyLine waits for the daemon's "switchboard ready" log line, which it
// writes after /readyz starts answering 200, and returns the log so far.
func (d *runningDaemon) readyLine(t *testing.T) string {
	t.Helper()
	var logs string
	if !eventually(10*time.Second, func() bool {
		logs = d.tc.err.String()
		return strings.Contains(logs, `"msg":"switchboard ready"`)
	}) {
		t.Fatalf("no switchboard ready line in the log:\n%s", logs)
	}
	return logs
}

// cli returns a CLI with the daemon's environment and setup, for commands
// that reach it.
func (d *runningDaemon) cli() *testCLI {
	tc := newTestCLI(d.env)
	for _, f := range d.setup {
		f(tc)
	}
	return tc
}

// stop stops the daemon and checks it exits cleanly.
func (d *runningDaemon) stop(t *testing.T) {
	t.Helper()
	d.tc.sigs <- os.Interrupt
	code := <-d.done
	d.exited = true
	if code != exitOK {
		t.Fatalf("run exit %d: %s", code, d.tc.err.String())
	}
}

// channelState returns channels.status's entry for channel.
func (d *runningDaemon) channelState(t *testing.T, channel string) (state string, connected bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tok := newTestCLI(d.env)
	tok.run("gateway", "token", "--config", d.cfg)
	c, err := client.Dial(ctx, client.Options{URL: strings.Replace(d.base, "http", "ws", 1) + "/", Token: strings.TrimSpace(tok.out.String()),
		Scopes: []string{protocol.ScopeRead}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	raw, err := c.Call(ctx, "channels.status", nil)
	if err != nil {
		t.Fatal(err)
	}
	var status struct {
		ChannelAccounts map[string][]struct {
			State     string
			Connected bool
		}
	}
	_ = json.Unmarshal(raw, &status)
	acc := status.ChannelAccounts[channel]
	if len(acc) != 1 {
		t.Fatalf("channels.status has %d %s accounts: %s", len(acc), channel, raw)
	}
	return acc[0].State, acc[0].Connected
}

// readyz returns /readyz's body.
func (d *runningDaemon) readyz(t *testing.T) string {
	t.Helper()
	resp, err := http.Get(d.base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}

// `switchboard run` with channels.discord: a DM is answered; in a guild
// channel an unmentioned message is not (it becomes context), a mention
// is, with a 5,000-character answer split into valid Discord messages;
// a thread reply lands in the thread under its own session.
func TestRunAnswersDiscord(t *testing.T) {
	long := strings.Repeat("Here is a detailed paragraph about the question you asked. ", 85)
	model := llmtest.NewAnthropicServer(t,
		llmtest.Text("Hi Ada."),
		llmtest.Text(long),
		llmtest.Text("Answered in the thread."),
	)
	srv := discordtest.New(t)
	const channel, thread = "7700000000000000001", "7700000000000000002"
	srv.AddChannel(discordtest.Channel{ID: channel, Type: discordtest.ChannelGuildText, Name: "general"})
	d := startDaemon(t, model, map[string]string{"DISCORD_TOKEN": srv.Token}, `channels:
  discord:
    enabled: true
    token: ${DISCORD_TOKEN}
    apiUrl: `+srv.APIURL+`
    dmPolicy: open
    allowFrom: ["*"]
    guilds:
      "`+discordtest.DefaultGuildID+`": {}
`)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ada := discordtest.User{ID: "2200000000000000001", Username: "ada"}

	// DM.
	dm := srv.DMChannel(ada)
	srv.PushMessageCreate(srv.DirectMessage(ada, "hello"))
	sent, err := srv.WaitSent(ctx, 1)
	if err != nil {
		t.Fatalf("no DM answer: %v\n%s", err, d.tc.err.String())
	}
	if sent[0].ChannelID != dm.ID || sent[0].Content != "Hi Ada." {
		t.Errorf("DM answer = %+v", sent[0])
	}

	// Channel: unmentioned, then mentioned.
	srv.PushMessageCreate(srv.GuildMessage(channel, ada, "just chatting about the weather"))
	srv.PushMessageCreate(srv.GuildMessage(channel, ada, srv.BotMention()+" write me a long answer"))
	if err := srv.WaitFor(ctx, func() bool { return len(srv.Sent()) >= 4 }); err != nil {
		t.Fatalf("no channel answer: %v (sent %d)", err, len(srv.Sent()))
	}
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests after the channel messages, want 2 (the unmentioned one is not answered)", len(reqs))
	}
	if body := string(reqs[1].Body); !strings.Contains(body, "just chatting about the weather") || !strings.Contains(body, "write me a long answer") {
		t.Errorf("the mention's turn lacks the channel history or the message: %.300s", body)
	}
	if err := srv.WaitFor(ctx, func() bool {
		var n int
		for _, m := range srv.Sent() {
			if m.ChannelID == channel {
				n += len(m.Content)
			}
		}
		return n >= len(strings.TrimSpace(long))-10
	}); err != nil {
		t.Fatalf("the long answer did not arrive: %v", err)
	}
	var joined strings.Builder
	chunks := 0
	for _, m := range srv.Sent()[1:] {
		if m.ChannelID != channel {
			continue
		}
		chunks++
		if n := len([]rune(m.Content)); n > 2000 {
			t.Errorf("a message of %d characters", n)
		}
		joined.WriteString(m.Content + " ")
	}
	if chunks < 3 || strings.Join(strings.Fields(joined.String()), " ") != strings.Join(strings.Fields(long), " ") {
		t.Errorf("%d chunks; the answer was not kept whole in order", chunks)
	}

	// Thread: its own session, answered in the thread.
	before := len(srv.Sent())
	srv.PushMessageCreate(srv.ThreadMessage(thread, channel, ada, srv.BotMention()+" and in here?"))
	if err := srv.WaitFor(ctx, func() bool { return len(srv.Sent()) > before }); err != nil {
		t.Fatalf("no thread answer: %v", err)
	}
	if m := srv.Sent()[before]; m.ChannelID != thread || m.Content != "Answered in the thread." {
		t.Errorf("thread answer = %+v, want it in the thread", m)
	}
	if body := string(model.Requests()[2].Body); strings.Contains(body, "write me a long answer") {
		t.Error("the thread's turn carries the parent channel's conversation: it should be its own session")
	}

	if state, connected := d.channelState(t, "discord"); state != "connected" || !connected {
		t.Errorf("channels.status discord = %s %v", state, connected)
	}
	if body := d.readyz(t); !strings.Contains(body, `"channel:discord":"connected"`) {
		t.Errorf("/readyz = %s", body)
	}
	d.stop(t)
	if strings.Contains(d.tc.err.String(), srv.Token) {
		t.Error("the bot token appears in the daemon's logs")
	}
}
