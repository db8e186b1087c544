package exectool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core/tools"
)

// maxBackground bounds the commands left running in the background at
// once.
const maxBackground = 8

// Tools is the exec and process tools over one workspace, with the
// background processes they started. Close stops those.
type Tools struct {
	cfg       Config
	planner   *planner
	approvals *Approvals
	allow     []string // real paths of AllowBins
	procs     procs
	closing   sync.Once
	closed    chan struct{}
}

// New returns the tools for cfg (defaults applied) over the jail's
// workspace. approvals receives the requests; nil means every command
// that needs approval is refused. The daemon's environment is read only
// for cfg.PassEnv.
func New(cfg Config, jail *tools.Jail, approvals *Approvals) (*Tools, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("tools.exec: %w", err)
	}
	t := &Tools{cfg: cfg, planner: newPlanner(cfg, jail, os.LookupEnv), approvals: approvals, closed: make(chan struct{})}
	for i, b := range cfg.AllowBins {
		path, _, err := t.planner.lookPath(b, jail.RealDir())
		if err != nil {
			return nil, fmt.Errorf("tools.exec.allowBins[%d]: %w", i, err)
		}
		// Validate went by the name; what runs unasked is the file the
		// name resolves to, so it must be that program too (a symlink
		// named ls to setsid, a busybox, a script are not).
		if cfg.Ask == AskUnlisted {
			if err := checkUnaskedFile(b, path, jail.RealDir()); err != nil {
				return nil, fmt.Errorf("tools.exec.allowBins[%d]: %w", i, err)
			}
		}
		t.allow = append(t.allow, path)
	}
	return t, nil
}

// Close stops the background commands (SIGTERM, SIGKILL after cleanupMs)
// and waits for them.
func (t *Tools) Close() error {
	t.closing.Do(func() { close(t.closed) })
	all := t.procs.close() // no command starts after this
	for _, p := range all {
		p.stop("shutdown")
	}
	for _, p := range all {
		<-p.done
	}
	return nil
}

// Exec returns the exec tool.
func (t *Tools) Exec() tools.Tool { return (*execTool)(t) }

// Process returns the process tool.
func (t *Tools) Process() tools.Tool { return (*processTool)(t) }

type execTool Tools

const execSchema = `{"type":"object","properties":{` +
	`"argv":{"type":"array","items":{"type":"string"},"description":"The program and its arguments, e.g. [\"ls\", \"-la\", \"notes\"]. No shell: no pipes, globs, $VARS or ~."},` +
	`"command":{"type":"string","description":"A shell command line; only when the operator configured a shell. Prefer argv."},` +
	`"cwd":{"type":"string","description":"Working directory relative to the workspace (default: the workspace)."},` +
	`"env":{"type":"object","additionalProperties":{"type":"string"},"description":"Extra environment variables."},` +
	`"timeout":{"type":"number","description":"Seconds before the command is stopped (default and maximum: the configured timeoutSec)."},` +
	`"background":{"type":"boolean","description":"Return at once and leave the command running; read it later with the process tool."},` +
	`"yieldMs":{"type":"number","description":"Milliseconds to wait before leaving the command running in the background (default: the configured backgroundMs)."}}}`

// Spec describes exec: owner-only, elevated (asks for approval), with a
// timeout covering the approval wait, the run and the cleanup.
func (e *execTool) Spec() tools.Spec {
	return tools.Spec{
		Name: "exec",
		Description: "Run a program on the host, in the workspace, and return its output and exit code. " +
			"An operator usually has to approve each command, so run what you need in as few commands as you can. " +
			"Long commands continue in the background; use the process tool to read or stop them.",
		Parameters: json.RawMessage(execSchema),
		Flags:      tools.Flags{OwnerOnly: true, Elevated: true, Background: true},
		Timeout: time.Duration(e.cfg.ApprovalTimeoutSec)*time.Second + time.Duration(e.cfg.TimeoutSec)*time.Second +
			time.Duration(e.cfg.CleanupMs)*time.Millisecond + 10*time.Second,
	}
}

