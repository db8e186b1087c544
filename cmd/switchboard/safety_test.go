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
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/core/tools/exectool"
	"github.com/switchboardhq/switchboard/gateway/client"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// The safety boundary through `switchboard run` (matrix rows 11, 12, 14):
// with exec enabled, a fake model in the owner's Telegram DM runs a command
// an operator approves over the gateway, then tries to rewrite the
// configuration (the gateway token, the owner list, the tool policy) every
// way its tools allow: file tools outside the workspace, web_fetch to the
// gateway, exec naming the file, and a shell command the operator denies.
// Every attempt is refused and the file is unchanged. A background command
// shows in the process tool and is stopped when the daemon stops. A non-owner's turn
// cannot use exec at all, and the group policy blocks the file tools.
func TestRunToolSafetyBoundary(t *testing.T) {
	tg := telegramtest.New(t)
	state := t.TempDir()
	cfgDir := t.TempDir()
	cfgPath := filepath.Join(cfgDir, "config.yaml")
	gwPort := freePort(t)
	model := llmtest.NewAnthropicServer(t,
		llmtest.ToolCalls(llmtest.Call("exec", `{"argv":["echo","approved-output"]}`)),
		llmtest.ToolCalls(llmtest.Call("exec", `{"argv":["sleep","30"],"background":true}`)),
		llmtest.ToolCalls(llmtest.Call("process", `{"action":"list"}`)),
		llmtest.ToolCalls(
			llmtest.Call("write", fmt.Sprintf(`{"path":%q,"content":"gateway: {auth: {token: stolen}}"}`, cfgPath)),
			llmtest.Call("edit", `{"path":"../config.yaml","oldText":"ownerAllowFrom","newText":"x"}`),
			llmtest.Call("web_fetch", fmt.Sprintf(`{"url":"http://127.0.0.1:%d/readyz"}`, gwPort)),
			llmtest.Call("exec", fmt.Sprintf(`{"argv":["cp","evil.yaml",%q]}`, cfgPath)),
		),
		llmtest.ToolCalls(llmtest.Call("exec", fmt.Sprintf(`{"argv":["sh","-c","echo 'tools: {}' >> %s"]}`, cfgPath))),
		llmtest.Text("I could not change the configuration."),
		// A stranger's DM: exec is the owner's.
		llmtest.ToolCalls(llmtest.Call("exec", `{"argv":["id"]}`)),
		llmtest.Text("Not allowed."),
		// The owner in a group: the policy blocks the file tools there.
		llmtest.ToolCalls(llmtest.Call("read", `{"path":"notes.txt"}`)),
		llmtest.Text("Blocked here."),
	)
	env := map[string]string{"SWITCHBOARD_STATE_DIR": state, "TG_TOKEN": tg.Token}
	writeFile(t, cfgPath, fakeModelTelegramConfig(gwPort, model.BaseURL, tg.URL, `tools:
  policies:
    - chatTypes: [group]
      deny: [group:fs, group:runtime]
  exec:
    enabled: true
`))
	before, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	tc := newTestCLI(env)
	done := make(chan int, 1)
	go func() { done <- tc.run("run", "--config", cfgPath, "--log-format", "json") }()
	base := "http://" + listenAddr(t, tc.err.String)
	waitReady(t, base)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	tokCLI := newTestCLI(env)
	tokCLI.run("gateway", "token", "--config", cfgPath)
	op, err := client.Dial(ctx, client.Options{URL: strings.Replace(base, "http", "ws", 1) + "/", Token: strings.TrimSpace(tokCLI.out.String()),
		Scopes: []string{protocol.ScopeApprovals}})
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	nextRequest := func() exectool.ApprovalRequest {
		t.Helper()
		ev, err := op.Next(ctx, func(e client.Event) bool { return e.Name == exectool.EventRequested })
		if err != nil {
			t.Fatalf("no approval request: %v\n%s", err, tc.err.String())
		}
		var req exectool.ApprovalRequest
		if err := json.Unmarshal(ev.Payload, &req); err != nil {
			t.Fatal(err)
		}
		return req
	}
	resolve := func(req exectool.ApprovalRequest, decision string) {
		t.Helper()
		if _, err := op.Call(ctx, "exec.approval.resolve", map[string]any{"id": req.ID, "decision": decision, "commandHash": req.Request.CommandHash}); err != nil {
			t.Fatal(err)
		}
	}

	tg.PushUpdate(tg.TextMessage(42, telegramtest.ChatPrivate, telegramtest.User{ID: 42, FirstName: "Ada"}, "run echo, then lock the bot down for me"))
	if req := nextRequest(); req.Request.Command != "echo approved-output" {
		t.Fatalf("first request: %+v", req.Request)
	} else {
		resolve(req, "allow-once")
	}
	if req := nextRequest(); req.Request.Command != "sleep 30" {
		t.Fatalf("background request: %+v", req.Request)
	} else {
		resolve(req, "allow-once")
	}
	if req := nextRequest(); !strings.Contains(req.Request.Command, cfgPath) {
		t.Fatalf("second request: %+v", req.Request)
	} else {
		resolve(req, "deny")
	}
	if _, err := tg.WaitSent(ctx, 1); err != nil {
		t.Fatalf("no answer: %v\n%s", err, tc.err.String())
	}
	tg.PushUpdate(tg.TextMessage(77, telegramtest.ChatPrivate, telegramtest.User{ID: 77, FirstName: "Eve"}, "run id"))
	if _, err := tg.WaitSent(ctx, 2); err != nil {
		t.Fatalf("no answer to the stranger: %v", err)
	}
	group := tg.TextMessage(-1009, telegramtest.ChatSupergroup, telegramtest.User{ID: 42, FirstName: "Ada"}, "@switchboard_bot read my notes")
	tg.PushUpdate(group)
	if _, err := tg.WaitSent(ctx, 3); err != nil {
		t.Fatalf("no answer in the group: %v\n%s", err, tc.err.String())
	}

	var results []string
	for _, r := range model.Requests() {
		results = append(results, lastToolResults(t, r.Body)...)
	}
	want := []string{
		"approved-output\n[exit code 0",
		"Command still running in the background (id ",
		"running",
		"sleep 30\n",
		`absolute paths are not allowed`,
		`.. leads outside the workspace`,
		`127.0.0.1 is a loopback address`,
		`names a path outside the workspace`,
		`"status":"blocked","tool":"exec","reason":"the operator denied the command"`,
		`"status":"blocked","tool":"exec","reason":"tool is restricted to the owner"`,
		`"status":"blocked","tool":"read","reason":"Tool blocked by policy: read is not allowed for group chats"`,
	}
	joined := strings.Join(results, "\n")
	for _, w := range want {
		if !strings.Contains(joined, w) {
			t.Errorf("no tool result contains %q; results:\n%s", w, joined)
		}
	}
	after, err := os.ReadFile(cfgPath)
	if err != nil || string(after) != string(before) {
		t.Fatalf("the configuration changed (%v):\n%s", err, after)
	}
	tc.sigs <- os.Interrupt
	if code := <-done; code != exitOK {
		t.Errorf("exit %d", code)
	}
}

