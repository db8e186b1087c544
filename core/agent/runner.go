package agent

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/llm"
	"github.com/switchboardhq/switchboard/core/prompt"
	"github.com/switchboardhq/switchboard/core/reply"
	"github.com/switchboardhq/switchboard/core/tools"
	"github.com/switchboardhq/switchboard/core/transcript"
)

// Runner runs the turns of one agent. It is safe for concurrent use: runs
// of different sessions proceed in parallel.
type Runner struct {
	cfg  Config
	deps Deps
	log  *slog.Logger

	mu     sync.Mutex
	active map[core.SessionKey]*activeRun
	cache  map[core.SessionKey]*cachedSession
	lru    *list.List
	// cachedBytes is the transcript bytes the cached sessions hold (the
	// sum of their held), against Config.MaxCachedBytes.
	cachedBytes int64
}

// New builds a runner. It does no IO.
func New(cfg Config, deps Deps) (*Runner, error) {
	cfg = cfg.withDefaults()
	if deps.Models == nil {
		return nil, errors.New("agent: no model layer given")
	}
	if deps.Sessions == nil {
		return nil, errors.New("agent: no sessions index given")
	}
	if cfg.Model.Primary == "" {
		return nil, errors.New("agent: no primary model configured (agents.defaults.model.primary)")
	}
	if cfg.StateDir == "" {
		return nil, errors.New("agent: no state directory given")
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.NewID == nil {
		deps.NewID = transcript.NewSessionID
	}
	if deps.Transcript.Logger == nil {
		deps.Transcript.Logger = deps.Logger
	}
	return &Runner{
		cfg: cfg, deps: deps, log: deps.Logger,
		active: map[core.SessionKey]*activeRun{},
		cache:  map[core.SessionKey]*cachedSession{},
		lru:    list.New(),
	}, nil
}

// AgentID returns the agent's normalized id.
func (r *Runner) AgentID() string { return r.cfg.AgentID }

// Turn is one run's input.
type Turn struct {
	// RunID identifies the run in events and logs; zero means a new id.
	RunID string
	// Inbound is the message that starts the turn.
	Inbound core.Inbound
	// Prompt, when set, is the already-assembled body of the user message
	// (the dispatcher's collect prompt of several queued messages, whose
	// channel text is already inside untrusted blocks). Inbound then only
	// gives the session, route, kind and metadata; its Body is not used.
	Prompt string
	// SystemEvents are the session's queued system events, drained by the
	// caller; they are prepended to the prompt (seed 004 step 4).
	SystemEvents []prompt.SystemEvent
	// Model overrides the primary model for this turn ("<provider>/<model>"),
	// e.g. heartbeat.model; the configured fallbacks still apply.
	Model string
	// Timeout, when positive and shorter than the configured timeout,
	// bounds this turn instead (heartbeat.timeoutSeconds).
	Timeout time.Duration
	// Thinking overrides the thinking level for this turn.
	Thinking llm.ThinkingLevel
	// SenderIsOwner lets owner-only tools run.
	SenderIsOwner bool
	// Sink receives the run's AgentEvents in order, on the run's
	// goroutines but never concurrently. Messages in events may still be
	// changing (message_update carries the partial message); copy what you
	// keep. Nil discards events.
	Sink func(core.AgentEvent)
	// OnCompaction reports compaction start and end; nil ignores them.
	OnCompaction func(CompactionEvent)
}

// CompactionEvent reports a compaction of the session's history.
type CompactionEvent struct {
	// Phase is "start" or "end".
	Phase string
	// Reason is "threshold" (the context estimate passed the limit) or
	// "overflow" (the provider said the context is too long).
	Reason string
	// TokensBefore and TokensAfter estimate the context size.
	TokensBefore, TokensAfter int
	// Err is set on an end event when compaction failed.
	Err error
}

// Result is what a run produced.
type Result struct {
	// RunID identifies the run.
	RunID string
	// SessionID is the transcript the run wrote to.
	SessionID string
	// Messages are the messages the run appended, in order, starting with
	// the user prompt.
	Messages []core.Message
	// Final is the last assistant message, nil if the model never answered.
	Final *core.AssistantMessage
	// Replies are what to deliver to the chat; empty for a silent reply or
	// a heartbeat ack.
	Replies []core.ReplyPayload
	// Usage totals the run's model calls.
	Usage core.Usage
	// Aborted reports that the run was stopped by Abort.
	Aborted bool
	// TimedOut reports that the run exceeded its timeout.
	TimedOut bool
	// Err is the model failure that ended the run, if any.
	Err *llm.Error
	// Unsteered are messages handed to Steer that the run ended before
	// taking (an abort, a failure). The caller must run them another way;
	// they are the same pointers Steer received.
	Unsteered []*core.Inbound
}

// Run runs one turn. It returns an error only when the turn could not run
// at all (the session is busy, the transcript cannot be opened or written);
// a failed or aborted model call is a Result with Err or Aborted set, and its
// partial answer is in the transcript.
func (r *Runner) Run(ctx context.Context, t Turn) (*Result, error) {
	in := t.Inbound
	if in.SessionKey == "" {
		return nil, errors.New("agent: inbound has no session key")
	}
	if t.RunID == "" {
		t.RunID = r.deps.NewID()
	}
	ctx, cancelCause := context.WithCancelCause(ctx)
	defer cancelCause(nil)
	ctx, cancelTimeout := context.WithTimeoutCause(ctx, t.timeout(r.cfg.Timeout), ErrTimeout)
	defer cancelTimeout()

	run, err := r.begin(in.SessionKey, t.RunID, cancelCause)
	if err != nil {
		return nil, err
	}
	defer r.end(in.SessionKey, run)

	tr := &turnRun{Runner: r, t: t, run: run, res: &Result{RunID: t.RunID}}
	if t.Sink != nil {
		tr.sink = t.Sink
	}
	return tr.execute(ctx)
}

// turnRun is the state of one Run.
type turnRun struct {
	*Runner
	t    Turn
	run  *activeRun
	res  *Result
	sink func(core.AgentEvent)

	entry   core.SessionEntry
	file    transcript.Log
	model   llm.ModelConfig
	refs    []string
	system  string
	specs   []llm.ToolSpec
	history []core.Message
	think   llm.ThinkingLevel

	lastToolError, lastToolErrorName string
	compactedForOverflow             bool
}

// timeout is the turn's effective timeout given the configured one.
func (t *Turn) timeout(configured time.Duration) time.Duration {
	if t.Timeout > 0 && t.Timeout < configured {
		return t.Timeout
	}
	return configured
}

func (tr *turnRun) emit(ev core.AgentEvent) {
	if tr.sink != nil {
		tr.sink(ev)
	}
}

func (tr *turnRun) execute(ctx context.Context) (*Result, error) {
	in := &tr.t.Inbound
	cached := tr.checkout(in.SessionKey)
	body, isNew, err := tr.resolveSession(ctx, in, cached)
	if err != nil {
		if cached != nil {
			cached.file.Close()
		}
		return nil, err
	}
	tr.res.SessionID = tr.entry.SessionID
	if cached != nil && cached.entry.SessionID == tr.entry.SessionID {
		tr.file = cached.file
	} else {
		if cached != nil {
			cached.file.Close() // /new or /reset: the old transcript stays on disk
		}
		if err := tr.openTranscript(in.SessionKey); err != nil {
			return nil, err
		}
	}
	keep := false
	defer func() {
		if keep {
			tr.checkin(&cachedSession{key: in.SessionKey, entry: tr.entry, file: tr.file})
		} else {
			tr.file.Close()
		}
	}()

	if err := tr.resolveModel(); err != nil {
		return nil, err
	}
	tr.buildSystem(in)

	// The prompt body: seed 004 phase A on the untrusted inbound, or on
	// the dispatcher's prepared prompt (kept as written, with no blocks of
	// its own: its parts already carry theirs).
	pin := *in
	pin.Body = body
	if tr.t.Prompt != "" {
		pin = core.Inbound{Kind: core.InboundSystem, SessionKey: in.SessionKey, Route: in.Route, ChatType: in.ChatType, Surface: in.Surface, Body: tr.t.Prompt}
	}
	pb := prompt.Body(&pin, prompt.State{
		IsNewSession:   isNew,
		AbortedLastRun: tr.entry.AbortedLastRun,
		SystemEvents:   tr.t.SystemEvents,
		Now:            tr.deps.Now,
		Location:       tr.cfg.Location,
	})
	tr.entry.AbortedLastRun = false
	tr.think = tr.resolveThinking(pb.ThinkLevel)

	// History is built before the new prompt is appended, so the pipeline's
	// orphaned-prompt check only hides a prompt a crashed run left behind.
	tr.history = tr.contextHistory(tr.file.Messages(), true)
	if err := tr.compactIfNeeded(ctx, "threshold", false); err != nil {
		tr.log.Warn("compaction failed; continuing with the full history", "session", in.SessionKey, "err", err)
	}

	user := core.NewUserText(pb.Text, tr.deps.Now().UnixMilli())
	user.Provenance = provenance(in, pb)
	tr.emit(core.AgentEvent{Type: core.AgentEventAgentStart})
	if err := tr.appendMessages(user); err != nil {
		return nil, err
	}
	tr.emit(core.AgentEvent{Type: core.AgentEventMessageStart, Message: user})
	tr.emit(core.AgentEvent{Type: core.AgentEventMessageEnd, Message: user})

	tr.run.setPhase(PhaseStreaming)
	err = tr.loop(ctx)
	// Steers that arrived after the last boundary are handed back, and no
	// more are accepted.
	tr.res.Unsteered = tr.run.closeSteers()
	if err != nil {
		return nil, err
	}
	tr.finish(ctx)
	keep = true
	tr.emit(core.AgentEvent{Type: core.AgentEventAgentEnd, Messages: core.Messages(tr.res.Messages)})
	return tr.res, nil
}

// transcripts is where transcripts are kept: Deps.Transcripts, or files
// in the state directory.
func (tr *turnRun) transcripts() transcript.Store { return tr.deps.transcripts(tr.cfg.StateDir) }

// openTranscript opens the session's current transcript, repairing it if a
// crash left it torn.
func (tr *turnRun) openTranscript(key core.SessionKey) error {
	f, report, err := tr.transcripts().Open(context.Background(), tr.cfg.AgentID, tr.entry.SessionID)
	if err != nil {
		return fmt.Errorf("agent: open transcript: %w", err)
	}
	tr.file = f
	if len(report.SkippedLines) > 0 || report.TruncatedTail {
		tr.log.Warn("transcript repaired on load", "session", key, "skippedLines", len(report.SkippedLines), "truncatedTail", report.TruncatedTail, "backup", report.BackupPath)
	}
	return nil
}

// appendMessages writes messages to the transcript and the run's history.
func (tr *turnRun) appendMessages(msgs ...core.Message) error {
	if err := tr.file.Append(msgs...); err != nil {
		return fmt.Errorf("agent: append to transcript: %w", err)
	}
	tr.history = append(tr.history, msgs...)
	tr.res.Messages = append(tr.res.Messages, msgs...)
	return nil
}

// loop is the model ⇄ tool loop of seed 002 §1.
func (tr *turnRun) loop(ctx context.Context) error {
	for iter := 0; ; iter++ {
		if iter >= tr.cfg.MaxIterations {
			tr.res.Err = &llm.Error{Kind: llm.ErrorUnknown, Message: fmt.Sprintf("the tool loop exceeded %d model calls; stopping this turn", tr.cfg.MaxIterations)}
			return nil
		}
		if iter > 0 {
			// The tool loop grows the context too.
			if err := tr.compactIfNeeded(ctx, "threshold", false); err != nil {
				tr.log.Warn("compaction failed; continuing with the full history", "session", tr.t.Inbound.SessionKey, "err", err)
			}
		}
		tr.emit(core.AgentEvent{Type: core.AgentEventTurnStart})
		msg, err := tr.callModel(ctx)
		if err != nil {
			lerr := llm.AsError(err)
			if lerr.Kind == llm.ErrorContextLength && !tr.compactedForOverflow && len(msg.Content) == 0 {
				// Overflow recovery: compact, then retry once without
				// recording the empty failed answer.
				tr.compactedForOverflow = true
				tr.emit(core.AgentEvent{Type: core.AgentEventTurnEnd, Message: msg})
				if cerr := tr.compactIfNeeded(ctx, "overflow", true); cerr == nil {
					continue
				}
			}
			if aerr := tr.appendMessages(msg); aerr != nil {
				return aerr
			}
			tr.res.Final = msg
			tr.emit(core.AgentEvent{Type: core.AgentEventTurnEnd, Message: msg})
			tr.noteStop(ctx, lerr)
			return nil
		}
		if err := tr.appendMessages(msg); err != nil {
			return err
		}
		tr.res.Final = msg

		calls := msg.ToolCalls()
		if len(calls) > 0 {
			results := tr.runTools(ctx, calls)
			rs := make([]core.Message, len(results))
			for i, m := range results {
				rs[i] = m
			}
			if err := tr.appendMessages(rs...); err != nil {
				return err
			}
			tr.emit(core.AgentEvent{Type: core.AgentEventTurnEnd, Message: msg, ToolResults: results})
			if ctx.Err() != nil {
				tr.noteStop(ctx, llm.AsError(context.Cause(ctx)))
				return nil
			}
			if err := tr.appendSteers(tr.run.takeSteers(false)); err != nil {
				return err
			}
			continue
		}
		tr.emit(core.AgentEvent{Type: core.AgentEventTurnEnd, Message: msg})
		steers := tr.run.takeSteers(true)
		if len(steers) == 0 {
			return nil
		}
		if err := tr.appendSteers(steers); err != nil {
			return err
		}
	}
}

// noteStop records why the loop ended early: an abort, a timeout, or a
// model failure.
func (tr *turnRun) noteStop(ctx context.Context, lerr *llm.Error) {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, ErrAborted):
		tr.res.Aborted = true
		tr.entry.AbortedLastRun = true
	case errors.Is(cause, ErrTimeout):
		tr.res.TimedOut = true
		tr.res.Err = &llm.Error{Kind: llm.ErrorTimeout, Message: fmt.Sprintf("the turn exceeded its %v timeout", tr.t.timeout(tr.cfg.Timeout)), Err: lerr}
	default:
		tr.res.Err = lerr
	}
}