// request reads the call's arguments.
func request(args map[string]any) (Request, error) {
	var req Request
	if raw, ok := args["argv"]; ok && raw != nil {
		list, ok := raw.([]any)
		if !ok {
			return req, errors.New("argv must be an array of strings")
		}
		for i, v := range list {
			s, ok := v.(string)
			if !ok {
				return req, fmt.Errorf("argv[%d] must be a string", i)
			}
			req.Argv = append(req.Argv, s)
		}
	}
	req.Command, _ = args["command"].(string)
	req.Cwd, _ = args["cwd"].(string)
	if raw, ok := args["env"]; ok && raw != nil {
		m, ok := raw.(map[string]any)
		if !ok {
			return req, errors.New("env must be an object of strings")
		}
		req.Env = map[string]string{}
		for k, v := range m {
			s, ok := v.(string)
			if !ok {
				return req, fmt.Errorf("env.%s must be a string", k)
			}
			req.Env[k] = s
		}
	}
	return req, nil
}

// seconds reads a number argument.
func number(args map[string]any, key string) (float64, bool) {
	switch v := args[key].(type) {
	case float64:
		return v, true
	case json.Number:
		f, err := v.Float64()
		return f, err == nil
	case int:
		return float64(v), true
	}
	return 0, false
}

// Execute plans the command, asks for approval when needed, checks the
// plan again, runs it and waits up to the yield time.
func (e *execTool) Execute(ctx context.Context, call tools.Call, update func(tools.Result)) (tools.Result, error) {
	if !supported {
		return tools.Result{}, errors.New("exec is not supported on this operating system")
	}
	req, err := request(call.Args)
	if err != nil {
		return tools.Result{}, err
	}
	plan, err := e.planner.plan(req)
	if err != nil {
		return tools.Result{}, err
	}
	// Under ask: always allowBins bounds what may run at all; under
	// unlisted it is what runs unasked, and everything else asks.
	if e.cfg.Ask == AskAlways && len(e.allow) > 0 && !slices.Contains(e.allow, plan.Path) {
		return tools.Result{}, tools.Blocked(fmt.Sprintf("%s is not in tools.exec.allowBins (%s)", plan.Path, strings.Join(e.allow, ", ")))
	}
	if unasked, why := (*Tools)(e).runsUnasked(plan, req); !unasked {
		if plan, err = e.approve(ctx, call, req, plan, why, update); err != nil {
			return tools.Result{}, err
		}
	}
	if (*Tools)(e).procs.runningCount() >= maxBackground {
		return tools.Result{}, fmt.Errorf("%d commands are already running; wait for them or stop one with the process tool", maxBackground)
	}
	timeout := time.Duration(e.cfg.TimeoutSec) * time.Second
	if s, ok := number(call.Args, "timeout"); ok && s > 0 && s < float64(e.cfg.TimeoutSec) {
		timeout = time.Duration(s * float64(time.Second))
	}
	yield := time.Duration(e.cfg.BackgroundMs) * time.Millisecond
	if ms, ok := number(call.Args, "yieldMs"); ok && ms >= 0 && ms < float64(e.cfg.BackgroundMs) {
		yield = max(time.Duration(ms*float64(time.Millisecond)), time.Millisecond)
	}
	if bg, _ := call.Args["background"].(bool); bg {
		yield = 0
	}
	// An approval that raced with an abort or shutdown starts nothing.
	if ctx.Err() != nil {
		return tools.Result{}, context.Cause(ctx)
	}
	p, err := start(plan, e.cfg.MaxOutputBytes, timeout, time.Duration(e.cfg.CleanupMs)*time.Millisecond)
	if err != nil {
		return tools.Result{}, fmt.Errorf("starting %s: %w", plan.Path, err)
	}
	if !(*Tools)(e).procs.add(p) {
		p.stop("shutdown")
		<-p.done
		return tools.Result{}, errors.New("switchboard is shutting down; the command was stopped")
	}
	var yieldC <-chan time.Time
	if yield > 0 {
		tm := time.NewTimer(yield)
		defer tm.Stop()
		yieldC = tm.C
	}
	if yield == 0 {
		return e.background(p), nil
	}
	select {
	case <-p.done:
		return finished(p), nil
	case <-yieldC:
		return e.background(p), nil
	case <-e.closed:
		p.stop("shutdown")
		<-p.done
		return finished(p), errors.New("switchboard is shutting down")
	case <-ctx.Done():
		p.stop("aborted")
		<-p.done
		return finished(p), context.Cause(ctx)
	}
}

