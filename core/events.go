package core

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// AssistantEventType names a variant of AssistantMessageEvent (seed 000
// §5.1).
type AssistantEventType string

// The stream event types of seed 000 §5.1.
const (
	// AssistantEventStart opens the stream; Partial is the empty message.
	AssistantEventStart AssistantEventType = "start"
	// AssistantEventDone ends the stream; Message is the final message.
	AssistantEventDone AssistantEventType = "done"
	// AssistantEventError ends the stream on failure or abort; Error is the
	// message so far, with its ErrorMessage set.
	AssistantEventError AssistantEventType = "error"

	// AssistantEventTextStart opens a text block at ContentIndex.
	AssistantEventTextStart AssistantEventType = "text_start"
	// AssistantEventTextDelta appends Delta to the text block.
	AssistantEventTextDelta AssistantEventType = "text_delta"
	// AssistantEventTextEnd closes the text block; Content is its text.
	AssistantEventTextEnd AssistantEventType = "text_end"

	// AssistantEventThinkingStart opens a thinking block at ContentIndex.
	AssistantEventThinkingStart AssistantEventType = "thinking_start"
	// AssistantEventThinkingDelta appends Delta to the thinking block.
	AssistantEventThinkingDelta AssistantEventType = "thinking_delta"
	// AssistantEventThinkingEnd closes the thinking block; Content is its
	// text.
	AssistantEventThinkingEnd AssistantEventType = "thinking_end"

	// AssistantEventToolCallStart opens a tool call at ContentIndex.
	AssistantEventToolCallStart AssistantEventType = "toolcall_start"
	// AssistantEventToolCallDelta appends Delta to the call's arguments,
	// which are JSON text until the call ends.
	AssistantEventToolCallDelta AssistantEventType = "toolcall_delta"
	// AssistantEventToolCallEnd closes the tool call; ToolCall is the
	// assembled call (seed 002 §2.2).
	AssistantEventToolCallEnd AssistantEventType = "toolcall_end"
)

// assistantEventShape lists the members one variant carries besides "type".
type assistantEventShape struct {
	index, delta, content, toolCall, reason, message, errorMsg, partial bool
}

var assistantEventShapes = map[AssistantEventType]assistantEventShape{
	AssistantEventStart:         {partial: true},
	AssistantEventDone:          {reason: true, message: true},
	AssistantEventError:         {reason: true, errorMsg: true},
	AssistantEventTextStart:     {index: true, partial: true},
	AssistantEventTextDelta:     {index: true, delta: true, partial: true},
	AssistantEventTextEnd:       {index: true, content: true, partial: true},
	AssistantEventThinkingStart: {index: true, partial: true},
	AssistantEventThinkingDelta: {index: true, delta: true, partial: true},
	AssistantEventThinkingEnd:   {index: true, content: true, partial: true},
	AssistantEventToolCallStart: {index: true, partial: true},
	AssistantEventToolCallDelta: {index: true, delta: true, partial: true},
	AssistantEventToolCallEnd:   {index: true, toolCall: true, partial: true},
}

// AssistantMessageEvent is one event of a model's streamed reply (seed 000
// §5.1): the union of all variants in one flat struct, with Type saying
// which fields mean something. JSON carries exactly the members of the
// variant, so a client never sees a stray "delta":"" on a done event.
type AssistantMessageEvent struct {
	Type AssistantEventType `json:"type"`
	// ContentIndex is the index in the message's content of the block the
	// event is about; written, even when 0, for the text_*, thinking_* and
	// toolcall_* variants.
	ContentIndex int `json:"contentIndex"`
	// Delta is the text appended by a *_delta event; for toolcall_delta it
	// is a fragment of the arguments' JSON.
	Delta string `json:"delta"`
	// Content is the whole text of the block a text_end or thinking_end
	// event closes.
	Content string `json:"content"`
	// ToolCall is the assembled call of a toolcall_end event.
	ToolCall *ToolCall `json:"toolCall"`
	// Reason is why a done or error event ended the stream.
	Reason StopReason `json:"reason"`
	// Partial is the message as assembled so far, for every variant but
	// done and error. The seed makes it required, but senders leave it out
	// (seed 002 §2.2 does), so it is omitted when nil.
	Partial *AssistantMessage `json:"partial"`
	// Message is the final message of a done event.
	Message *AssistantMessage `json:"message"`
	// Error is the message of an error event, with ErrorMessage set.
	Error *AssistantMessage `json:"error"`
	// Raw is the event as read when Type is not one this version knows; it
	// is written back unchanged so a relay does not lose newer events.
	// Raw is ignored for known types.
	Raw json.RawMessage `json:"-"`
}

type assistantEventFields AssistantMessageEvent

