package heartbeat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/egress"
	"github.com/switchboardhq/switchboard/queue"
	"github.com/switchboardhq/switchboard/store"
)

// CronDispatcher is what the cron service needs of the queue;
// *queue.Dispatcher implements it.
type CronDispatcher interface {
	SubmitWith(ctx context.Context, in core.Inbound, opts queue.SubmitOptions) (queue.Receipt, error)
	EnqueueSystemEvent(key core.SessionKey, text string, opts queue.EventOptions) bool
}

// CronJournal reads journal entries, to tell whether a resumed run's turn
// is still pending; store.Journal implements it.
type CronJournal interface {
	JournalEntries(ctx context.Context, ids ...int64) ([]store.JournalEntry, error)
}

// CronOptions configure the cron service.
type CronOptions struct {
	// AgentID is the agent jobs without one run as; zero means the default.
	AgentID string
	// Config is the `cron:` section.
	Config CronConfig
	// Clock is the time source; nil means queue.SystemClock.
	Clock queue.Clock
	// Logger receives the service's logs; nil discards them.
	Logger *slog.Logger
}

// CronDeps are the cron service's collaborators.
type CronDeps struct {
	// Store keeps jobs and runs.
	Store store.Cron
	// Journal tells resumed runs' journal state; nil treats them as lost.
	Journal CronJournal
	// Dispatcher runs agentTurn jobs and queues systemEvent lines.
	Dispatcher CronDispatcher
	// Heartbeat is woken by main-session jobs; nil leaves their events for
	// the next turn.
	Heartbeat *Runner
	// Deliverer sends announce deliveries.
	Deliverer queue.Deliverer
	// Targets reads an announce's channel and to as that channel's chat;
	// nil takes to as written.
	Targets core.Targets
	// Webhook posts webhook deliveries; nil means NewWebhookClient's
	// defaults.
	Webhook *egress.Client
	// OnEvent receives every cron event (the gateway broadcasts them).
	OnEvent func(CronEvent)
	// Sessions, when set, has the index entries of old isolated runs'
	// sessions reaped (their transcripts stay on disk).
	Sessions core.SessionIndex
}

// KeepIsolatedSessions is how many of a job's most recent isolated run
// sessions stay in the sessions index; older ones are reaped.
const KeepIsolatedSessions = 10

// CronEvent is the cron gateway event's payload.
type CronEvent struct {
	// JobID is the job.
	JobID string `json:"jobId"`
	// Action is added, updated, removed, started, finished or skipped.
	Action string `json:"action"`
	// RunID is the run, for run actions.
	RunID string `json:"runId,omitempty"`
	// RunAtMs is the scheduled instant (or start, for a manual run).
	RunAtMs int64 `json:"runAtMs,omitempty"`
	// DurationMs is how long a finished run took.
	DurationMs int64 `json:"durationMs,omitempty"`
	// Status is ok, error or skipped.
	Status string `json:"status,omitempty"`
	// Error says why a run failed or was skipped.
	Error string `json:"error,omitempty"`
	// Summary is the start of a finished run's answer.
	Summary string `json:"summary,omitempty"`
	// NextRunAtMs is the job's next run.
	NextRunAtMs int64 `json:"nextRunAtMs,omitempty"`
	// DeliveryStatus is delivered, not-delivered, unknown or not-requested.
	DeliveryStatus string `json:"deliveryStatus,omitempty"`
}

// RunRecord is one entry of a job's run history (cron.runs).
type RunRecord struct {
	RunID          string `json:"runId"`
	JobID          string `json:"jobId"`
	ScheduledAtMs  int64  `json:"scheduledAtMs,omitempty"`
	StartedAtMs    int64  `json:"startedAtMs"`
	FinishedAtMs   int64  `json:"finishedAtMs,omitempty"`
	Status         string `json:"status"`
	Error          string `json:"error,omitempty"`
	Summary        string `json:"summary,omitempty"`
	SessionKey     string `json:"sessionKey,omitempty"`
	DeliveryStatus string `json:"deliveryStatus,omitempty"`
	DeliveryError  string `json:"deliveryError,omitempty"`
	DurationMs     int64  `json:"durationMs,omitempty"`
}

