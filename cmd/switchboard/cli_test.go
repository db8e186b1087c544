package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/store"
)

// lockedBuffer is an io.Writer safe for a command's goroutines and the test
// to share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// testCLI runs commands in-process with a fixed environment.
type testCLI struct {
	cli
	out, err *lockedBuffer
	sigs     chan os.Signal
}

func newTestCLI(env map[string]string) *testCLI {
	tc := &testCLI{out: &lockedBuffer{}, err: &lockedBuffer{}, sigs: make(chan os.Signal, 2)}
	tc.cli = cli{
		stdout: tc.out,
		stderr: tc.err,
		lookup: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		home:   "/nonexistent-home",
		signals: func() (<-chan os.Signal, func()) {
			return tc.sigs, func() {}
		},
	}
	return tc
}

func (tc *testCLI) run(args ...string) int {
	return tc.main(context.Background(), args)
}

func TestUsageAndHelp(t *testing.T) {
	tests := []struct {
		args     []string
		code     int
		contains string
		stream   string
	}{
		{nil, exitUsage, "Commands:", "stderr"},
		{[]string{"--help"}, exitOK, "config check", "stdout"},
		{[]string{"help"}, exitOK, "config schema", "stdout"},
		{[]string{"help", "config", "check"}, exitOK, "file:line:col", "stdout"},
		{[]string{"run", "--help"}, exitOK, "SIGINT", "stdout"},
		{[]string{"config", "check", "-h"}, exitOK, "Usage:\n  switchboard config check", "stdout"},
		{[]string{"config"}, exitUsage, "switchboard config <command>", "stderr"},
		{[]string{"config", "--help"}, exitOK, "config schema", "stdout"},
		{[]string{"config", "frobnicate"}, exitUsage, `unknown command "config frobnicate"`, "stderr"},
		{[]string{"frobnicate"}, exitUsage, `unknown command "frobnicate"`, "stderr"},
		{[]string{"--nope"}, exitUsage, "flag provided but not defined: -nope", "stderr"},
		{[]string{"run", "--nope"}, exitUsage, "flag provided but not defined", "stderr"},
		{[]string{"version", "--log-level", "loud"}, exitUsage, `"loud" is not debug, info, warn or error`, "stderr"},
		{[]string{"version", "--log-format", "xml"}, exitUsage, `"xml" is not text or json`, "stderr"},
		{[]string{"version", "extra"}, exitUsage, "takes no arguments", "stderr"},
	}
	for _, tt := range tests {
		tc := newTestCLI(nil)
		code := tc.run(tt.args...)
		out := tc.out.String()
		if tt.stream == "stderr" {
			out = tc.err.String()
		}
		if code != tt.code || !strings.Contains(out, tt.contains) {
			t.Errorf("%q: exit %d, %s %q; want exit %d containing %q", tt.args, code, tt.stream, out, tt.code, tt.contains)
		}
	}
}

func TestVersion(t *testing.T) {
	tc := newTestCLI(nil)
	if code := tc.run("version"); code != exitOK || !strings.HasPrefix(tc.out.String(), "switchboard dev (go") {
		t.Errorf("exit %d, %q", code, tc.out.String())
	}
}