// Compile-time checks that the event types encode themselves.
var (
	_ json.Marshaler   = (*AssistantMessageEvent)(nil)
	_ json.Unmarshaler = (*AssistantMessageEvent)(nil)
)

// MarshalJSON writes "type" and then exactly the members of the variant.
// An event of an unknown type writes Raw, or just its type when Raw is
// empty; an empty Type is an error.
func (e *AssistantMessageEvent) MarshalJSON() ([]byte, error) { return e.appendJSON(nil) }

func (e *AssistantMessageEvent) appendJSON(b []byte) ([]byte, error) {
	if e.Type == "" {
		return b, fmt.Errorf("core: assistant message event: empty type")
	}
	shape, known := assistantEventShapes[e.Type]
	if !known && len(e.Raw) > 0 {
		b, err := appendRawJSON(b, e.Raw)
		if err != nil {
			return b, fmt.Errorf("core: assistant message event %q: %w", e.Type, err)
		}
		return b, nil
	}
	b = append(b, `{"type":`...)
	b = appendJSONString(b, string(e.Type))
	if shape.index {
		b = append(b, `,"contentIndex":`...)
		b = strconv.AppendInt(b, int64(e.ContentIndex), 10)
	}
	if shape.delta {
		b = append(b, `,"delta":`...)
		b = appendJSONString(b, e.Delta)
	}
	if shape.content {
		b = append(b, `,"content":`...)
		b = appendJSONString(b, e.Content)
	}
	var err error
	if shape.toolCall {
		b = append(b, `,"toolCall":`...)
		if e.ToolCall == nil {
			b = append(b, "null"...)
		} else if b, err = e.ToolCall.appendJSON(b); err != nil {
			return b, err
		}
	}
	if shape.reason {
		b = append(b, `,"reason":`...)
		b = appendJSONString(b, string(e.Reason))
	}
	if shape.message {
		if b, err = appendAssistantMember(b, `,"message":`, e.Message); err != nil {
			return b, err
		}
	}
	if shape.errorMsg {
		if b, err = appendAssistantMember(b, `,"error":`, e.Error); err != nil {
			return b, err
		}
	}
	if shape.partial && e.Partial != nil {
		if b, err = appendAssistantMember(b, `,"partial":`, e.Partial); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// appendAssistantMember writes a required assistant message member, null
// when m is nil.
func appendAssistantMember(b []byte, prefix string, m *AssistantMessage) ([]byte, error) {
	b = append(b, prefix...)
	if m == nil {
		return append(b, "null"...), nil
	}
	return m.appendJSON(b)
}

// UnmarshalJSON reads any variant. Members that do not belong to the
// variant are dropped, so the struct holds what MarshalJSON would write. An
// unknown type keeps the whole event in Raw without decoding it, since its
// members may not fit our fields.
func (e *AssistantMessageEvent) UnmarshalJSON(data []byte) error {
	t, err := eventType(data, "assistant message event")
	if err != nil {
		return err
	}
	shape, known := assistantEventShapes[AssistantEventType(t)]
	if !known {
		if err := syntaxError(data); err != nil {
			return decodeErr("assistant message event", err)
		}
		*e = AssistantMessageEvent{Type: AssistantEventType(t), Raw: bytes.Clone(data)}
		return nil
	}
	var f assistantEventFields
	if err := json.Unmarshal(data, &f); err != nil {
		return decodeErr(fmt.Sprintf("assistant message event %q", t), err)
	}
	*e = AssistantMessageEvent{Type: AssistantEventType(t)}
	if shape.partial {
		e.Partial = f.Partial
	}
	if shape.index {
		e.ContentIndex = f.ContentIndex
	}
	if shape.delta {
		e.Delta = f.Delta
	}
	if shape.content {
		e.Content = f.Content
	}
	if shape.toolCall {
		e.ToolCall = f.ToolCall
	}
	if shape.reason {
		e.Reason = f.Reason
	}
	if shape.message {
		e.Message = f.Message
	}
	if shape.errorMsg {
		e.Error = f.Error
	}
	return nil
}

// eventType reads the "type" member of an event, which must be a non-empty
// string.
func eventType(data []byte, label string) (string, error) {
	v, found, err := discriminator(data, "type")
	if err != nil {
		return "", decodeErr(label, err)
	}
	if !found {
		if err := syntaxError(data); err != nil {
			return "", decodeErr(label, err)
		}
		return "", decodeErrf(label, "missing type")
	}
	t, err := discriminatorString("type", v)
	if err != nil {
		return "", decodeErr(label, err)
	}
	if len(t) == 0 {
		return "", decodeErrf(label, "empty type")
	}
	return string(t), nil
}
