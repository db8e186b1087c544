// Package tools holds what the agent loop needs to run tools: the Tool
// interface, a Registry, the hooks of seed 002 (before_tool_call,
// after_tool_call, tool_result_persist), and the Executor that takes one
// tool call through the seed-002 §1 lifecycle. Built-in tools live in this
// package too.
package tools

import (
	"context"
	"encoding/json"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// Tool is one capability the model can call. Implementations must be safe
// for concurrent use: calls from one model response run in parallel.
type Tool interface {
	// Spec describes the tool. It is read at registration and must not
	// change afterwards.
	Spec() Spec
	// Execute runs one call. Args are already normalized (snake_case and
	// camelCase both accepted, seed 002 §6) and the required ones checked.
	// update reports progress (seed 002 §5.4) and may be called from any
	// goroutine until Execute returns. ctx ends when the turn is aborted or
	// the tool's timeout passes; a tool returns promptly then, with a partial
	// result if it has one. A returned error becomes an error result with
	// the seed-002 §8.1 envelope.
	Execute(ctx context.Context, call Call, update func(Result)) (Result, error)
}

// Spec describes a tool to the registry and the model.
type Spec struct {
	// Name is how the model calls the tool: lowercase letters, digits and
	// "_", unique in a registry.
	Name string
	// Description tells the model what the tool does and when to use it.
	Description string
	// Parameters is the JSON Schema of the arguments object. Its
	// "required" list is enforced before Execute is called.
	Parameters json.RawMessage
	// Flags are the seed-002 §10 capability flags.
	Flags Flags
	// Timeout bounds one call; zero means the executor's default.
	Timeout time.Duration
}

// Flags are the capability flags of seed 002 §10.
type Flags struct {
	// OwnerOnly restricts the tool to senders in the owner list.
	OwnerOnly bool
	// Optional marks a tool that can be left out of the tool list.
	Optional bool
	// Background marks a tool that can keep running after it returns.
	Background bool
	// PTY marks a tool that can run in a pseudo-terminal.
	PTY bool
	// Elevated marks a tool that needs an operator's approval before each
	// call: the Executor asks its Approve func (and blocks the call when
	// there is none), unless the tool is a SelfApproving one that asks
	// itself, bound to exactly what it will do (exec).
	Elevated bool
	// WorkspaceOnly marks a file tool confined to the agent workspace.
	WorkspaceOnly bool
}

// Call is one tool invocation.
type Call struct {
	// ID is the provider-assigned tool call id.
	ID string
	// Name is the tool name.
	Name string
	// Args are the arguments the model passed.
	Args map[string]any
	// AgentID and SessionKey identify the turn the call belongs to.
	AgentID    string
	SessionKey core.SessionKey
	// Route is where the turn's inbound came from, for tools that reply
	// there.
	Route core.Route
	// ChatType is the kind of chat the turn's inbound came from (direct,
	// group, channel); zero for turns no chat started (heartbeat, cron).
	ChatType core.ChatType
	// SenderIsOwner reports that the message that started the turn came from
	// an owner; OwnerOnly tools refuse other senders.
	SenderIsOwner bool
}

// Result is what a tool returns: content for the model, details for the UI
// and hooks (seed 002 §7.1). It is also the partialResult of a
// tool_execution_update event and the result of a tool_execution_end event,
// and encodes as {"content":[...],"details":...} there.
type Result struct {
	// Content is what the model sees: at least one text or image block.
	// A tool must not change the blocks of a Result it has returned or
	// passed to update.
	Content core.Content `json:"content"`
	// Details is structured data about the result, not sent to the model.
	Details json.RawMessage `json:"details,omitempty"`
}

// TextResult is a Result with one text block.
func TextResult(text string) Result {
	return Result{Content: core.Content{&core.TextContent{Text: text}}}
}

// SelfApproving is implemented by an Elevated tool that obtains its own
// approval inside Execute, bound to what it will actually run; the
// Executor then does not ask again.
type SelfApproving interface {
	// ApprovesEachCall is a marker; it does nothing.
	ApprovesEachCall()
}

// Approver asks an operator to approve one call of an Elevated tool, after
// the before_tool_call hooks have had their say. It returns nil for an
// approval, a *BlockedError for a denial or a timeout, or ctx's error.
type Approver func(ctx context.Context, call Call) error

// Decision is what a before_tool_call hook returns.
type Decision struct {
	// Block stops the call; the model gets the seed-002 §8.2 blocked
	// envelope with Reason.
	Block bool
	// Reason says why the call was blocked.
	Reason string
}

// BeforeToolCall is a before_tool_call hook. It may rewrite call.Args, or
// block the call. Hooks run in registration order; the first block wins.
// call.Args is the executor's own copy, already normalized to the schema's
// spelling, so a hook may change it in place (nested values are shared
// with the model's message: copy them before changing them); changes to
// the other fields of call are ignored.
type BeforeToolCall func(ctx context.Context, call *Call) Decision

// AfterToolCall is an after_tool_call hook: it observes the call and its
// outcome and cannot change them. It runs for every call the Executor
// answers except skipped ones, executed or not: result is what the model
// will see before validation (the envelope for a failure), and err is the
// tool's error, or one wrapping ErrBlocked, ErrUnknownTool,
// ErrRequiredParam, ErrTimeout, ErrAborted or ErrPanic.
type AfterToolCall func(ctx context.Context, call Call, result Result, err error)

// ToolResultPersist is a tool_result_persist hook: it may rewrite the result
// message before it is appended to the transcript. The blocks may be the
// tool's own, so a hook replaces blocks (or the slice) rather than editing
// them.
type ToolResultPersist func(ctx context.Context, msg *core.ToolResultMessage)

// Hooks are the seed-002 hook points.
type Hooks struct {
	// Before run before each call, in order.
	Before []BeforeToolCall
	// After run after each call, in order.
	After []AfterToolCall
	// Persist run on each result message before it is appended, in order.
	Persist []ToolResultPersist
}
