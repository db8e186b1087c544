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

// TestFinding4ApprovalEventsPlaceTheCard is issue 26, finding 4: the page
// shows a pending approval on the exec call's tool card, so the request
// (event and list) carries the session and the tool call id with the
// expiry, and the resolved event repeats them for a client that missed the
// request.
func TestFinding4ApprovalEventsPlaceTheCard(t *testing.T) {
	r := newRig(t, rigOptions{approvals: true})
	approver := r.dial(r.opts(protocol.ScopeApprovals))
	go r.approvals.Request(context.Background(), exectool.ApprovalDetails{
		Command: "echo hi", CommandArgv: []string{"echo", "hi"}, CommandHash: strings.Repeat("ab", 32), Host: "gateway",
		SessionKey: "agent:main:main", ToolCallID: "toolu_01",
	})
	ev := next(t, approver, "exec.approval.requested", nil)
	// The wire names, as a client decodes them.
	type requested struct {
		ID      string `json:"id"`
		Request struct {
			SessionKey string `json:"sessionKey"`
			ToolCallID string `json:"toolCallId"`
			Command    string `json:"command"`
		} `json:"request"`
		CreatedAtMs int64 `json:"createdAtMs"`
		ExpiresAtMs int64 `json:"expiresAtMs"`
	}
	raw := decode[requested](t, ev.Payload)
	if raw.Request.SessionKey != "agent:main:main" || raw.Request.ToolCallID != "toolu_01" || raw.Request.Command != "echo hi" ||
		raw.ExpiresAtMs <= raw.CreatedAtMs {
		t.Fatalf("requested event: %s", ev.Payload)
	}
	list := call[map[string][]exectool.ApprovalRequest](t, approver, "exec.approval.list", nil)
	if l := list["approvals"]; len(l) != 1 || l[0].Request.ToolCallID != "toolu_01" || l[0].Request.SessionKey != "agent:main:main" || l[0].ExpiresAtMs != raw.ExpiresAtMs {
		t.Fatalf("list: %+v", list)
	}
	call[map[string]any](t, approver, "exec.approval.resolve", map[string]any{"id": raw.ID, "decision": "deny"})
	res := next(t, approver, "exec.approval.resolved", nil)
	got := decode[map[string]any](t, res.Payload)
	if got["id"] != raw.ID || got["decision"] != "deny" || got["sessionKey"] != "agent:main:main" || got["toolCallId"] != "toolu_01" {
		t.Fatalf("resolved event: %s", res.Payload)
	}
}
