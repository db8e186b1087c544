package exectool_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/tools"
	"github.com/switchboardhq/switchboard/core/tools/exectool"
)

func blockedWith(t *testing.T, text, want string) {
	t.Helper()
	if !strings.Contains(text, `"status":"blocked"`) || !strings.Contains(text, want) {
		t.Fatalf("want a blocked envelope containing %q; got %s", want, text)
	}
}

func TestExecRunsTheApprovedCommand(t *testing.T) {
	r := newRig(t, exectool.Config{})
	req, msg := r.approveRun(argv("echo", "hello", "two words"))
	if msg.IsError || msg.Content.Text() == "" || !strings.HasPrefix(msg.Content.Text(), "hello two words\n[exit code 0") {
		t.Fatalf("result: %s", msg.Content.Text())
	}
	d := req.Request
	if d.Command != "echo hello 'two words'" || d.CommandLength != len(d.Command) || len(d.CommandArgv) != 3 ||
		d.Cwd != r.ws || d.Host != "gateway" || !strings.HasSuffix(d.ResolvedPath, "/echo") || len(d.CommandHash) != 64 ||
		d.SessionKey != "agent:main:main" || d.ToolCallID != "call-1" || req.ExpiresAtMs <= req.CreatedAtMs {
		t.Fatalf("request: %+v", req)
	}
	if res := <-r.resolved; res.ID != req.ID || res.Decision != exectool.AllowOnce || res.ResolvedBy != "test" {
		t.Fatalf("resolved event: %+v", res)
	}
	// Each request is answered once: replaying the approval finds nothing.
	if err := r.approvals.Resolve(req.ID, exectool.AllowOnce, "test", ""); !errors.Is(err, exectool.ErrApprovalNotFound) {
		t.Fatalf("second resolve: %v", err)
	}
}

func TestExecDenied(t *testing.T) {
	r := newRig(t, exectool.Config{})
	done := r.start(context.Background(), "exec", argv("touch", "ran"))
	req := r.request()
	if err := r.approvals.Resolve(req.ID, exectool.Deny, "op", ""); err != nil {
		t.Fatal(err)
	}
	blockedWith(t, r.result(done).Content.Text(), "the operator denied the command")
	if _, err := os.Stat(filepath.Join(r.ws, "ran")); err == nil {
		t.Fatal("a denied command ran")
	}
}

