package tools

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/core"
)

// Defaults of the Executor's zero-valued fields.
const (
	// DefaultTimeout bounds a call whose Spec has no Timeout (seed 002
	// §5.3: exec's timeoutSec 120).
	DefaultTimeout = 120 * time.Second
	// DefaultMaxImageBytes is the largest decoded image a tool result may
	// carry to the model.
	DefaultMaxImageBytes = 5 << 20
	// DefaultMaxTextChars is the longest text block, in characters (Unicode
	// code points), a tool result may carry to the model.
	DefaultMaxTextChars = 100_000
)

// Texts the executor puts in results it makes itself.
const (
	// NoOutputText replaces the content of a result without blocks, since
	// a tool result must carry at least one (seed 002 §7.1).
	NoOutputText = "(no output)"
	// SkippedText is the result of a call RunSequential skipped because a
	// user message was queued (steering).
	SkippedText = "Skipped due to queued user message."
	// OwnerOnlyReason is the blocked-envelope reason of an OwnerOnly tool
	// called on behalf of someone else.
	OwnerOnlyReason = "tool is restricted to the owner"
	// AbortedText is the error of a call whose context the caller cancelled.
	AbortedText = "aborted"
)

// Errors after_tool_call hooks receive for calls that did not complete;
// test with errors.Is. A tool's own error is passed through unchanged.
var (
	// ErrUnknownTool means no tool of the call's name is registered.
	ErrUnknownTool = errors.New("unknown tool")
	// ErrBlocked means a before_tool_call hook or the OwnerOnly flag
	// refused the call.
	ErrBlocked = errors.New("tool call blocked")
	// ErrRequiredParam means a required parameter was missing, null or "".
	ErrRequiredParam = errors.New("required parameter missing")
	// ErrTimeout means the call ran past its timeout.
	ErrTimeout = errors.New("tool call timed out")
	// ErrAborted means the caller's context ended before the call did.
	ErrAborted = errors.New("tool call aborted")
	// ErrPanic means Execute panicked.
	ErrPanic = errors.New("tool panicked")
)

// Executor takes tool calls through the seed-002 §1 lifecycle: start event,
// before hooks, argument normalization and checks, execution with a
// timeout, after hooks, the result message with its §7 validation, persist
// hooks, end event. Zero-valued fields take the documented defaults. An
// Executor is safe for concurrent use once its fields are set.
type Executor struct {
	// Registry holds the tools that may be called; nil means none.
	Registry *Registry
	// Hooks are run around every call.
	Hooks Hooks
	// DefaultTimeout bounds a call whose Spec has no Timeout; zero means
	// DefaultTimeout (120s).
	DefaultTimeout time.Duration
	// MaxImageBytes is the largest decoded image a result may carry; a
	// larger one is replaced by a text note. Zero means
	// DefaultMaxImageBytes (5 MiB); negative means no limit.
	MaxImageBytes int
	// MaxTextChars is the longest text block a result may carry, in
	// characters; a longer one is cut with a visible marker. Zero means
	// DefaultMaxTextChars (100000); negative means no limit.
	MaxTextChars int
	// Now is the clock for result timestamps; nil means time.Now.
	Now func() time.Time
	// Logger receives a panic's stack trace, which the model never sees;
	// nil means panics are not logged.
	Logger *slog.Logger
	// Approve approves calls of Elevated tools (other than SelfApproving
	// ones); nil blocks them.
	Approve Approver
}

// NoApproverReason is the blocked-envelope reason of an Elevated tool
// called when the Executor has no Approve func.
const NoApproverReason = "tool needs an operator's approval and no approver is configured"

// errCallTimeout marks the per-call deadline, to tell it from the caller's.
var errCallTimeout = errors.New("tools: per-call timeout")

// outcome is what steps [2] and [3] produce for one call.
type outcome struct {
	result  Result
	isError bool
	err     error
}

