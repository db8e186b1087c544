package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/bridges/telegram/telegramtest"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
)

// telegramOn is the configuration that starts the Telegram bridge against
// the fake Bot API srv.
func telegramOn(srv *telegramtest.Server) string {
	return fmt.Sprintf("channels:\n  telegram:\n    enabled: true\n    botToken: %q\n    apiUrl: %q\n    pollTimeoutSeconds: 1\n", telegramtest.DefaultToken, srv.URL)
}

// TestOpenClawCLI runs `openclaw gateway call` for the methods OpenClaw's
// CLI users run, against a real `switchboard run` with a fake model and the
// Telegram bridge on its fake, and checks what each answers, not only that
// it exits 0 (docs/OPENCLAW.md lists them).
func TestOpenClawCLI(t *testing.T) {
	oc := needOpenClaw(t)
	model := llmtest.NewAnthropicServer(t, llmtest.Text("Four, ", "as always."), llmtest.Text("Cron report: all quiet."))
	tg := telegramtest.New(t)
	d := newDaemonWith(t, model, telegramOn(tg))
	d.start()
	tok := d.token()
	home := t.TempDir()
	call := func(method string, params map[string]any) map[string]any {
		t.Helper()
		return oc.mustCall(t, home, d, tok, method, params)
	}

	if h := call("health", nil); h["ok"] != true || h["defaultAgentId"] != "main" {
		t.Errorf("health = %v", h)
	}
	if st := call("status", nil); st["defaultModel"] != "fake/scripted" || st["version"] == "" || st["authMode"] != "token" {
		t.Errorf("status = %v", st)
	}

	// A chat turn: chat.send answers at once with the run; the reply lands
	// in chat.history.
	if res := call("chat.send", map[string]any{"sessionKey": "cli", "message": "What is two and two?", "idempotencyKey": "cli-run-1"}); res["runId"] != "cli-run-1" {
		t.Fatalf("chat.send = %v", res)
	}
	history := func() []any {
		h := call("chat.history", map[string]any{"sessionKey": "cli", "limit": 10})
		if h["sessionKey"] != "agent:main:cli" {
			t.Fatalf("chat.history = %v", h)
		}
		msgs, _ := h["messages"].([]any)
		return msgs
	}
	msgs := history()
	for deadline := time.Now().Add(60 * time.Second); len(msgs) < 2 && time.Now().Before(deadline); {
		msgs = history() // each call is a whole CLI process: seconds apart
	}
	if len(msgs) != 2 || !strings.Contains(fmt.Sprint(msgs[0]), "What is two and two?") || !strings.Contains(fmt.Sprint(msgs[1]), "Four, as always.") {
		t.Fatalf("chat.history messages = %v, want the question and the model's answer", msgs)
	}
	if ab := call("chat.abort", map[string]any{"sessionKey": "cli"}); ab["ok"] != true || ab["aborted"] != false {
		t.Errorf("chat.abort with nothing running = %v", ab)
	}
	list := call("sessions.list", map[string]any{"limit": 10})
	if !slices.ContainsFunc(list["sessions"].([]any), func(s any) bool { return s.(map[string]any)["key"] == "agent:main:cli" }) {
		t.Errorf("sessions.list = %v, want agent:main:cli", list)
	}

	// Cron: add a job, run it now, read its run, remove it.
	job := call("cron.add", map[string]any{
		"name": "CLI report", "schedule": map[string]any{"kind": "every", "everyMs": 3600000},
		"payload": map[string]any{"kind": "agentTurn", "message": "Report."},
	})
	id, _ := job["id"].(string)
	if id == "" || job["name"] != "CLI report" {
		t.Fatalf("cron.add = %v", job)
	}
	if l := call("cron.list", nil); !strings.Contains(fmt.Sprint(l["jobs"]), "CLI report") {
		t.Errorf("cron.list = %v", l)
	}
	if st := call("cron.status", nil); st["enabled"] != true || st["jobs"] != float64(1) {
		t.Errorf("cron.status = %v", st)
	}
	if ran := call("cron.run", map[string]any{"id": id, "mode": "force"}); ran["ran"] != true {
		t.Fatalf("cron.run = %v", ran)
	}
	runs := call("cron.runs", map[string]any{"id": id})
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(fmt.Sprint(runs["entries"]), "status:ok") && time.Now().Before(deadline); {
		runs = call("cron.runs", map[string]any{"id": id})
	}
	if !strings.Contains(fmt.Sprint(runs["entries"]), "status:ok") {
		t.Errorf("cron.runs = %v, want a finished run", runs)
	}
	if rm := call("cron.remove", map[string]any{"id": id}); rm["removed"] != true {
		t.Errorf("cron.remove = %v", rm)
	}

	// The Telegram bridge, connected to its fake.
	ch := call("channels.status", nil)
	if !slices.Contains(ch["channelOrder"].([]any), any("telegram")) {
		t.Errorf("channels.status = %v, want telegram", ch)
	}

	// config.get is a read method in OpenClaw 2026.9.6: the CLI asks for
	// operator.read only. Secrets stay redacted.
	cfg := call("config.get", nil)
	if cfg["valid"] != true || !strings.Contains(fmt.Sprint(cfg["raw"]), fmt.Sprintf("port: %d", d.port)) {
		t.Errorf("config.get = %v", cfg)
	}
	if strings.Contains(fmt.Sprint(cfg), telegramtest.DefaultToken) {
		t.Errorf("config.get shows the bot token: %v", cfg)
	}

	// Device pairing: the list, and a clear error for a request that does
	// not exist.
	if pl := call("device.pair.list", nil); pl["pending"] == nil || pl["paired"] == nil {
		t.Errorf("device.pair.list = %v", pl)
	}
	res := oc.call(t, home, d, tok, "device.pair.approve", map[string]any{"requestId": "no-such-request"})
	if res.err == nil || !strings.Contains(fmt.Sprint(res.err["message"]), "unknown pairing request") {
		t.Errorf("device.pair.approve of an unknown request = %v\n%s", res.err, res.out)
	}
}