func TestConfigCheck(t *testing.T) {
	tc := newTestCLI(nil)
	if code := tc.run("config", "check", "../../config.yaml.example"); code != exitOK || tc.out.String() != "../../config.yaml.example: ok\n" {
		t.Fatalf("example: exit %d, stdout %q, stderr %q", code, tc.out.String(), tc.err.String())
	}

	bad := filepath.Join(t.TempDir(), "bad.yaml")
	writeFile(t, bad, `channelz: {}
session:
  dmScope: everyone
models:
  providers:
    echo:
      api: echo
      apiKey: ${SB_CHECK_TEST_MISSING}
agents:
  defaults:
    model: {primary: echo/echo}
`)
	tc = newTestCLI(nil)
	code := tc.run("--config", bad, "config", "check")
	lines := strings.Split(strings.TrimSpace(tc.err.String()), "\n")
	if code != exitUsage || len(lines) != 4 {
		t.Fatalf("exit %d, stderr:\n%s\nwant exit 2 with three problems and a summary", code, tc.err.String())
	}
	for i, want := range []string{
		bad + `:1:1: channelz: unknown key "channelz"`,
		bad + `:3:12: session.dmScope: must be one of main, per-peer, per-channel-peer, per-account-channel-peer (got "everyone")`,
		bad + `:8:15: models.providers.echo.apiKey: environment variable SB_CHECK_TEST_MISSING is not set`,
		bad + `: 3 problems`,
	} {
		if !strings.HasPrefix(lines[i], want) {
			t.Errorf("line %d = %q, want prefix %q", i+1, lines[i], want)
		}
	}

	tc = newTestCLI(nil)
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	if code := tc.run("config", "check", missing); code != exitUsage || !strings.Contains(tc.err.String(), "missing.yaml") || strings.Count(tc.err.String(), "\n") != 1 {
		t.Errorf("missing file: exit %d, stderr %q", code, tc.err.String())
	}
}

func TestConfigSchemaIsJSON(t *testing.T) {
	tc := newTestCLI(nil)
	if code := tc.run("config", "schema"); code != exitOK {
		t.Fatalf("exit %d: %s", code, tc.err.String())
	}
	var schema map[string]any
	if err := json.Unmarshal([]byte(tc.out.String()), &schema); err != nil {
		t.Fatalf("config schema output is not JSON: %v", err)
	}
	if schema["$schema"] != "https://json-schema.org/draft/2020-12/schema" || schema["properties"] == nil {
		t.Errorf("unexpected schema head: %v", schema["$schema"])
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// testConfig writes a runnable configuration listening on port, and returns
// its path.
func testConfig(t *testing.T, port int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	writeFile(t, path, fmt.Sprintf(`gateway:
  port: %d
models:
  providers:
    echo: {api: echo}
agents:
  defaults:
    model: {primary: echo/echo}
`, port))
	return path
}

// eventually polls cond every 10ms until it holds or timeout passes.
func eventually(timeout time.Duration, cond func() bool) bool {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(timeout)
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			return cond()
		}
	}
	return true
}

// listenAddr waits until the daemon's JSON log announces its listener.
func listenAddr(t *testing.T, logs func() string) string {
	t.Helper()
	var addr string
	found := eventually(10*time.Second, func() bool {
		sc := bufio.NewScanner(strings.NewReader(logs()))
		for sc.Scan() {
			var rec struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Msg == "gateway listening" {
				addr = rec.Addr
				return true
			}
		}
		return strings.Contains(logs(), "switchboard: ")
	})
	if !found || addr == "" {
		t.Fatalf("no 'gateway listening' log within 10s:\n%s", logs())
	}
	return addr
}

// get fetches url with keep-alives off, so no connection outlives the test.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// waitReady polls /readyz until it answers 200 and returns the body.
func waitReady(t *testing.T, base string) string {
	t.Helper()
	var body string
	if !eventually(10*time.Second, func() bool {
		var code int
		code, body = get(t, base+"/readyz")
		return code == http.StatusOK
	}) {
		t.Fatalf("/readyz never became 200; last body %s", body)
	}
	return body
}

