package heartbeat

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/egress"
)

// Session targets of a cron job (openclaw-facts §6.5).
const (
	// TargetMain queues a system event for the main session and wakes the
	// heartbeat; the payload must be systemEvent.
	TargetMain = "main"
	// TargetIsolated runs each turn in a fresh session,
	// agent:<id>:cron:<jobId>:run:<runId>.
	TargetIsolated = "isolated"
	// TargetSessionPrefix names a persistent session: "session:<name>".
	TargetSessionPrefix = "session:"
)

// Payload kinds.
const (
	PayloadSystemEvent = "systemEvent"
	PayloadAgentTurn   = "agentTurn"
)

// Delivery modes.
const (
	DeliveryNone     = "none"
	DeliveryAnnounce = "announce"
	DeliveryWebhook  = "webhook"
)

// JobSpec is a cron job's definition: what the configuration file's
// cron.jobs entries and cron.add hold.
type JobSpec struct {
	// ID identifies the job; jobs from the configuration must set it, jobs
	// added at runtime get a generated one.
	ID string `json:"id"`
	// AgentID is the agent that runs it; empty means the default agent.
	AgentID string `json:"agentId,omitempty"`
	// Name is a short human name.
	Name string `json:"name"`
	// Description says what it is for.
	Description string `json:"description,omitempty"`
	// Enabled turns the job on; default true.
	Enabled *bool `json:"enabled,omitempty"`
	// DeleteAfterRun deletes the job after its first successful run;
	// default true for "at" schedules, false otherwise. A disabled job is
	// never deleted by a run (it runs only by hand).
	DeleteAfterRun *bool `json:"deleteAfterRun,omitempty"`
	// Schedule is when it runs.
	Schedule Schedule `json:"schedule"`
	// SessionTarget is "main", "isolated" (default for agentTurn) or
	// "session:<name>".
	SessionTarget string `json:"sessionTarget,omitempty"`
	// WakeMode is "now" (default) or "next-heartbeat": for main-session
	// jobs, whether the heartbeat runs at once for the event.
	WakeMode string `json:"wakeMode,omitempty"`
	// Payload is what the job does.
	Payload Payload `json:"payload"`
	// Delivery is where an agentTurn's answer goes.
	Delivery *Delivery `json:"delivery,omitempty"`
}

// Job is one cron job as stored and reported, in OpenClaw's CronJob shape:
// its definition, where it came from, and its state.
type Job struct {
	JobSpec
	// ConfigSchedule is the schedule as the configuration file writes it,
	// kept to tell an edited schedule from a resolved one ("at: 20m" is
	// stored as an instant).
	ConfigSchedule *Schedule `json:"configSchedule,omitempty"`
	// Source is "config" for jobs from the configuration file (they are
	// replaced when it changes) or "runtime".
	Source string `json:"source,omitempty"`
	// CreatedAtMs is when the job was created, in Unix ms.
	CreatedAtMs int64 `json:"createdAtMs,omitempty"`
	// UpdatedAtMs is when its definition last changed, in Unix ms.
	UpdatedAtMs int64 `json:"updatedAtMs,omitempty"`
	// State is the scheduler's state of the job.
	State JobState `json:"state"`
}

// Payload is what a job does.
type Payload struct {
	// Kind is "systemEvent" or "agentTurn".
	Kind string `json:"kind"`
	// Text is a systemEvent's line.
	Text string `json:"text,omitempty"`
	// Message is an agentTurn's user message.
	Message string `json:"message,omitempty"`
	// Model overrides the agent's model for an agentTurn.
	Model string `json:"model,omitempty"`
	// TimeoutSeconds bounds an agentTurn; 0 means the agent's timeout.
	TimeoutSeconds int `json:"timeoutSeconds,omitempty" min:"0"`
}

// Delivery says where an agentTurn's answer goes.
type Delivery struct {
	// Mode is "none", "announce" (default for isolated jobs: send the
	// answer to Channel/To) or "webhook" (POST it as JSON to To).
	Mode string `json:"mode"`
	// Channel is the bridge for announce ("telegram", "slack", …): one
	// the configuration enables, or webchat. An announcement no running
	// bridge takes fails the run.
	Channel string `json:"channel,omitempty"`
	// To is the chat for announce, the URL for webhook.
	To string `json:"to,omitempty"`
	// AccountID picks the bot account for announce.
	AccountID string `json:"accountId,omitempty"`
	// BestEffort keeps a failed delivery from failing the run.
	BestEffort bool `json:"bestEffort,omitempty"`
}

