package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/core/transcript"
	"github.com/switchboardhq/switchboard/store"
)

// Runner is what the dispatcher needs of the agent; *agent.Runner
// implements it.
type Runner interface {
	Run(ctx context.Context, t agent.Turn) (*agent.Result, error)
	Steer(key core.SessionKey, in *core.Inbound) bool
	Abort(key core.SessionKey) (<-chan struct{}, bool)
}

// Deliverer sends replies and notices to chats; the bridge router
// implements it. Deliver may block on the network; it is called from the
// run's goroutine (replies) or a dispatcher goroutine (notices), never with
// the dispatcher's lock held.
type Deliverer interface {
	Deliver(ctx context.Context, d Delivery) error
}

// DeliveryKind tells a reply from a notice.
type DeliveryKind string

// The delivery kinds.
const (
	// DeliveryReply carries a run's replies.
	DeliveryReply DeliveryKind = "reply"
	// DeliveryNotice is a short message from Switchboard itself: a dropped
	// message, a queue setting confirmed, a run still shutting down.
	DeliveryNotice DeliveryKind = "notice"
)

// Delivery is what to send where.
type Delivery struct {
	// Kind is reply or notice.
	Kind DeliveryKind `json:"kind"`
	// RunID is the run that produced the replies ("" for a notice).
	RunID string `json:"runId,omitempty"`
	// SessionKey is the session.
	SessionKey core.SessionKey `json:"sessionKey"`
	// Route is the chat, account and thread to send to.
	Route core.Route `json:"route"`
	// ReplyToMessageID is the inbound message being answered (the last of
	// a batch), for native reply threading.
	ReplyToMessageID core.MessageID `json:"replyToMessageId,omitempty"`
	// Batched reports a turn that answered several queued messages
	// (replyToMode "batched").
	Batched bool `json:"batched,omitempty"`
	// Replies are the payloads to send, in order.
	Replies []core.ReplyPayload `json:"replies"`
	// EntryIDs are the journal entries the delivery answers.
	EntryIDs []int64 `json:"entryIds,omitempty"`
}

// Signals is an optional Deliverer capability: telling a chat that a
// message is waiting behind a busy run (typing indicator, ack reaction).
type Signals interface {
	// Queued is called, outside the dispatcher's lock, when a message is
	// queued behind an active run. ack reports messages.queue.ack.
	Queued(ctx context.Context, in core.Inbound, ack bool)
}

// RunInfo identifies a run to observers.
type RunInfo struct {
	// RunID is the run's id: the client's run id when one message with one
	// was run alone, else a new id.
	RunID string
	// SessionKey is the session.
	SessionKey core.SessionKey
	// Route is where replies go.
	Route core.Route
	// Kind is who started the run.
	Kind core.InboundKind
	// EntryIDs are the journal entries the run answers.
	EntryIDs []int64
	// ClientRunIDs are the run ids clients gave the messages of this run
	// (gateway chat.send idempotency keys), for mapping events back.
	ClientRunIDs []string
}

// Observer watches runs; the gateway turns these into chat and agent
// events. Methods are called from the run's goroutine and must not block.
type Observer interface {
	RunStarted(info RunInfo)
	RunEvent(info RunInfo, ev core.AgentEvent)
	RunEnded(info RunInfo, res *agent.Result, err error)
}

// CompactionObserver is an optional Observer capability: it also hears
// about history compactions during a run.
type CompactionObserver interface {
	RunCompaction(info RunInfo, ev agent.CompactionEvent)
}

// Options configure a Dispatcher. Zero values are the documented defaults.
type Options struct {
	// Config is the messages.queue configuration.
	Config Config
	// Lanes gives the slots of each lane (LaneMain, LaneCron, ...). Missing
	// lanes default to main 4, cron 1, subagent 8, nested = main.
	Lanes map[string]int
	// InterruptWait is how long interrupt mode waits for the aborted run to
	// end before telling the user it is still shutting down. Zero: 10s.
	InterruptWait time.Duration
	// Clock is the time source; nil means SystemClock.
	Clock Clock
	// Logger receives the dispatcher's logs; nil discards them.
	Logger *slog.Logger
	// NewRunID makes run ids; nil means random ids.
	NewRunID func() string
}

// Deps are the dispatcher's collaborators.
type Deps struct {
	// Runner runs turns.
	Runner Runner
	// Journal is the durable journal (the state store).
	Journal Journal
	// Deliverer sends replies and notices; nil drops them (tests only).
	Deliverer Deliverer
	// Observers watch runs.
	Observers []Observer
	// IsOwner reports whether an inbound message comes from an owner
	// (commands.ownerAllowFrom), which lets owner-only tools run in its
	// turn. A turn of several messages (collect) is an owner's only when
	// every message is, and a non-owner's message is never steered into an
	// owner's running turn: it waits for the next one. Nil means no sender
	// is an owner.
	IsOwner func(core.Inbound) bool
	// Leases, when set, makes this dispatcher one of a cluster's: a
	// session runs here only while this instance holds its lease, and
	// the run's journal writes are fenced on it. Nil: one instance.
	Leases SessionLeases
}

