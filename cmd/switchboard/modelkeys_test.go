package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/store"
)

// modelKeyConfig writes a configuration listening on port whose primary
// model is primary, with an Anthropic provider whose key is apiKey (as
// written in the file), and returns its path.
func modelKeyConfig(t *testing.T, port int, primary, apiKey string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	writeFile(t, path, fmt.Sprintf(`gateway:
  port: %d
models:
  providers:
    echo: {api: echo}
    anthropic:
      api: anthropic-messages
      apiKey: %s
    local:
      api: openai-completions
      baseUrl: http://127.0.0.1:11434/v1
      apiKey: ${SB_F5_LOCAL_KEY:-}
agents:
  defaults:
    model: {primary: %s}
`, port, apiKey, primary))
	return path
}

// Issue 26, finding 5: a model key that resolves empty passed `config
// check`, and the agent then called the provider with no key. `config check`
// and `run` now refuse it, naming the key's path, the variable and what to
// do; a provider nothing uses, or a server of one's own, needs no key.
func TestFinding5EmptyModelKeyFailsCheck(t *testing.T) {
	empty := modelKeyConfig(t, freePort(t), "anthropic/claude-opus-4-6", "${SB_F5_ANTHROPIC_KEY:-}")
	wants := []string{
		"models.providers.anthropic.apiKey:",
		"SB_F5_ANTHROPIC_KEY is not set",
		"agents.defaults.model.primary",
		"export SB_F5_ANTHROPIC_KEY=",
		`"echo/echo"`,
	}
	check := newTestCLI(nil)
	code := check.run("config", "check", empty)
	if code != exitUsage || check.out.String() != "" {
		t.Fatalf("config check: exit %d, stdout %q, stderr %q; want exit 2", code, check.out.String(), check.err.String())
	}
	for _, w := range wants {
		if !strings.Contains(check.err.String(), w) {
			t.Errorf("config check: stderr %q lacks %q", check.err.String(), w)
		}
	}
	if !strings.HasPrefix(check.err.String(), empty+":8:15: ") {
		t.Errorf("config check: stderr %q does not point at the apiKey line", check.err.String())
	}

	// run refuses to start: the problem shows at start, not at the first
	// message.
	state := t.TempDir()
	run := newTestCLI(map[string]string{"SWITCHBOARD_STATE_DIR": state})
	done := make(chan int, 1)
	go func() { done <- run.run("run", "--config", empty, "--log-format", "json") }()
	select {
	case code := <-done:
		if code != exitUsage {
			t.Errorf("run: exit %d, want 2", code)
		}
	case <-time.After(10 * time.Second):
		run.sigs <- os.Interrupt
		<-done
		t.Fatalf("run started with an empty model key:\n%s", run.err.String())
	}
	for _, w := range wants {
		if !strings.Contains(run.err.String(), w) {
			t.Errorf("run: stderr %q lacks %q", run.err.String(), w)
		}
	}
	if strings.Contains(run.err.String(), "gateway listening") {
		t.Errorf("run listened before refusing:\n%s", run.err.String())
	}

	// A variable set but empty is named as such.
	setEmpty := newTestCLI(map[string]string{"SB_F5_ANTHROPIC_KEY": ""})
	if code := setEmpty.run("config", "check", empty); code != exitUsage || !strings.Contains(setEmpty.err.String(), "SB_F5_ANTHROPIC_KEY is empty") {
		t.Errorf("set but empty: exit %d, stderr %q", code, setEmpty.err.String())
	}
	// No key written at all: say how to write one.
	none := modelKeyConfig(t, freePort(t), "anthropic/claude-opus-4-6", `""`)
	noKey := newTestCLI(nil)
	if code := noKey.run("config", "check", none); code != exitUsage ||
		!strings.Contains(noKey.err.String(), "models.providers.anthropic.apiKey: ") ||
		!strings.Contains(noKey.err.String(), "api.anthropic.com") ||
		!strings.Contains(noKey.err.String(), "${ANTHROPIC_API_KEY}") {
		t.Errorf("no key: exit %d, stderr %q", code, noKey.err.String())
	}

	for _, ok := range []struct {
		name, primary string
		env           map[string]string
	}{
		{"the key is set", "anthropic/claude-opus-4-6", map[string]string{"SB_F5_ANTHROPIC_KEY": "sk-ant-test"}},
		{"the provider is configured but not used", "echo/echo", nil},
		{"a server of one's own needs no key", "local/llama3", nil},
	} {
		tc := newTestCLI(ok.env)
		path := modelKeyConfig(t, freePort(t), ok.primary, "${SB_F5_ANTHROPIC_KEY:-}")
		if code := tc.run("config", "check", path); code != exitOK {
			t.Errorf("%s: exit %d, stderr %q", ok.name, code, tc.err.String())
		}
	}
}

// Issue 26, finding 5: commands that manage the daemon or its state never
// call a model, so they run when a model key's variable is unset, even
// one written without a default.
func TestFinding5ManagementCommandsWithoutModelKey(t *testing.T) {
	state := t.TempDir()
	st, err := store.Open(t.Context(), state)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.CreateChannelPairingCode(t.Context(), store.ChannelPairingCode{
		Channel: "telegram", AccountID: "default", SenderID: "42", SenderName: "Ada", CreatedAt: time.Now().UnixMilli(),
	}, 0, 3, func() string { return "ABCD2345" }); err != nil {
		t.Fatal(err)
	}
	st.Close()

	cfgPath := modelKeyConfig(t, freePort(t), "anthropic/claude-opus-4-6", "${SB_F5_ANTHROPIC_KEY}")
	// The daemon has the key; the shell the commands run in does not.
	daemon := newTestCLI(map[string]string{"SWITCHBOARD_STATE_DIR": state, "SB_F5_ANTHROPIC_KEY": "sk-ant-test"})
	done := make(chan int, 1)
	go func() { done <- daemon.run("run", "--config", cfgPath, "--log-format", "json") }()
	waitReady(t, "http://"+listenAddr(t, daemon.err.String))
	defer func() {
		daemon.sigs <- os.Interrupt
		if code := <-done; code != exitOK {
			t.Errorf("run exit %d: %s", code, daemon.err.String())
		}
	}()

	env := map[string]string{"SWITCHBOARD_STATE_DIR": state}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"gateway", "token"}, ""},
		{[]string{"cron", "list"}, ""},
		{[]string{"pairing", "list", "telegram"}, "ABCD2345"},
		{[]string{"pairing", "approve", "telegram", "ABCD2345"}, "sender 42"},
		{[]string{"devices", "list"}, ""},
	} {
		tc := newTestCLI(env)
		args := append([]string{"--config", cfgPath}, c.args...)
		code := tc.run(args...)
		if code != exitOK || !strings.Contains(tc.out.String(), c.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", strings.Join(c.args, " "), code, tc.out.String(), tc.err.String())
		}
		if strings.Contains(tc.err.String(), "SB_F5_ANTHROPIC_KEY") {
			t.Errorf("%s: stderr mentions the model key: %q", strings.Join(c.args, " "), tc.err.String())
		}
	}

	// config check still wants it.
	check := newTestCLI(env)
	if code := check.run("config", "check", cfgPath); code != exitUsage || !strings.Contains(check.err.String(), "SB_F5_ANTHROPIC_KEY is not set") {
		t.Errorf("config check: exit %d, stderr %q", code, check.err.String())
	}
}