// provenance is the provenance of a turn's user message: nil for a
// person's words, internal_system with its source for what Switchboard
// wrote (the /new prompt, a heartbeat poll, a cron prompt, its own turns).
func provenance(in *core.Inbound, pb prompt.Result) *core.InputProvenance {
	switch {
	case pb.ResetPrompt:
		return core.SystemProvenance(core.ProvenanceSourceReset)
	case in.EffectiveKind() == core.InboundHeartbeat:
		return core.SystemProvenance(core.ProvenanceSourceHeartbeat)
	case in.EffectiveKind() == core.InboundCron:
		return core.SystemProvenance(core.ProvenanceSourceCron)
	case in.EffectiveKind() == core.InboundSystem:
		return core.SystemProvenance(core.ProvenanceSourceSystem)
	}
	return nil
}

// appendSteers appends steered messages as user messages, built like any
// prompt (their channel text stays in untrusted blocks).
func (tr *turnRun) appendSteers(steers []*core.Inbound) error {
	for _, in := range steers {
		pb := prompt.Body(in, prompt.State{Now: tr.deps.Now, Location: tr.cfg.Location})
		user := core.NewUserText(pb.Text, tr.deps.Now().UnixMilli())
		if err := tr.appendMessages(user); err != nil {
			return err
		}
		tr.emit(core.AgentEvent{Type: core.AgentEventMessageStart, Message: user})
		tr.emit(core.AgentEvent{Type: core.AgentEventMessageEnd, Message: user})
	}
	return nil
}