// Disposition says what Submit did with a message.
type Disposition string

// The dispositions.
const (
	// Running: the message started a run at once.
	Running Disposition = "running"
	// Queued: the session is busy; the message runs after, per its mode.
	Queued Disposition = "queued"
	// Steered: the message was injected into the active run.
	Steered Disposition = "steered"
	// Interrupting: the active run is being aborted for this message.
	Interrupting Disposition = "interrupting"
	// Dropped: refused by policy (a heartbeat while busy, drop:new at
	// cap); the sender was told, or for a heartbeat nobody needs to be.
	Dropped Disposition = "dropped"
	// Duplicate: the same platform message was accepted before.
	Duplicate Disposition = "duplicate"
	// DirectiveApplied: a standalone /queue directive, applied and confirmed.
	DirectiveApplied Disposition = "directive"
	// Stopped: a stop command aborted the session's work.
	Stopped Disposition = "stopped"
)

// Receipt is what Submit reports. Once Submit returns without error the
// message is durable: the caller may acknowledge it to the platform.
type Receipt struct {
	// EntryID is the journal entry (0 when the message was not journaled:
	// directives, stop commands, heartbeats).
	EntryID int64
	// Disposition says what happened.
	Disposition Disposition
	// RunID is the run the message started, when Running.
	RunID string
	// State is, for a Duplicate found in the journal, where the message
	// taken before is: accepted or running (its turn is still to end),
	// done, or dropped. It is empty when a Duplicate was recognised from
	// memory (SubmitOptions.RunID unset) or for any other disposition.
	State store.JournalState
}

// SubmitOptions refine one Submit.
type SubmitOptions struct {
	// RunID is the client's id for the run (the gateway's idempotency key);
	// a message run alone uses it as the run id. A Submit with a RunID is
	// checked against the journal, not the in-memory recent ids, so a
	// Duplicate carries the earlier message's State.
	RunID string
	// Mode overrides the queue mode for this message only (protocol v4
	// chat.send queueMode).
	Mode Mode
	// Lane picks the global lane; zero means by kind (cron → LaneCron, else
	// LaneMain).
	Lane string
	// DedupeKey overrides the key built from the route and message id.
	DedupeKey string
	// Model overrides the agent's primary model for this turn
	// ("<provider>/<model>"), e.g. heartbeat.model or a cron job's model.
	Model string
	// Timeout, when positive, bounds the turn more tightly than the agent's
	// timeout (heartbeat.timeoutSeconds, a cron payload's timeoutSeconds).
	Timeout time.Duration
	// NoDeliver keeps the run's replies from the Deliverer: they are
	// recorded as handled and reach only the Observers (RunEnded), whose
	// owner decides what to send (the heartbeat runner, cron webhooks).
	// A run that answers several queued messages together delivers anyway.
	NoDeliver bool
}

// ErrStopped is returned by Submit after Stop.
var ErrStopped = errors.New("queue: the dispatcher is stopped")

// errShutdown cancels runs still going when Stop's deadline passes; their
// messages stay pending in the journal and run again at the next start.
var errShutdown = errors.New("queue: shutting down")

// Dispatcher runs every turn: it journals each message before accepting
// it, runs at most one turn per session, applies the queue modes, and
// delivers the replies. It keeps no goroutine per session: an idle session
// has no state at all.
type Dispatcher struct {
	opts    Options
	deps    Deps
	log     *slog.Logger
	clock   Clock
	commit  *committer
	lanes   map[string]*lane
	recent  *RecentIDs
	events  *SystemEvents
	newID   func() string
	runsWG  sync.WaitGroup // active runs
	bgWG    sync.WaitGroup // notices, redeliveries, the committer
	baseCtx context.Context
	cancel  context.CancelCauseFunc

	mu        sync.Mutex
	started   bool
	stopping  bool
	sessions  map[core.SessionKey]*session
	overrides map[core.SessionKey]Override
	runs      map[*run]struct{}
	// adoptTimers retry sessions another instance held (Deps.Leases).
	adoptTimers map[core.SessionKey]Timer

	adoptMu  sync.Mutex // one Adopt at a time
	finMu    sync.Mutex // guards finished; taken after mu, never before
	finished finishedIDs
}

