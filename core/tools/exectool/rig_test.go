package exectool_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/tools"
	"github.com/switchboardhq/switchboard/core/tools/exectool"
)

// rig is the exec and process tools over a temporary workspace, behind a
// real executor, with an approver the test drives.
type rig struct {
	t         *testing.T
	ws        string // workspace, real path
	approvals *exectool.Approvals
	requests  chan exectool.ApprovalRequest
	resolved  chan exectool.ApprovalResolved
	timers    chan func() // approval timeouts, fired by the test
	tools     *exectool.Tools
	ex        *tools.Executor
	wg        sync.WaitGroup
}

func newRig(t *testing.T, cfg exectool.Config) *rig {
	t.Helper()
	r, err := openRig(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// openRig is newRig returning exectool.New's error: a configuration the
// tools refuse.
func openRig(t *testing.T, cfg exectool.Config) (*rig, error) {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	jail, err := tools.OpenJail(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { jail.Close() })
	r := &rig{t: t, ws: ws, requests: make(chan exectool.ApprovalRequest, 8),
		resolved: make(chan exectool.ApprovalResolved, 8), timers: make(chan func(), 8)}
	r.approvals = &exectool.Approvals{
		AfterFunc: func(_ time.Duration, f func()) exectool.Timer { r.timers <- f; return stopTimer{} },
		OnEvent: func(name string, payload any) {
			switch name {
			case exectool.EventRequested:
				r.requests <- payload.(exectool.ApprovalRequest)
			case exectool.EventResolved:
				r.resolved <- payload.(exectool.ApprovalResolved)
			}
		},
	}
	cfg.Enabled = true
	r.tools, err = exectool.New(cfg, jail, r.approvals)
	if err != nil {
		return nil, err
	}
	reg := tools.NewRegistry()
	reg.MustRegister(r.tools.Exec(), r.tools.Process())
	r.ex = &tools.Executor{Registry: reg}
	t.Cleanup(func() {
		r.tools.Close()
		r.wg.Wait()
	})
	return r, nil
}

type stopTimer struct{}

func (stopTimer) Stop() bool { return true }

// start runs a call as the owner on its own goroutine.
func (r *rig) start(ctx context.Context, name string, args map[string]any) <-chan *core.ToolResultMessage {
	out := make(chan *core.ToolResultMessage, 1)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		out <- r.ex.Run(ctx, tools.Call{ID: "call-1", Name: name, Args: args, AgentID: "main",
			SessionKey: "agent:main:main", SenderIsOwner: true}, nil)
	}()
	return out
}

// run runs a call that must not ask for approval.
func (r *rig) run(name string, args map[string]any) *core.ToolResultMessage {
	r.t.Helper()
	done := r.start(context.Background(), name, args)
	select {
	case m := <-done:
		return m
	case req := <-r.requests:
		r.t.Fatalf("unexpected approval request for %s", req.Request.Command)
	case <-time.After(30 * time.Second):
		r.t.Fatal("call did not finish")
	}
	return nil
}

// request waits for the next approval request.
func (r *rig) request() exectool.ApprovalRequest {
	r.t.Helper()
	select {
	case req := <-r.requests:
		return req
	case <-time.After(30 * time.Second):
		r.t.Fatal("no approval request")
	}
	return exectool.ApprovalRequest{}
}

// result waits for a call's result.
func (r *rig) result(done <-chan *core.ToolResultMessage) *core.ToolResultMessage {
	r.t.Helper()
	select {
	case m := <-done:
		return m
	case <-time.After(30 * time.Second):
		r.t.Fatal("call did not finish")
	}
	return nil
}

// approveRun runs a call, approves its request with the request's own
// hash and returns the result.
func (r *rig) approveRun(args map[string]any) (exectool.ApprovalRequest, *core.ToolResultMessage) {
	r.t.Helper()
	done := r.start(context.Background(), "exec", args)
	req := r.request()
	if err := r.approvals.Resolve(req.ID, exectool.AllowOnce, "test", req.Request.CommandHash); err != nil {
		r.t.Fatal(err)
	}
	return req, r.result(done)
}

// deniedRun runs a call that must ask for approval: it fails when the
// command finishes without asking, and denies the request it returns.
func (r *rig) deniedRun(args map[string]any) exectool.ApprovalRequest {
	r.t.Helper()
	done := r.start(context.Background(), "exec", args)
	select {
	case m := <-done:
		r.t.Fatalf("ran without approval: %s", m.Content.Text())
	case req := <-r.requests:
		if err := r.approvals.Resolve(req.ID, exectool.Deny, "test", req.Request.CommandHash); err != nil {
			r.t.Fatal(err)
		}
		blockedWith(r.t, r.result(done).Content.Text(), "the operator denied the command")
		return req
	case <-time.After(30 * time.Second):
		r.t.Fatal("call did not finish")
	}
	return exectool.ApprovalRequest{}
}

// write creates a file in the workspace.
func (r *rig) write(rel, content string, mode os.FileMode) {
	r.t.Helper()
	p := filepath.Join(r.ws, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		r.t.Fatal(err)
	}
}

func argv(a ...string) map[string]any {
	l := make([]any, len(a))
	for i, s := range a {
		l[i] = s
	}
	return map[string]any{"argv": l}
}