func TestExecApprovalTimeoutDenies(t *testing.T) {
	r := newRig(t, exectool.Config{ApprovalTimeoutSec: 7})
	done := r.start(context.Background(), "exec", argv("touch", "ran"))
	req := r.request()
	fire := <-r.timers
	fire() // 7 s pass without an answer
	blockedWith(t, r.result(done).Content.Text(), "no operator approved the command within 7s; denied")
	if res := <-r.resolved; res.Decision != exectool.Deny || res.Reason != "timeout" {
		t.Fatalf("resolved event: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(r.ws, "ran")); err == nil {
		t.Fatal("a timed-out request ran")
	}
	// An approval arriving after the timeout approves nothing.
	if err := r.approvals.Resolve(req.ID, exectool.AllowOnce, "late", ""); !errors.Is(err, exectool.ErrApprovalNotFound) {
		t.Fatalf("late approval: %v", err)
	}
}

// TestExecApprovalBinding is matrix row 14: the approval binds the plan
// hash; whatever changes between approval and execution is denied.
func TestExecApprovalBinding(t *testing.T) {
	t.Run("symlinked cwd retargeted", func(t *testing.T) {
		r := newRig(t, exectool.Config{})
		for _, d := range []string{"a", "b"} {
			if err := os.Mkdir(filepath.Join(r.ws, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		link := filepath.Join(r.ws, "cur")
		if err := os.Symlink("a", link); err != nil {
			t.Fatal(err)
		}
		args := argv("touch", "marker")
		args["cwd"] = "cur"
		done := r.start(context.Background(), "exec", args)
		req := r.request()
		if req.Request.Cwd != filepath.Join(r.ws, "a") {
			t.Fatalf("cwd shown %q, want the resolved a", req.Request.Cwd)
		}
		if err := os.Remove(link); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("b", link); err != nil {
			t.Fatal(err)
		}
		if err := r.approvals.Resolve(req.ID, exectool.AllowOnce, "op", req.Request.CommandHash); err != nil {
			t.Fatal(err)
		}
		blockedWith(t, r.result(done).Content.Text(), "changed between approval and execution")
		for _, d := range []string{"a", "b"} {
			if _, err := os.Stat(filepath.Join(r.ws, d, "marker")); err == nil {
				t.Fatalf("the command ran in %s", d)
			}
		}
	})
	t.Run("program rewritten", func(t *testing.T) {
		r := newRig(t, exectool.Config{})
		r.write("tool.sh", "#!/bin/sh\necho harmless\n", 0o755)
		done := r.start(context.Background(), "exec", argv("./tool.sh"))
		req := r.request()
		r.write("tool.sh", "#!/bin/sh\necho something else entirely\n", 0o755)
		if err := r.approvals.Resolve(req.ID, exectool.AllowOnce, "op", ""); err != nil {
			t.Fatal(err)
		}
		blockedWith(t, r.result(done).Content.Text(), "changed between approval and execution")
	})
	t.Run("approver saw another command", func(t *testing.T) {
		r := newRig(t, exectool.Config{})
		done := r.start(context.Background(), "exec", argv("echo", "ok"))
		req := r.request()
		wrong := strings.Repeat("0", 64)
		if err := r.approvals.Resolve(req.ID, exectool.AllowOnce, "op", wrong); !errors.Is(err, exectool.ErrHashMismatch) {
			t.Fatalf("resolve with another hash: %v", err)
		}
		if _, ok := r.approvals.Get(req.ID); !ok {
			t.Fatal("a mismatched approval consumed the request")
		}
		if err := r.approvals.Resolve(req.ID, exectool.AllowOnce, "op", req.Request.CommandHash); err != nil {
			t.Fatal(err)
		}
		if m := r.result(done); m.IsError || !strings.HasPrefix(m.Content.Text(), "ok\n") {
			t.Fatalf("result: %s", m.Content.Text())
		}
	})
	t.Run("10 KB command with a hidden suffix", func(t *testing.T) {
		r := newRig(t, exectool.Config{})
		long := strings.Repeat("a", 10_000) + "; rm -rf ~"
		req, msg := r.approveRun(argv("echo", long))
		if !strings.HasSuffix(req.Request.Command, "; rm -rf ~'") || req.Request.CommandLength != len(req.Request.Command) ||
			req.Request.CommandLength < 10_000 || req.Request.CommandArgv[1] != long {
			t.Fatalf("the request does not show the whole command (length %d)", req.Request.CommandLength)
		}
		// No shell: the suffix is an argument echoed back, not run.
		if !strings.HasPrefix(msg.Content.Text(), long+"\n") {
			t.Fatalf("result starts %.40q", msg.Content.Text())
		}
	})
	t.Run("aborted while waiting", func(t *testing.T) {
		r := newRig(t, exectool.Config{})
		ctx, cancel := context.WithCancel(context.Background())
		done := r.start(ctx, "exec", argv("touch", "ran"))
		r.request()
		cancel()
		if m := r.result(done); !m.IsError || !strings.Contains(m.Content.Text(), "aborted") {
			t.Fatalf("result: %s", m.Content.Text())
		}
		if res := <-r.resolved; res.Decision != exectool.Deny || res.Reason != "aborted" {
			t.Fatalf("resolved: %+v", res)
		}
	})
}

// TestExecOperandsOutsideWorkspace is matrix row 12's exec case: a
// symlinked operand (cat leak/secret) and the other ways out are refused
// before anyone is asked.
func TestExecOperandsOutsideWorkspace(t *testing.T) {
	r := newRig(t, exectool.Config{})
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(r.ws, "leak")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "gone"), filepath.Join(r.ws, "dangling")); err != nil {
		t.Fatal(err)
	}
	r.write("sub/in.txt", "fine", 0o644)
	for _, tc := range []struct {
		args []string
		cwd  string
		want string
	}{
		{[]string{"cat", "leak/secret"}, "", "leads outside the workspace through a symlink"},
		{[]string{"cat", "leak/../secret"}, "", "through a symlink"},
		{[]string{"dd", "if=/etc/passwd"}, "", "outside the workspace"},
		{[]string{"curl", "-d", "@/etc/passwd"}, "", "outside the workspace"},
		{[]string{"curl", "file:///etc/passwd"}, "", "outside the workspace"},
		{[]string{"grep", "-f/etc/passwd", "x"}, "", "outside the workspace"},
		{[]string{"cat", "leak"}, "", "through a symlink"},
		{[]string{"cp", "sub/in.txt", "leak/new"}, "", "through a symlink"},
		{[]string{"cat", "/etc/passwd"}, "", "outside the workspace"},
		{[]string{"cat", "../x"}, "", "outside the workspace"},
		{[]string{"cat", "../../etc/passwd"}, "sub", "outside the workspace"},
		{[]string{"grep", "--file=/etc/passwd", "x"}, "", "outside the workspace"},
		{[]string{"tee", "dangling"}, "", "through a symlink"},
		{[]string{"cat", "in.txt"}, "../", ".. leads outside"},
		{[]string{"cat", "secret"}, "leak", `cwd \"leak\" leads outside`},
		{[]string{"cat", "x"}, "/tmp", "absolute paths are not allowed"},
		{[]string{"nosuchprogram-xyz"}, "", "not found in"},
		{[]string{"cat", "a\x00b"}, "", "NUL"},
	} {
		args := argv(tc.args...)
		if tc.cwd != "" {
			args["cwd"] = tc.cwd
		}
		m := r.run("exec", args)
		if !m.IsError || !strings.Contains(m.Content.Text(), tc.want) {
			t.Errorf("%q in %q: want an error containing %q; got %s", tc.args, tc.cwd, tc.want, m.Content.Text())
		}
		if strings.Contains(m.Content.Text(), "s3cret") {
			t.Errorf("%q leaked the secret", tc.args)
		}
	}
	// Inside the workspace it is asked for and runs.
	_, m := r.approveRun(argv("cat", "sub/in.txt"))
	if !strings.HasPrefix(m.Content.Text(), "fine\n") {
		t.Fatalf("cat inside: %s", m.Content.Text())
	}
}

func TestExecOnlyForOwners(t *testing.T) {
	r := newRig(t, exectool.Config{})
	m := r.ex.Run(context.Background(), tools.Call{ID: "x", Name: "exec", Args: argv("echo", "hi")}, nil)
	blockedWith(t, m.Content.Text(), tools.OwnerOnlyReason)
}
