package gateway

import (
	"context"
	"errors"

	"github.com/switchboardhq/switchboard/core/tools/exectool"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// approvalsOff answers the approval methods when exec is not enabled.
var approvalsOff = protocol.NewError(protocol.CodeUnavailable, "exec approvals are not running (tools.exec.enabled is false)")

// mApprovalList returns the pending exec approval requests, oldest first.
func (s *Server) mApprovalList(context.Context, *conn, protocol.RequestFrame) (any, *protocol.ErrorShape) {
	a := s.backend.Load().Approvals
	if a == nil {
		return nil, approvalsOff
	}
	return map[string]any{"approvals": a.Pending()}, nil
}

// mApprovalGet returns one pending request: {id}.
func (s *Server) mApprovalGet(_ context.Context, _ *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	var p struct {
		ID string `json:"id"`
	}
	if e := decodeParams(req, &p); e != nil {
		return nil, e
	}
	a := s.backend.Load().Approvals
	if a == nil {
		return nil, approvalsOff
	}
	r, ok := a.Get(p.ID)
	if !ok {
		return nil, protocol.NewError(protocol.CodeApprovalNotFound, "no pending approval "+p.ID+" (answered, timed out, or unknown)")
	}
	return r, nil
}

// mApprovalResolve answers a request: {id, decision: allow-once |
// allow-always | deny, commandHash?}. With commandHash the answer applies
// only if the request is for that exact command.
func (s *Server) mApprovalResolve(_ context.Context, c *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	var p struct {
		ID          string `json:"id"`
		Decision    string `json:"decision"`
		CommandHash string `json:"commandHash"`
	}
	if e := decodeParams(req, &p); e != nil {
		return nil, e
	}
	if p.ID == "" {
		return nil, invalidParams(req.Method, "id is required")
	}
	a := s.backend.Load().Approvals
	if a == nil {
		return nil, approvalsOff
	}
	by := c.params.Client.ID
	if c.deviceID != "" {
		by += ":" + c.deviceID
	}
	err := a.Resolve(p.ID, exectool.Decision(p.Decision), by, p.CommandHash)
	switch {
	case errors.Is(err, exectool.ErrApprovalNotFound):
		return nil, protocol.NewError(protocol.CodeApprovalNotFound, err.Error())
	case errors.Is(err, exectool.ErrBadDecision), errors.Is(err, exectool.ErrHashMismatch):
		return nil, invalidParams(req.Method, err.Error())
	case err != nil:
		return nil, errorShape(err)
	}
	return map[string]any{"ok": true, "id": p.ID, "decision": p.Decision}, nil
}

// PublishApproval broadcasts exec.approval.requested or
// exec.approval.resolved to clients with the operator.approvals scope.
// Wire it to exectool.Approvals.OnEvent. These events are never dropped
// for a slow client: a missed request would wait for its timeout.
func (s *Server) PublishApproval(name string, payload any) {
	s.publishEvent(name, payload, false)
}
