//go:build linux

package exectool_test

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core/tools/exectool"
)

// alive reports whether pid runs (a zombie waiting for its reaper counts
// as gone).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// What a command leaves running in its process group does not outlive it.
func TestExecLeavesNothingRunning(t *testing.T) {
	r := newRig(t, exectool.Config{CleanupMs: 100})
	_, m := r.approveRun(argv("sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!"))
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(m.Content.Text(), "\n", 2)[0]))
	if err != nil {
		t.Fatalf("result %q: %v", m.Content.Text(), err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the command's child %d outlived it", pid)
		}
		runtime.Gosched()
	}
}

// After Close (the daemon stopping) no command starts, even one approved.
func TestExecAfterCloseStartsNothing(t *testing.T) {
	r := newRig(t, exectool.Config{CleanupMs: 100})
	r.tools.Close()
	args := argv("sleep", "60")
	args["background"] = true
	_, m := r.approveRun(args)
	if !m.IsError || !strings.Contains(m.Content.Text(), "shutting down") {
		t.Fatalf("exec after Close: %s", m.Content.Text())
	}
}