func TestRunServesHealthAndStopsOnSignal(t *testing.T) {
	state := t.TempDir()
	tc := newTestCLI(map[string]string{"SWITCHBOARD_STATE_DIR": state})
	done := make(chan int, 1)
	go func() { done <- tc.run("run", "--config", testConfig(t, 0), "--log-format", "json") }()

	base := "http://" + listenAddr(t, tc.err.String)
	ready := waitReady(t, base)
	var readyBody struct {
		Ready      bool              `json:"ready"`
		Components map[string]string `json:"components"`
	}
	if err := json.Unmarshal([]byte(ready), &readyBody); err != nil || !readyBody.Ready || readyBody.Components["store"] != "ready" || readyBody.Components["dispatcher"] != "ready" || readyBody.Components["gateway"] != "ready" {
		t.Errorf("/readyz body = %s", ready)
	}
	if code, body := get(t, base+"/healthz"); code != http.StatusOK || !strings.Contains(body, `"ok":true`) {
		t.Errorf("/healthz = %d %s", code, body)
	}
	if _, err := os.Stat(filepath.Join(state, "state.db")); err != nil {
		t.Errorf("state.db not created in SWITCHBOARD_STATE_DIR: %v", err)
	}

	tc.sigs <- os.Interrupt
	select {
	case code := <-done:
		if code != exitOK {
			t.Fatalf("exit %d after SIGINT; stderr:\n%s", code, tc.err.String())
		}
	case <-time.After(shutdownTimeout + 5*time.Second):
		t.Fatalf("run did not stop within the shutdown timeout")
	}
	if !strings.Contains(tc.err.String(), `"msg":"stopped"`) {
		t.Errorf("no 'stopped' log:\n%s", tc.err.String())
	}
}

func TestRunFailuresAreOneLineWithExitCode(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	port := busy.Addr().(*net.TCPAddr).Port

	fileAsDir := filepath.Join(t.TempDir(), "not-a-dir")
	writeFile(t, fileAsDir, "")

	newerDB := t.TempDir()
	makeNewerDatabase(t, newerDB)

	brokenCfg := filepath.Join(t.TempDir(), "broken.yaml")
	writeFile(t, brokenCfg, "gateway:\n  port: [\n")

	tests := []struct {
		name     string
		stateDir string
		config   string
		code     int
		contains string
	}{
		{"port in use", t.TempDir(), testConfig(t, port), exitFailure, "address already in use"},
		{"state dir is a file", fileAsDir, testConfig(t, 0), exitFailure, "not a directory"},
		{"database from a newer version", newerDB, testConfig(t, 0), exitFailure, "newer than this switchboard supports"},
		{"broken config", t.TempDir(), brokenCfg, exitUsage, "broken.yaml:2:"},
		{"no config", t.TempDir(), filepath.Join(t.TempDir(), "absent.yaml"), exitUsage, "absent.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc := newTestCLI(map[string]string{"SWITCHBOARD_STATE_DIR": tt.stateDir})
			code := tc.run("run", "--config", tt.config, "--log-level", "error")
			stderr := tc.err.String()
			if code != tt.code || !strings.Contains(stderr, tt.contains) {
				t.Fatalf("exit %d, stderr %q; want exit %d containing %q", code, stderr, tt.code, tt.contains)
			}
			if strings.Count(strings.TrimSpace(stderr), "\n") > 1 || strings.Contains(stderr, "goroutine ") {
				t.Errorf("want one clear line, no stack trace; got:\n%s", stderr)
			}
		})
	}
}

// makeNewerDatabase creates a state store in dir as if a newer Switchboard
// had migrated it past what this binary knows.
func makeNewerDatabase(t *testing.T, dir string) {
	t.Helper()
	st, err := store.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	path := st.Path()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO schema_version(version, name, applied_at) VALUES (999, 'from the future', 0)`); err != nil {
		t.Fatal(err)
	}
}

// Issue 26, finding 10 (in part): a mistyped command gets a did-you-mean,
// and --version works as in most tools.
func TestFinding10DidYouMeanAndVersion(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"gatway", "token"}, `unknown command "gatway"; did you mean "gateway"?`},
		{[]string{"cron", "lst"}, `unknown command "cron lst"; did you mean "cron list"?`},
		{[]string{"pairng", "list"}, `did you mean "pairing"?`},
		{[]string{"xyzzy"}, `unknown command "xyzzy"` + "\n"},
	} {
		tc2 := newTestCLI(nil)
		if code := tc2.run(tc.args...); code != exitUsage || !strings.Contains(tc2.err.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, tc2.err.String(), tc.want)
		}
	}
	for _, flag := range []string{"--version", "-version"} {
		tc := newTestCLI(nil)
		if code := tc.run(flag); code != exitOK || !strings.HasPrefix(tc.out.String(), "switchboard dev (go") {
			t.Errorf("%s: exit %d, stdout %q", flag, code, tc.out.String())
		}
	}
}
