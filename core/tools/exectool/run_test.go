package exectool_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core/tools/exectool"
)

// Under ask: unlisted the listed programs run unasked and every other
// program asks; under ask: always allowBins bounds what may run at all,
// and listed programs ask too.
func TestExecAllowBinsAndAskUnlisted(t *testing.T) {
	r := newRig(t, exectool.Config{Ask: exectool.AskUnlisted, AllowBins: []string{"echo", "cat"}})
	// A listed program runs without asking.
	if m := r.run("exec", argv("echo", "direct")); m.IsError || !strings.HasPrefix(m.Content.Text(), "direct\n") {
		t.Fatalf("listed program: %s", m.Content.Text())
	}
	// An unlisted one asks, a shell like any other: approving sh approves
	// any script, so it is never listed.
	_, m := r.approveRun(argv("sh", "-c", "echo via shell"))
	if !strings.HasPrefix(m.Content.Text(), "via shell\n") {
		t.Fatalf("sh: %s", m.Content.Text())
	}
	// A listed program asks when the call sets variables.
	args := argv("echo", "with env")
	args["env"] = map[string]any{"TZ": "UTC"}
	r.deniedRun(args)

	always := newRig(t, exectool.Config{AllowBins: []string{"echo", "sh"}})
	blockedWith(t, always.run("exec", argv("ls")).Content.Text(), "is not in tools.exec.allowBins")
	if _, m := always.approveRun(argv("echo", "asked")); !strings.HasPrefix(m.Content.Text(), "asked\n") {
		t.Fatalf("listed program under always: %s", m.Content.Text())
	}
}

func TestExecShellCommands(t *testing.T) {
	r := newRig(t, exectool.Config{})
	m := r.run("exec", map[string]any{"command": "echo hi | tr a-z A-Z"})
	if !m.IsError || !strings.Contains(m.Content.Text(), "tools.exec.shell is not set") {
		t.Fatalf("without a shell: %s", m.Content.Text())
	}
	r = newRig(t, exectool.Config{Shell: "/bin/sh", Ask: exectool.AskUnlisted, AllowBins: []string{"echo"}})
	req, m := r.approveRun(map[string]any{"command": "echo hi | tr a-z A-Z"})
	if req.Request.Command != "/bin/sh -c 'echo hi | tr a-z A-Z'" || !strings.HasPrefix(m.Content.Text(), "HI\n") {
		t.Fatalf("shell: shown %q, result %s", req.Request.Command, m.Content.Text())
	}
}

func TestExecEnvironment(t *testing.T) {
	t.Setenv("SWITCHBOARD_TEST_SECRET", "bot-token-123")
	t.Setenv("SWITCHBOARD_TEST_PASSED", "visible")
	r := newRig(t, exectool.Config{PassEnv: []string{"SWITCHBOARD_TEST_PASSED"}})
	args := argv("env")
	args["env"] = map[string]any{"GREETING": "hello"}
	req, m := r.approveRun(args)
	out := m.Content.Text()
	if strings.Contains(out, "bot-token-123") {
		t.Fatal("the daemon's environment reached the command")
	}
	for _, want := range []string{"HOME=" + r.ws, "PATH=" + exectool.DefaultPath, "SWITCHBOARD_TEST_PASSED=visible", "GREETING=hello"} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("env output lacks %s:\n%s", want, out)
		}
	}
	if got := strings.Join(req.Request.EnvKeys, ","); got != "GREETING,HOME,LANG,PATH,SWITCHBOARD_TEST_PASSED" {
		t.Errorf("envKeys shown: %s", got)
	}
	if len(req.Request.Env) != 1 || req.Request.Env["GREETING"] != "hello" {
		t.Errorf("the approver does not see the values the call sets: %v", req.Request.Env)
	}
	for _, bad := range []string{"LD_PRELOAD", "PATH", "BASH_ENV", "DYLD_INSERT_LIBRARIES", "LUA_INIT", "PERLLIB", "GIT_CONFIG_PARAMETERS",
		"XDG_CONFIG_HOME", "ZDOTDIR", "GCONV_PATH", "JAVA_TOOL_OPTIONS", "PHPRC", "NODE_OPTIONS", "PYTHONSTARTUP"} {
		args := argv("env")
		args["env"] = map[string]any{bad: "/tmp/x"}
		if m := r.run("exec", args); !m.IsError || !strings.Contains(m.Content.Text(), bad+" cannot be set") {
			t.Errorf("env %s: %s", bad, m.Content.Text())
		}
	}
}

