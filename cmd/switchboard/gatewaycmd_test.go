package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

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

	tc := newTestCLI(env)
	if code := tc.run("--config", cfg, "gateway", "token"); code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, tc.err.String())
	}
	first := tc.out.String()
	if !regexp.MustCompile(`^[0-9a-f]{48}\n$`).MatchString(first) {
		t.Fatalf("stdout %q, want a 48-character hex token and a newline", first)
	}
	if !strings.Contains(tc.err.String(), "Generated a new gateway token") {
		t.Errorf("stderr %q", tc.err.String())
	}
	// The daemon reads the same file.
	if tok, created, err := store.GatewayToken(stateDir); err != nil || created || tok+"\n" != first {
		t.Errorf("store.GatewayToken = %q, %v, %v; want the printed token", tok, created, err)
	}

	tc = newTestCLI(env)
	if code := tc.run("--config", cfg, "gateway", "token"); code != exitOK || tc.out.String() != first || strings.Contains(tc.err.String(), "Generated") {
		t.Errorf("second run: exit %d, stdout %q, stderr %q", code, tc.out.String(), tc.err.String())
	}

	// A token file others may read is refused, without printing it.
	if err := os.Chmod(filepath.Join(stateDir, store.GatewayTokenFile), 0o644); err != nil {
		t.Fatal(err)
	}
	tc = newTestCLI(env)
	if code := tc.run("--config", cfg, "gateway", "token"); code != exitFailure || tc.out.String() != "" || strings.Contains(tc.err.String(), strings.TrimSpace(first)) {
		t.Errorf("leaky file: exit %d, stdout %q, stderr %q", code, tc.out.String(), tc.err.String())
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