// Run executes one call (seed 002 §1) and returns its result message; it
// never returns nil. Events go to emit, which may be nil: a
// tool_execution_start, any tool_execution_update the tool reports while
// Execute runs, and a tool_execution_end, in that order and never
// concurrently. The start and update events carry call.Args as the model
// sent them. Appending the message to the transcript is the caller's job.
//
// Before hooks see the arguments normalized and may replace them; their
// changes to other Call fields are ignored. Execute runs on the calling
// goroutine with a context that ends at the tool's timeout or when ctx
// ends, so a tool that ignores its context holds Run until it returns. A
// panic in Execute is recovered into an error result; a panic in a hook is
// not.
func (e *Executor) Run(ctx context.Context, call Call, emit func(core.AgentEvent)) *core.ToolResultMessage {
	if emit == nil {
		emit = func(core.AgentEvent) {}
	}
	eventArgs := call.Args
	if eventArgs == nil {
		eventArgs = map[string]any{}
	}
	emit(core.AgentEvent{
		Type:       core.AgentEventToolExecutionStart,
		ToolCallID: call.ID,
		ToolName:   call.Name,
		Args:       eventArgs,
	})
	out := e.invoke(ctx, &call, eventArgs, emit)
	for _, h := range e.Hooks.After {
		h(ctx, call, out.result, out.err)
	}
	msg := &core.ToolResultMessage{
		ToolCallID: call.ID,
		ToolName:   call.Name,
		Content:    e.validate(out.result.Content),
		Details:    out.result.Details,
		IsError:    out.isError,
		Timestamp:  e.now().UnixMilli(),
	}
	return e.finish(ctx, msg, emit)
}

// finish runs steps [6] and [7]: persist hooks, then the end event.
func (e *Executor) finish(ctx context.Context, msg *core.ToolResultMessage, emit func(core.AgentEvent)) *core.ToolResultMessage {
	for _, h := range e.Hooks.Persist {
		h(ctx, msg)
	}
	if len(msg.Content) == 0 {
		// A persist hook emptied it; providers reject that.
		msg.Content = noOutput()
	}
	emit(core.AgentEvent{
		Type:       core.AgentEventToolExecutionEnd,
		ToolCallID: msg.ToolCallID,
		ToolName:   msg.ToolName,
		Result:     Result{Content: msg.Content, Details: msg.Details},
		IsError:    msg.IsError,
	})
	return msg
}

// invoke is steps [2] and [3]: checks, before hooks, execution. It leaves
// in *call what Execute saw (or would have seen).
func (e *Executor) invoke(ctx context.Context, call *Call, eventArgs map[string]any, emit func(core.AgentEvent)) outcome {
	ent := e.Registry.get(call.Name)
	if ent == nil {
		available := strings.Join(e.Registry.Names(), ", ")
		if available == "" {
			available = "(none)"
		}
		return failed(call.Name, "unknown tool "+call.Name+"; available: "+available,
			fmt.Errorf("%w %q", ErrUnknownTool, call.Name))
	}
	if ent.spec.Flags.OwnerOnly && !call.SenderIsOwner {
		return blocked(call.Name, OwnerOnlyReason)
	}
	// A private copy in the schema's spelling: hooks may change it without
	// touching the assistant message's arguments, and a policy that looks
	// for "file_path" cannot be dodged with "filePath".
	call.Args = ent.schema.normalize(call.Args, true)
	if len(e.Hooks.Before) > 0 {
		fixed := *call
		for _, h := range e.Hooks.Before {
			d := h(ctx, call)
			args := call.Args
			*call = fixed
			call.Args = args
			if d.Block {
				reason := d.Reason
				if reason == "" {
					reason = "blocked by a before_tool_call hook"
				}
				return blocked(call.Name, reason)
			}
		}
		call.Args = ent.schema.normalize(call.Args, false)
	}
	if k, missing := ent.schema.firstMissing(call.Args); missing {
		return failed(call.Name, k+" required", fmt.Errorf("%w: %s", ErrRequiredParam, k))
	}
	if ctx.Err() != nil {
		return failed(call.Name, AbortedText, fmt.Errorf("%w: %w", ErrAborted, context.Cause(ctx)))
	}
	if _, self := ent.tool.(SelfApproving); ent.spec.Flags.Elevated && !self {
		if e.Approve == nil {
			return blocked(call.Name, NoApproverReason)
		}
		if err := e.Approve(ctx, *call); err != nil {
			if reason, ok := asBlocked(err); ok {
				out := blocked(call.Name, reason)
				out.err = err
				return out
			}
			return failed(call.Name, AbortedText, fmt.Errorf("%w: %w", ErrAborted, err))
		}
	}
	return e.execute(ctx, ent, *call, eventArgs, emit)
}

