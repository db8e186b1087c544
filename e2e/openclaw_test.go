package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// openClaw is the OpenClaw release the compatibility suite drives (its CLI
// and TUI), as scripts/install-openclaw installs it: Node.js 24 and the
// npm package openclaw in the user's cache directory.
type openClaw struct {
	version string
	node    string // the node binary OpenClaw runs on
	entry   string // node_modules/openclaw/openclaw.mjs
}

// openClawVersion is $OPENCLAW_VERSION, else the version in
// e2e/OPENCLAW_VERSION (the one the README names).
func openClawVersion(t *testing.T) string {
	if v := os.Getenv("OPENCLAW_VERSION"); v != "" {
		return v
	}
	b, err := os.ReadFile("OPENCLAW_VERSION")
	if err != nil {
		t.Fatalf("e2e: reading OPENCLAW_VERSION: %v", err)
	}
	return strings.TrimSpace(string(b))
}

// needOpenClaw returns the installed OpenClaw. Without it the test is
// skipped, except under CI=true or E2E_REQUIRE_OPENCLAW=1, where it fails:
// CI must run the suite.
func needOpenClaw(t *testing.T) *openClaw {
	t.Helper()
	oc := &openClaw{version: openClawVersion(t)}
	cache, err := os.UserCacheDir()
	if err == nil {
		dir := filepath.Join(cache, "switchboard", "openclaw")
		oc.node = filepath.Join(dir, "node-24", "bin", "node")
		oc.entry = filepath.Join(dir, "openclaw-"+oc.version, "node_modules", "openclaw", "openclaw.mjs")
	}
	if n := os.Getenv("OPENCLAW_NODE"); n != "" {
		oc.node = n
	}
	_, nodeErr := os.Stat(oc.node)
	_, entryErr := os.Stat(oc.entry)
	if err == nil && nodeErr == nil && entryErr == nil {
		return oc
	}
	msg := fmt.Sprintf("e2e: OpenClaw %s is not installed (looked for %s and %s); scripts/install-openclaw installs it (OPENCLAW_VERSION picks another release)", oc.version, oc.node, oc.entry)
	if os.Getenv("CI") != "" || os.Getenv("E2E_REQUIRE_OPENCLAW") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return nil
}

// command is `openclaw args…` with its own empty HOME (OpenClaw keeps its
// state and device identity under ~/.openclaw), the suite's Node first on
// PATH, and none of the caller's OPENCLAW_* settings.
func (oc *openClaw) command(ctx context.Context, home string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, oc.node, append([]string{oc.entry}, args...)...)
	for _, kv := range os.Environ() {
		switch {
		case strings.HasPrefix(kv, "OPENCLAW_"), strings.HasPrefix(kv, "HOME="), strings.HasPrefix(kv, "PATH="):
		default:
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "HOME="+home, "PATH="+filepath.Dir(oc.node)+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1")
	return cmd
}

// cliResult is one `openclaw gateway call --json` answer: the method's
// payload, or the gateway's error.
type cliResult struct {
	payload map[string]any
	err     map[string]any // {"code", "message", …} when the call failed
	out     string         // what the CLI printed, for failure messages
}

// call runs `openclaw gateway call <method> --json` against d with the
// gateway token, as a user would, and decodes what it prints.
func (oc *openClaw) call(t *testing.T, home string, d *daemon, token, method string, params map[string]any) cliResult {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	p, _ := json.Marshal(params)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := oc.command(ctx, home, "gateway", "call", method, "--json", "--timeout", "30000",
		"--url", fmt.Sprintf("ws://127.0.0.1:%d", d.port), "--token", token, "--params", string(p))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	res := cliResult{out: stdout.String() + stderr.String()}
	var v map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &v); err != nil {
		t.Fatalf("openclaw gateway call %s %s: %v; it printed no JSON: %v\n%s", method, p, runErr, err, res.out)
	}
	if e, ok := v["error"].(map[string]any); ok && v["ok"] == false {
		if runErr == nil {
			t.Errorf("openclaw gateway call %s exited 0 on an error:\n%s", method, res.out)
		}
		res.err = e
		return res
	}
	if runErr != nil {
		t.Fatalf("openclaw gateway call %s %s: %v\n%s", method, p, runErr, res.out)
	}
	res.payload = v
	return res
}

// mustCall is call for a method that must succeed.
func (oc *openClaw) mustCall(t *testing.T, home string, d *daemon, token, method string, params map[string]any) map[string]any {
	t.Helper()
	res := oc.call(t, home, d, token, method, params)
	if res.err != nil {
		t.Fatalf("openclaw gateway call %s %v failed: %v", method, params, res.err)
	}
	return res.payload
}
