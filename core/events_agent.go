package core

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// AgentEventType names a variant of AgentEvent (seed 000 §5.2).
type AgentEventType string

// The agent event types of seed 000 §5.2.
const (
	// AgentEventAgentStart opens a run.
	AgentEventAgentStart AgentEventType = "agent_start"
	// AgentEventAgentEnd closes a run; Messages are the messages it added.
	AgentEventAgentEnd AgentEventType = "agent_end"
	// AgentEventTurnStart opens one model call and its tool calls.
	AgentEventTurnStart AgentEventType = "turn_start"
	// AgentEventTurnEnd closes a turn; Message is the assistant message and
	// ToolResults the results of its tool calls.
	AgentEventTurnEnd AgentEventType = "turn_end"
	// AgentEventMessageStart announces Message, as it starts streaming or
	// as it is appended.
	AgentEventMessageStart AgentEventType = "message_start"
	// AgentEventMessageUpdate carries one stream event of Message in
	// AssistantMessageEvent.
	AgentEventMessageUpdate AgentEventType = "message_update"
	// AgentEventMessageEnd carries the finished Message.
	AgentEventMessageEnd AgentEventType = "message_end"
	// AgentEventToolExecutionStart announces a tool call about to run.
	AgentEventToolExecutionStart AgentEventType = "tool_execution_start"
	// AgentEventToolExecutionUpdate carries a tool's progress report.
	AgentEventToolExecutionUpdate AgentEventType = "tool_execution_update"
	// AgentEventToolExecutionEnd carries a tool's result.
	AgentEventToolExecutionEnd AgentEventType = "tool_execution_end"
)

// agentEventShape lists the members one variant carries besides "type".
type agentEventShape struct {
	messages, message, toolResults, assistantEvent, tool, args, partialResult, result bool
}

var agentEventShapes = map[AgentEventType]agentEventShape{
	AgentEventAgentStart:          {},
	AgentEventAgentEnd:            {messages: true},
	AgentEventTurnStart:           {},
	AgentEventTurnEnd:             {message: true, toolResults: true},
	AgentEventMessageStart:        {message: true},
	AgentEventMessageUpdate:       {message: true, assistantEvent: true},
	AgentEventMessageEnd:          {message: true},
	AgentEventToolExecutionStart:  {tool: true, args: true},
	AgentEventToolExecutionUpdate: {tool: true, args: true, partialResult: true},
	AgentEventToolExecutionEnd:    {tool: true, result: true},
}

// AgentEvent is one event of an agent run (seed 000 §5.2), what the gateway
// forwards to clients and channels use for typing and previews. It is the
// union of all variants in one flat struct, with Type saying which fields
// mean something; JSON carries exactly the members of the variant.
type AgentEvent struct {
	Type AgentEventType
	// Messages are the messages the run added (agent_end); nil writes [].
	Messages Messages
	// Message is the message a turn_end or message_* event is about; nil
	// writes null.
	Message Message
	// ToolResults are a turn's tool results (turn_end); nil writes [].
	ToolResults []*ToolResultMessage
	// AssistantMessageEvent is the stream event behind a message_update.
	AssistantMessageEvent *AssistantMessageEvent
	// ToolCallID and ToolName identify the call of a tool_execution_* event.
	ToolCallID string
	ToolName   string
	// Args are the call's arguments (tool_execution_start and _update).
	Args any
	// PartialResult is a progress report (tool_execution_update).
	PartialResult any
	// Result is the tool's result (tool_execution_end).
	Result any
	// IsError reports that the tool failed (tool_execution_end).
	IsError bool
	// Raw is the event as read when Type is not one this version knows; it
	// is written back unchanged. Raw is ignored for known types.
	Raw json.RawMessage
}

// agentEventWire is how an AgentEvent is decoded: Message needs
// UnmarshalMessage, which encoding/json cannot call for an interface.
type agentEventWire struct {
	Messages              Messages               `json:"messages"`
	Message               json.RawMessage        `json:"message"`
	ToolResults           []*ToolResultMessage   `json:"toolResults"`
	AssistantMessageEvent *AssistantMessageEvent `json:"assistantMessageEvent"`
	ToolCallID            string                 `json:"toolCallId"`
	ToolName              string                 `json:"toolName"`
	Args                  any                    `json:"args"`
	PartialResult         any                    `json:"partialResult"`
	Result                any                    `json:"result"`
	IsError               bool                   `json:"isError"`
}

// Compile-time checks that AgentEvent encodes itself.
var (
	_ json.Marshaler   = (*AgentEvent)(nil)
	_ json.Unmarshaler = (*AgentEvent)(nil)
)