// execute is step [3].
func (e *Executor) execute(ctx context.Context, ent *entry, call Call, eventArgs map[string]any, emit func(core.AgentEvent)) outcome {
	timeout := ent.spec.Timeout
	if timeout <= 0 {
		timeout = e.DefaultTimeout
		if timeout <= 0 {
			timeout = DefaultTimeout
		}
	}
	runCtx, cancel := context.WithTimeoutCause(ctx, timeout, errCallTimeout)
	defer cancel()
	u := &updater{id: call.ID, name: call.Name, args: eventArgs, emit: emit}
	res, err := e.safeExecute(runCtx, ent.tool, call, u.update)
	last, hasLast := u.close()
	if err == nil {
		return outcome{result: res}
	}
	partial := res
	if len(partial.Content) == 0 && hasLast {
		partial = last
	}
	if reason, ok := asBlocked(err); ok && ctx.Err() == nil {
		out := blocked(call.Name, reason)
		out.err = err
		return out
	}
	var msg string
	switch {
	case errors.Is(err, ErrPanic):
		msg = err.Error()
	case ctx.Err() != nil:
		msg, err = AbortedText, fmt.Errorf("%w: %w", ErrAborted, err)
	case context.Cause(runCtx) == errCallTimeout:
		msg, err = "timed out after "+formatDuration(timeout), fmt.Errorf("%w after %v: %w", ErrTimeout, timeout, err)
	default:
		msg = err.Error()
		if msg == "" {
			msg = "tool failed"
		}
	}
	out := failed(call.Name, msg, err)
	if len(partial.Content) > 0 {
		out.result.Content = append(out.result.Content, partial.Content...)
	}
	out.result.Details = partial.Details
	return out
}

// safeExecute calls Execute and turns a panic into an error wrapping
// ErrPanic that names the tool and the panic value; the stack goes to the
// log only, since the model has no use for it.
func (e *Executor) safeExecute(ctx context.Context, t Tool, call Call, update func(Result)) (res Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			if e.Logger != nil {
				e.Logger.Error("tools: tool panicked", "tool", call.Name, "toolCallId", call.ID,
					"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			}
			res, err = Result{}, &panicError{tool: call.Name, value: v}
		}
	}()
	return t.Execute(ctx, call, update)
}

// panicError is a recovered panic: "tool exec panicked: <value>".
type panicError struct {
	tool  string
	value any
}

func (p *panicError) Error() string { return fmt.Sprintf("tool %s panicked: %v", p.tool, p.value) }

func (p *panicError) Unwrap() error { return ErrPanic }

// updater turns a tool's progress reports into tool_execution_update
// events until the call returns, and remembers the last one as the
// partial result of an aborted call.
type updater struct {
	id, name string
	args     map[string]any
	emit     func(core.AgentEvent)

	mu      sync.Mutex
	done    bool
	last    Result
	hasLast bool
}

// update is the callback Execute receives. The lock serializes reports
// from several goroutines and orders them before the end event.
func (u *updater) update(r Result) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.done {
		return
	}
	u.last, u.hasLast = r, true
	u.emit(core.AgentEvent{
		Type:          core.AgentEventToolExecutionUpdate,
		ToolCallID:    u.id,
		ToolName:      u.name,
		Args:          u.args,
		PartialResult: r,
	})
}

// close drops later reports and returns the last one.
func (u *updater) close() (Result, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.done = true
	return u.last, u.hasLast
}

