package heartbeat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/queue"
	"github.com/switchboardhq/switchboard/store"
)

// WakeCoalesce is how long wake requests are gathered into one run.
const WakeCoalesce = 250 * time.Millisecond

// WakeRetry is how long a wake that found the session busy waits before
// it tries again.
const WakeRetry = time.Second

// DuplicateWindow is how long an alert identical to the last one is
// suppressed.
const DuplicateWindow = 24 * time.Hour

// Dispatcher is what the runner needs of the queue; *queue.Dispatcher
// implements it.
type Dispatcher interface {
	SubmitWith(ctx context.Context, in core.Inbound, opts queue.SubmitOptions) (queue.Receipt, error)
	Busy(key core.SessionKey) bool
	LaneWaiting(name string) int
	PendingSystemEvents(key core.SessionKey) int
}

// Options configure a Runner.
type Options struct {
	// AgentID is the agent; zero means core.DefaultAgentID.
	AgentID string
	// Config is agents.defaults.heartbeat.
	Config core.HeartbeatConfig
	// Seed spreads agents' phases (sha256 of "<seed>:<agentId>").
	Seed string
	// Workspace holds HEARTBEAT.md; nil means none.
	Workspace fs.FS
	// UserLocation is agents.defaults.userTimezone for activeHours "user";
	// nil means the host's zone.
	UserLocation *time.Location
	// Clock is the time source; nil means queue.SystemClock.
	Clock queue.Clock
	// Logger receives the runner's logs; nil discards them.
	Logger *slog.Logger
	// Claim, when set, is asked before each scheduled heartbeat whether
	// this instance runs the one due at due: instances sharing a store
	// give it to exactly one of them. False skips the beat here, with no
	// event. Called on the timer's goroutine; it may do IO.
	Claim func(ctx context.Context, due time.Time) bool
}

// Deps are the runner's collaborators.
type Deps struct {
	// Dispatcher runs the heartbeat turns.
	Dispatcher Dispatcher
	// Deliverer sends alerts to the target chat.
	Deliverer queue.Deliverer
	// Sessions finds the heartbeat session's last route (target "last").
	Sessions core.SessionIndex
	// Targets reads target and to as a channel's chat (a Telegram topic,
	// Slack's "channel:<id>") and tells direct chats, for directPolicy;
	// nil takes to as written and knows no direct chats but web chat.
	Targets core.Targets
	// State persists the on/off switch, the last event, the last alert
	// and task run times; nil keeps them in memory only.
	State store.SchedulerState
	// OnEvent receives every heartbeat event (the gateway broadcasts it).
	OnEvent func(Event)
}

// Runner runs one agent's heartbeat: on its schedule (every, with the
// agent's phase), on wake requests, and by hand. Each heartbeat is a
// heartbeat-kind turn submitted to the dispatcher, which drops it when the
// session is busy; the runner decides what of the reply to deliver. It is
// also a queue.Observer, to learn how its turns ended: register it with
// the dispatcher.
type Runner struct {
	opts     Options
	deps     Deps
	clock    queue.Clock
	log      *slog.Logger
	session  core.SessionKey
	interval time.Duration
	phase    time.Duration
	stateKey string

	runMu sync.Mutex // one heartbeat at a time

	mu      sync.Mutex
	ctx     context.Context
	cancel  context.CancelFunc
	started bool
	stopped bool
	tick    queue.Timer
	wake    queue.Timer
	wakeWhy string
	seq     int
	pending map[string]chan outcome
	st      persisted
	bg      sync.WaitGroup
}

// outcome is how a heartbeat turn ended.
type outcome struct {
	res *agent.Result
	err error
}

// persisted is the runner's state in the store.
type persisted struct {
	// Disabled is set by set-heartbeats {enabled:false}.
	Disabled bool `json:"disabled,omitempty"`
	// Last is the last event.
	Last *Event `json:"last,omitempty"`
	// LastAlert and LastAlertAt are the last delivered alert, for the
	// duplicate check.
	LastAlert   string `json:"lastAlert,omitempty"`
	LastAlertAt int64  `json:"lastAlertAt,omitempty"`
	// Tasks are HEARTBEAT.md task run times by name, Unix ms.
	Tasks map[string]int64 `json:"tasks,omitempty"`
}

