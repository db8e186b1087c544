package agent

import (
	"errors"
	"sync"

	"github.com/switchboardhq/switchboard/core"
)

// Phase is what an active run is doing, for the dispatcher's queue-mode
// decisions.
type Phase int

// The phases of a run.
const (
	// PhaseIdle means no run is active for the session.
	PhaseIdle Phase = iota
	// PhaseStarting means the run is loading its session and transcript.
	PhaseStarting
	// PhaseStreaming means the run is in its model ⇄ tool loop; a steered
	// message is taken at the next boundary.
	PhaseStreaming
	// PhaseCompacting means the run is summarising history; steering is
	// refused until it ends.
	PhaseCompacting
	// PhaseFinishing means the run has its final answer and is writing it;
	// a message arriving now must wait for the next turn.
	PhaseFinishing
)

// String names the phase.
func (p Phase) String() string {
	return [...]string{"idle", "starting", "streaming", "compacting", "finishing"}[p]
}

// ErrBusy is returned by Run when the session already has an active run.
// The dispatcher prevents it; seeing it means two callers raced.
var ErrBusy = errors.New("agent: the session already has an active run")

// ErrAborted is the cancellation cause of a run stopped by Abort (a user's
// /stop, chat.abort, or the interrupt queue mode).
var ErrAborted = errors.New("agent: run aborted")

// ErrTimeout is the cancellation cause of a run that exceeded its timeout.
var ErrTimeout = errors.New("agent: run timed out")

// activeRun is the shared state of one running turn.
type activeRun struct {
	id     string
	cancel func(cause error)
	done   chan struct{}

	mu     sync.Mutex
	phase  Phase
	steers []*core.Inbound
}

func (r *Runner) begin(key core.SessionKey, id string, cancel func(error)) (*activeRun, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, busy := r.active[key]; busy {
		return nil, ErrBusy
	}
	run := &activeRun{id: id, cancel: cancel, done: make(chan struct{}), phase: PhaseStarting}
	r.active[key] = run
	return run, nil
}

func (r *Runner) end(key core.SessionKey, run *activeRun) {
	r.mu.Lock()
	if r.active[key] == run {
		delete(r.active, key)
	}
	r.mu.Unlock()
	close(run.done)
}

func (run *activeRun) setPhase(p Phase) {
	run.mu.Lock()
	run.phase = p
	run.mu.Unlock()
}

// takeSteers returns the steered messages waiting for the next boundary.
// When final is true and none are waiting, the run moves to
// PhaseFinishing in the same critical section, so a Steer racing with the
// end of the run either lands here or is refused; it is never lost.
func (run *activeRun) takeSteers(final bool) []*core.Inbound {
	run.mu.Lock()
	defer run.mu.Unlock()
	s := run.steers
	run.steers = nil
	if final && len(s) == 0 {
		run.phase = PhaseFinishing
	}
	return s
}

// closeSteers ends steering for good: it returns the messages still waiting
// and moves the run to PhaseFinishing, so every later Steer is refused.
func (run *activeRun) closeSteers() []*core.Inbound {
	run.mu.Lock()
	defer run.mu.Unlock()
	s := run.steers
	run.steers = nil
	run.phase = PhaseFinishing
	return s
}

// State reports the phase of the session's active run and its run id, or
// PhaseIdle.
func (r *Runner) State(key core.SessionKey) (Phase, string) {
	r.mu.Lock()
	run := r.active[key]
	r.mu.Unlock()
	if run == nil {
		return PhaseIdle, ""
	}
	run.mu.Lock()
	defer run.mu.Unlock()
	return run.phase, run.id
}

// Steer hands a message to the session's active run, which appends it as a
// user message at its next boundary (after the current tool batch, or
// before finishing) and lets the model continue with it (seed 004 phase E).
// It returns false, taking nothing, when no run is active, or the run is
// compacting or already finishing; the caller then queues the message as a
// followup.
func (r *Runner) Steer(key core.SessionKey, in *core.Inbound) bool {
	r.mu.Lock()
	run := r.active[key]
	r.mu.Unlock()
	if run == nil {
		return false
	}
	run.mu.Lock()
	defer run.mu.Unlock()
	if run.phase != PhaseStreaming {
		return false
	}
	run.steers = append(run.steers, in)
	return true
}

// Abort cancels the session's active run with cause ErrAborted. It returns
// a channel closed when the run has ended (its partial answer written), and
// false when no run was active.
func (r *Runner) Abort(key core.SessionKey) (<-chan struct{}, bool) {
	r.mu.Lock()
	run := r.active[key]
	r.mu.Unlock()
	if run == nil {
		return nil, false
	}
	run.cancel(ErrAborted)
	return run.done, true
}
