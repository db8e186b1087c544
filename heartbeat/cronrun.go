package heartbeat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/queue"
	"github.com/switchboardhq/switchboard/store"
)

// summaryChars bounds a run's stored summary.
const summaryChars = 2000

// result is how a run ended.
type result struct {
	status, err, reason string
	summary             string
	replies             []core.ReplyPayload
	delivery            string
	deliveryErr         string
}

// RunStarted implements queue.Observer: it notes the cron turns running
// here, so a resumed run whose journal entry is already done is known to
// be finishing in this process (RunEnded follows) rather than lost.
func (c *Cron) RunStarted(info queue.RunInfo) {
	if info.Kind != core.InboundCron {
		return
	}
	c.mu.Lock()
	if c.running == nil {
		c.running = map[string]bool{}
	}
	for _, id := range append([]string{info.RunID}, info.ClientRunIDs...) {
		c.running[id] = true
	}
	c.mu.Unlock()
}

// startedHere reports whether the turn of runID runs in this process.
func (c *Cron) startedHere(runID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.running[runID]
}

// RunEvent implements queue.Observer.
func (c *Cron) RunEvent(queue.RunInfo, core.AgentEvent) {}

// RunEnded implements queue.Observer: a cron turn ended; its delivery and
// bookkeeping run on the service's own goroutine.
func (c *Cron) RunEnded(info queue.RunInfo, res *agent.Result, err error) {
	if info.Kind != core.InboundCron {
		return
	}
	ids := append([]string{info.RunID}, info.ClientRunIDs...)
	for _, id := range ids {
		c.mu.Lock()
		delete(c.running, id)
		a := c.active[id]
		delete(c.active, id)
		stopped := c.stopped
		if a != nil && !stopped {
			c.bg.Add(1)
		}
		c.mu.Unlock()
		if a == nil || stopped {
			continue
		}
		go func() {
			defer c.bg.Done()
			c.turnEnded(id, a, res, err)
		}()
	}
}

// turnEnded classifies a finished turn, delivers its answer and records
// the run.
func (c *Cron) turnEnded(turnID string, a *activeRun, res *agent.Result, err error) {
	runID := a.runID
	if runID == "" {
		runID = turnID
	}
	c.mu.Lock()
	j := c.jobs[a.jobID]
	var job Job
	if j != nil {
		job = *j
	}
	c.mu.Unlock()
	r := result{status: "ok"}
	switch {
	case err != nil:
		r.status, r.err, r.reason = "error", err.Error(), "unknown"
	case res == nil:
		r.status, r.err, r.reason = "error", "the turn returned no result", "unknown"
	case res.Aborted:
		r.status, r.err, r.reason = "error", "the turn was aborted", "unknown"
	case res.Err != nil:
		r.status, r.err, r.reason = "error", res.Err.Error(), errorReason(res)
	}
	if res != nil {
		r.replies = res.Replies
		text, _ := alertText(res.Replies)
		r.summary = truncate(text, summaryChars)
	}
	if r.status == "ok" && !a.reprompted && j != nil && isInterimReply(r.summary) && c.reprompt(&job, runID, a) {
		return // the re-prompt's turn finishes the run
	}
	r.delivery = "not-requested"
	if j != nil && job.Delivery != nil && r.status == "ok" {
		c.deliver(&job, runID, a, &r)
	}
	c.finish(c.ctx, store.CronRun{RunID: runID, JobID: a.jobID, ScheduledAt: a.instant, StartedAt: a.startedAt.UnixMilli(),
		Detail: mustJSON(runDetail{SessionKey: string(a.sessionKey)})}, r)
}

// RepromptText is the follow-up an agentTurn gets when its answer was only
// an interim "on it…" (openclaw-facts §6.5: re-prompted once).
const RepromptText = "Your last reply only said you would do it. Do the task now and reply with the finished result."

// interimPrefixes start replies that promise work instead of doing it.
var interimPrefixes = []string{
	"on it", "i'm on it", "i am on it", "working on it", "let me ", "i'll ", "i will ", "one moment", "give me a moment",
	"sure, i'll", "sure, let me", "ok, i'll", "okay, i'll", "will do", "checking now", "looking into it",
}

