package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/bridges/telegram/telegramtest"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
)

// The agent's message and cron tools work through `switchboard run` with
// a fake model that calls them: a Telegram DM asks for a note in a group
// and a weekly reminder; the group gets the note, the job is scheduled to
// answer in the DM.
func TestRunToolsEndToEnd(t *testing.T) {
	tg := telegramtest.New(t)
	model := llmtest.NewAnthropicServer(t,
		llmtest.ToolCalls(llmtest.Call("message", `{"to":"telegram:-1007","text":"Team: stand-up moved to 10:00."}`)),
		llmtest.ToolCalls(llmtest.Call("cron", `{"action":"add","name":"Stand-up","cron":"0 9 * * 1","tz":"UTC","message":"Remind the user about the stand-up."}`)),
		llmtest.Text("Told the team, and I will remind you every Monday at 9."),
	)
	state := t.TempDir()
	env := map[string]string{"SWITCHBOARD_STATE_DIR": state, "TG_TOKEN": tg.Token}
	cfgPath := filepath.Join(t.TempDir(), "config.yaml")
	writeFile(t, cfgPath, fakeModelTelegramConfig(freePort(t), model.BaseURL, tg.URL, ""))
	tc := newTestCLI(env)
	done := make(chan int, 1)
	go func() { done <- tc.run("run", "--config", cfgPath, "--log-format", "json") }()
	base := "http://" + listenAddr(t, tc.err.String)
	waitReady(t, base)

	tg.PushUpdate(tg.TextMessage(42, telegramtest.ChatPrivate, telegramtest.User{ID: 42, FirstName: "Ada"}, "tell the team stand-up is at 10, and remind me every Monday at 9"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sent, err := tg.WaitSent(ctx, 2)
	if err != nil {
		t.Fatalf("telegram: %v\n%s", err, tc.err.String())
	}
	var group, dm bool
	for _, m := range sent {
		group = group || (m.ChatID == -1007 && strings.Contains(m.PlainText, "stand-up moved to 10:00"))
		dm = dm || (m.ChatID == 42 && strings.Contains(m.PlainText, "every Monday at 9"))
	}
	if !group || !dm {
		t.Errorf("sent = %+v, want the note in the group and the answer in the DM", sent)
	}

	list := newTestCLI(env)
	if code := list.run("cron", "list", "--config", cfgPath); code != exitOK || !strings.Contains(list.out.String(), "Stand-up") {
		t.Errorf("cron list = %d\n%s%s", code, list.out.String(), list.err.String())
	}
	tc.sigs <- os.Interrupt
	if code := <-done; code != exitOK {
		t.Errorf("exit %d", code)
	}
}

// fakeModelTelegramConfig is the configuration of the end-to-end tool
// tests: the gateway on port, the fake Anthropic server at modelURL, the
// fake Bot API at tgURL with open DMs and groups, Telegram user 42 as the
// owner, and extra top-level YAML.
func fakeModelTelegramConfig(port int, modelURL, tgURL, extra string) string {
	return fmt.Sprintf(`gateway:
  port: %d
models:
  providers:
    fake:
      api: anthropic-messages
      baseUrl: %s
      apiKey: test-key
      models: [{id: scripted, contextWindow: 200000, maxTokens: 1024}]
agents:
  defaults:
    model: {primary: fake/scripted}
    heartbeat: {every: 0m} # a beat would take a scripted answer
messages:
  queue: {debounceMs: 0}
commands:
  ownerAllowFrom: ["telegram:42"]
channels:
  telegram:
    enabled: true
    botToken: ${TG_TOKEN}
    apiUrl: %s
    dmPolicy: open
    allowFrom: ["*"]
    groupPolicy: open
    pollTimeoutSeconds: 1
`, port, modelURL, tgURL) + extra
}
