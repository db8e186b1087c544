package exectool

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os/exec"
	"sync"
	"time"
)

// proc is one started command.
type proc struct {
	id      string
	plan    *Plan
	cmd     *exec.Cmd
	out     *output
	started time.Time
	cleanup time.Duration

	done     chan struct{} // closed when the process has been waited for
	exitCode int           // valid after done; -1 when killed by a signal
	waitErr  error         // valid after done: an error other than a non-zero exit

	mu         sync.Mutex
	stopReason string // "timeout", "aborted", "killed", "shutdown"
	ended      time.Time
	timer      *time.Timer
}

// start starts plan's process with a deadline of timeout.
func start(plan *Plan, maxOutput int, timeout, cleanup time.Duration) (*proc, error) {
	var idb [4]byte
	_, _ = rand.Read(idb[:])
	p := &proc{id: hex.EncodeToString(idb[:]), plan: plan, out: newOutput(maxOutput), cleanup: cleanup, done: make(chan struct{})}
	p.cmd = planCmd(plan)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	// A grandchild holding the output pipe open does not hold Wait longer
	// than the cleanup window.
	p.cmd.WaitDelay = cleanup + time.Second
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	p.started = time.Now()
	p.mu.Lock()
	p.timer = time.AfterFunc(timeout, func() { p.stop("timeout") })
	p.mu.Unlock()
	go p.wait()
	return p, nil
}

func (p *proc) wait() {
	err := p.cmd.Wait()
	// What the command left running in its group (a daemonized child)
	// does not outlive it.
	signalGroup(p.cmd.Process, kill)
	p.mu.Lock()
	p.timer.Stop()
	p.ended = time.Now()
	p.mu.Unlock()
	p.exitCode = p.cmd.ProcessState.ExitCode()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		p.waitErr = err
	}
	close(p.done)
}

// planCmd is the command of plan. It is made from the plan alone: what
// was approved is what runs.
func planCmd(plan *Plan) *exec.Cmd {
	return &exec.Cmd{Path: plan.Path, Args: plan.Argv, Dir: plan.Cwd, Env: plan.Env, SysProcAttr: sysProcAttr()}
}

// stop ends the process group: SIGTERM, then SIGKILL after the cleanup
// window. The first reason is kept.
func (p *proc) stop(reason string) {
	select {
	case <-p.done:
		return
	default:
	}
	p.mu.Lock()
	first := p.stopReason == ""
	if first {
		p.stopReason = reason
	}
	p.mu.Unlock()
	if !first {
		return
	}
	signalGroup(p.cmd.Process, terminate)
	go func() {
		t := time.NewTimer(p.cleanup)
		defer t.Stop()
		select {
		case <-p.done:
		case <-t.C:
			signalGroup(p.cmd.Process, kill)
		}
	}()
}

// running reports whether the process has not ended yet.
func (p *proc) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// status is "running", "completed" (exit 0), "failed" (non-zero exit),
// or the stop reason (timeout, aborted, killed, shutdown).
func (p *proc) status() string {
	if p.running() {
		return "running"
	}
	p.mu.Lock()
	reason := p.stopReason
	p.mu.Unlock()
	switch {
	case reason != "":
		return reason
	case p.exitCode == 0 && p.waitErr == nil:
		return "completed"
	default:
		return "failed"
	}
}

// duration is how long it ran (so far).
func (p *proc) duration() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended.IsZero() {
		return time.Since(p.started)
	}
	return p.ended.Sub(p.started)
}

// procs is the background processes, bounded: finished ones beyond
// keepFinished are forgotten, oldest first.
type procs struct {
	mu     sync.Mutex
	list   []*proc
	closed bool
}

const keepFinished = 32

// add registers p; after close it reports false and p must be stopped.
func (r *procs) add(p *proc) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	r.list = append(r.list, p)
	finished := 0
	for _, q := range r.list {
		if !q.running() {
			finished++
		}
	}
	for i := 0; finished > keepFinished && i < len(r.list); {
		if !r.list[i].running() {
			r.list = append(r.list[:i], r.list[i+1:]...)
			finished--
			continue
		}
		i++
	}
	return true
}

func (r *procs) get(id string) *proc {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.list {
		if p.id == id {
			return p
		}
	}
	return nil
}

// close refuses later adds and returns every process registered.
func (r *procs) close() []*proc {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	return append([]*proc(nil), r.list...)
}

func (r *procs) all() []*proc {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*proc(nil), r.list...)
}

func (r *procs) runningCount() int {
	n := 0
	for _, p := range r.all() {
		if p.running() {
			n++
		}
	}
	return n
}
