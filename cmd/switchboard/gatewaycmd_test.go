package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/store"
)

// gatewayConfig writes a configuration whose gateway.auth section is auth,
// and returns its path.
func gatewayConfig(t *testing.T, auth string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	writeFile(t, path, `gateway:
  port: 18790
  auth: `+auth+`
models:
  providers:
    echo: {api: echo}
agents:
  defaults:
    model: {primary: echo/echo}
`)
	return path
}

func TestGatewayTokenFromConfig(t *testing.T) {
	cfg := gatewayConfig(t, `{token: "${SB_TEST_TOKEN}"}`)
	tc := newTestCLI(map[string]string{"SB_TEST_TOKEN": "k3r9-w1x7-q2v8-z5m4"})
	if code := tc.run("--config", cfg, "gateway", "token"); code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, tc.err.String())
	}
	if got := tc.out.String(); got != "k3r9-w1x7-q2v8-z5m4\n" {
		t.Errorf("stdout %q, want the token alone", got)
	}
	if !strings.Contains(tc.err.String(), "gateway.auth.token from "+cfg) || !strings.Contains(tc.err.String(), "http://127.0.0.1:18790/") {
		t.Errorf("stderr %q", tc.err.String())
	}

	tc = newTestCLI(map[string]string{"SB_TEST_TOKEN": "changeme"})
	if code := tc.run("--config", cfg, "gateway", "token"); code != exitOK || tc.out.String() != "changeme\n" || !strings.Contains(tc.err.String(), "refuses this token as too weak") {
		t.Errorf("weak token: exit %d, stdout %q, stderr %q", code, tc.out.String(), tc.err.String())
	}
}

func TestGatewayTokenFromStateDir(t *testing.T) {
	cfg := gatewayConfig(t, "{mode: token}")
	stateDir := filepath.Join(t.TempDir(), "state")
	env := map[string]string{"SWITCHBOARD_STATE_DIR": stateDir}
	// The daemon makes the token on its first start.
	daemonTok, created, err := store.GatewayToken(stateDir)
	if err != nil || !created {
		t.Fatalf("store.GatewayToken = %v, %v", created, err)
	}

	tc := newTestCLI(env)
	if code := tc.run("--config", cfg, "gateway", "token"); code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, tc.err.String())
	}
	if got := tc.out.String(); got != daemonTok+"\n" || !regexp.MustCompile(`^[0-9a-f]{48}\n$`).MatchString(got) {
		t.Fatalf("stdout %q, want the daemon's 48-character hex token and a newline", got)
	}
	if !strings.Contains(tc.err.String(), "This is the gateway token kept in "+filepath.Join(stateDir, store.GatewayTokenFile)) {
		t.Errorf("stderr %q", tc.err.String())
	}

	// A token file others may read is refused, without printing it.
	if err := os.Chmod(filepath.Join(stateDir, store.GatewayTokenFile), 0o644); err != nil {
		t.Fatal(err)
	}
	tc = newTestCLI(env)
	if code := tc.run("--config", cfg, "gateway", "token"); code != exitFailure || tc.out.String() != "" || strings.Contains(tc.err.String(), daemonTok) {
		t.Errorf("leaky file: exit %d, stdout %q, stderr %q", code, tc.out.String(), tc.err.String())
	}
}

