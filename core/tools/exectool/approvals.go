package exectool

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core/tools"
)

// Decision is an operator's answer to an approval request.
type Decision string

// The decisions of exec.approval.resolve. Switchboard never records an
// "allow-always": it approves the one call like allow-once, since a
// standing approval of a program approves whatever arguments come later.
const (
	AllowOnce   Decision = "allow-once"
	AllowAlways Decision = "allow-always"
	Deny        Decision = "deny"
)

// Events Approvals publishes.
const (
	EventRequested = "exec.approval.requested"
	EventResolved  = "exec.approval.resolved"
)

// Errors of Resolve.
var (
	// ErrApprovalNotFound means no pending request has the id: it was
	// resolved, timed out, or never existed.
	ErrApprovalNotFound = errors.New("approval not found")
	// ErrHashMismatch means the resolver approved a different command
	// than the one pending under the id.
	ErrHashMismatch = errors.New("approval is for a different command")
	// ErrBadDecision means the decision is not allow-once, allow-always or
	// deny.
	ErrBadDecision = errors.New("decision must be allow-once, allow-always or deny")
)

// ApprovalRequest is the payload of exec.approval.requested, in
// OpenClaw's shape plus the plan hash and the command length.
type ApprovalRequest struct {
	ID          string          `json:"id"`
	Request     ApprovalDetails `json:"request"`
	CreatedAtMs int64           `json:"createdAtMs"`
	ExpiresAtMs int64           `json:"expiresAtMs"`
}

// ApprovalDetails describe the command to approve. Command is never
// shortened: what is shown is what runs.
type ApprovalDetails struct {
	// Command is the whole argv, shell-quoted.
	Command string `json:"command"`
	// CommandArgv is the argv as the program receives it.
	CommandArgv []string `json:"commandArgv"`
	// CommandHash is the plan hash the approval binds (Plan.Hash).
	CommandHash string `json:"commandHash"`
	// CommandLength is len(Command) in bytes, so a UI can show that
	// nothing was cut.
	CommandLength int `json:"commandLength"`
	// ResolvedPath is the executable's real path.
	ResolvedPath string `json:"resolvedPath"`
	// Cwd is the working directory's real path.
	Cwd string `json:"cwd"`
	// EnvKeys are the names of the variables the command gets.
	EnvKeys []string `json:"envKeys"`
	// Env are the variables the call itself sets, with their values (the
	// plan hash binds them); the base and passEnv values are not shown.
	Env map[string]string `json:"env,omitempty"`
	// Host is where it runs: "gateway" (this process's machine).
	Host string `json:"host"`
	// Ask is tools.exec.ask.
	Ask string `json:"ask"`
	// AgentID, SessionKey and ToolCallID say who asked.
	AgentID    string `json:"agentId,omitempty"`
	SessionKey string `json:"sessionKey,omitempty"`
	ToolCallID string `json:"toolCallId,omitempty"`
}

// ApprovalResolved is the payload of exec.approval.resolved.
type ApprovalResolved struct {
	ID          string   `json:"id"`
	Decision    Decision `json:"decision"`
	ResolvedBy  string   `json:"resolvedBy,omitempty"`
	Ts          int64    `json:"ts"`
	CommandHash string   `json:"commandHash"`
	// Reason is "timeout" or "aborted" for a request nobody answered.
	Reason string `json:"reason,omitempty"`
	// SessionKey and ToolCallID repeat the request's, so a client that
	// did not see the request can still place the answer in its chat.
	SessionKey string `json:"sessionKey,omitempty"`
	ToolCallID string `json:"toolCallId,omitempty"`
}

// Timer is a stoppable timer, as time.AfterFunc returns.
type Timer interface{ Stop() bool }

// Approvals holds the pending exec approval requests. A request waits for
// Resolve; no answer within Timeout is a denial, and only an explicit
// allow approves. Each request is answered once.
type Approvals struct {
	// Timeout is how long a request waits; zero means 120 s.
	Timeout time.Duration
	// Now and AfterFunc are the clock; nil means the time package's.
	Now       func() time.Time
	AfterFunc func(time.Duration, func()) Timer
	// OnEvent receives exec.approval.requested and exec.approval.resolved
	// with their payloads; nil drops them. It must not block.
	OnEvent func(name string, payload any)
	// Logger, when set, gets a line when a request starts waiting (INFO,
	// saying where to answer it) and when it ends (INFO when answered or
	// withdrawn, WARN when it expired unanswered). The command is shown
	// shortened with credential-looking words masked; variables' values
	// are never logged. Nil logs nothing.
	Logger *slog.Logger
	// AnswerAt completes "approve or deny it …" in the waiting line, e.g.
	// "in the web chat at http://127.0.0.1:18789/"; "" names the web chat
	// and exec.approval.resolve.
	AnswerAt string

	mu      sync.Mutex
	pending map[string]*pendingApproval
}

type pendingApproval struct {
	req   ApprovalRequest
	done  chan ApprovalResolved
	timer Timer
}

func (a *Approvals) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

func (a *Approvals) afterFunc(d time.Duration, f func()) Timer {
	if a.AfterFunc != nil {
		return a.AfterFunc(d, f)
	}
	return time.AfterFunc(d, f)
}

func (a *Approvals) emit(name string, payload any) {
	if a.OnEvent != nil {
		a.OnEvent(name, payload)
	}
}

