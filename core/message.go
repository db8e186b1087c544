package core

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// The roles of seed 000 §3, as they appear in a message's "role" member.
const (
	RoleUser       = "user"
	RoleAssistant  = "assistant"
	RoleToolResult = "toolResult"
)

// Message is one entry of a conversation: a line of a session transcript
// (seed 000 §6) and an element of what is sent to the model. The known
// messages are *UserMessage, *AssistantMessage and *ToolResultMessage; a
// message with any other role decodes to *RawMessage so that custom agent
// messages written by another program survive a rewrite. An embedding
// program may add its own Message types; they must implement
// json.Marshaler and write their "role" member.
type Message interface {
	// Role returns the message's "role" member.
	Role() string
}

// Compile-time checks that every message type is a Message and encodes
// itself.
var (
	_ Message          = (*UserMessage)(nil)
	_ Message          = (*AssistantMessage)(nil)
	_ Message          = (*ToolResultMessage)(nil)
	_ Message          = (*RawMessage)(nil)
	_ json.Marshaler   = (*UserMessage)(nil)
	_ json.Marshaler   = (*AssistantMessage)(nil)
	_ json.Marshaler   = (*ToolResultMessage)(nil)
	_ json.Marshaler   = (*RawMessage)(nil)
	_ json.Unmarshaler = (*UserMessage)(nil)
	_ json.Unmarshaler = (*AssistantMessage)(nil)
	_ json.Unmarshaler = (*ToolResultMessage)(nil)
	_ json.Unmarshaler = (*RawMessage)(nil)
	_ json.Marshaler   = Messages(nil)
	_ json.Unmarshaler = (*Messages)(nil)
)

// UnmarshalMessage decodes one message, choosing its Go type by its "role"
// member; an unknown role yields a *RawMessage. Errors are *DecodeError and
// say what was wrong: "core: message: missing role", "core: message: role
// must be a string, got a number", "core: assistant message: content[1]:
// ...".
func UnmarshalMessage(data []byte) (Message, error) {
	v, found, err := discriminator(data, "role")
	if err != nil {
		return nil, decodeErr("message", err)
	}
	if !found {
		if err := syntaxError(data); err != nil {
			return nil, decodeErr("message", err)
		}
		return nil, decodeErrf("message", "missing role")
	}
	role, err := discriminatorString("role", v)
	if err != nil {
		return nil, decodeErr("message", err)
	}
	if len(role) == 0 {
		return nil, decodeErrf("message", "empty role")
	}
	var m interface {
		Message
		json.Unmarshaler
	}
	switch string(role) {
	case RoleUser:
		m = new(UserMessage)
	case RoleAssistant:
		m = new(AssistantMessage)
	case RoleToolResult:
		m = new(ToolResultMessage)
	case RoleCompactionSummary:
		m = new(CompactionSummaryMessage)
	default:
		m = new(RawMessage)
	}
	if err := m.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	return m, nil
}

// appendMessage writes one message, directly for our types and through its
// own JSON encoding for a message type an embedding program defined.
func appendMessage(b []byte, m Message) ([]byte, error) {
	switch v := m.(type) {
	case *UserMessage:
		if v != nil {
			return v.appendJSON(b)
		}
	case *AssistantMessage:
		if v != nil {
			return v.appendJSON(b)
		}
	case *ToolResultMessage:
		if v != nil {
			return v.appendJSON(b)
		}
	case *RawMessage:
		if v != nil {
			return v.appendJSON(b)
		}
	case nil:
	default:
		return appendJSONAny(b, v)
	}
	return b, fmt.Errorf("nil message")
}

// Messages is a list of messages with JSON methods, for the places a
// message list is itself JSON (an agent_end event, a gateway history
// reply).
type Messages []Message

// MarshalJSON writes the messages in order; a nil Messages encodes as []
// and a nil element is an error.
func (ms Messages) MarshalJSON() ([]byte, error) { return ms.appendJSON(nil) }

func (ms Messages) appendJSON(b []byte) ([]byte, error) {
	b = append(b, '[')
	for i, m := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendMessage(b, m); err != nil {
			return b, fmt.Errorf("core: messages[%d]: %w", i, err)
		}
	}
	return append(b, ']'), nil
}

// UnmarshalJSON decodes each element with UnmarshalMessage. null leaves the
// list nil; [] makes it empty but not nil.
func (ms *Messages) UnmarshalJSON(data []byte) error {
	if isJSONNull(data) {
		*ms = nil
		return nil
	}
	s, ok := newArrayScan(data)
	if !ok {
		return decodeErr("messages", notAnArray(data))
	}
	out := Messages{}
	for i := 0; ; i++ {
		elem, ok := s.next()
		if !ok {
			break
		}
		m, err := UnmarshalMessage(elem)
		if err != nil {
			return decodeErr(fmt.Sprintf("messages[%d]", i), err)
		}
		out = append(out, m)
	}
	if s.failed() {
		return decodeErr("messages", notAnArray(data))
	}
	*ms = out
	return nil
}

// RawMessage is a message with a role this version does not know, such as
// a custom agent message (seed 000 §1). It keeps the message's JSON and
// writes it back byte for byte, so a transcript rewrite does not lose it.
// (Inside json.Marshal's output the bytes are compacted and HTML-escaped
// like all of json.Marshal's output; transcript lines are compact already.)
type RawMessage struct {
	// JSON is the whole message as it was read.
	JSON json.RawMessage
}

// Role reads the "role" member from JSON; it returns "" when there is none
// or it is not a string.
func (m *RawMessage) Role() string {
	v, found, err := discriminator(m.JSON, "role")
	if err != nil || !found {
		return ""
	}
	role, err := discriminatorString("role", v)
	if err != nil {
		return ""
	}
	return string(role)
}

// MarshalJSON writes JSON unchanged; an empty JSON is an error.
func (m *RawMessage) MarshalJSON() ([]byte, error) { return m.appendJSON(nil) }

func (m *RawMessage) appendJSON(b []byte) ([]byte, error) {
	b, err := appendRawJSON(b, m.JSON)
	if err != nil {
		return b, fmt.Errorf("core: raw message: %w", err)
	}
	return b, nil
}

// UnmarshalJSON keeps a copy of data, which must be a JSON object.
func (m *RawMessage) UnmarshalJSON(data []byte) error {
	if _, ok := newObjectScan(data); !ok {
		return decodeErr("raw message", notAnObject(data))
	}
	if err := syntaxError(data); err != nil {
		return decodeErr("raw message", err)
	}
	*m = RawMessage{JSON: bytes.Clone(data)}
	return nil
}
