package gateway

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/switchboardhq/switchboard/gateway/protocol"
	"github.com/switchboardhq/switchboard/heartbeat"
)

// cronOff answers the cron methods when no cron service is attached.
var cronOff = protocol.NewError(protocol.CodeUnavailable, "cron is not running (cron.enabled is false or the scheduler is not wired)")

// cronService returns the attached cron service or the error to answer.
func (s *Server) cronService() (*heartbeat.Cron, *protocol.ErrorShape) {
	if c := s.backend.Load().Cron; c != nil {
		return c, nil
	}
	return nil, cronOff
}

// cronListIgnored are the members of OpenClaw 2026.9.6's
// CronListParamsSchema that page, sort, search or filter (by session,
// schedule kind, last status, trigger) a job list Switchboard returns
// whole: accepted, and change nothing. OpenClaw's Control UI sends agentId
// with every load.
var cronListIgnored = []string{
	"sessionKey", "sessionAgentId", "limit", "offset", "query", "enabled", "scheduleKind",
	"lastRunStatus", "trigger", "sortBy", "sortDir", "compact", "includeDeliveryPreviews",
}

func (s *Server) mCronList(_ context.Context, _ *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	var p struct {
		IncludeDisabled *bool   `json:"includeDisabled"`
		AgentID         *string `json:"agentId"`
	}
	if e := decodeParamsAccepting(req, &p, cronListIgnored...); e != nil {
		return nil, e
	}
	c, e := s.cronService()
	if e != nil {
		return nil, e
	}
	jobs := []heartbeat.Job{}
	if p.AgentID != nil && !strings.EqualFold(*p.AgentID, s.defaultAgentID()) {
		return map[string]any{"jobs": jobs}, nil // every job here is this agent's
	}
	for _, j := range c.List() {
		if j.IsEnabled() || p.IncludeDisabled == nil || *p.IncludeDisabled {
			jobs = append(jobs, j)
		}
	}
	return map[string]any{"jobs": jobs}, nil
}

func (s *Server) mCronStatus(_ context.Context, _ *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	if e := decodeParams(req, &struct{}{}); e != nil {
		return nil, e
	}
	c, e := s.cronService()
	if e != nil {
		return nil, e
	}
	return c.Status(), nil
}

func (s *Server) mCronAdd(ctx context.Context, _ *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	var job heartbeat.JobSpec
	if e := decodeParams(req, &job); e != nil {
		return nil, e
	}
	c, e := s.cronService()
	if e != nil {
		return nil, e
	}
	added, err := c.Add(ctx, job)
	if err != nil {
		return nil, invalidParams(req.Method, err.Error())
	}
	return added, nil
}

func (s *Server) mCronUpdate(ctx context.Context, _ *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	var p struct {
		ID    string          `json:"id"`
		JobID string          `json:"jobId"`
		Patch json.RawMessage `json:"patch"`
	}
	if e := decodeParams(req, &p); e != nil {
		return nil, e
	}
	if p.ID == "" {
		p.ID = p.JobID
	}
	if p.ID == "" || len(p.Patch) == 0 {
		return nil, invalidParams(req.Method, "id and patch (the job members to change) are required")
	}
	c, e := s.cronService()
	if e != nil {
		return nil, e
	}
	j, err := c.Update(ctx, p.ID, p.Patch)
	if err != nil {
		return nil, invalidParams(req.Method, err.Error())
	}
	return j, nil
}

// cronIDParams is {id} (or OpenClaw's jobId).
type cronIDParams struct {
	ID    string `json:"id"`
	JobID string `json:"jobId"`
	Mode  string `json:"mode"`
	Limit int    `json:"limit"`
}

func (p *cronIDParams) id() string {
	if p.ID != "" {
		return p.ID
	}
	return p.JobID
}

// cronJobRequest decodes {id, …} params that must name a job.
func (s *Server) cronJobRequest(req protocol.RequestFrame) (*heartbeat.Cron, cronIDParams, *protocol.ErrorShape) {
	var p cronIDParams
	if e := decodeParams(req, &p); e != nil {
		return nil, p, e
	}
	if p.id() == "" {
		return nil, p, invalidParams(req.Method, "id is required")
	}
	c, e := s.cronService()
	return c, p, e
}

func (s *Server) mCronRemove(ctx context.Context, _ *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	c, p, e := s.cronJobRequest(req)
	if e != nil {
		return nil, e
	}
	removed, err := c.Remove(ctx, p.id())
	if err != nil {
		return nil, errorShape(err)
	}
	return map[string]any{"ok": true, "removed": removed}, nil
}

// cronRunResult is cron.run's answer: OpenClaw's {ok, ran}, with what the
// run does to the job, so that a client can say it (issue 26, finding 6:
// "Run now" on a disabled one-shot deleted it without a word).
type cronRunResult struct {
	OK  bool `json:"ok"`
	Ran bool `json:"ran"`
	// RunID is the run started; follow it with cron.runs.
	RunID string `json:"runId"`
	// Reason says why nothing ran: "not-due" (mode due).
	Reason string `json:"reason,omitempty"`
	// Disabled reports a disabled job run by hand: it stays disabled and
	// is kept, one-shot or not.
	Disabled bool `json:"disabled,omitempty"`
	// DeletesJob reports a one-shot job that this run deletes when it
	// succeeds.
	DeletesJob bool `json:"deletesJob,omitempty"`
}

func (s *Server) mCronRun(ctx context.Context, _ *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	c, p, e := s.cronJobRequest(req)
	if e != nil {
		return nil, e
	}
	job, _ := c.Get(p.id()) // before the run: a one-shot may be gone after
	runID, err := c.Run(ctx, p.id(), p.Mode)
	if err != nil {
		return nil, invalidParams(req.Method, err.Error())
	}
	res := cronRunResult{OK: true, Ran: runID != "", RunID: runID}
	switch {
	case res.Ran:
		res.Disabled, res.DeletesJob = !job.IsEnabled(), job.DeletesAfterRun()
	case p.Mode == "due":
		res.Reason = "not-due"
	}
	return res, nil
}

func (s *Server) mCronRuns(ctx context.Context, _ *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	var p cronIDParams
	if e := decodeParams(req, &p); e != nil {
		return nil, e
	}
	c, e := s.cronService()
	if e != nil {
		return nil, e
	}
	runs, err := c.Runs(ctx, p.id(), p.Limit)
	if err != nil {
		return nil, errorShape(err)
	}
	return map[string]any{"entries": runs}, nil
}