// New builds a dispatcher. It does no IO; Start loads its state.
func New(opts Options, deps Deps) (*Dispatcher, error) {
	if deps.Runner == nil || deps.Journal == nil {
		return nil, errors.New("queue: a runner and a journal are required")
	}
	if opts.Clock == nil {
		opts.Clock = SystemClock{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.InterruptWait <= 0 {
		opts.InterruptWait = 10 * time.Second
	}
	newID := opts.NewRunID
	if newID == nil {
		newID = transcript.NewSessionID
	}
	slots := map[string]int{LaneMain: 4, LaneCron: 1, LaneSubagent: 8}
	for k, v := range opts.Lanes {
		slots[k] = v
	}
	if _, ok := slots[LaneNested]; !ok {
		slots[LaneNested] = slots[LaneMain]
	}
	lanes := map[string]*lane{}
	for name, n := range slots {
		lanes[name] = newLane(name, n)
	}
	d := &Dispatcher{
		opts: opts, deps: deps, log: opts.Logger, clock: opts.Clock,
		commit:    newCommitter(deps.Journal),
		lanes:     lanes,
		recent:    NewRecentIDs(),
		events:    NewSystemEvents(),
		newID:     newID,
		sessions:  map[core.SessionKey]*session{},
		overrides: map[core.SessionKey]Override{},
		runs:      map[*run]struct{}{},

		adoptTimers: map[core.SessionKey]Timer{},
	}
	d.commit.onSend = d.noteFinished
	return d, nil
}

// record is what the journal keeps of a message: the inbound plus how it
// was submitted, so a replay treats it exactly as the original.
type record struct {
	Inbound     core.Inbound `json:"inbound"`
	ClientRunID string       `json:"clientRunId,omitempty"`
	Override    Override     `json:"override,omitzero"`
	Lane        string       `json:"lane,omitempty"`
	// Model, TimeoutMs and NoDeliver are the SubmitOptions of the same
	// names, journaled so a replay runs the turn the same way.
	Model     string `json:"model,omitempty"`
	TimeoutMs int64  `json:"timeoutMs,omitempty"`
	NoDeliver bool   `json:"noDeliver,omitempty"`
}

// item is a journaled message waiting in, or taken from, a session queue.
type item struct {
	id       int64
	rec      record
	settings Settings
	queuedAt time.Time
}

// Observe adds an observer of runs. It must be called before Start (the
// scheduler, built after the dispatcher it submits to, observes its own
// turns this way); later calls are refused with an error.
func (d *Dispatcher) Observe(o Observer) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.started {
		return errors.New("queue: Observe after Start")
	}
	d.deps.Observers = append(d.deps.Observers, o)
	return nil
}

// Start loads the per-session queue settings, starts the journal writer,
// redelivers outcomes a crash left undelivered, and replays the messages
// a crash or stop left pending, in their original order per session.
func (d *Dispatcher) Start(ctx context.Context) error {
	d.mu.Lock()
	if d.started {
		d.mu.Unlock()
		return errors.New("queue: the dispatcher was already started")
	}
	d.started = true
	d.mu.Unlock()

	all, err := d.deps.Journal.AllQueueSettings(ctx)
	if err != nil {
		return fmt.Errorf("queue: load session queue settings: %w", err)
	}
	for key, raw := range all {
		var o Override
		if err := json.Unmarshal(raw, &o); err != nil {
			d.log.Warn("ignoring unreadable queue settings", "session", key, "err", err)
			continue
		}
		d.overrides[key] = o
	}
	outcomes, err := d.deps.Journal.UndeliveredOutcomes(ctx)
	if err != nil {
		return fmt.Errorf("queue: load undelivered outcomes: %w", err)
	}
	pending, err := d.deps.Journal.PendingJournal(ctx)
	if err != nil {
		return fmt.Errorf("queue: load pending journal: %w", err)
	}
	if d.deps.Leases != nil {
		// Another instance may be delivering these right now; Sweep
		// delivers the ones left behind, under their session's lease.
		outcomes = nil
	}

	d.baseCtx, d.cancel = context.WithCancelCause(context.WithoutCancel(ctx))
	d.bgWG.Add(1)
	go func() {
		defer d.bgWG.Done()
		d.commit.run()
	}()

	if len(outcomes) > 0 {
		d.log.Info("redelivering replies a restart interrupted", "count", len(outcomes))
		d.bgWG.Add(1)
		go func() {
			defer d.bgWG.Done()
			d.redeliver(outcomes)
		}()
	}
	if len(pending) > 0 {
		d.log.Info("replaying messages accepted before the restart", "count", len(pending))
	}
	for _, e := range pending {
		var rec record
		if err := json.Unmarshal(e.Inbound, &rec); err != nil {
			// Unreadable: tell nobody we cannot reach; record why.
			d.log.Error("journal entry unreadable; marking it dropped", "entry", e.ID, "err", err)
			d.commit.applyAsync(storeDrop([]int64{e.ID}, "unreadable journal entry: "+err.Error()))
			continue
		}
		d.accept(&item{id: e.ID, rec: rec, settings: d.settings(&rec), queuedAt: d.clock.Now()}, false)
	}
	return nil
}

// settings resolves a message's queue settings (openclaw-facts §3.2).
func (d *Dispatcher) settings(rec *record) Settings {
	d.mu.Lock()
	session := d.overrides[rec.Inbound.SessionKey]
	d.mu.Unlock()
	return Resolve(rec.Override, session, d.opts.Config, string(rec.Inbound.Route.Channel))
}