// Request publishes an approval request for d and waits for its answer: an
// operator's Resolve, the timeout (deny, reason "timeout") or ctx ending
// (deny, reason "aborted").
func (a *Approvals) Request(ctx context.Context, d ApprovalDetails) ApprovalResolved {
	timeout := a.Timeout
	if timeout <= 0 {
		timeout = 120 * time.Second
	}
	var idb [16]byte
	_, _ = rand.Read(idb[:])
	now := a.now()
	p := &pendingApproval{
		req: ApprovalRequest{
			ID: hex.EncodeToString(idb[:]), Request: d,
			CreatedAtMs: now.UnixMilli(), ExpiresAtMs: now.Add(timeout).UnixMilli(),
		},
		done: make(chan ApprovalResolved, 1),
	}
	p.req.Request.CommandLength = len(d.Command)
	a.logRequested(p.req, timeout) // before anyone can answer: its line comes first
	a.mu.Lock()
	if a.pending == nil {
		a.pending = map[string]*pendingApproval{}
	}
	a.pending[p.req.ID] = p
	a.mu.Unlock()
	// Armed outside the lock: a timer that fires at once (a test clock)
	// takes it in finish.
	timer := a.afterFunc(timeout, func() { a.finish(p.req.ID, Deny, "", "timeout") })
	a.mu.Lock()
	if a.pending[p.req.ID] == p {
		p.timer = timer
	} else {
		timer.Stop()
	}
	a.mu.Unlock()
	a.emit(EventRequested, p.req)
	select {
	case r := <-p.done:
		return r
	case <-ctx.Done():
		a.finish(p.req.ID, Deny, "", "aborted")
		return <-p.done
	}
}

// Resolve answers the pending request id. hash, when not empty, must be the
// request's CommandHash: an approver that saw another command cannot
// approve this one. by names the approver in the resolved event.
func (a *Approvals) Resolve(id string, decision Decision, by, hash string) error {
	if decision != AllowOnce && decision != AllowAlways && decision != Deny {
		return fmt.Errorf("%w, not %q", ErrBadDecision, decision)
	}
	a.mu.Lock()
	p := a.pending[id]
	a.mu.Unlock()
	if p == nil {
		return fmt.Errorf("%w: %s", ErrApprovalNotFound, id)
	}
	if hash != "" && !strings.EqualFold(hash, p.req.Request.CommandHash) {
		return fmt.Errorf("%w: request %s is for command hash %s", ErrHashMismatch, id, p.req.Request.CommandHash)
	}
	if !a.finish(id, decision, by, "") {
		return fmt.Errorf("%w: %s", ErrApprovalNotFound, id)
	}
	return nil
}

// finish answers id once; it reports false when it was already answered.
func (a *Approvals) finish(id string, decision Decision, by, reason string) bool {
	a.mu.Lock()
	p := a.pending[id]
	delete(a.pending, id)
	var timer Timer
	if p != nil {
		timer = p.timer
	}
	a.mu.Unlock()
	if p == nil {
		return false
	}
	if timer != nil {
		timer.Stop()
	}
	r := ApprovalResolved{ID: id, Decision: decision, ResolvedBy: by, Ts: a.now().UnixMilli(),
		CommandHash: p.req.Request.CommandHash, Reason: reason,
		SessionKey: p.req.Request.SessionKey, ToolCallID: p.req.Request.ToolCallID}
	p.done <- r
	a.logResolved(p.req, r)
	a.emit(EventResolved, r)
	return true
}

// Pending returns the requests waiting for an answer, oldest first.
func (a *Approvals) Pending() []ApprovalRequest {
	a.mu.Lock()
	out := make([]ApprovalRequest, 0, len(a.pending))
	for _, p := range a.pending {
		out = append(out, p.req)
	}
	a.mu.Unlock()
	slices.SortFunc(out, func(x, y ApprovalRequest) int {
		return cmp.Or(cmp.Compare(x.CreatedAtMs, y.CreatedAtMs), strings.Compare(x.ID, y.ID))
	})
	return out
}

// Get returns the pending request id.
func (a *Approvals) Get(id string) (ApprovalRequest, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if p := a.pending[id]; p != nil {
		return p.req, true
	}
	return ApprovalRequest{}, false
}

// Approved reports whether r lets the command run.
func (r ApprovalResolved) Approved() bool {
	return r.Decision == AllowOnce || r.Decision == AllowAlways
}

// ApproveCall is a tools.Approver for Elevated tools other than exec: the
// request shows the tool's name and its arguments as canonical JSON (the
// whole of it), bound to their hash; a denial or timeout is a
// *tools.BlockedError.
func (a *Approvals) ApproveCall(ctx context.Context, call tools.Call) error {
	args, err := json.Marshal(call.Args) // map keys sorted: canonical
	if err != nil {
		return tools.Blocked("the call's arguments cannot be shown for approval: " + err.Error())
	}
	command := call.Name + " " + string(args)
	sum := sha256.Sum256([]byte(command))
	res := a.Request(ctx, ApprovalDetails{
		Command: command, CommandArgv: []string{call.Name, string(args)}, CommandHash: hex.EncodeToString(sum[:]),
		Host: "gateway", Ask: AskAlways, AgentID: call.AgentID, SessionKey: string(call.SessionKey), ToolCallID: call.ID,
	})
	switch {
	case res.Reason == "aborted":
		return context.Cause(ctx)
	case res.Reason == "timeout":
		return tools.Blocked("no operator approved the call in time; denied")
	case !res.Approved():
		return tools.Blocked("the operator denied the call")
	case ctx.Err() != nil:
		return context.Cause(ctx) // approved as the turn was aborted
	}
	return nil
}
