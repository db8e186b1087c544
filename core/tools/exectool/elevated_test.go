package exectool_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/tools"
	"github.com/switchboardhq/switchboard/core/tools/exectool"
	"github.com/switchboardhq/switchboard/core/tools/toolstest"
)

// Any tool flagged Elevated needs an operator's approval through the
// executor: blocked without an approver, run once approved, blocked when
// denied. exec asks itself (bound to its plan) and is not asked twice.
func TestElevatedToolsNeedApproval(t *testing.T) {
	r := newRig(t, exectool.Config{})
	tool := toolstest.Text("deploy", "deployed")
	tool.Def.Flags.Elevated = true
	reg := tools.NewRegistry()
	reg.MustRegister(tool)
	call := tools.Call{ID: "c", Name: "deploy", Args: map[string]any{"env": "prod", "version": "2.4"}, SenderIsOwner: true}

	none := &tools.Executor{Registry: reg}
	if m := none.Run(context.Background(), call, nil); !strings.Contains(m.Content.Text(), tools.NoApproverReason) || tool.Calls() != 0 {
		t.Fatalf("without an approver: %s (calls %d)", m.Content.Text(), tool.Calls())
	}

	ex := &tools.Executor{Registry: reg, Approve: r.approvals.ApproveCall}
	run := func(decision exectool.Decision) string {
		done := make(chan string, 1)
		go func() { done <- ex.Run(context.Background(), call, nil).Content.Text() }()
		req := r.request()
		if req.Request.Command != `deploy {"env":"prod","version":"2.4"}` || len(req.Request.CommandHash) != 64 {
			t.Fatalf("request: %+v", req.Request)
		}
		if err := r.approvals.Resolve(req.ID, decision, "op", req.Request.CommandHash); err != nil {
			t.Fatal(err)
		}
		return <-done
	}
	if got := run(exectool.AllowOnce); got != "deployed" || tool.Calls() != 1 {
		t.Fatalf("approved: %s (calls %d)", got, tool.Calls())
	}
	if got := run(exectool.Deny); !strings.Contains(got, `"status":"blocked","tool":"deploy","reason":"the operator denied the call"`) || tool.Calls() != 1 {
		t.Fatalf("denied: %s (calls %d)", got, tool.Calls())
	}

	// exec through the same executor: one request, not two.
	r.ex.Approve = r.approvals.ApproveCall
	_, m := r.approveRun(argv("echo", "once"))
	if !strings.HasPrefix(m.Content.Text(), "once\n") {
		t.Fatalf("exec: %s", m.Content.Text())
	}
	select {
	case req := <-r.requests:
		t.Fatalf("exec was asked twice: %+v", req.Request)
	default:
	}
}
