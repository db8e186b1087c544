package core

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// ToolResultMessage is the outcome of one tool call, sent back to the model
// (seed 000 §3.3, seed 002 §3).
type ToolResultMessage struct {
	// ToolCallID is the ToolCall.ID this answers; providers reject a
	// transcript where the two do not pair up.
	ToolCallID string `json:"toolCallId"`
	ToolName   string `json:"toolName"`
	// Content is what the model sees: text and images.
	Content Content `json:"content"`
	// Details is the tool's structured result for the UI and hooks, not sent
	// to the model. It is kept as raw JSON because its shape is the tool's
	// own. Nil (or empty) omits the member (JavaScript's undefined); json.RawMessage
	// ("null") writes an explicit null, and decoding keeps the difference.
	Details json.RawMessage `json:"details,omitempty"`
	// IsError reports that the tool failed; the text is then usually a
	// ToolEnvelope.
	IsError bool `json:"isError"`
	// Timestamp is when the result was made, in Unix milliseconds.
	Timestamp int64 `json:"timestamp"`
	// Extra holds members this version does not know (see
	// UserMessage.Extra).
	Extra map[string]json.RawMessage `json:"-"`
}

var toolResultObject = knownObject{
	label: "toolResult message", discKey: "role", discValue: RoleToolResult,
	keys: []string{"toolCallId", "toolName", "content", "details", "isError", "timestamp"},
}

// Role returns "toolResult".
func (*ToolResultMessage) Role() string { return RoleToolResult }

// MarshalJSON writes the message with "role" first and the members in the
// seed's order.
func (m *ToolResultMessage) MarshalJSON() ([]byte, error) {
	return m.appendJSON(make([]byte, 0, 256))
}

func (m *ToolResultMessage) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"role":"toolResult","toolCallId":`...)
	b = appendJSONString(b, m.ToolCallID)
	b = append(b, `,"toolName":`...)
	b = appendJSONString(b, m.ToolName)
	b = append(b, `,"content":`...)
	b, err := m.Content.appendJSON(b)
	if err != nil {
		return b, err
	}
	if len(m.Details) > 0 {
		b = append(b, `,"details":`...)
		if b, err = appendRawJSON(b, m.Details); err != nil {
			return b, fmt.Errorf("core: toolResult message: details: %w", err)
		}
	}
	b = append(b, `,"isError":`...)
	b = appendJSONBool(b, m.IsError)
	b = append(b, `,"timestamp":`...)
	b = strconv.AppendInt(b, m.Timestamp, 10)
	b, err = toolResultObject.appendExtra(b, m.Extra)
	return append(b, '}'), err
}

// UnmarshalJSON reads a tool result; a "role" other than "toolResult" is an
// error, a missing one is accepted.
func (m *ToolResultMessage) UnmarshalJSON(data []byte) error {
	*m = ToolResultMessage{}
	extra, err := toolResultObject.decode(data, m.readMember)
	if err != nil {
		return decodeErr(toolResultObject.label, err)
	}
	m.Extra = extra
	return nil
}

func (m *ToolResultMessage) readMember(k, v []byte) (bool, error) {
	switch string(k) {
	case "toolCallId":
		return true, named("toolCallId", readString(v, &m.ToolCallID))
	case "toolName":
		return true, named("toolName", readString(v, &m.ToolName))
	case "content":
		return true, m.Content.UnmarshalJSON(v)
	case "details":
		return true, named("details", readRaw(v, &m.Details))
	case "isError":
		return true, named("isError", readBool(v, &m.IsError))
	case "timestamp":
		return true, named("timestamp", readInt(v, &m.Timestamp))
	}
	return false, nil
}
