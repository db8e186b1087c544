package core_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

func TestAssistantEventVariantExact(t *testing.T) {
	partial := &core.AssistantMessage{Model: "m"}
	// Every field set: each variant must write only its own members.
	full := func(typ core.AssistantEventType) *core.AssistantMessageEvent {
		return &core.AssistantMessageEvent{
			Type: typ, ContentIndex: 0, Delta: "d", Content: "c",
			ToolCall: &core.ToolCall{ID: "1", Name: "n"}, Reason: core.StopReasonStop,
			Partial: partial, Message: partial, Error: partial,
		}
	}
	for typ, want := range map[core.AssistantEventType][]string{
		core.AssistantEventStart:         {"type", "partial"},
		core.AssistantEventDone:          {"type", "reason", "message"},
		core.AssistantEventError:         {"type", "reason", "error"},
		core.AssistantEventTextStart:     {"type", "contentIndex", "partial"},
		core.AssistantEventTextDelta:     {"type", "contentIndex", "delta", "partial"},
		core.AssistantEventTextEnd:       {"type", "contentIndex", "content", "partial"},
		core.AssistantEventThinkingStart: {"type", "contentIndex", "partial"},
		core.AssistantEventThinkingDelta: {"type", "contentIndex", "delta", "partial"},
		core.AssistantEventThinkingEnd:   {"type", "contentIndex", "content", "partial"},
		core.AssistantEventToolCallStart: {"type", "contentIndex", "partial"},
		core.AssistantEventToolCallDelta: {"type", "contentIndex", "delta", "partial"},
		core.AssistantEventToolCallEnd:   {"type", "contentIndex", "toolCall", "partial"},
	} {
		got := memberNames(t, mustMarshal(t, full(typ)))
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s writes %v, want %v", typ, got, want)
		}
	}
}

// memberNames returns the top-level member names of a JSON object in order.
func memberNames(t *testing.T, data []byte) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(data)))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var names []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return names
}

func TestAssistantEventPartialOmittedWhenNil(t *testing.T) {
	e := &core.AssistantMessageEvent{Type: core.AssistantEventTextDelta, Delta: "hi"}
	if got := string(mustMarshal(t, e)); got != `{"type":"text_delta","contentIndex":0,"delta":"hi"}` {
		t.Errorf("got %s", got)
	}
	e = &core.AssistantMessageEvent{Type: core.AssistantEventDone, Reason: core.StopReasonStop}
	if got := string(mustMarshal(t, e)); got != `{"type":"done","reason":"stop","message":null}` {
		t.Errorf("got %s", got)
	}
}

func TestAssistantEventDecodeDropsForeignMembers(t *testing.T) {
	var e core.AssistantMessageEvent
	in := `{"type":"done","reason":"stop","message":{"role":"assistant","content":[]},"delta":"x","contentIndex":4}`
	if err := json.Unmarshal([]byte(in), &e); err != nil {
		t.Fatal(err)
	}
	if e.Delta != "" || e.ContentIndex != 0 || e.Message == nil || e.Reason != core.StopReasonStop {
		t.Errorf("decoded %+v", e)
	}
}

func TestAssistantEventUnknownTypeKeptIntact(t *testing.T) {
	in := `{"type":"citation_delta","contentIndex":2,"content":[{"url":"https://example.com"}],"n":1.50}`
	var e core.AssistantMessageEvent
	if err := json.Unmarshal([]byte(in), &e); err != nil {
		t.Fatal(err)
	}
	if e.Type != "citation_delta" || string(e.Raw) != in {
		t.Errorf("decoded %+v", e)
	}
	if got := string(mustMarshal(t, &e)); got != in {
		t.Errorf("re-encoded as %s", got)
	}
	// Wrapped in an agent event, it survives too.
	ae := core.AgentEvent{Type: core.AgentEventMessageUpdate, Message: &core.AssistantMessage{}, AssistantMessageEvent: &e}
	var back core.AgentEvent
	if err := json.Unmarshal(mustMarshal(t, &ae), &back); err != nil {
		t.Fatal(err)
	}
	if string(back.AssistantMessageEvent.Raw) != in {
		t.Errorf("inside message_update: %s", back.AssistantMessageEvent.Raw)
	}
}