// callModel streams one model response, emitting message_start,
// message_update for every stream event, and message_end.
func (tr *turnRun) callModel(ctx context.Context) (*core.AssistantMessage, error) {
	history := tr.history
	if tr.cfg.Prune != nil {
		history = transcript.Prune(history, *tr.cfg.Prune)
	}
	req := &llm.Request{System: tr.system, Messages: history, Tools: tr.specs, Thinking: tr.think}
	started := false
	msg, err := tr.deps.Models.Stream(ctx, tr.refs, req, func(ev core.AssistantMessageEvent) {
		partial := ev.Partial
		if partial == nil {
			partial = ev.Message
		}
		if partial == nil {
			partial = ev.Error
		}
		if !started {
			started = true
			tr.emit(core.AgentEvent{Type: core.AgentEventMessageStart, Message: partial})
		}
		e := ev
		tr.emit(core.AgentEvent{Type: core.AgentEventMessageUpdate, Message: partial, AssistantMessageEvent: &e})
	})
	if msg == nil {
		msg = &core.AssistantMessage{StopReason: core.StopReasonError, Timestamp: tr.deps.Now().UnixMilli()}
		if err != nil {
			msg.ErrorMessage = err.Error()
		}
	}
	if !started {
		tr.emit(core.AgentEvent{Type: core.AgentEventMessageStart, Message: msg})
	}
	tr.emit(core.AgentEvent{Type: core.AgentEventMessageEnd, Message: msg})
	addUsage(&tr.res.Usage, msg.Usage)
	if msg.Usage.Input+msg.Usage.CacheRead+msg.Usage.CacheWrite > 0 {
		tr.entry.ContextTokens = msg.Usage.Input + msg.Usage.CacheRead + msg.Usage.CacheWrite
	}
	if msg.Provider != "" {
		tr.entry.Model = msg.Provider + "/" + msg.Model
	}
	return msg, err
}