// JobState is the scheduler's state of a job (openclaw-facts §6.5).
type JobState struct {
	// NextRunAtMs is the next scheduled instant (Unix ms); 0 means none.
	NextRunAtMs int64 `json:"nextRunAtMs,omitempty"`
	// RunningAtMs is when the run under way started; 0 when idle.
	RunningAtMs int64 `json:"runningAtMs,omitempty"`
	// LastRunAtMs is when the last run started.
	LastRunAtMs int64 `json:"lastRunAtMs,omitempty"`
	// LastRunStatus and LastStatus are the last run's ok, error or skipped.
	LastRunStatus string `json:"lastRunStatus,omitempty"`
	LastStatus    string `json:"lastStatus,omitempty"`
	// LastError says why the last run failed or was skipped.
	LastError string `json:"lastError,omitempty"`
	// LastErrorReason classifies it: auth, format, rate_limit, billing,
	// timeout, model_not_found or unknown.
	LastErrorReason string `json:"lastErrorReason,omitempty"`
	// LastDurationMs is how long the last run took.
	LastDurationMs int64 `json:"lastDurationMs,omitempty"`
	// ConsecutiveErrors counts failed runs since the last success.
	ConsecutiveErrors int `json:"consecutiveErrors,omitempty"`
	// LastDelivered reports that the last run's answer was delivered.
	LastDelivered *bool `json:"lastDelivered,omitempty"`
	// LastDeliveryStatus is delivered, not-delivered, unknown or
	// not-requested.
	LastDeliveryStatus string `json:"lastDeliveryStatus,omitempty"`
	// LastDeliveryError says why the last delivery failed.
	LastDeliveryError string `json:"lastDeliveryError,omitempty"`
}

// IsEnabled reports Enabled with its default.
func (j JobSpec) IsEnabled() bool { return j.Enabled == nil || *j.Enabled }

// DeletesAfterRun reports whether a successful run deletes the job:
// DeleteAfterRun with its default (true for "at" schedules), for an
// enabled job. A disabled job runs only by hand, and is kept, disabled,
// whatever that run does (issue 26, finding 6: "Run now" on a disabled
// example deleted it).
func (j JobSpec) DeletesAfterRun() bool {
	if !j.IsEnabled() {
		return false
	}
	if j.DeleteAfterRun != nil {
		return *j.DeleteAfterRun
	}
	return j.Schedule.Kind == ScheduleAt
}

// normalize fills defaults: session target and wake mode from the
// payload, announce for isolated turns with a target.
func (j *JobSpec) normalize() {
	j.Name = strings.TrimSpace(j.Name)
	if j.SessionTarget == "" {
		if j.Payload.Kind == PayloadSystemEvent {
			j.SessionTarget = TargetMain
		} else {
			j.SessionTarget = TargetIsolated
		}
	}
	if j.WakeMode == "" {
		j.WakeMode = "now"
	}
	if j.Name == "" {
		j.Name = j.ID
	}
}