func TestEventErrors(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		v        json.Unmarshaler
	}{
		{`{"delta":"x"}`, "core: assistant message event: missing type", new(core.AssistantMessageEvent)},
		{`{"type":""}`, "core: assistant message event: empty type", new(core.AssistantMessageEvent)},
		{`{"type":1}`, "core: assistant message event: type must be a string, got a number", new(core.AssistantMessageEvent)},
		{`{"type":"done","message":[]}`, `core: assistant message event "done": assistant message: want a JSON object, got an array`, new(core.AssistantMessageEvent)},
		{`{}`, "core: agent event: missing type", new(core.AgentEvent)},
		{`{"type":"message_end","message":{"content":"x"}}`, `core: agent event "message_end": message: missing role`, new(core.AgentEvent)},
		{`{"type":"turn_end","message":null,"toolResults":[null]}`, `core: agent event "turn_end": toolResults[0] is null`, new(core.AgentEvent)},
		{`{"type":"agent_end","messages":[{"role":"user","content":7}]}`, `core: agent event "agent_end": messages[0]: user message: content: want a string or an array, got a number`, new(core.AgentEvent)},
	} {
		err := tc.v.UnmarshalJSON([]byte(tc.in))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%T from %s:\n got %v\nwant %s", tc.v, tc.in, err, tc.want)
		}
	}
	if _, err := json.Marshal(&core.AssistantMessageEvent{}); err == nil {
		t.Error("event with empty type encoded")
	}
	if _, err := json.Marshal(&core.AgentEvent{}); err == nil {
		t.Error("agent event with empty type encoded")
	}
}

func TestAgentEventVariantExact(t *testing.T) {
	msg := core.NewUserText("hi", 1)
	full := func(typ core.AgentEventType) *core.AgentEvent {
		return &core.AgentEvent{
			Type: typ, Messages: core.Messages{msg}, Message: msg,
			ToolResults:           []*core.ToolResultMessage{{ToolCallID: "1"}},
			AssistantMessageEvent: &core.AssistantMessageEvent{Type: core.AssistantEventStart},
			ToolCallID:            "1", ToolName: "read", Args: map[string]any{"a": 1.0},
			PartialResult: "half", Result: "done", IsError: true,
		}
	}
	for typ, want := range map[core.AgentEventType][]string{
		core.AgentEventAgentStart:          {"type"},
		core.AgentEventAgentEnd:            {"type", "messages"},
		core.AgentEventTurnStart:           {"type"},
		core.AgentEventTurnEnd:             {"type", "message", "toolResults"},
		core.AgentEventMessageStart:        {"type", "message"},
		core.AgentEventMessageUpdate:       {"type", "message", "assistantMessageEvent"},
		core.AgentEventMessageEnd:          {"type", "message"},
		core.AgentEventToolExecutionStart:  {"type", "toolCallId", "toolName", "args"},
		core.AgentEventToolExecutionUpdate: {"type", "toolCallId", "toolName", "args", "partialResult"},
		core.AgentEventToolExecutionEnd:    {"type", "toolCallId", "toolName", "result", "isError"},
	} {
		got := memberNames(t, mustMarshal(t, full(typ)))
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s writes %v, want %v", typ, got, want)
		}
	}
}

func TestAgentEventZeroMembers(t *testing.T) {
	for _, tc := range []struct {
		e    core.AgentEvent
		want string
	}{
		{core.AgentEvent{Type: core.AgentEventAgentEnd}, `{"type":"agent_end","messages":[]}`},
		{core.AgentEvent{Type: core.AgentEventTurnEnd}, `{"type":"turn_end","message":null,"toolResults":[]}`},
		{core.AgentEvent{Type: core.AgentEventToolExecutionEnd, ToolCallID: "c", ToolName: "t"}, `{"type":"tool_execution_end","toolCallId":"c","toolName":"t","result":null,"isError":false}`},
	} {
		if got := string(mustMarshal(t, &tc.e)); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}

func TestAgentEventUnknownTypeKeptIntact(t *testing.T) {
	in := `{"type":"compaction_start","reason":"overflow","tokens":1.0e5}`
	var e core.AgentEvent
	if err := json.Unmarshal([]byte(in), &e); err != nil {
		t.Fatal(err)
	}
	if got := string(mustMarshal(t, &e)); got != in || e.Type != "compaction_start" {
		t.Errorf("re-encoded %q as %s", e.Type, got)
	}
}

func TestAgentEventMessageTypes(t *testing.T) {
	in := `{"type":"message_end","message":{"role":"custom","x":1}}`
	var e core.AgentEvent
	if err := json.Unmarshal([]byte(in), &e); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.Message.(*core.RawMessage); !ok {
		t.Errorf("message decoded as %T", e.Message)
	}
	if got := string(mustMarshal(t, &e)); got != in {
		t.Errorf("re-encoded as %s", got)
	}
}
