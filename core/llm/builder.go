package llm

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// MessageBuilder assembles a streamed AssistantMessage and emits the seed-000
// events that describe it, so that every provider (and a test fake) produces
// the same event shapes: one start; per content block a _start, its _deltas
// and an _end, with ContentIndex the block's position in the content; then
// done, or error instead of done.
//
// Every event's Partial, Message or Error points at the message being built
// (see Provider.Stream). A MessageBuilder is used by one goroutine.
type MessageBuilder struct {
	msg    *core.AssistantMessage
	cost   ModelCost
	emit   func(core.AssistantMessageEvent)
	blocks []blockState
}

// blockState is the streaming state of one content block.
type blockState struct {
	open bool
	// buf accumulates the block's text, thinking or tool-call arguments;
	// strings.Builder hands out its buffer without copying, so growing a
	// long reply delta by delta stays linear.
	buf strings.Builder
}

// NewMessageBuilder starts an empty message for model of provider, speaking
// api and stamped with now. emit receives the events; nil discards them.
func NewMessageBuilder(api API, provider string, model ModelConfig, now time.Time, emit func(core.AssistantMessageEvent)) *MessageBuilder {
	if emit == nil {
		emit = func(core.AssistantMessageEvent) {}
	}
	return &MessageBuilder{
		msg: &core.AssistantMessage{
			Content:   core.Content{},
			API:       string(api),
			Provider:  provider,
			Model:     model.ID,
			Timestamp: now.UnixMilli(),
		},
		cost: model.Cost,
		emit: emit,
	}
}

// Message returns the message being built.
func (b *MessageBuilder) Message() *core.AssistantMessage { return b.msg }

// Start emits the start event. Call it once, first.
func (b *MessageBuilder) Start() {
	b.emit(core.AssistantMessageEvent{Type: core.AssistantEventStart, Partial: b.msg})
}

func (b *MessageBuilder) open(blk core.ContentBlock, t core.AssistantEventType) int {
	i := len(b.msg.Content)
	b.msg.Content = append(b.msg.Content, blk)
	b.blocks = append(b.blocks, blockState{open: true})
	b.emit(core.AssistantMessageEvent{Type: t, ContentIndex: i, Partial: b.msg})
	return i
}

// isOpen reports whether i names a block started and not yet ended.
func (b *MessageBuilder) isOpen(i int) bool {
	return i >= 0 && i < len(b.blocks) && b.blocks[i].open
}

// StartText opens a text block and returns its content index.
func (b *MessageBuilder) StartText() int {
	return b.open(&core.TextContent{}, core.AssistantEventTextStart)
}

// AppendText appends delta to the text block i. Empty deltas and blocks that
// are not open text blocks are ignored.
func (b *MessageBuilder) AppendText(i int, delta string) {
	if delta == "" || !b.isOpen(i) {
		return
	}
	t, ok := b.msg.Content[i].(*core.TextContent)
	if !ok {
		return
	}
	s := &b.blocks[i]
	s.buf.WriteString(delta)
	t.Text = s.buf.String()
	b.emit(core.AssistantMessageEvent{Type: core.AssistantEventTextDelta, ContentIndex: i, Delta: delta, Partial: b.msg})
}

// StartThinking opens a thinking block and returns its content index.
func (b *MessageBuilder) StartThinking() int {
	return b.open(&core.ThinkingContent{}, core.AssistantEventThinkingStart)
}

// AppendThinking appends delta to the thinking block i.
func (b *MessageBuilder) AppendThinking(i int, delta string) {
	if delta == "" || !b.isOpen(i) {
		return
	}
	t, ok := b.msg.Content[i].(*core.ThinkingContent)
	if !ok {
		return
	}
	s := &b.blocks[i]
	s.buf.WriteString(delta)
	t.Thinking = s.buf.String()
	b.emit(core.AssistantMessageEvent{Type: core.AssistantEventThinkingDelta, ContentIndex: i, Delta: delta, Partial: b.msg})
}

// SetThinkingSignature records the provider's signature of thinking block
// i; signatures arriving in pieces are concatenated. It emits no event.
func (b *MessageBuilder) SetThinkingSignature(i int, sig string) {
	if i < 0 || i >= len(b.msg.Content) {
		return
	}
	if t, ok := b.msg.Content[i].(*core.ThinkingContent); ok {
		t.ThinkingSignature += sig
	}
}

// redactedThinking is the text of a thinking block whose reasoning the
// provider withheld; the block carries the encrypted reasoning in its
// signature and "redacted": true, as pi-ai writes it.
const redactedThinking = "[Reasoning redacted]"

// StartRedactedThinking adds a complete thinking block for reasoning the
// provider encrypted (Anthropic's redacted_thinking): its text is a
// placeholder, data is kept as the signature, and Extra marks it redacted
// so that it is sent back as it came. It emits thinking_start, one
// thinking_delta and thinking_end, and returns the content index.
func (b *MessageBuilder) StartRedactedThinking(data string) int {
	i := b.StartThinking()
	t := b.msg.Content[i].(*core.ThinkingContent)
	t.ThinkingSignature = data
	t.Extra = map[string]json.RawMessage{"redacted": json.RawMessage("true")}
	b.AppendThinking(i, redactedThinking)
	b.End(i)
	return i
}