// runTools executes the tool calls of one response through the executor
// (in parallel, results in call order).
func (tr *turnRun) runTools(ctx context.Context, calls []*core.ToolCall) []*core.ToolResultMessage {
	tcs := make([]tools.Call, len(calls))
	for i, c := range calls {
		tcs[i] = tools.Call{
			ID: c.ID, Name: c.Name, Args: c.Arguments,
			AgentID: tr.cfg.AgentID, SessionKey: tr.t.Inbound.SessionKey, Route: tr.t.Inbound.Route,
			ChatType: tr.t.Inbound.ChatType, SenderIsOwner: tr.t.SenderIsOwner,
		}
	}
	var results []*core.ToolResultMessage
	if tr.deps.Tools != nil {
		results = tr.deps.Tools.RunBatch(ctx, tcs, tr.emit)
	} else {
		exec := &tools.Executor{Registry: tools.NewRegistry(), Now: tr.deps.Now}
		results = exec.RunBatch(ctx, tcs, tr.emit)
	}
	for _, m := range results {
		if m.IsError {
			tr.lastToolError, tr.lastToolErrorName = m.Content.Text(), m.ToolName
		}
	}
	return results
}

// finish assembles the replies and updates the sessions index.
func (tr *turnRun) finish(ctx context.Context) {
	in := &tr.t.Inbound
	heartbeat := in.EffectiveKind() == core.InboundHeartbeat
	if tr.res.Final != nil && !tr.res.Aborted {
		tr.res.Replies = reply.Build(tr.res.Final, reply.Options{
			Heartbeat:     heartbeat,
			AckMaxChars:   tr.cfg.Heartbeat.AckMaxChars,
			ToolErrorText: tr.lastToolError,
			ToolErrorName: tr.lastToolErrorName,
		})
	}
	if tr.res.Err != nil && len(tr.res.Replies) == 0 && !tr.res.Aborted {
		tr.res.Replies = []core.ReplyPayload{{Text: userFacingError(tr.res.Err), IsError: true}}
	}
	addUsage(&tr.entry.Usage, tr.res.Usage)
	if !heartbeat {
		// A heartbeat-only turn does not keep a session alive for idle reset.
		tr.entry.UpdatedAt = tr.deps.Now().UnixMilli()
	}
	if in.EffectiveKind() == core.InboundUser && in.Route.Channel != "" {
		route := in.Route
		tr.entry.LastRoute = &route
	}
	tr.entry.Origin = core.OriginOf(in, tr.entry.Origin)
	// The index update must not be lost to an abort that already ended ctx.
	if err := tr.deps.Sessions.PutSession(context.WithoutCancel(ctx), tr.entry); err != nil {
		tr.log.Error("sessions index update failed", "session", in.SessionKey, "err", err)
	}
}

// userFacingError is the reply sent when a turn fails with nothing to say.
func userFacingError(e *llm.Error) string {
	switch e.Kind {
	case llm.ErrorRateLimit:
		return "⚠️ The model is rate-limited right now. Please try again in a moment."
	case llm.ErrorContextLength:
		return "⚠️ This conversation is too long for the model. Send /new to start a fresh session."
	case llm.ErrorTimeout:
		return "⚠️ That took too long and was stopped. Please try again."
	case llm.ErrorRefusal:
		return "⚠️ The model declined to answer that."
	}
	msg := strings.TrimSpace(e.Message)
	if msg == "" {
		msg = "the model call failed"
	}
	return "⚠️ " + msg
}

func addUsage(dst *core.Usage, u core.Usage) {
	dst.Input += u.Input
	dst.Output += u.Output
	dst.CacheRead += u.CacheRead
	dst.CacheWrite += u.CacheWrite
	dst.TotalTokens += u.TotalTokens
	dst.Cost.Input += u.Cost.Input
	dst.Cost.Output += u.Cost.Output
	dst.Cost.CacheRead += u.Cost.CacheRead
	dst.Cost.CacheWrite += u.Cost.CacheWrite
	dst.Cost.Total += u.Cost.Total
}