func TestExecTimeoutStopsAndOutputIsCapped(t *testing.T) {
	r := newRig(t, exectool.Config{MaxOutputBytes: 4096, CleanupMs: 200})
	args := argv("yes", "spam")
	args["timeout"] = 0.3
	_, m := r.approveRun(args)
	text := m.Content.Text()
	if !strings.Contains(text, "[stopped: timeout after") || !strings.Contains(text, "bytes of output omitted") {
		t.Fatalf("result: %.200s ... %.200s", text, text[max(0, len(text)-200):])
	}
	if len(text) > 4096+200 {
		t.Fatalf("kept %d bytes of output with a 4096 cap", len(text))
	}
	var d map[string]any
	if err := json.Unmarshal(m.Details, &d); err != nil || d["status"] != "timeout" || d["outputBytes"].(float64) <= 4096 {
		t.Fatalf("details %s (%v)", m.Details, err)
	}
}

func TestExecBackgroundAndProcessTool(t *testing.T) {
	r := newRig(t, exectool.Config{CleanupMs: 200})
	// The command writes only once the test creates "go", so its output
	// comes after it went to the background and only poll can show it.
	args := argv("sh", "-c", "while [ ! -e go ]; do sleep 0.01; done; echo started; exec sleep 60")
	args["background"] = true
	_, m := r.approveRun(args)
	text := m.Content.Text()
	if !strings.HasPrefix(text, "Command still running in the background (id ") {
		t.Fatalf("background: %s", text)
	}
	id := strings.Fields(strings.TrimPrefix(text, "Command still running in the background (id "))[0]
	id = strings.TrimSuffix(id, ",")
	list := r.run("process", map[string]any{"action": "list"}).Content.Text()
	if !strings.Contains(list, id) || !strings.Contains(list, "running") {
		t.Fatalf("list: %s", list)
	}
	if strings.Contains(text, "Output so far") {
		t.Fatalf("output before the signal: %s", text)
	}
	if err := os.WriteFile(filepath.Join(r.ws, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// poll until the first line shows, then it is not repeated.
	var seen string
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(seen, "started") && time.Now().Before(deadline) {
		seen += r.run("process", map[string]any{"action": "poll", "id": id}).Content.Text()
	}
	if !strings.Contains(seen, "started") || !strings.Contains(seen, "[still running]") {
		t.Fatalf("poll: %s\nexec said: %s", seen, text)
	}
	if again := r.run("process", map[string]any{"action": "poll", "id": id}).Content.Text(); strings.Contains(again, "started") {
		t.Fatalf("second poll repeated output: %s", again)
	}
	killed := r.run("process", map[string]any{"action": "kill", "id": id}).Content.Text()
	if !strings.Contains(killed, "[stopped: killed after") {
		t.Fatalf("kill: %s", killed)
	}
	if m := r.run("process", map[string]any{"action": "poll", "id": "nope"}); !m.IsError || !strings.Contains(m.Content.Text(), "no background command") {
		t.Fatalf("unknown id: %s", m.Content.Text())
	}
}

func TestExecYieldsToBackground(t *testing.T) {
	r := newRig(t, exectool.Config{CleanupMs: 100})
	args := argv("sleep", "60")
	args["yieldMs"] = 50
	_, m := r.approveRun(args)
	if !strings.Contains(m.Content.Text(), "still running in the background") {
		t.Fatalf("result: %s", m.Content.Text())
	}
	// Close (the daemon stopping) stops it; the rig's cleanup checks
	// nothing leaks.
}

func TestExecAbortStopsTheCommand(t *testing.T) {
	r := newRig(t, exectool.Config{CleanupMs: 100})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := r.start(ctx, "exec", argv("sleep", "60"))
	req := r.request()
	if err := r.approvals.Resolve(req.ID, exectool.AllowOnce, "op", ""); err != nil {
		t.Fatal(err)
	}
	<-r.resolved
	// Abort once the command runs (an abort before it starts starts nothing).
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(r.run("process", map[string]any{"action": "list"}).Content.Text(), "running") {
		if time.Now().After(deadline) {
			t.Fatal("the command did not start")
		}
	}
	cancel()
	m := r.result(done)
	if !m.IsError || !strings.Contains(m.Content.Text(), "aborted") || !strings.Contains(m.Content.Text(), "[stopped: aborted") {
		t.Fatalf("result: %s", m.Content.Text())
	}
}
