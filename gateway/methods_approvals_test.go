package gateway

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/tools/exectool"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

func TestExecApprovalMethodsAndEvents(t *testing.T) {
	r := newRig(t, rigOptions{approvals: true})
	approver := r.dial(r.opts(protocol.ScopeApprovals))
	writer := r.dial(r.opts(protocol.ScopeWrite))

	answer := make(chan exectool.ApprovalResolved, 1)
	go func() {
		answer <- r.approvals.Request(context.Background(), exectool.ApprovalDetails{
			Command: "echo hi", CommandArgv: []string{"echo", "hi"}, CommandHash: strings.Repeat("ab", 32), Host: "gateway",
		})
	}()
	ev := next(t, approver, "exec.approval.requested", nil)
	req := decode[exectool.ApprovalRequest](t, ev.Payload)
	if req.ID == "" || req.Request.Command != "echo hi" || req.Request.CommandLength != 7 || req.ExpiresAtMs <= req.CreatedAtMs {
		t.Fatalf("requested event: %s", ev.Payload)
	}
	list := call[map[string][]exectool.ApprovalRequest](t, approver, "exec.approval.list", nil)
	if len(list["approvals"]) != 1 || list["approvals"][0].ID != req.ID {
		t.Fatalf("list: %+v", list)
	}
	if got := call[exectool.ApprovalRequest](t, approver, "exec.approval.get", map[string]any{"id": req.ID}); got.ID != req.ID {
		t.Fatalf("get: %+v", got)
	}
	// Without operator.approvals a client cannot answer.
	if e := callErr(t, writer, "exec.approval.resolve", map[string]any{"id": req.ID, "decision": "allow-once"}); !strings.Contains(e.Message, "operator.approvals") {
		t.Fatalf("writer resolve: %+v", e)
	}
	if e := callErr(t, approver, "exec.approval.resolve", map[string]any{"id": req.ID, "decision": "yes"}); e.Code != protocol.CodeInvalidRequest || !strings.Contains(e.Message, "allow-once, allow-always or deny") {
		t.Fatalf("bad decision: %+v", e)
	}
	if e := callErr(t, approver, "exec.approval.resolve", map[string]any{"id": req.ID, "decision": "allow-once", "commandHash": strings.Repeat("cd", 32)}); !strings.Contains(e.Message, "different command") {
		t.Fatalf("other hash: %+v", e)
	}
	ok := call[map[string]any](t, approver, "exec.approval.resolve", map[string]any{"id": req.ID, "decision": "allow-once", "commandHash": req.Request.CommandHash})
	if ok["ok"] != true {
		t.Fatalf("resolve: %v", ok)
	}
	if res := <-answer; !res.Approved() || res.ResolvedBy != "cli" {
		t.Fatalf("the request got %+v", res)
	}
	resolved := decode[exectool.ApprovalResolved](t, next(t, approver, "exec.approval.resolved", nil).Payload)
	if resolved.ID != req.ID || resolved.Decision != exectool.AllowOnce {
		t.Fatalf("resolved event: %+v", resolved)
	}
	if e := callErr(t, approver, "exec.approval.resolve", map[string]any{"id": req.ID, "decision": "allow-once"}); e.Code != protocol.CodeApprovalNotFound {
		t.Fatalf("second resolve: %+v", e)
	}
}

func TestExecApprovalMethodsWithoutExec(t *testing.T) {
	r := newRig(t, rigOptions{})
	c := r.dial(r.opts(protocol.ScopeAdmin))
	if e := callErr(t, c, "exec.approval.list", nil); e.Code != protocol.CodeUnavailable || !strings.Contains(e.Message, "tools.exec.enabled") {
		t.Fatalf("list without exec: %+v", e)
	}
}