// New returns a runner; Start begins its schedule.
func New(opts Options, deps Deps) (*Runner, error) {
	if deps.Dispatcher == nil {
		return nil, errors.New("heartbeat: a dispatcher is required")
	}
	if opts.AgentID == "" {
		opts.AgentID = core.DefaultAgentID
	}
	opts.AgentID = core.NormalizeAgentID(opts.AgentID)
	if err := opts.Config.Validate(); err != nil {
		return nil, fmt.Errorf("heartbeat: %w", err)
	}
	interval, _ := opts.Config.Interval()
	r := &Runner{
		opts: opts, deps: deps, clock: opts.Clock, log: opts.Logger,
		interval: interval,
		stateKey: "heartbeat:" + opts.AgentID,
		pending:  map[string]chan outcome{},
	}
	if r.clock == nil {
		r.clock = queue.SystemClock{}
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	r.session = core.MainSessionKey(opts.AgentID)
	if s := opts.Config.Session; s != "" && s != core.MainKey {
		r.session = core.ResolveRequestSessionKey(opts.AgentID, s)
	}
	if interval > 0 {
		r.phase = Phase(opts.Seed, opts.AgentID, interval)
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	return r, nil
}

// SessionKey is the session heartbeats run in.
func (r *Runner) SessionKey() core.SessionKey { return r.session }

// Start loads the persisted state and arms the schedule.
func (r *Runner) Start(ctx context.Context) error {
	if r.deps.State != nil {
		raw, ok, err := r.deps.State.SchedulerValue(ctx, r.stateKey)
		if err != nil {
			return fmt.Errorf("heartbeat: %w", err)
		}
		if ok {
			if err := json.Unmarshal(raw, &r.st); err != nil {
				r.log.Warn("heartbeat state unreadable; starting afresh", "err", err)
				r.st = persisted{}
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started = true
	r.armLocked()
	return nil
}

// Stop ends the schedule, cancels a heartbeat waiting for its turn and
// waits for the runner's goroutines. The turn itself belongs to the
// dispatcher, which stops it.
func (r *Runner) Stop(context.Context) error {
	r.mu.Lock()
	r.stopped = true
	if r.tick != nil {
		r.tick.Stop()
	}
	if r.wake != nil {
		r.wake.Stop()
	}
	r.mu.Unlock()
	r.cancel()
	r.bg.Wait()
	return nil
}

// NextRun returns when the next scheduled heartbeat is due; false when
// heartbeats are off.
func (r *Runner) NextRun() (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.interval <= 0 || r.st.Disabled {
		return time.Time{}, false
	}
	return NextDue(r.clock.Now(), r.interval, r.phase), true
}

// armLocked schedules the next interval heartbeat.
func (r *Runner) armLocked() {
	if r.tick != nil {
		r.tick.Stop()
		r.tick = nil
	}
	if r.stopped || !r.started || r.interval <= 0 || r.st.Disabled {
		return
	}
	now := r.clock.Now()
	due := NextDue(now, r.interval, r.phase)
	r.tick = r.clock.AfterFunc(due.Sub(now), func() {
		r.mu.Lock()
		if r.stopped {
			r.mu.Unlock()
			return
		}
		r.bg.Add(1)
		r.armLocked()
		r.mu.Unlock()
		defer r.bg.Done()
		if r.opts.Claim != nil && !r.opts.Claim(r.ctx, due) {
			r.log.Debug("heartbeat due on another instance", "due", due)
			return
		}
		r.RunOnce(r.ctx, "interval")
	})
}

// Wake asks for a heartbeat soon: requests within WakeCoalesce become one
// run, and a run that finds the session busy is retried after WakeRetry
// until it runs. trigger names the cause for the event ("wake",
// "cron:<jobId>").
func (r *Runner) Wake(trigger string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if trigger == "" {
		trigger = "wake"
	}
	r.wakeWhy = trigger
	if r.wake != nil || r.stopped {
		return
	}
	r.scheduleWakeLocked(WakeCoalesce)
}

func (r *Runner) scheduleWakeLocked(after time.Duration) {
	r.wake = r.clock.AfterFunc(after, func() {
		r.mu.Lock()
		if r.stopped {
			r.mu.Unlock()
			return
		}
		why := r.wakeWhy
		r.bg.Add(1)
		r.mu.Unlock()
		defer r.bg.Done()
		ev := r.RunOnce(r.ctx, why)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.wake = nil
		if ev.Status == StatusSkipped && ev.Reason == ReasonRequestsInFlight && !r.stopped {
			r.scheduleWakeLocked(WakeRetry)
		}
	})
}

// SetEnabled turns the scheduled heartbeats on or off (set-heartbeats);
// the switch is persisted. Wakes and manual runs still report disabled
// while off.
func (r *Runner) SetEnabled(ctx context.Context, on bool) error {
	r.mu.Lock()
	r.st.Disabled = !on
	snap := r.st
	r.armLocked()
	r.mu.Unlock()
	return r.save(ctx, snap)
}

// Enabled reports whether heartbeats run: configured with an interval and
// not switched off.
func (r *Runner) Enabled() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.interval > 0 && !r.st.Disabled
}

// Last returns the last heartbeat event (last-heartbeat).
func (r *Runner) Last() (Event, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.st.Last == nil {
		return Event{}, false
	}
	return *r.st.Last, true
}

// save persists snap.
func (r *Runner) save(ctx context.Context, snap persisted) error {
	if r.deps.State == nil {
		return nil
	}
	raw, err := json.Marshal(snap)
	if err != nil {
		return err
	}
	if err := r.deps.State.PutSchedulerValue(context.WithoutCancel(ctx), r.stateKey, raw); err != nil {
		return fmt.Errorf("heartbeat: %w", err)
	}
	return nil
}

// RunStarted implements queue.Observer.
func (r *Runner) RunStarted(queue.RunInfo) {}

// RunEvent implements queue.Observer.
func (r *Runner) RunEvent(queue.RunInfo, core.AgentEvent) {}

// RunEnded implements queue.Observer: it hands the runner's own turns'
// results to the heartbeat waiting for them.
func (r *Runner) RunEnded(info queue.RunInfo, res *agent.Result, err error) {
	if info.Kind != core.InboundHeartbeat {
		return
	}
	r.mu.Lock()
	ch := r.pending[info.RunID]
	delete(r.pending, info.RunID)
	r.mu.Unlock()
	if ch != nil {
		ch <- outcome{res: res, err: err}
	}
}