// approve asks for approval of plan and returns the plan made again after
// it, which must hash the same. why is the reason it asks, shown to the
// model under ask: unlisted so it can choose a command that need not.
func (e *execTool) approve(ctx context.Context, call tools.Call, req Request, plan *Plan, why string, update func(tools.Result)) (*Plan, error) {
	if e.approvals == nil {
		return nil, tools.Blocked("exec needs an operator's approval and no approver is configured")
	}
	hash := plan.Hash()
	waiting := "Waiting for an operator to approve: "
	if e.cfg.Ask == AskUnlisted {
		waiting = "Waiting for an operator to approve (" + why + "): "
	}
	update(tools.TextResult(waiting + plan.Command()))
	res := e.approvals.Request(ctx, ApprovalDetails{
		Command: plan.Command(), CommandArgv: plan.Argv, CommandHash: hash,
		ResolvedPath: plan.Path, Cwd: plan.Cwd, EnvKeys: plan.EnvKeys(), Env: req.Env, Host: "gateway", Ask: e.cfg.Ask,
		AgentID: call.AgentID, SessionKey: string(call.SessionKey), ToolCallID: call.ID,
	})
	switch {
	case res.Reason == "timeout":
		return nil, tools.Blocked("no operator approved the command within " + (time.Duration(e.cfg.ApprovalTimeoutSec) * time.Second).String() + "; denied")
	case res.Reason == "aborted":
		return nil, context.Cause(ctx)
	case !res.Approved():
		return nil, tools.Blocked("the operator denied the command")
	case ctx.Err() != nil:
		return nil, context.Cause(ctx) // approved as the turn was aborted
	}
	again, err := e.planner.plan(req)
	if err != nil {
		return nil, tools.Blocked("approved, but the command can no longer run as approved: " + err.Error())
	}
	if again.Hash() != hash {
		return nil, tools.Blocked("the command changed between approval and execution (program, arguments, working directory or environment); denied")
	}
	return again, nil
}

// background says how to reach p, left running (it is registered
// already; Close stops it).
func (e *execTool) background(p *proc) tools.Result {
	text := fmt.Sprintf("Command still running in the background (id %s, pid %d): %s\nUse the process tool with action poll and id %s to read its output, or kill to stop it.",
		p.id, p.cmd.Process.Pid, p.plan.Command(), p.id)
	if s := p.out.Since(); s != "" {
		text += "\nOutput so far:\n" + s
	}
	return tools.Result{Content: tools.TextResult(text).Content, Details: details(p)}
}

// finished is the result of a command that ended.
func finished(p *proc) tools.Result {
	var b strings.Builder
	b.WriteString(p.out.String())
	if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
		b.WriteByte('\n')
	}
	switch st := p.status(); st {
	case "completed", "failed":
		fmt.Fprintf(&b, "[exit code %d after %s]", p.exitCode, p.duration().Round(time.Millisecond))
	default:
		fmt.Fprintf(&b, "[stopped: %s after %s]", st, p.duration().Round(time.Millisecond))
	}
	if p.waitErr != nil {
		fmt.Fprintf(&b, " (%v)", p.waitErr)
	}
	return tools.Result{Content: tools.TextResult(b.String()).Content, Details: details(p)}
}

func details(p *proc) json.RawMessage {
	d := map[string]any{
		"id": p.id, "status": p.status(), "pid": p.cmd.Process.Pid, "command": p.plan.Command(),
		"cwd": filepath.ToSlash(p.plan.Cwd), "durationMs": p.duration().Milliseconds(), "outputBytes": p.out.Total(),
	}
	if !p.running() {
		d["exitCode"] = p.exitCode
	}
	b, _ := json.Marshal(d)
	return b
}

// ApprovesEachCall marks exec as asking for its own approval, bound to
// its plan, so the Executor does not ask again.
func (e *execTool) ApprovesEachCall() {}