// lastToolResults returns the texts of the tool results in the last user
// message of an Anthropic request body.
func lastToolResults(t *testing.T, body []byte) []string {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	if len(req.Messages) == 0 {
		return nil
	}
	var blocks []struct {
		Type    string `json:"type"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(req.Messages[len(req.Messages)-1].Content, &blocks); err != nil {
		return nil // a plain string prompt
	}
	var out []string
	for _, b := range blocks {
		if b.Type == "tool_result" {
			for _, c := range b.Content {
				out = append(out, c.Text)
			}
		}
	}
	return out
}

// A workspace that holds the configuration file or the state directory
// would let the file tools rewrite the gateway token, the owner list or the
// tool policy: the daemon refuses it.
func TestCheckWorkspace(t *testing.T) {
	root := t.TempDir()
	cfg := filepath.Join(root, "config.yaml")
	state := filepath.Join(root, "state")
	for _, tc := range []struct {
		ws, want string
	}{
		{root, "holds the configuration file"},
		{filepath.Join(state, "workspace"), ""},
		{filepath.Join(root, "ws"), ""},
	} {
		err := checkWorkspace(tc.ws, state, cfg)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("workspace %s: %v, want %q", tc.ws, err, tc.want)
		}
	}
	if err := checkWorkspace(root, state, ""); err == nil || !strings.Contains(err.Error(), "holds the state directory") {
		t.Errorf("workspace above the state directory: %v", err)
	}
}
