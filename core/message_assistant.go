package core

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// StopReason says why the model stopped producing an assistant message
// (seed 000 §3.2).
type StopReason string

// The stop reasons of seed 000 §3.2.
const (
	// StopReasonStop means the model finished its answer.
	StopReasonStop StopReason = "stop"
	// StopReasonLength means the output token limit cut the answer short.
	StopReasonLength StopReason = "length"
	// StopReasonToolUse means the model wants tool calls run; the agent
	// loop runs them and calls the model again.
	StopReasonToolUse StopReason = "toolUse"
	// StopReasonError means the provider failed; ErrorMessage says why.
	StopReasonError StopReason = "error"
	// StopReasonAborted means the run was cancelled, for example by a
	// steering message.
	StopReasonAborted StopReason = "aborted"
)

// AssistantMessage is one reply of the model (seed 000 §3.2): text,
// thinking and tool calls, with the provider, model and usage that
// produced it.
type AssistantMessage struct {
	Content Content `json:"content"`
	// API is the transport used, such as "anthropic-messages".
	API string `json:"api"`
	// Provider is the configured provider's name, such as "anthropic".
	Provider string `json:"provider"`
	// Model is the model id, such as "claude-opus-4-6".
	Model      string     `json:"model"`
	Usage      Usage      `json:"usage"`
	StopReason StopReason `json:"stopReason"`
	// ErrorMessage says what failed when StopReason is "error"; omitted
	// when empty.
	ErrorMessage string `json:"errorMessage,omitempty"`
	// Timestamp is when the reply was made, in Unix milliseconds.
	Timestamp int64 `json:"timestamp"`
	// Extra holds members this version does not know (see
	// UserMessage.Extra).
	Extra map[string]json.RawMessage `json:"-"`
}

var assistantObject = knownObject{
	label: "assistant message", discKey: "role", discValue: RoleAssistant,
	keys: []string{"content", "api", "provider", "model", "usage", "stopReason", "errorMessage", "timestamp"},
}

// Role returns "assistant".
func (*AssistantMessage) Role() string { return RoleAssistant }

// MarshalJSON writes the message with "role" first and the members in the
// seed's order.
func (m *AssistantMessage) MarshalJSON() ([]byte, error) {
	return m.appendJSON(make([]byte, 0, 512))
}

func (m *AssistantMessage) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"role":"assistant","content":`...)
	b, err := m.Content.appendJSON(b)
	if err != nil {
		return b, err
	}
	b = append(b, `,"api":`...)
	b = appendJSONString(b, m.API)
	b = append(b, `,"provider":`...)
	b = appendJSONString(b, m.Provider)
	b = append(b, `,"model":`...)
	b = appendJSONString(b, m.Model)
	b = append(b, `,"usage":`...)
	if b, err = m.Usage.appendJSON(b); err != nil {
		return b, err
	}
	b = append(b, `,"stopReason":`...)
	b = appendJSONString(b, string(m.StopReason))
	if m.ErrorMessage != "" {
		b = append(b, `,"errorMessage":`...)
		b = appendJSONString(b, m.ErrorMessage)
	}
	b = append(b, `,"timestamp":`...)
	b = strconv.AppendInt(b, m.Timestamp, 10)
	b, err = assistantObject.appendExtra(b, m.Extra)
	return append(b, '}'), err
}

// UnmarshalJSON reads an assistant message; a "role" other than
// "assistant" is an error, a missing one is accepted (stream events carry
// assistant messages where the role is implied).
func (m *AssistantMessage) UnmarshalJSON(data []byte) error {
	*m = AssistantMessage{}
	extra, err := assistantObject.decode(data, m.readMember)
	if err != nil {
		return decodeErr(assistantObject.label, err)
	}
	m.Extra = extra
	return nil
}

func (m *AssistantMessage) readMember(k, v []byte) (bool, error) {
	switch string(k) {
	case "content":
		return true, m.Content.UnmarshalJSON(v)
	case "api":
		return true, named("api", readString(v, &m.API))
	case "provider":
		return true, named("provider", readString(v, &m.Provider))
	case "model":
		return true, named("model", readString(v, &m.Model))
	case "usage":
		return true, named("usage", readUsage(v, &m.Usage))
	case "stopReason":
		return true, named("stopReason", readString(v, (*string)(&m.StopReason)))
	case "errorMessage":
		return true, named("errorMessage", readString(v, &m.ErrorMessage))
	case "timestamp":
		return true, named("timestamp", readInt(v, &m.Timestamp))
	}
	return false, nil
}

// ToolCalls returns the message's tool calls in order, the work the agent
// loop has to do before calling the model again; nil when there are none.
func (m *AssistantMessage) ToolCalls() []*ToolCall {
	var calls []*ToolCall
	for _, blk := range m.Content {
		if c, ok := blk.(*ToolCall); ok && c != nil {
			calls = append(calls, c)
		}
	}
	return calls
}

// Text returns the message's text blocks concatenated, the part of a reply
// a channel shows; thinking and tool calls are left out.
func (m *AssistantMessage) Text() string { return m.Content.Text() }

// Text returns the text of c's text blocks concatenated without separator,
// as the model streamed them.
func (c Content) Text() string {
	var sb strings.Builder
	for _, blk := range c {
		if t, ok := blk.(*TextContent); ok && t != nil {
			sb.WriteString(t.Text)
		}
	}
	return sb.String()
}

// Usage is the token usage and cost of one model call (seed 000 §4). All
// members are always written.
type Usage struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cacheRead"`
	CacheWrite int64 `json:"cacheWrite"`
	// TotalTokens is what the provider reported as the total; it is not
	// recomputed, because providers count cache tokens differently.
	TotalTokens int64 `json:"totalTokens"`
	Cost        Cost  `json:"cost"`
}

func (u *Usage) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"input":`...)
	b = strconv.AppendInt(b, u.Input, 10)
	b = append(b, `,"output":`...)
	b = strconv.AppendInt(b, u.Output, 10)
	b = append(b, `,"cacheRead":`...)
	b = strconv.AppendInt(b, u.CacheRead, 10)
	b = append(b, `,"cacheWrite":`...)
	b = strconv.AppendInt(b, u.CacheWrite, 10)
	b = append(b, `,"totalTokens":`...)
	b = strconv.AppendInt(b, u.TotalTokens, 10)
	b = append(b, `,"cost":`...)
	b, err := u.Cost.appendJSON(b)
	return append(b, '}'), err
}

// Cost is the price of one model call in US dollars (seed 000 §4), as
// computed from the configured model prices. All members are always
// written.
type Cost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
	Total      float64 `json:"total"`
}

func (c *Cost) appendJSON(b []byte) ([]byte, error) {
	members := [...]struct {
		prefix, name string
		v            float64
	}{
		{`{"input":`, "input", c.Input},
		{`,"output":`, "output", c.Output},
		{`,"cacheRead":`, "cacheRead", c.CacheRead},
		{`,"cacheWrite":`, "cacheWrite", c.CacheWrite},
		{`,"total":`, "total", c.Total},
	}
	for _, m := range members {
		b = append(b, m.prefix...)
		var err error
		if b, err = appendJSONFloat(b, m.v); err != nil {
			return b, fmt.Errorf("core: usage cost %s: %w", m.name, err)
		}
	}
	return append(b, '}'), nil
}