// Issue 26, finding 1: after `make run` (config.yaml.example, given with
// --config), the README's `bin/switchboard gateway token` found no
// configuration, and the daemon's log advised the same command; run before
// the daemon had started, the command created the state directory and a
// token as a side effect. Now the daemon's log names the command as the
// user can run it, with --config, and the command creates nothing.
func TestFinding1TokenCommandAfterMakeRun(t *testing.T) {
	model := llmtest.NewAnthropicServer(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml.example")
	stateDir := filepath.Join(dir, "state")
	writeFile(t, cfg, fmt.Sprintf(`stateDir: %s
gateway:
  port: %d
models:
  providers:
    fake: {api: anthropic-messages, baseUrl: %q, apiKey: test-key, models: [{id: scripted}]}
agents:
  defaults:
    model: {primary: fake/scripted}
    heartbeat: {every: 0m}
`, stateDir, freePort(t), model.BaseURL))

	// Before the daemon's first start: nothing to print, nothing made.
	tc := newTestCLI(nil)
	tc.program = "bin/switchboard"
	if code := tc.run("gateway", "token", "--config", cfg); code != exitFailure || tc.out.String() != "" {
		t.Fatalf("before the first start: exit %d, stdout %q", code, tc.out.String())
	}
	if want := "bin/switchboard run --config " + cfg; !strings.Contains(tc.err.String(), "there is no gateway token yet") || !strings.Contains(tc.err.String(), want) {
		t.Errorf("stderr %q, want it to say there is no token yet and to start the daemon with %q", tc.err.String(), want)
	}
	if _, err := os.Stat(stateDir); !os.IsNotExist(err) {
		t.Errorf("gateway token made the state directory: %v", err)
	}

	// The daemon's log names the command as typed, with --config.
	d := launchDaemon(t, cfg, nil, []func(*testCLI){func(tc *testCLI) { tc.program = "bin/switchboard" }})
	want := "bin/switchboard gateway token --config " + cfg
	logs := d.readyLine(t)
	if !strings.Contains(logs, `"msg":"generated a gateway token; clients must send it in their connect request. Print it with: `+want+`"`) ||
		!strings.Contains(logs, `"tokenCommand":"`+want+`"`) {
		t.Errorf("the daemon's log does not name %q:\n%s", want, logs)
	}
	tc = newTestCLI(nil)
	if code := tc.run("gateway", "token", "--config", cfg); code != exitOK || len(strings.TrimSpace(tc.out.String())) != 48 {
		t.Errorf("after the start: exit %d, stdout %q, stderr %q", code, tc.out.String(), tc.err.String())
	}
}

func TestSuggestQuotesForTheShell(t *testing.T) {
	c := &cli{program: "/opt/my tools/switchboard"}
	if got, want := c.suggest("gateway", "token", "--config", "it's.yaml"), `'/opt/my tools/switchboard' gateway token --config 'it'\''s.yaml'`; got != want {
		t.Errorf("suggest = %s, want %s", got, want)
	}
	if got := (&cli{}).suggest("run", "--config", "config.yaml.example"); got != "switchboard run --config config.yaml.example" {
		t.Errorf("suggest = %s", got)
	}
}

func TestGatewayTokenWithoutTokenAuth(t *testing.T) {
	tests := []struct {
		auth, want string
	}{
		{`{mode: password, password: "${SB_TEST_PASSWORD}"}`, "gateway.auth.mode is password"},
		{`{password: "${SB_TEST_PASSWORD}"}`, "gateway.auth.mode is password"},
		{"{mode: none}", "gateway.auth.mode is none"},
	}
	for _, tt := range tests {
		cfg := gatewayConfig(t, tt.auth)
		stateDir := t.TempDir()
		tc := newTestCLI(map[string]string{"SB_TEST_PASSWORD": "p4ss-w0rd-long-enough", "SWITCHBOARD_STATE_DIR": stateDir})
		code := tc.run("--config", cfg, "gateway", "token")
		if code != exitFailure || tc.out.String() != "" || !strings.Contains(tc.err.String(), tt.want) || !strings.Contains(tc.err.String(), "there is no token") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", tt.auth, code, tc.out.String(), tc.err.String())
		}
		if strings.Contains(tc.err.String(), "p4ss-w0rd") {
			t.Errorf("%s: the password was printed", tt.auth)
		}
		if _, err := os.Stat(filepath.Join(stateDir, store.GatewayTokenFile)); !os.IsNotExist(err) {
			t.Errorf("%s: a token file was created", tt.auth)
		}
	}
}

func TestGatewayTokenUsage(t *testing.T) {
	tc := newTestCLI(nil)
	if code := tc.run("gateway", "token", "extra"); code != exitUsage || !strings.Contains(tc.err.String(), "takes no arguments") {
		t.Errorf("exit %d, stderr %q", code, tc.err.String())
	}
	tc = newTestCLI(nil)
	if code := tc.run("gateway", "--help"); code != exitOK || !strings.Contains(tc.out.String(), "gateway token") {
		t.Errorf("gateway --help: exit %d, stdout %q", code, tc.out.String())
	}
}