// Validate checks a job and returns errors naming the field and the fix.
// The schedule validates itself (Schedule.Validate); Check does both.
func (j JobSpec) Validate() error {
	var errs []error
	if strings.TrimSpace(j.ID) == "" {
		errs = append(errs, core.FieldErrorf("id", "required: a short stable name such as \"daily-report\" (the job's state is kept under it)"))
	} else if strings.ContainsAny(j.ID, ": \t\n/") {
		errs = append(errs, core.FieldErrorf("id", fmt.Sprintf("%q must not contain spaces, ':' or '/'", j.ID)))
	}
	switch j.Payload.Kind {
	case PayloadSystemEvent:
		if strings.TrimSpace(j.Payload.Text) == "" {
			errs = append(errs, core.FieldErrorf("payload.text", "required for a systemEvent: the line the main session will see"))
		}
	case PayloadAgentTurn:
		if strings.TrimSpace(j.Payload.Message) == "" {
			errs = append(errs, core.FieldErrorf("payload.message", "required for an agentTurn: what the agent is asked to do"))
		}
		if j.Payload.Model != "" {
			if _, err := core.ParseModelRef(j.Payload.Model); err != nil {
				errs = append(errs, core.FieldErrorf("payload.model", err.Error()))
			}
		}
	default:
		errs = append(errs, core.FieldErrorf("payload.kind", fmt.Sprintf("%q is not a payload kind; write systemEvent (a line for the main session) or agentTurn (a turn of its own)", j.Payload.Kind)))
	}
	target := j.SessionTarget
	switch {
	case target == "" || target == TargetIsolated:
	case target == TargetMain:
		if j.Payload.Kind == PayloadAgentTurn {
			errs = append(errs, core.FieldErrorf("sessionTarget", "main takes a systemEvent payload; use isolated or session:<name> for an agentTurn"))
		}
	case strings.HasPrefix(target, TargetSessionPrefix) && len(target) > len(TargetSessionPrefix):
	default:
		errs = append(errs, core.FieldErrorf("sessionTarget", fmt.Sprintf("%q is not a target; write main, isolated or session:<name>", target)))
	}
	if (target == TargetIsolated || strings.HasPrefix(target, TargetSessionPrefix)) && j.Payload.Kind == PayloadSystemEvent {
		errs = append(errs, core.FieldErrorf("payload.kind", "a systemEvent goes to the main session; set sessionTarget: main, or use an agentTurn"))
	}
	if j.WakeMode != "" && j.WakeMode != "now" && j.WakeMode != "next-heartbeat" {
		errs = append(errs, core.FieldErrorf("wakeMode", fmt.Sprintf("%q is not a wake mode; write now or next-heartbeat", j.WakeMode)))
	}
	if d := j.Delivery; d != nil {
		switch d.Mode {
		case "", DeliveryNone:
		case DeliveryAnnounce:
			if d.Channel == "" || d.To == "" {
				errs = append(errs, core.FieldErrorf("delivery", "announce needs channel and to: the chat the answer goes to (for example channel: telegram, to: \"123456\")"))
			}
		case DeliveryWebhook:
			if err := egress.CheckURL(d.To); err != nil {
				errs = append(errs, core.FieldErrorf("delivery.to", err.Error()))
			}
		default:
			errs = append(errs, core.FieldErrorf("delivery.mode", fmt.Sprintf("%q is not a delivery mode; write none, announce or webhook", d.Mode)))
		}
	}
	return errors.Join(errs...)
}

// Check validates the job and its schedule, for jobs that do not come
// through the configuration loader.
func (j *JobSpec) Check() error {
	var errs []error
	if err := j.Schedule.Validate(); err != nil {
		errs = append(errs, prefixed("schedule", err))
	}
	return errors.Join(append(errs, j.Validate())...)
}

// prefixed puts prefix before the path of every FieldError in err.
func prefixed(prefix string, err error) error {
	var list []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	} else {
		list = []error{err}
	}
	out := make([]error, 0, len(list))
	for _, e := range list {
		var fe *core.FieldError
		if errors.As(e, &fe) {
			p := prefix
			if fe.Path != "" {
				p += "." + fe.Path
			}
			out = append(out, &core.FieldError{Path: p, Message: fe.Message})
			continue
		}
		out = append(out, core.FieldErrorf(prefix, e.Error()))
	}
	return errors.Join(out...)
}

// newID returns a random job or run id.
func newID(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// CronConfig is the `cron:` section of the configuration.
type CronConfig struct {
	// Enabled runs cron jobs; default true.
	Enabled *bool `json:"enabled,omitempty"`
	// MaxConcurrentRuns is how many agentTurn jobs run at once (the cron
	// lane). Default 1.
	MaxConcurrentRuns int `json:"maxConcurrentRuns,omitempty" min:"0"`
	// Jobs are scheduled jobs defined in this file; each needs an id. Jobs
	// added at runtime (cron.add, `switchboard cron add`, the cron tool)
	// live in the state store.
	Jobs []JobSpec `json:"jobs,omitempty"`
}

// DefaultCronConfig returns the cron defaults.
func DefaultCronConfig() CronConfig { return CronConfig{MaxConcurrentRuns: 1} }

// IsEnabled reports Enabled with its default.
func (c CronConfig) IsEnabled() bool { return c.Enabled == nil || *c.Enabled }

// Validate checks that job ids are unique (each job validates itself).
func (c CronConfig) Validate() error {
	seen := map[string]bool{}
	var errs []error
	for i, j := range c.Jobs {
		if j.ID != "" && seen[j.ID] {
			errs = append(errs, core.FieldErrorf(fmt.Sprintf("jobs[%d].id", i), fmt.Sprintf("%q is used by an earlier job; ids must be unique", j.ID)))
		}
		seen[j.ID] = true
	}
	return errors.Join(errs...)
}