// runDetail is RunRecord's part stored as the run's detail JSON.
type runDetail struct {
	Error          string `json:"error,omitempty"`
	Summary        string `json:"summary,omitempty"`
	SessionKey     string `json:"sessionKey,omitempty"`
	DeliveryStatus string `json:"deliveryStatus,omitempty"`
	DeliveryError  string `json:"deliveryError,omitempty"`
	DurationMs     int64  `json:"durationMs,omitempty"`
	ErrorReason    string `json:"errorReason,omitempty"`
}

// activeRun is a run whose turn is under way.
type activeRun struct {
	runID      string // the cron run (a re-prompt has its own turn id)
	reprompted bool   // this is the run's one re-prompt
	jobID      string
	instant    int64
	startedAt  time.Time
	sessionKey core.SessionKey
}

// ErrJobNotFound is returned for an unknown job id.
var ErrJobNotFound = errors.New("cron: no such job")

// Cron runs scheduled jobs. Each job's next run time lives in the store;
// a run is claimed (its instant recorded and the next time persisted, in
// one transaction) before it is dispatched, so an instant is never run
// twice, and a run claimed before a crash is resumed at the next start. It
// is a queue.Observer, to learn how its agentTurn runs ended: register it
// with the dispatcher before the dispatcher starts.
type Cron struct {
	opts  CronOptions
	deps  CronDeps
	clock queue.Clock
	log   *slog.Logger

	tickMu sync.Mutex // one pass over due jobs at a time

	mu     sync.Mutex
	jobs   map[string]*Job
	due    dueQueue // next run times, earliest first
	active map[string]*activeRun
	// running holds the ids of cron turns this process's dispatcher has
	// started and not yet ended (RunStarted to RunEnded).
	running map[string]bool
	timer   queue.Timer
	loaded  bool
	// unfinished are the runs Load found unfinished, for Start to resume.
	unfinished []store.CronRun
	started    bool
	stopped    bool
	ctx        context.Context
	cancel     context.CancelFunc
	bg         sync.WaitGroup
}