// isInterimReply reports a short answer that only promises the work.
func isInterimReply(text string) bool {
	t := strings.ToLower(strings.TrimSpace(text))
	if t == "" || len([]rune(t)) > 160 {
		return false
	}
	t = strings.ReplaceAll(t, "’", "'")
	for _, p := range interimPrefixes {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// reprompt asks the run's session once more to do the task; it reports
// false when the turn could not be submitted (the interim answer then
// stands).
func (c *Cron) reprompt(j *Job, runID string, a *activeRun) bool {
	retry := *a
	retry.reprompted = true
	turnID := runID + "-retry"
	c.mu.Lock()
	stopped := c.stopped
	if !stopped {
		c.active[turnID] = &retry
	}
	c.mu.Unlock()
	if stopped {
		return false
	}
	agentID := j.AgentID
	if agentID == "" {
		agentID = c.opts.AgentID
	}
	in := core.Inbound{Kind: core.InboundCron, AgentID: agentID, SessionKey: a.sessionKey, Body: RepromptText}
	rcpt, err := c.deps.Dispatcher.SubmitWith(c.ctx, in, queue.SubmitOptions{RunID: turnID, DedupeKey: "cron:" + turnID,
		Model: j.Payload.Model, NoDeliver: true, Timeout: time.Duration(j.Payload.TimeoutSeconds) * time.Second})
	if err != nil || rcpt.Disposition == queue.Dropped || rcpt.Disposition == queue.Duplicate {
		c.take(turnID)
		return false
	}
	c.log.Info("cron run answered only with an interim reply; re-prompting once", "job", j.ID, "run", runID)
	return true
}

// errorReason maps a model failure to OpenClaw's lastErrorReason.
func errorReason(res *agent.Result) string {
	if res.TimedOut {
		return "timeout"
	}
	switch res.Err.Kind {
	case "rate_limit":
		return "rate_limit"
	case "timeout":
		return "timeout"
	case "context_length":
		return "format"
	}
	return "unknown"
}

// deliver sends a successful run's answer as the job says.
func (c *Cron) deliver(j *Job, runID string, a *activeRun, r *result) {
	d := j.Delivery
	var err error
	switch d.Mode {
	case DeliveryAnnounce:
		if len(r.replies) == 0 {
			r.delivery, r.deliveryErr = "not-delivered", "the turn gave no answer to announce"
			return
		}
		if c.deps.Deliverer == nil {
			err = errors.New("no deliverer")
			break
		}
		route := core.Route{Channel: core.ChannelName(d.Channel), To: core.ChatID(d.To), AccountID: core.AccountID(d.AccountID)}
		if c.deps.Targets != nil && d.Channel != string(core.WebchatChannel) {
			if route, err = c.deps.Targets.Resolve(d.Channel, d.AccountID, d.To); err != nil {
				break
			}
		}
		err = c.deps.Deliverer.Deliver(c.ctx, queue.Delivery{Kind: queue.DeliveryReply, RunID: runID, SessionKey: a.sessionKey,
			Route: route, Replies: r.replies})
	case DeliveryWebhook:
		body, _ := json.Marshal(map[string]any{
			"jobId": j.ID, "jobName": j.Name, "runId": runID, "status": r.status, "summary": r.summary,
			"runAtMs": a.startedAt.UnixMilli(), "durationMs": c.clock.Now().Sub(a.startedAt).Milliseconds(),
			"sessionKey": a.sessionKey,
		})
		if err = c.deps.Webhook.PostJSON(c.ctx, d.To, body); err != nil {
			err = fmt.Errorf("webhook: %w", err)
		}
	default:
		return
	}
	if err != nil {
		r.delivery, r.deliveryErr = "not-delivered", err.Error()
		if !d.BestEffort {
			r.status, r.err, r.reason = "error", "delivery failed: "+err.Error(), "unknown"
		}
		return
	}
	r.delivery = "delivered"
}

// finish records a run's end and the job's state, and deletes a one-shot
// job that succeeded.
func (c *Cron) finish(ctx context.Context, run store.CronRun, r result) {
	now := c.clock.Now()
	started := time.UnixMilli(run.StartedAt)
	dur := now.Sub(started).Milliseconds()
	var d runDetail
	_ = json.Unmarshal(run.Detail, &d)
	d.Error, d.ErrorReason, d.Summary = r.err, r.reason, r.summary
	d.DeliveryStatus, d.DeliveryError, d.DurationMs = r.delivery, r.deliveryErr, dur

	c.mu.Lock()
	j := c.jobs[run.JobID]
	var job Job
	if j != nil {
		st := &j.State
		st.RunningAtMs = 0
		st.LastRunAtMs = run.StartedAt
		st.LastStatus, st.LastRunStatus = r.status, r.status
		st.LastError, st.LastErrorReason = r.err, r.reason
		st.LastDurationMs = dur
		if r.status == "error" {
			st.ConsecutiveErrors++
		} else if r.status == "ok" {
			st.ConsecutiveErrors = 0
		}
		delivered := r.delivery == "delivered"
		st.LastDelivered = &delivered
		st.LastDeliveryStatus, st.LastDeliveryError = r.delivery, r.deliveryErr
		job = *j
	}
	c.mu.Unlock()
	f := store.CronFinish{RunID: run.RunID, JobID: run.JobID, FinishedAt: now.UnixMilli(), Status: r.status, Detail: mustJSON(d)}
	if j != nil {
		f.State = mustJSON(job.State)
		f.DeleteJob = r.status == "ok" && job.DeletesAfterRun()
	}
	if j != nil && job.SessionTarget == TargetIsolated {
		c.reap(ctx, run.JobID) // before the run shows as finished
	}
	if err := c.deps.Store.FinishCronRun(context.WithoutCancel(ctx), f); err != nil {
		c.log.Error("could not record the end of a cron run", "job", run.JobID, "run", run.RunID, "err", err)
	}
	if f.DeleteJob {
		c.mu.Lock()
		delete(c.jobs, run.JobID)
		c.mu.Unlock()
	}
	if r.status == "error" {
		c.log.Warn("cron run failed", "job", run.JobID, "run", run.RunID, "err", r.err)
	}
	runAt := run.ScheduledAt
	if runAt == 0 {
		runAt = run.StartedAt
	}
	c.emit(CronEvent{JobID: run.JobID, Action: "finished", RunID: run.RunID, RunAtMs: runAt, DurationMs: dur, Status: r.status,
		Error: r.err, Summary: truncate(r.summary, previewChars), NextRunAtMs: job.State.NextRunAtMs, DeliveryStatus: r.delivery})
	if f.DeleteJob {
		c.emit(CronEvent{JobID: run.JobID, Action: "removed"})
	}
}

// reap removes the sessions index entries of the job's isolated runs
// beyond the KeepIsolatedSessions most recent, so run sessions do not pile
// up in sessions.list; their transcripts stay on disk.
func (c *Cron) reap(ctx context.Context, jobID string) {
	if c.deps.Sessions == nil {
		return
	}
	runs, err := c.deps.Store.CronRuns(ctx, jobID, KeepIsolatedSessions+20)
	if err != nil || len(runs) <= KeepIsolatedSessions {
		return
	}
	for _, r := range runs[KeepIsolatedSessions:] {
		var d runDetail
		_ = json.Unmarshal(r.Detail, &d)
		p, err := core.ParseSessionKey(d.SessionKey)
		if err != nil || p.Kind != core.SessionKindCronRun {
			continue
		}
		if err := c.deps.Sessions.DeleteSession(context.WithoutCancel(ctx), core.SessionKey(d.SessionKey)); err != nil {
			c.log.Warn("could not reap a cron run session", "session", d.SessionKey, "err", err)
		}
	}
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("heartbeat: encode %T: %v", v, err))
	}
	return b
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// List returns every job, ordered by id.
func (c *Cron) List() []Job { return c.sortedJobs() }

// Get returns one job.
func (c *Cron) Get(id string) (Job, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	j, ok := c.jobs[id]
	if !ok {
		return Job{}, false
	}
	return *j, true
}

// CronStatus is cron.status's answer.
type CronStatus struct {
	Enabled      bool  `json:"enabled"`
	Jobs         int   `json:"jobs"`
	Running      int   `json:"running"`
	NextWakeAtMs int64 `json:"nextWakeAtMs,omitempty"`
}

// Status summarizes the service.
func (c *Cron) Status() CronStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := CronStatus{Enabled: c.opts.Config.IsEnabled(), Jobs: len(c.jobs), Running: len(c.active)}
	for _, j := range c.jobs {
		if n := j.State.NextRunAtMs; j.IsEnabled() && n > 0 && (st.NextWakeAtMs == 0 || n < st.NextWakeAtMs) {
			st.NextWakeAtMs = n
		}
	}
	return st
}