// StartToolCall opens a tool call with the provider's id and the tool's
// name and returns its content index. Arguments arrive as JSON fragments
// through AppendToolCall and are parsed when the call ends.
func (b *MessageBuilder) StartToolCall(id, name string) int {
	return b.open(&core.ToolCall{ID: id, Name: name}, core.AssistantEventToolCallStart)
}

// ToolCall returns tool call i, or nil when i is not a tool call.
func (b *MessageBuilder) ToolCall(i int) *core.ToolCall {
	if i < 0 || i >= len(b.msg.Content) {
		return nil
	}
	c, _ := b.msg.Content[i].(*core.ToolCall)
	return c
}

// AppendToolCall appends a fragment of the arguments' JSON to tool call i.
func (b *MessageBuilder) AppendToolCall(i int, delta string) {
	if delta == "" || !b.isOpen(i) || b.ToolCall(i) == nil {
		return
	}
	b.blocks[i].buf.WriteString(delta)
	b.emit(core.AssistantMessageEvent{Type: core.AssistantEventToolCallDelta, ContentIndex: i, Delta: delta, Partial: b.msg})
}

// End closes block i, emitting its _end event: text_end and thinking_end
// carry the block's text, toolcall_end the call with its arguments parsed
// (empty arguments become {}). Ending a block that is not open does
// nothing.
func (b *MessageBuilder) End(i int) {
	if !b.isOpen(i) {
		return
	}
	s := &b.blocks[i]
	s.open = false
	ev := core.AssistantMessageEvent{ContentIndex: i, Partial: b.msg}
	switch blk := b.msg.Content[i].(type) {
	case *core.TextContent:
		ev.Type, ev.Content = core.AssistantEventTextEnd, blk.Text
	case *core.ThinkingContent:
		ev.Type, ev.Content = core.AssistantEventThinkingEnd, blk.Thinking
	case *core.ToolCall:
		blk.Arguments = parseArguments(s.buf.String())
		ev.Type, ev.ToolCall = core.AssistantEventToolCallEnd, blk
	default:
		return
	}
	b.emit(ev)
}

// parseArguments decodes a tool call's assembled arguments. Models send an
// object; anything else (nothing at all, or JSON cut short by max_tokens)
// yields an empty object so the call still reaches the tool, whose argument
// validation then tells the model what was missing.
func parseArguments(s string) map[string]any {
	args := map[string]any{}
	if strings.TrimSpace(s) == "" {
		return args
	}
	if err := json.Unmarshal([]byte(s), &args); err != nil || args == nil {
		return map[string]any{}
	}
	return args
}

// EndAll closes every open block in content order.
func (b *MessageBuilder) EndAll() {
	for i := range b.blocks {
		b.End(i)
	}
}

// SetUsage records the token counts of u and derives its TotalTokens
// (input + output, seed 000 §4) and its cost from the model's prices.
func (b *MessageBuilder) SetUsage(u core.Usage) {
	u.TotalTokens = u.Input + u.Output
	u.Cost = ComputeCost(u, b.cost)
	b.msg.Usage = u
}

// Done closes any open block, sets the stop reason and emits done. It
// returns the message and a nil error, for a provider to return.
func (b *MessageBuilder) Done(reason core.StopReason) (*core.AssistantMessage, error) {
	b.EndAll()
	b.msg.StopReason = reason
	b.emit(core.AssistantMessageEvent{Type: core.AssistantEventDone, Reason: reason, Message: b.msg})
	return b.msg, nil
}

// Fail ends the stream with an error event: the message keeps the content
// streamed so far (open blocks stay as they are, without _end events), its
// StopReason is error and its ErrorMessage err's message. err's Provider and
// Model are filled in when empty. It returns the message and err, for a
// provider to return.
func (b *MessageBuilder) Fail(err *Error) (*core.AssistantMessage, error) {
	return b.fail(core.StopReasonError, err)
}

// Abort ends the stream because ctx ended: like Fail, with StopReason
// aborted and an *Error wrapping ctx's error (ErrorTimeout when its deadline
// passed).
func (b *MessageBuilder) Abort(ctx context.Context) (*core.AssistantMessage, error) {
	return b.fail(core.StopReasonAborted, abortError(ctx))
}

// abortError describes why ctx ended.
func abortError(ctx context.Context) *Error {
	cause := context.Cause(ctx)
	if cause == nil {
		cause = context.Canceled
	}
	if errors.Is(cause, context.DeadlineExceeded) {
		return &Error{Kind: ErrorTimeout, Message: "request timed out", Err: cause}
	}
	return &Error{Kind: ErrorUnknown, Message: "request aborted", Err: cause}
}

func (b *MessageBuilder) fail(reason core.StopReason, err *Error) (*core.AssistantMessage, error) {
	if err == nil {
		err = &Error{Kind: ErrorUnknown, Message: "unknown error"}
	}
	if err.Provider == "" && err.Model == "" {
		err.Provider, err.Model = b.msg.Provider, b.msg.Model
	}
	b.msg.StopReason = reason
	b.msg.ErrorMessage = err.Message
	if b.msg.ErrorMessage == "" && err.Err != nil {
		b.msg.ErrorMessage = err.Err.Error()
	}
	b.emit(core.AssistantMessageEvent{Type: core.AssistantEventError, Reason: reason, Error: b.msg})
	return b.msg, err
}