// NewCron returns the cron service; Start loads and schedules the jobs.
func NewCron(opts CronOptions, deps CronDeps) (*Cron, error) {
	if deps.Store == nil || deps.Dispatcher == nil {
		return nil, errors.New("cron: a store and a dispatcher are required")
	}
	if opts.AgentID == "" {
		opts.AgentID = core.DefaultAgentID
	}
	if opts.Clock == nil {
		opts.Clock = queue.SystemClock{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Webhook == nil {
		deps.Webhook = NewWebhookClient(egress.Options{})
	}
	c := &Cron{opts: opts, deps: deps, clock: opts.Clock, log: opts.Logger,
		jobs: map[string]*Job{}, active: map[string]*activeRun{}}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c, nil
}

// Load syncs the configured jobs into the store, loads every job, and
// registers the agentTurn runs a crash left unfinished, so their turns,
// which the dispatcher replays from its journal when it starts, are
// recognised. Call it before the dispatcher starts; Start calls it if
// needed.
func (c *Cron) Load(ctx context.Context) error {
	c.mu.Lock()
	loaded := c.loaded
	c.mu.Unlock()
	if loaded {
		return nil
	}
	if err := c.syncConfig(ctx); err != nil {
		return err
	}
	stored, err := c.deps.Store.CronJobs(ctx)
	if err != nil {
		return err
	}
	runs, err := c.deps.Store.UnfinishedCronRuns(ctx)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, sj := range stored {
		j, err := decodeJob(sj)
		if err != nil {
			c.log.Error("stored cron job unreadable; leaving it alone", "job", sj.ID, "err", err)
			continue
		}
		c.jobs[j.ID] = j
		c.queueLocked(j)
		if j.IsEnabled() {
			if err := c.checkAnnounce(j.Delivery); err != nil {
				c.log.Warn("a cron job announces to a chat this daemon cannot reach; its runs fail until it can", "job", j.ID, "err", err)
			}
		}
	}
	for _, r := range runs {
		c.unfinished = append(c.unfinished, r)
		if j := c.jobs[r.JobID]; j != nil && j.Payload.Kind == PayloadAgentTurn {
			var d runDetail
			_ = json.Unmarshal(r.Detail, &d)
			key := core.SessionKey(d.SessionKey)
			if key == "" {
				key = c.sessionKey(j, r.RunID)
			}
			c.active[r.RunID] = &activeRun{runID: r.RunID, jobID: r.JobID, instant: r.ScheduledAt, startedAt: time.UnixMilli(r.StartedAt), sessionKey: key}
		}
	}
	c.loaded = true
	return nil
}

// Start loads the jobs (see Load), resumes runs a crash interrupted and
// arms the schedule; jobs missed while Switchboard was down are handled at
// once (see fire).
func (c *Cron) Start(ctx context.Context) error {
	if err := c.Load(ctx); err != nil {
		return err
	}
	c.resume(ctx)
	c.mu.Lock()
	c.started = true
	c.armLocked()
	c.mu.Unlock()
	return nil
}

// Stop disarms the schedule and waits for the service's goroutines. Turns
// under way belong to the dispatcher; their runs finish at the next start.
func (c *Cron) Stop(context.Context) error {
	c.mu.Lock()
	c.stopped = true
	if c.timer != nil {
		c.timer.Stop()
	}
	c.mu.Unlock()
	c.cancel()
	c.bg.Wait()
	return nil
}

// syncConfig stores the configured jobs: new ones get their first run
// time, changed ones keep their state (and their next run unless the
// schedule changed), and configured jobs no longer in the file go.
func (c *Cron) syncConfig(ctx context.Context) error {
	stored, err := c.deps.Store.CronJobs(ctx)
	if err != nil {
		return err
	}
	byID := map[string]store.CronJob{}
	for _, sj := range stored {
		byID[sj.ID] = sj
	}
	now := c.clock.Now()
	want := map[string]bool{}
	for _, cj := range c.opts.Config.Jobs {
		j := Job{JobSpec: cj}
		j.Source = "config"
		j.normalize()
		want[j.ID] = true
		if old, ok := byID[j.ID]; ok {
			prev, err := decodeJob(old)
			if err == nil {
				j.State, j.CreatedAtMs = prev.State, prev.CreatedAtMs
				if prev.Source == "config" && sameSchedule(prev, &j) {
					// Keep the resolved schedule (an at instant, an every
					// anchor) and the next run time.
					j.Schedule, j.ConfigSchedule = prev.Schedule, prev.ConfigSchedule
					j.UpdatedAtMs = prev.UpdatedAtMs
					if specEqual(prev, &j) {
						continue
					}
					if err := j.Check(); err != nil {
						return fmt.Errorf("cron.jobs %s: %w", j.ID, err)
					}
					j.UpdatedAtMs = now.UnixMilli()
					if err := c.put(ctx, &j); err != nil {
						return err
					}
					continue
				}
			}
		}
		if err := c.prepare(&j, now, j.CreatedAtMs == 0); err != nil {
			return fmt.Errorf("cron.jobs %s: %w", j.ID, err)
		}
		if err := c.put(ctx, &j); err != nil {
			return err
		}
	}
	for _, sj := range stored {
		if want[sj.ID] {
			continue
		}
		if j, err := decodeJob(sj); err == nil && j.Source == "config" {
			if _, err := c.deps.Store.DeleteCronJob(ctx, sj.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// sameSchedule reports an unchanged schedule, comparing the configured
// form (a relative at resolves to the same stored instant only if it was
// not edited).
func sameSchedule(prev, j *Job) bool {
	if prev.ConfigSchedule == nil {
		return false
	}
	a, _ := json.Marshal(prev.ConfigSchedule)
	b, _ := json.Marshal(j.Schedule)
	return string(a) == string(b)
}

// specEqual reports identical definitions apart from state and times.
func specEqual(a, b *Job) bool {
	x, y := *a, *b
	x.State, y.State = JobState{}, JobState{}
	x.UpdatedAtMs, y.UpdatedAtMs = 0, 0
	x.CreatedAtMs, y.CreatedAtMs = 0, 0
	x.ConfigSchedule, y.ConfigSchedule = nil, nil
	p, _ := json.Marshal(x)
	q, _ := json.Marshal(y)
	return string(p) == string(q)
}

// prepare normalizes, validates and resolves a job being saved, and
// computes its next run when fresh (or when its schedule changed).
func (c *Cron) prepare(j *Job, now time.Time, fresh bool) error {
	j.normalize()
	if err := j.Check(); err != nil {
		return err
	}
	configured := j.Schedule
	resolved, err := j.Schedule.Resolve(now)
	if err != nil {
		return err
	}
	j.Schedule = resolved
	if j.Source == "config" {
		j.ConfigSchedule = &configured
	}
	if fresh {
		j.CreatedAtMs = now.UnixMilli()
	}
	j.UpdatedAtMs = now.UnixMilli()
	j.State.NextRunAtMs = 0
	if next, ok := j.Schedule.Next(now, j.ID); ok && j.IsEnabled() {
		j.State.NextRunAtMs = next.UnixMilli()
	}
	return nil
}

// put stores a job as it is.
func (c *Cron) put(ctx context.Context, j *Job) error {
	spec, state, err := encodeJob(j)
	if err != nil {
		return err
	}
	return c.deps.Store.PutCronJob(ctx, store.CronJob{ID: j.ID, Spec: spec, State: state, NextRunAt: j.State.NextRunAtMs,
		CreatedAt: j.CreatedAtMs, UpdatedAt: j.UpdatedAtMs})
}

// encodeJob splits a job into its definition and its state.
func encodeJob(j *Job) (spec, state json.RawMessage, err error) {
	d := *j
	d.State = JobState{}
	if spec, err = json.Marshal(d); err != nil {
		return nil, nil, err
	}
	if state, err = json.Marshal(j.State); err != nil {
		return nil, nil, err
	}
	return spec, state, nil
}

// decodeJob rebuilds a job from its stored row; the row's next run time is
// authoritative.
func decodeJob(sj store.CronJob) (*Job, error) {
	var j Job
	if err := json.Unmarshal(sj.Spec, &j); err != nil {
		return nil, fmt.Errorf("cron job %s: %w", sj.ID, err)
	}
	if len(sj.State) > 0 {
		if err := json.Unmarshal(sj.State, &j.State); err != nil {
			return nil, fmt.Errorf("cron job %s state: %w", sj.ID, err)
		}
	}
	j.ID = sj.ID
	j.State.NextRunAtMs = sj.NextRunAt
	return &j, nil
}

// armLocked arms the timer for the earliest due job.
func (c *Cron) armLocked() {
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	if c.stopped || !c.started || !c.opts.Config.IsEnabled() {
		return
	}
	e, ok := c.nextLocked()
	if !ok {
		return
	}
	next := e.at
	wait := time.UnixMilli(next).Sub(c.clock.Now())
	if wait < 0 {
		wait = 0
	}
	c.timer = c.clock.AfterFunc(wait, func() {
		c.mu.Lock()
		if c.stopped {
			c.mu.Unlock()
			return
		}
		c.bg.Add(1)
		c.mu.Unlock()
		defer c.bg.Done()
		c.tick()
	})
}

// tick fires every due job, then re-arms.
func (c *Cron) tick() {
	c.tickMu.Lock()
	defer c.tickMu.Unlock()
	now := c.clock.Now()
	c.mu.Lock()
	var due []*Job
	for _, id := range c.popDueLocked(now.UnixMilli()) {
		cp := *c.jobs[id]
		due = append(due, &cp)
	}
	c.mu.Unlock()
	for _, j := range due { // earliest first
		if err := c.fire(c.ctx, j, now); err != nil {
			c.log.Error("cron job could not start; retrying at the next pass", "job", j.ID, "err", err)
			c.mu.Lock()
			if cur := c.jobs[j.ID]; cur != nil {
				c.queueLocked(cur)
			}
			c.mu.Unlock()
		}
	}
	c.mu.Lock()
	c.armLocked()
	c.mu.Unlock()
}

// fire handles a due job at now. Instants missed while Switchboard was
// down are found first: when the latest is within its grace window it runs
// once (older ones are recorded as one skipped run), otherwise all are
// recorded as skipped with the reason. Each step is claimed in the store
// before anything is dispatched.
func (c *Cron) fire(ctx context.Context, j *Job, now time.Time) error {
	first := time.UnixMilli(j.State.NextRunAtMs)
	latest, missed := first, 0
	for missed < 100000 {
		n, ok := j.Schedule.Next(latest, j.ID)
		if !ok || n.After(now) {
			break
		}
		latest = n
		missed++
	}
	var nextMs int64
	if n, ok := j.Schedule.Next(now, j.ID); ok {
		nextMs = n.UnixMilli()
	}
	grace := j.Schedule.Grace(latest, j.ID)
	late := now.Sub(latest)
	expect := j.State.NextRunAtMs

	if late > grace {
		reason := fmt.Sprintf("missed: Switchboard was not running at %s (%s late, more than the %s grace window)",
			latest.UTC().Format(time.RFC3339), late.Round(time.Second), grace)
		if missed > 0 {
			reason = fmt.Sprintf("missed %d runs from %s to %s: Switchboard was not running (the last was %s late, more than the %s grace window)",
				missed+1, first.UTC().Format(time.RFC3339), latest.UTC().Format(time.RFC3339), late.Round(time.Second), grace)
		}
		return c.skip(ctx, j, expect, nextMs, latest, reason, now)
	}
	if missed > 0 {
		// Older instants: one skipped record, then run the latest.
		reason := fmt.Sprintf("missed %d earlier runs from %s: Switchboard was not running; the latest (%s) runs instead",
			missed, first.UTC().Format(time.RFC3339), latest.UTC().Format(time.RFC3339))
		if err := c.skip(ctx, j, expect, latest.UnixMilli(), first, reason, now); err != nil {
			return err
		}
		expect = latest.UnixMilli()
	}
	return c.start(ctx, j, expect, nextMs, latest.UnixMilli(), now)
}

// skip records a skipped run for instant and advances the job to nextMs.
func (c *Cron) skip(ctx context.Context, j *Job, expect, nextMs int64, instant time.Time, reason string, now time.Time) error {
	st := j.State
	st.NextRunAtMs, st.LastStatus, st.LastRunStatus, st.LastError = nextMs, "skipped", "skipped", reason
	runID := newID("cron-")
	claimed, err := c.claim(ctx, j, expect, st, store.CronRun{RunID: runID, ScheduledAt: instant.UnixMilli(), StartedAt: now.UnixMilli(),
		FinishedAt: now.UnixMilli(), Status: "skipped", Detail: mustJSON(runDetail{Error: reason})})
	if !claimed {
		return err
	}
	c.log.Warn("cron run skipped", "job", j.ID, "reason", reason)
	c.emit(CronEvent{JobID: j.ID, Action: "skipped", RunID: runID, RunAtMs: instant.UnixMilli(), Status: "skipped", Error: reason, NextRunAtMs: nextMs})
	return nil
}

// start claims a run of j for instant (0 for a manual run) and dispatches
// it.
func (c *Cron) start(ctx context.Context, j *Job, expect, nextMs, instant int64, now time.Time) error {
	runID := newID("cron-")
	key := c.sessionKey(j, runID)
	st := j.State
	st.NextRunAtMs, st.RunningAtMs = nextMs, now.UnixMilli()
	claimed, err := c.claim(ctx, j, expect, st, store.CronRun{RunID: runID, ScheduledAt: instant, StartedAt: now.UnixMilli(),
		Status: "running", Detail: mustJSON(runDetail{SessionKey: string(key)})})
	if !claimed {
		return err
	}
	runAt := instant
	if runAt == 0 {
		runAt = now.UnixMilli()
	}
	c.emit(CronEvent{JobID: j.ID, Action: "started", RunID: runID, RunAtMs: runAt, NextRunAtMs: nextMs})
	c.dispatch(ctx, j, store.CronRun{RunID: runID, JobID: j.ID, ScheduledAt: instant, StartedAt: now.UnixMilli()}, key)
	return nil
}

// claim advances j from the next run time expect to st's and records run,
// in one store transaction. On success j takes st; when someone else
// claimed the instant first, j is reloaded from the store and claimed is
// false with a nil error.
func (c *Cron) claim(ctx context.Context, j *Job, expect int64, st JobState, run store.CronRun) (claimed bool, err error) {
	ok, err := c.deps.Store.ClaimCronRun(ctx, store.CronClaim{JobID: j.ID, ExpectNextRunAt: expect, NextRunAt: st.NextRunAtMs,
		State: mustJSON(st), Run: run})
	if err != nil {
		return false, err
	}
	if !ok {
		return false, c.reload(ctx, j.ID)
	}
	j.State = st
	c.setJob(j)
	return true, nil
}

// sessionKey is where a run of j runs.
func (c *Cron) sessionKey(j *Job, runID string) core.SessionKey {
	agentID := j.AgentID
	if agentID == "" {
		agentID = c.opts.AgentID
	}
	switch {
	case j.SessionTarget == TargetMain:
		if c.deps.Heartbeat != nil {
			return c.deps.Heartbeat.SessionKey()
		}
		return core.MainSessionKey(agentID)
	case len(j.SessionTarget) > len(TargetSessionPrefix) && j.SessionTarget[:len(TargetSessionPrefix)] == TargetSessionPrefix:
		return core.ResolveRequestSessionKey(agentID, j.SessionTarget[len(TargetSessionPrefix):])
	}
	return core.CronRunSessionKey(agentID, j.ID, runID)
}

// dispatch hands a claimed run to the dispatcher: a system event for the
// main session (done at once), or an agentTurn (done when RunEnded says).
func (c *Cron) dispatch(ctx context.Context, j *Job, run store.CronRun, key core.SessionKey) {
	if j.Payload.Kind == PayloadSystemEvent {
		c.deps.Dispatcher.EnqueueSystemEvent(key, j.Payload.Text, queue.EventOptions{Trusted: true, ContextKey: "cron:" + j.ID})
		if j.WakeMode != "next-heartbeat" && c.deps.Heartbeat != nil {
			c.deps.Heartbeat.Wake("cron:" + j.ID)
		}
		c.finish(ctx, run, result{status: "ok", delivery: "not-requested"})
		return
	}
	c.mu.Lock()
	c.active[run.RunID] = &activeRun{runID: run.RunID, jobID: j.ID, instant: run.ScheduledAt, startedAt: time.UnixMilli(run.StartedAt), sessionKey: key}
	c.mu.Unlock()
	agentID := j.AgentID
	if agentID == "" {
		agentID = c.opts.AgentID
	}
	in := core.Inbound{Kind: core.InboundCron, AgentID: agentID, SessionKey: key, Body: j.Payload.Message}
	rcpt, err := c.deps.Dispatcher.SubmitWith(ctx, in, queue.SubmitOptions{
		RunID: run.RunID, DedupeKey: "cron:" + run.RunID, Model: j.Payload.Model, NoDeliver: true,
		Timeout: time.Duration(j.Payload.TimeoutSeconds) * time.Second,
	})
	switch {
	case err != nil:
		if c.take(run.RunID) {
			c.finish(ctx, run, result{status: "error", err: "could not start the turn: " + err.Error(), delivery: "not-delivered"})
		}
	case rcpt.Disposition == queue.Duplicate:
		// Resumed after a crash: the journal has the turn. Pending, the
		// dispatcher replays it and RunEnded finishes the run; finished,
		// its result was lost with the process.
		// Or the journal replayed it in this process and it has just
		// completed: RunEnded, right behind, finishes the run.
		if c.journalPending(ctx, rcpt.EntryID) || c.startedHere(run.RunID) {
			return
		}
		if c.take(run.RunID) {
			c.finish(ctx, run, result{status: "error", err: "interrupted: Switchboard stopped after the turn ran but before its result was recorded", delivery: "unknown"})
		}
	case rcpt.Disposition == queue.Dropped:
		if c.take(run.RunID) {
			c.finish(ctx, run, result{status: "skipped", err: "the session's queue was full; the turn was dropped", delivery: "not-delivered"})
		}
	}
}

func (c *Cron) journalPending(ctx context.Context, id int64) bool {
	if c.deps.Journal == nil || id == 0 {
		return false
	}
	es, err := c.deps.Journal.JournalEntries(ctx, id)
	if err != nil || len(es) == 0 {
		return false
	}
	return es[0].State == store.JournalAccepted || es[0].State == store.JournalRunning
}

// resume finishes or re-dispatches the runs a crash left unfinished: a
// system event is queued again; an agentTurn whose turn the dispatcher is
// not already replaying is submitted again under the same dedupe key, so
// it runs exactly once.
func (c *Cron) resume(ctx context.Context) {
	c.mu.Lock()
	runs := c.unfinished
	c.unfinished = nil
	c.mu.Unlock()
	for _, r := range runs {
		c.mu.Lock()
		j := c.jobs[r.JobID]
		var cp Job
		if j != nil {
			cp = *j
		}
		_, waiting := c.active[r.RunID]
		c.mu.Unlock()
		switch {
		case j == nil:
			c.finish(ctx, r, result{status: "error", err: "the job was removed before its run finished", delivery: "not-delivered"})
			continue
		case cp.Payload.Kind == PayloadAgentTurn && !waiting:
			continue // the replayed turn has ended already
		}
		var d runDetail
		_ = json.Unmarshal(r.Detail, &d)
		key := core.SessionKey(d.SessionKey)
		if key == "" {
			key = c.sessionKey(&cp, r.RunID)
		}
		c.log.Info("resuming a cron run interrupted by a restart", "job", r.JobID, "run", r.RunID)
		c.dispatch(ctx, &cp, r, key)
	}
}

// take removes a run from the active set, reporting whether it was there:
// whoever takes it finishes it.
func (c *Cron) take(runID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.active[runID]
	delete(c.active, runID)
	return ok
}

// reload refreshes one job from the store after a lost claim.
func (c *Cron) reload(ctx context.Context, id string) error {
	sj, ok, err := c.deps.Store.CronJob(ctx, id)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !ok {
		delete(c.jobs, id)
		return nil
	}
	j, err := decodeJob(sj)
	if err != nil {
		return err
	}
	c.jobs[id] = j
	c.queueLocked(j)
	return nil
}

// setJob replaces the cached job.
func (c *Cron) setJob(j *Job) {
	cp := *j
	c.mu.Lock()
	c.jobs[j.ID] = &cp
	c.queueLocked(&cp)
	c.mu.Unlock()
}

func (c *Cron) emit(ev CronEvent) {
	if c.deps.OnEvent != nil {
		c.deps.OnEvent(ev)
	}
}

// sortedJobs returns copies of the cached jobs by id.
func (c *Cron) sortedJobs() []Job {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Job, 0, len(c.jobs))
	for _, j := range c.jobs {
		out = append(out, *j)
	}
	slices.SortFunc(out, func(a, b Job) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	return out
}
