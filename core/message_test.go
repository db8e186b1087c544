package core_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %T: %v", v, err)
	}
	return b
}

func mustUnmarshalMessage(t *testing.T, data string) core.Message {
	t.Helper()
	m, err := core.UnmarshalMessage([]byte(data))
	if err != nil {
		t.Fatalf("UnmarshalMessage(%s): %v", data, err)
	}
	return m
}

func TestUnknownRoleKeptByteIntact(t *testing.T) {
	custom := `{"role":"bashExecution","command":"ls -la","exitCode":0,"output":"total 0\n","nested":{"z":1,"a":[1.50,2e3]},"timestamp":1740000000500}`
	user := `{"role":"user","content":"hi","timestamp":1740000000000}`
	in := "[" + user + "," + custom + "]"

	var ms core.Messages
	if err := json.Unmarshal([]byte(in), &ms); err != nil {
		t.Fatal(err)
	}
	raw, ok := ms[1].(*core.RawMessage)
	if !ok {
		t.Fatalf("custom message decoded as %T, want *core.RawMessage", ms[1])
	}
	if got := raw.Role(); got != "bashExecution" {
		t.Errorf("Role() = %q, want bashExecution", got)
	}
	// 1.50 and 2e3 would change if the message went through a generic
	// decode; they must come back as written.
	for name, out := range map[string][]byte{
		"json.Marshal":           mustMarshal(t, ms),
		"Messages.MarshalJSON":   must(ms.MarshalJSON()),
		"RawMessage.MarshalJSON": must(raw.MarshalJSON()),
	} {
		if !bytes.Contains(out, []byte(custom)) {
			t.Errorf("%s: custom message not kept byte for byte:\n got %s\nwant it to contain %s", name, out, custom)
		}
	}
	if got := string(mustMarshal(t, ms)); got != in {
		t.Errorf("Messages re-encoded as\n%s\nwant\n%s", got, in)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func TestRawMessageRole(t *testing.T) {
	for _, tc := range []struct{ json, want string }{
		{`{"role":"custom"}`, "custom"},
		{`{"role":"c\u0075stom"}`, "custom"},
		{`{"kind":"x"}`, ""},
		{`{"role":5}`, ""},
		{"{\"role\":\"a\xffb\"}", "a\ufffdb"}, // as encoding/json decodes it
		{``, ""},
	} {
		if got := (&core.RawMessage{JSON: json.RawMessage(tc.json)}).Role(); got != tc.want {
			t.Errorf("Role() of %s = %q, want %q", tc.json, got, tc.want)
		}
	}
}

func TestUnknownBlockKeptInAssistantMessage(t *testing.T) {
	block := `{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4a","extra":[1.0,{"b":null}]}`
	in := `{"role":"assistant","content":[{"type":"text","text":"hi"},` + block + `],"api":"anthropic-messages","provider":"anthropic","model":"claude-opus-4-6","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1}`
	m := mustUnmarshalMessage(t, in).(*core.AssistantMessage)
	raw, ok := m.Content[1].(*core.RawBlock)
	if !ok {
		t.Fatalf("content[1] decoded as %T, want *core.RawBlock", m.Content[1])
	}
	if raw.BlockType() != "redacted_thinking" || string(raw.JSON) != block {
		t.Errorf("RawBlock = {%q, %s}", raw.Type, raw.JSON)
	}
	if got := string(mustMarshal(t, m)); got != in {
		t.Errorf("re-encoded as\n%s\nwant\n%s", got, in)
	}
	if m.Text() != "hi" {
		t.Errorf("Text() = %q", m.Text())
	}
}

func TestUnknownFieldsKept(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		extra    func(core.Message) map[string]json.RawMessage
	}{{
		name: "user message",
		in:   `{"role":"user","content":"hi","timestamp":1,"origin":{"channel":"telegram","ids":[1,2]}}`,
		extra: func(m core.Message) map[string]json.RawMessage {
			return m.(*core.UserMessage).Extra
		},
	}, {
		name: "assistant message",
		in:   `{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1,"responseId":"msg_01"}`,
		extra: func(m core.Message) map[string]json.RawMessage {
			return m.(*core.AssistantMessage).Extra
		},
	}, {
		name: "tool result",
		in:   `{"role":"toolResult","toolCallId":"c","toolName":"t","content":[],"isError":false,"timestamp":1,"durationMs":12}`,
		extra: func(m core.Message) map[string]json.RawMessage {
			return m.(*core.ToolResultMessage).Extra
		},
	}, {
		name: "text block",
		in:   `{"role":"user","content":[{"type":"text","text":"a","citations":[{"url":"https://example.com"}]}],"timestamp":1}`,
		extra: func(m core.Message) map[string]json.RawMessage {
			return m.(*core.UserMessage).Content.Blocks[0].(*core.TextContent).Extra
		},
	}, {
		name: "thinking block",
		in:   `{"role":"assistant","content":[{"type":"thinking","thinking":"t","redacted":true}],"api":"a","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1}`,
		extra: func(m core.Message) map[string]json.RawMessage {
			return m.(*core.AssistantMessage).Content[0].(*core.ThinkingContent).Extra
		},
	}, {
		name: "image block",
		in:   `{"role":"user","content":[{"type":"image","data":"AA==","mimeType":"image/png","width":640}],"timestamp":1}`,
		extra: func(m core.Message) map[string]json.RawMessage {
			return m.(*core.UserMessage).Content.Blocks[0].(*core.ImageContent).Extra
		},
	}, {
		name: "tool call",
		in:   `{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"n","arguments":{},"partialJson":"{}"}],"api":"a","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":1}`,
		extra: func(m core.Message) map[string]json.RawMessage {
			return m.(*core.AssistantMessage).Content[0].(*core.ToolCall).Extra
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			m := mustUnmarshalMessage(t, tc.in)
			if len(tc.extra(m)) != 1 {
				t.Errorf("Extra = %v, want one member", tc.extra(m))
			}
			// Unknown members go after the known ones, so our own inputs
			// above, written in that order, come back byte for byte.
			if got := string(mustMarshal(t, m)); got != tc.in {
				t.Errorf("re-encoded as\n%s\nwant\n%s", got, tc.in)
			}
		})
	}
}

func TestExtraWrittenInKeyOrderAfterKnownMembers(t *testing.T) {
	m := &core.UserMessage{
		Content:   core.UserContent{Text: "hi"},
		Timestamp: 1,
		Extra: map[string]json.RawMessage{
			"zeta":      json.RawMessage(`1`),
			"alpha":     json.RawMessage(`{"x": [1, 2]}`),
			"role":      json.RawMessage(`"system"`), // the discriminator is ours
			"Timestamp": json.RawMessage(`2`),        // would collide with a field
		},
	}
	want := `{"role":"user","content":"hi","timestamp":1,"alpha":{"x":[1,2]},"zeta":1}`
	if got := string(mustMarshal(t, m)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	m.Extra = map[string]json.RawMessage{"bad": json.RawMessage(`{`)}
	if _, err := json.Marshal(m); err == nil || !strings.Contains(err.Error(), `extra field "bad"`) {
		t.Errorf("invalid extra value: err = %v", err)
	}
}

func TestCaseVariantKeysAreNotDuplicated(t *testing.T) {
	// encoding/json matches "Content" to the content field; keeping it as
	// an extra too would write the value twice.
	m := mustUnmarshalMessage(t, `{"role":"user","Content":"hi","timestamp":1,"x":true}`)
	want := `{"role":"user","content":"hi","timestamp":1,"x":true}`
	if got := string(mustMarshal(t, m)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestUserContentForms(t *testing.T) {
	for _, tc := range []struct {
		name, in   string
		wantText   string
		wantBlocks int // -1: Blocks must be nil
	}{
		{"string", `"hello"`, "hello", -1},
		{"empty string", `""`, "", -1},
		{"array", `[{"type":"text","text":"a"},{"type":"image","data":"AA==","mimeType":"image/png"}]`, "", 2},
		{"empty array", `[]`, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := `{"role":"user","content":` + tc.in + `,"timestamp":1}`
			m := mustUnmarshalMessage(t, in).(*core.UserMessage)
			if m.Content.Text != tc.wantText {
				t.Errorf("Text = %q, want %q", m.Content.Text, tc.wantText)
			}
			switch {
			case tc.wantBlocks < 0 && m.Content.Blocks != nil:
				t.Errorf("Blocks = %v, want nil", m.Content.Blocks)
			case tc.wantBlocks >= 0 && (m.Content.Blocks == nil || len(m.Content.Blocks) != tc.wantBlocks):
				t.Errorf("Blocks = %#v, want %d non-nil", m.Content.Blocks, tc.wantBlocks)
			}
			if got := string(mustMarshal(t, m)); got != in {
				t.Errorf("re-encoded as %s, want %s", got, in)
			}
		})
	}
	for _, tc := range []struct {
		c    core.UserContent
		want string
	}{
		{core.UserContent{}, `""`},
		{core.UserContent{Text: "a"}, `"a"`},
		{core.UserContent{Text: "ignored", Blocks: core.Content{}}, `[]`},
		{core.UserContent{Blocks: core.Content{&core.TextContent{Text: "b"}}}, `[{"type":"text","text":"b"}]`},
	} {
		if got := string(mustMarshal(t, tc.c)); got != tc.want {
			t.Errorf("%+v encodes as %s, want %s", tc.c, got, tc.want)
		}
	}
	var c core.UserContent
	if err := json.Unmarshal([]byte(`5`), &c); err == nil || !strings.Contains(err.Error(), "want a string or an array, got a number") {
		t.Errorf("number content: err = %v", err)
	}
}

func TestToolCallNilArgumentsEncodeAsObject(t *testing.T) {
	got := string(mustMarshal(t, &core.ToolCall{ID: "c1", Name: "now"}))
	want := `{"type":"toolCall","id":"c1","name":"now","arguments":{}}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	got = string(mustMarshal(t, &core.ToolCall{ID: "c1", Name: "read", Arguments: map[string]any{"b": 1, "a": "<x>"}, ThoughtSignature: "sig"}))
	want = `{"type":"toolCall","id":"c1","name":"read","arguments":{"a":"\u003cx\u003e","b":1},"thoughtSignature":"sig"}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestToolResultDetails(t *testing.T) {
	for _, tc := range []struct {
		name, details string // details "" means absent
		wantNil       bool
	}{
		{"absent", "", true},
		{"null", `null`, false},
		{"object", `{"lines":200}`, false},
		{"string", `"ok"`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			member := ""
			if tc.details != "" {
				member = `,"details":` + tc.details
			}
			in := `{"role":"toolResult","toolCallId":"c","toolName":"t","content":[{"type":"text","text":"x"}]` + member + `,"isError":false,"timestamp":1}`
			m := mustUnmarshalMessage(t, in).(*core.ToolResultMessage)
			if (m.Details == nil) != tc.wantNil || (tc.details != "" && string(m.Details) != tc.details) {
				t.Errorf("Details = %q (nil %v)", m.Details, m.Details == nil)
			}
			if got := string(mustMarshal(t, m)); got != in {
				t.Errorf("re-encoded as\n%s\nwant\n%s", got, in)
			}
		})
	}
}

func TestMarshalWritesRoleFirst(t *testing.T) {
	for _, m := range []core.Message{
		core.NewUserText("hi", 1),
		&core.AssistantMessage{},
		&core.ToolResultMessage{},
	} {
		got := mustMarshal(t, m)
		want := `{"role":"` + m.Role() + `",`
		if !bytes.HasPrefix(got, []byte(want)) {
			t.Errorf("%T encodes as %s, want it to start with %s", m, got, want)
		}
	}
}

func TestZeroValuesWriteRequiredMembers(t *testing.T) {
	for _, tc := range []struct {
		m    core.Message
		want string
	}{
		{&core.UserMessage{}, `{"role":"user","content":"","timestamp":0}`},
		{&core.AssistantMessage{}, `{"role":"assistant","content":[],"api":"","provider":"","model":"","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"","timestamp":0}`},
		{&core.ToolResultMessage{}, `{"role":"toolResult","toolCallId":"","toolName":"","content":[],"isError":false,"timestamp":0}`},
	} {
		if got := string(mustMarshal(t, tc.m)); got != tc.want {
			t.Errorf("%T:\n got %s\nwant %s", tc.m, got, tc.want)
		}
	}
	m := &core.AssistantMessage{StopReason: core.StopReasonError, ErrorMessage: "overloaded"}
	if got := mustMarshal(t, m); !bytes.Contains(got, []byte(`"stopReason":"error","errorMessage":"overloaded","timestamp":0}`)) {
		t.Errorf("errorMessage not written after stopReason: %s", got)
	}
}

func TestUnmarshalMessageErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"content":"hi"}`, "core: message: missing role"},
		{`{"role":5}`, "core: message: role must be a string, got a number"},
		{`{"role":null}`, "core: message: role must be a string, got null"},
		{`{"role":""}`, "core: message: empty role"},
		{`{"role":["user"]}`, "core: message: role must be a string, got an array"},
		{`{"role":"user",`, "core: message: invalid JSON: unexpected end of JSON input"},
		{`{"role":"user","content":tru}`, "core: user message: invalid JSON: invalid character '}' in literal true (expecting 'e')"},
		{`{"content":tru}`, "core: message: invalid JSON: invalid character '}' in literal true (expecting 'e')"},
		{`{"role":"custom","x":tru}`, "core: raw message: invalid JSON: invalid character '}' in literal true (expecting 'e')"},
		{``, "core: message: invalid JSON: unexpected end of JSON input"},
		{`[1]`, "core: message: want a JSON object, got an array"},
		{`null`, "core: message: want a JSON object, got null"},
		{`{"role":"user","timestamp":"now"}`, "core: user message: timestamp: json: cannot unmarshal string into Go value of type int64"},
		// Keys match fields case-insensitively, as in encoding/json.
		{`{"role":"user","Timestamp":"now"}`, "core: user message: timestamp: json: cannot unmarshal string into Go value of type int64"},
		{`{"role":"user","x":[1,}`, "core: message: invalid JSON: invalid character '}' looking for beginning of value"},
		{`{"role":"user","x":[1,]}`, "core: user message: invalid JSON: invalid character ']' looking for beginning of value"},
		{`{"role":"user","\u00zz":1}`, "core: message: invalid JSON: invalid character 'z' in \\u hexadecimal character escape"},
		{`{"role":"assistant","usage":{"input":1.5}}`, "core: assistant message: usage: input: json: cannot unmarshal number 1.5 into Go value of type int64"},
		{`{"role":"assistant","usage":{"cost":{"total":"free"}}}`, "core: assistant message: usage: cost: total: json: cannot unmarshal string into Go value of type float64"},
		{`{"role":"toolResult","details":{"a":}}`, "core: toolResult message: invalid JSON: invalid character '}' looking for beginning of value"},
		{`{"role":"user","content":{}}`, "core: user message: content: want a string or an array, got an object"},
		{`{"role":"assistant","content":[{"type":"text","text":"a"},{"text":"b"}]}`, "core: assistant message: content[1]: content block: missing type"},
		{`{"role":"assistant","content":[{"type":7}]}`, "core: assistant message: content[0]: content block: type must be a string, got a number"},
		{`{"role":"assistant","content":[{"type":"toolCall","arguments":"{}"}]}`, "core: assistant message: content[0]: toolCall block: arguments: json: cannot unmarshal string into Go value of type map[string]interface {}"},
		{`{"role":"toolResult","content":"text"}`, "core: toolResult message: content: want a JSON array, got a string"},
	} {
		_, err := core.UnmarshalMessage([]byte(tc.in))
		if err == nil {
			t.Errorf("UnmarshalMessage(%s) succeeded, want %q", tc.in, tc.want)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("UnmarshalMessage(%s):\n got %q\nwant %q", tc.in, err, tc.want)
		}
		var de *core.DecodeError
		if !errors.As(err, &de) {
			t.Errorf("UnmarshalMessage(%s): error %T is not a *core.DecodeError", tc.in, err)
		}
	}
}

func TestUnmarshalWrongRoleDirectly(t *testing.T) {
	var m core.AssistantMessage
	err := json.Unmarshal([]byte(`{"role":"user","content":[]}`), &m)
	if err == nil || !strings.Contains(err.Error(), `core: assistant message: role is "user", want "assistant"`) {
		t.Errorf("err = %v", err)
	}
	// Where the role is implied (an event's partial), it may be absent.
	if err := json.Unmarshal([]byte(`{"content":[],"model":"m"}`), &m); err != nil || m.Model != "m" {
		t.Errorf("role-less assistant message: %v, %+v", err, m)
	}
}

func TestUnmarshalResetsReceiver(t *testing.T) {
	m := &core.AssistantMessage{Model: "old", ErrorMessage: "old", Extra: map[string]json.RawMessage{"x": json.RawMessage("1")}}
	if err := json.Unmarshal([]byte(`{"role":"assistant","content":[]}`), m); err != nil {
		t.Fatal(err)
	}
	if m.Model != "" || m.ErrorMessage != "" || m.Extra != nil {
		t.Errorf("fields of the previous value survived: %+v", m)
	}
}

func TestMessagesJSON(t *testing.T) {
	if got := string(mustMarshal(t, core.Messages(nil))); got != `[]` {
		t.Errorf("nil Messages encodes as %s", got)
	}
	if _, err := json.Marshal(core.Messages{nil}); err == nil || !strings.Contains(err.Error(), "messages[0]: nil message") {
		t.Errorf("nil element: err = %v", err)
	}
	if _, err := json.Marshal(core.Messages{(*core.UserMessage)(nil)}); err == nil {
		t.Error("typed nil element encoded without error")
	}
	var ms core.Messages
	if err := json.Unmarshal([]byte(`null`), &ms); err != nil || ms != nil {
		t.Errorf("null: %v, %v", ms, err)
	}
	if err := json.Unmarshal([]byte(` [ ] `), &ms); err != nil || ms == nil || len(ms) != 0 {
		t.Errorf("[]: %#v, %v", ms, err)
	}
	err := json.Unmarshal([]byte(`[{"role":"user","content":"a","timestamp":1},{"content":"b"}]`), &ms)
	if err == nil || !strings.Contains(err.Error(), "core: messages[1]: message: missing role") {
		t.Errorf("err = %v", err)
	}
	if err := ms.UnmarshalJSON([]byte(`[{"role":"user"} {"role":"user"}]`)); err == nil {
		t.Error("missing comma accepted")
	}
}

func TestCustomMessageType(t *testing.T) {
	ms := core.Messages{customMessage{Note: "<kept>"}, core.NewUserText("hi", 1)}
	got := string(mustMarshal(t, ms))
	want := `[{"role":"note","note":"\u003ckept\u003e"},{"role":"user","content":"hi","timestamp":1}]`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// customMessage is a Message an embedding program defines.
type customMessage struct {
	Note string `json:"note"`
}

func (customMessage) Role() string { return "note" }

func (m customMessage) MarshalJSON() ([]byte, error) {
	type plain customMessage
	return json.Marshal(struct {
		Role string `json:"role"`
		plain
	}{"note", plain(m)})
}

func TestAssistantHelpers(t *testing.T) {
	tc1 := &core.ToolCall{ID: "1", Name: "read"}
	tc2 := &core.ToolCall{ID: "2", Name: "exec"}
	m := &core.AssistantMessage{Content: core.Content{
		&core.ThinkingContent{Thinking: "hmm"},
		&core.TextContent{Text: "Let me "},
		tc1,
		&core.TextContent{Text: "check."},
		tc2,
	}}
	if got := m.Text(); got != "Let me check." {
		t.Errorf("Text() = %q", got)
	}
	if got := m.ToolCalls(); len(got) != 2 || got[0] != tc1 || got[1] != tc2 {
		t.Errorf("ToolCalls() = %v", got)
	}
	if got := (&core.AssistantMessage{}).ToolCalls(); got != nil {
		t.Errorf("ToolCalls() of an empty message = %v, want nil", got)
	}
}

func TestNewUserText(t *testing.T) {
	m := core.NewUserText("hello <world>", 1740000000000)
	if m.Text() != "hello <world>" || m.Timestamp != 1740000000000 || m.Content.Blocks != nil {
		t.Errorf("NewUserText = %+v", m)
	}
	// MarshalJSON itself does not HTML-escape, like JSON.stringify; it is
	// json.Marshal that adds the escaping on top.
	if got := string(must(m.MarshalJSON())); got != `{"role":"user","content":"hello <world>","timestamp":1740000000000}` {
		t.Errorf("MarshalJSON = %s", got)
	}
}