// failed is the outcome of a call that failed with the §8.1 envelope.
func failed(tool, msg string, err error) outcome {
	return outcome{result: envelopeResult(core.ErrorEnvelope(tool, msg)), isError: true, err: err}
}

// blocked is the outcome of a refused call with the §8.2 envelope.
func blocked(tool, reason string) outcome {
	return outcome{
		result:  envelopeResult(core.BlockedEnvelope(tool, reason)),
		isError: true,
		err:     fmt.Errorf("%w: %s", ErrBlocked, reason),
	}
}

func envelopeResult(env core.ToolEnvelope) Result {
	return Result{Content: core.Content{&core.TextContent{Text: env.String()}}}
}

func noOutput() core.Content {
	return core.Content{&core.TextContent{Text: NoOutputText}}
}

// formatDuration writes whole seconds as "120s" rather than "2m0s".
func formatDuration(d time.Duration) string {
	if d >= time.Second && d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return d.String()
}

func (e *Executor) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

// validate applies seed 002 §7 to a result's content: nil blocks are
// dropped, an oversized image becomes a note, an overlong text is cut, and
// empty content becomes NoOutputText. The tool's blocks are never modified;
// a changed block is a new one in a new slice.
func (e *Executor) validate(c core.Content) core.Content {
	maxImage := limit(e.MaxImageBytes, DefaultMaxImageBytes)
	maxText := limit(e.MaxTextChars, DefaultMaxTextChars)
	var out core.Content // nil until a block changes
	for i, blk := range c {
		repl, changed := checkBlock(blk, maxImage, maxText)
		if changed && out == nil {
			out = make(core.Content, i, len(c))
			copy(out, c[:i])
		}
		if out != nil && repl != nil {
			out = append(out, repl)
		}
	}
	if out == nil {
		out = c
	}
	if len(out) == 0 {
		return noOutput()
	}
	return out
}

// limit returns v, the default for zero, or -1 (no limit) for negatives.
func limit(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return -1
	}
	return v
}

// checkBlock returns the block to keep in blk's place (nil to drop it) and
// whether that differs from blk.
func checkBlock(blk core.ContentBlock, maxImage, maxText int) (core.ContentBlock, bool) {
	switch b := blk.(type) {
	case nil:
		return nil, true
	case *core.TextContent:
		if b == nil {
			return nil, true
		}
		if text, cut := truncateText(b.Text, maxText); cut {
			nb := *b
			nb.Text = text
			return &nb, true
		}
	case *core.ImageContent:
		if b == nil {
			return nil, true
		}
		// len*3/4 bounds the decoded size; count exactly only near the limit.
		if maxImage < 0 || len(b.Data)/4*3+3 <= maxImage {
			break
		}
		if n := decodedLen(b.Data); n > maxImage {
			return &core.TextContent{Text: fmt.Sprintf("[image omitted: %d bytes exceeds the %d-byte limit]", n, maxImage)}, true
		}
	case *core.ThinkingContent:
		if b == nil {
			return nil, true
		}
	case *core.ToolCall:
		if b == nil {
			return nil, true
		}
	case *core.RawBlock:
		if b == nil {
			return nil, true
		}
	}
	return blk, false
}

// truncateText cuts s to max characters plus a marker saying how much was
// kept. A negative max means no limit.
func truncateText(s string, max int) (string, bool) {
	if max < 0 || len(s) <= max { // no more characters than bytes
		return s, false
	}
	total := utf8.RuneCountInString(s)
	if total <= max {
		return s, false
	}
	cut, n := 0, 0
	for i := range s {
		if n == max {
			cut = i
			break
		}
		n++
	}
	return s[:cut] + "\n…[output truncated: " + strconv.Itoa(max) + " of " + strconv.Itoa(total) + " chars shown]", true
}

// decodedLen returns the size of base64 data once decoded, without
// decoding it. Line breaks and padding carry no data.
func decodedLen(data string) int {
	n := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '=', '\n', '\r', ' ', '\t':
		default:
			n++
		}
	}
	return n * 6 / 8
}