// Add validates and stores a new job (cron.add): a missing id is
// generated, a relative `at` is resolved against now, and its first run
// time is computed.
func (c *Cron) Add(ctx context.Context, spec JobSpec) (Job, error) {
	j := Job{JobSpec: spec}
	if strings.TrimSpace(j.ID) == "" {
		j.ID = newID("job-")
	}
	c.mu.Lock()
	_, exists := c.jobs[j.ID]
	c.mu.Unlock()
	if exists {
		return Job{}, fmt.Errorf("cron: a job with id %q exists; pick another id or use cron.update", j.ID)
	}
	j.Source = "runtime"
	if err := c.prepare(&j, c.clock.Now(), true); err != nil {
		return Job{}, err
	}
	if err := c.checkAnnounce(j.Delivery); err != nil {
		return Job{}, err
	}
	if err := c.put(ctx, &j); err != nil {
		return Job{}, err
	}
	c.setJob(&j)
	c.rearm()
	c.emit(CronEvent{JobID: j.ID, Action: "added", NextRunAtMs: j.State.NextRunAtMs})
	return j, nil
}

// Update applies patch (a partial job in JSON) to a job (cron.update).
// A changed schedule or re-enabled job gets a new next run time.
func (c *Cron) Update(ctx context.Context, id string, patch json.RawMessage) (Job, error) {
	old, ok := c.Get(id)
	if !ok {
		return Job{}, fmt.Errorf("%w: %q", ErrJobNotFound, id)
	}
	// The patch goes onto a deep copy: decoding into old's pointers
	// (enabled, delivery, …) would change the cached job as well.
	var j Job
	if err := json.Unmarshal(mustJSON(old), &j); err != nil {
		return Job{}, fmt.Errorf("cron: copy job %s: %w", id, err)
	}
	if err := json.Unmarshal(patch, &j); err != nil {
		return Job{}, fmt.Errorf("cron: patch: %w", err)
	}
	j.ID, j.State, j.CreatedAtMs, j.Source = old.ID, old.State, old.CreatedAtMs, old.Source
	sched := !equalJSON(old.Schedule, j.Schedule) || old.IsEnabled() != j.IsEnabled()
	next := old.State.NextRunAtMs
	if err := c.prepare(&j, c.clock.Now(), false); err != nil {
		return Job{}, err
	}
	if !equalJSON(old.Delivery, j.Delivery) {
		if err := c.checkAnnounce(j.Delivery); err != nil {
			return Job{}, err
		}
	}
	if !sched && j.IsEnabled() {
		j.State.NextRunAtMs = next
	}
	if err := c.put(ctx, &j); err != nil {
		return Job{}, err
	}
	c.setJob(&j)
	c.rearm()
	c.emit(CronEvent{JobID: j.ID, Action: "updated", NextRunAtMs: j.State.NextRunAtMs})
	return j, nil
}