// MarshalJSON writes "type" and then exactly the members of the variant.
// An event of an unknown type writes Raw, or just its type when Raw is
// empty; an empty Type is an error.
func (e *AgentEvent) MarshalJSON() ([]byte, error) { return e.appendJSON(nil) }

func (e *AgentEvent) appendJSON(b []byte) ([]byte, error) {
	if e.Type == "" {
		return b, fmt.Errorf("core: agent event: empty type")
	}
	shape, known := agentEventShapes[e.Type]
	if !known && len(e.Raw) > 0 {
		b, err := appendRawJSON(b, e.Raw)
		if err != nil {
			return b, fmt.Errorf("core: agent event %q: %w", e.Type, err)
		}
		return b, nil
	}
	b = append(b, `{"type":`...)
	b = appendJSONString(b, string(e.Type))
	var err error
	if shape.messages {
		b = append(b, `,"messages":`...)
		if b, err = e.Messages.appendJSON(b); err != nil {
			return b, err
		}
	}
	if shape.message {
		b = append(b, `,"message":`...)
		if e.Message == nil {
			b = append(b, "null"...)
		} else if b, err = appendMessage(b, e.Message); err != nil {
			return b, fmt.Errorf("core: agent event %q: message: %w", e.Type, err)
		}
	}
	if shape.toolResults {
		b = append(b, `,"toolResults":[`...)
		for i, r := range e.ToolResults {
			if i > 0 {
				b = append(b, ',')
			}
			if r == nil {
				return b, fmt.Errorf("core: agent event %q: toolResults[%d]: nil message", e.Type, i)
			}
			if b, err = r.appendJSON(b); err != nil {
				return b, err
			}
		}
		b = append(b, ']')
	}
	if shape.assistantEvent {
		b = append(b, `,"assistantMessageEvent":`...)
		if e.AssistantMessageEvent == nil {
			b = append(b, "null"...)
		} else if b, err = e.AssistantMessageEvent.appendJSON(b); err != nil {
			return b, err
		}
	}
	if shape.tool {
		b = append(b, `,"toolCallId":`...)
		b = appendJSONString(b, e.ToolCallID)
		b = append(b, `,"toolName":`...)
		b = appendJSONString(b, e.ToolName)
	}
	for _, m := range [...]struct {
		on   bool
		name string
		v    any
	}{
		{shape.args, "args", e.Args},
		{shape.partialResult, "partialResult", e.PartialResult},
		{shape.result, "result", e.Result},
	} {
		if !m.on {
			continue
		}
		b = append(b, `,"`...)
		b = append(b, m.name...)
		b = append(b, `":`...)
		if b, err = appendJSONAny(b, m.v); err != nil {
			return b, fmt.Errorf("core: agent event %q: %s: %w", e.Type, m.name, err)
		}
	}
	if shape.result {
		b = append(b, `,"isError":`...)
		b = appendJSONBool(b, e.IsError)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads any variant. Members that do not belong to the
// variant are dropped, so the struct holds what MarshalJSON would write.
// Args, PartialResult and Result decode as encoding/json decodes into an
// any (map[string]any, []any, float64, ...). An unknown type keeps the
// whole event in Raw without decoding it.
func (e *AgentEvent) UnmarshalJSON(data []byte) error {
	t, err := eventType(data, "agent event")
	if err != nil {
		return err
	}
	shape, known := agentEventShapes[AgentEventType(t)]
	if !known {
		if err := syntaxError(data); err != nil {
			return decodeErr("agent event", err)
		}
		*e = AgentEvent{Type: AgentEventType(t), Raw: bytes.Clone(data)}
		return nil
	}
	label := fmt.Sprintf("agent event %q", t)
	var w agentEventWire
	if err := json.Unmarshal(data, &w); err != nil {
		return decodeErr(label, err)
	}
	*e = AgentEvent{Type: AgentEventType(t)}
	if shape.messages {
		e.Messages = w.Messages
	}
	if shape.message && len(w.Message) > 0 && !isJSONNull(w.Message) {
		if e.Message, err = UnmarshalMessage(w.Message); err != nil {
			return decodeErr(label, err)
		}
	}
	if shape.toolResults {
		for i, r := range w.ToolResults {
			if r == nil {
				return decodeErrf(label, "toolResults[%d] is null", i)
			}
		}
		e.ToolResults = w.ToolResults
	}
	if shape.assistantEvent {
		e.AssistantMessageEvent = w.AssistantMessageEvent
	}
	if shape.tool {
		e.ToolCallID, e.ToolName = w.ToolCallID, w.ToolName
	}
	if shape.args {
		e.Args = w.Args
	}
	if shape.partialResult {
		e.PartialResult = w.PartialResult
	}
	if shape.result {
		e.Result, e.IsError = w.Result, w.IsError
	}
	return nil
}