// checkAnnounce refuses an announcement to a chat the daemon cannot
// reach: a channel that is not enabled, a misspelt one, a chat id its
// bridge cannot read (deps.Targets says). A job added or pointed there
// would otherwise be accepted and then announce to nowhere at every run
// (issue 26, finding 6). The web chat is always reachable. Jobs the
// configuration file defines are only warned about when loaded (the file
// may name a channel enabled later); their runs report the reason.
func (c *Cron) checkAnnounce(d *Delivery) error {
	if d == nil || d.Mode != DeliveryAnnounce || c.deps.Targets == nil || strings.EqualFold(d.Channel, string(core.WebchatChannel)) {
		return nil
	}
	if _, err := c.deps.Targets.Resolve(d.Channel, d.AccountID, d.To); err != nil {
		return core.FieldErrorf("delivery", err.Error())
	}
	return nil
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// Remove deletes a job (cron.remove), reporting whether it existed.
func (c *Cron) Remove(ctx context.Context, id string) (bool, error) {
	ok, err := c.deps.Store.DeleteCronJob(ctx, id)
	if err != nil {
		return false, err
	}
	c.mu.Lock()
	_, had := c.jobs[id]
	delete(c.jobs, id)
	c.mu.Unlock()
	c.rearm()
	if ok || had {
		c.emit(CronEvent{JobID: id, Action: "removed"})
	}
	return ok || had, nil
}

// Run runs a job now (cron.run). Mode "force" (default) runs it whatever
// its schedule, a disabled job too: that job stays disabled and no run
// deletes it (see DeletesAfterRun). "due" runs it only if a scheduled run
// is due. It returns the run id, or "" when nothing was due.
func (c *Cron) Run(ctx context.Context, id, mode string) (string, error) {
	j, ok := c.Get(id)
	if !ok {
		return "", fmt.Errorf("%w: %q", ErrJobNotFound, id)
	}
	now := c.clock.Now()
	switch mode {
	case "", "force":
	case "due":
		if !j.IsEnabled() || j.State.NextRunAtMs == 0 || j.State.NextRunAtMs > now.UnixMilli() {
			return "", nil
		}
		c.tickMu.Lock()
		defer c.tickMu.Unlock()
		before := c.lastRun(ctx, id)
		err := c.fire(ctx, &j, now)
		return c.newRun(ctx, id, before), err
	default:
		return "", fmt.Errorf("cron: mode %q is not due or force", mode)
	}
	before := c.lastRun(ctx, id)
	if err := c.start(ctx, &j, j.State.NextRunAtMs, j.State.NextRunAtMs, 0, now); err != nil {
		return "", err
	}
	return c.newRun(ctx, id, before), nil
}

func (c *Cron) lastRun(ctx context.Context, id string) string {
	runs, err := c.deps.Store.CronRuns(ctx, id, 1)
	if err != nil || len(runs) == 0 {
		return ""
	}
	return runs[0].RunID
}

func (c *Cron) newRun(ctx context.Context, id, before string) string {
	if r := c.lastRun(ctx, id); r != before {
		return r
	}
	return ""
}

// Runs returns a job's run history, newest first (cron.runs); id "" means
// every job's.
func (c *Cron) Runs(ctx context.Context, id string, limit int) ([]RunRecord, error) {
	runs, err := c.deps.Store.CronRuns(ctx, id, limit)
	if err != nil {
		return nil, err
	}
	out := make([]RunRecord, 0, len(runs))
	for _, r := range runs {
		var d runDetail
		_ = json.Unmarshal(r.Detail, &d)
		out = append(out, RunRecord{RunID: r.RunID, JobID: r.JobID, ScheduledAtMs: r.ScheduledAt, StartedAtMs: r.StartedAt,
			FinishedAtMs: r.FinishedAt, Status: r.Status, Error: d.Error, Summary: d.Summary, SessionKey: d.SessionKey,
			DeliveryStatus: d.DeliveryStatus, DeliveryError: d.DeliveryError, DurationMs: d.DurationMs})
	}
	return out, nil
}

// rearm re-arms the timer after the jobs changed.
func (c *Cron) rearm() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armLocked()
}

// Refresh brings the jobs in memory in line with the store, for an
// instance of a cluster: jobs other instances added, changed, ran (a newer
// next run) or removed. Each instant is still claimed in the store, so a
// job known late or twice runs once. One store read; the cluster calls it
// every lease length. Before Load it does nothing.
func (c *Cron) Refresh(ctx context.Context) error {
	stored, err := c.deps.Store.CronJobs(ctx)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.loaded || c.stopped {
		return nil
	}
	seen := make(map[string]bool, len(stored))
	for _, sj := range stored {
		j, err := decodeJob(sj)
		if err != nil {
			continue
		}
		seen[j.ID] = true
		old := c.jobs[j.ID]
		if old != nil && old.UpdatedAtMs == j.UpdatedAtMs && old.State.NextRunAtMs == j.State.NextRunAtMs && old.IsEnabled() == j.IsEnabled() {
			continue
		}
		c.jobs[j.ID] = j
		c.queueLocked(j)
	}
	for id := range c.jobs {
		if !seen[id] {
			delete(c.jobs, id)
		}
	}
	c.armLocked()
	return nil
}
