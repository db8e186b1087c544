package llm_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/llm"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
)

// openaiSSE joins chunk JSON into a chat-completions event stream.
func openaiSSE(chunks ...string) string {
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString("data: " + c + "\n\n")
	}
	return b.String()
}

// openaiChunk is a chunk with one choice of delta and finish reason.
func openaiChunk(delta, finish string) string {
	return `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + finish + `}]}`
}

func TestOpenAIToolCallsWithoutIndex(t *testing.T) {
	srv := llmtest.NewOpenAIServer(t, llmtest.ToolCalls(
		llmtest.Call("read", `{"path":"a.txt"}`),
		llmtest.Call("exec", `{"command":"ls"}`),
	).WithoutToolIndex())
	rec := &recorder{}
	msg, err := newProvider("openai", srv).Stream(context.Background(), userRequest("go"), rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	wantTypes(t, rec, "start",
		"toolcall_start:0", "toolcall_delta:0", "toolcall_delta:0", "toolcall_delta:0",
		"toolcall_start:1", "toolcall_delta:1", "toolcall_delta:1", "toolcall_delta:1",
		"toolcall_end:0", "toolcall_end:1", "done(toolUse)")
	calls := msg.ToolCalls()
	if len(calls) != 2 || calls[0].ID != "call_1" || calls[0].Arguments["path"] != "a.txt" ||
		calls[1].ID != "call_2" || calls[1].Arguments["command"] != "ls" {
		t.Errorf("calls = %+v %+v", calls[0], calls[1])
	}
}

func TestOpenAIToolCallWithoutIndexOrID(t *testing.T) {
	// A llama.cpp-style stream: no index, the id only... nowhere, and
	// "stop" at the end although a tool was called.
	srv := llmtest.NewOpenAIServer(t, llmtest.RawStream(openaiSSE(
		openaiChunk(`{"role":"assistant","content":null}`, "null"),
		openaiChunk(`{"tool_calls":[{"type":"function","function":{"name":"read","arguments":"{\"pa"}}]}`, "null"),
		openaiChunk(`{"tool_calls":[{"function":{"arguments":"th\":\"x\"}"}}]}`, "null"),
		openaiChunk(`{}`, `"stop"`),
		"[DONE]",
	)))
	rec := &recorder{}
	msg, err := newProvider("openai", srv).Stream(context.Background(), userRequest("go"), rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	wantTypes(t, rec, "start", "toolcall_start:0", "toolcall_delta:0", "toolcall_delta:0", "toolcall_end:0", "done(toolUse)")
	c := msg.ToolCalls()
	if len(c) != 1 || c[0].Name != "read" || c[0].Arguments["path"] != "x" || !strings.HasPrefix(c[0].ID, "call_") {
		t.Errorf("call = %+v", c)
	}
}

func TestOpenAIStopWithToolCalls(t *testing.T) {
	srv := llmtest.NewOpenAIServer(t, llmtest.ToolCalls(llmtest.Call("read", `{"path":"a"}`)).WithStopReason("stop"))
	msg, err := newProvider("openai", srv).Stream(context.Background(), userRequest("go"), nil)
	if err != nil || msg.StopReason != core.StopReasonToolUse {
		t.Errorf("stop reason = %q, %v", msg.StopReason, err)
	}
}

func TestOpenAIReasoningFields(t *testing.T) {
	for _, field := range []string{"reasoning_content", "reasoning"} {
		t.Run(field, func(t *testing.T) {
			srv := llmtest.NewOpenAIServer(t, llmtest.Reply(
				llmtest.ThinkingBlock("", "Hmm, ", "two."),
				llmtest.TextBlock("It is 2."),
			).WithReasoningField(field))
			rec := &recorder{}
			msg, err := newProvider("openai", srv).Stream(context.Background(), userRequest("1+1"), rec.emit)
			if err != nil {
				t.Fatal(err)
			}
			wantTypes(t, rec, "start",
				"thinking_start:0", "thinking_delta:0", "thinking_delta:0", "thinking_end:0",
				"text_start:1", "text_delta:1", "text_end:1", "done(stop)")
			if th, ok := msg.Content[0].(*core.ThinkingContent); !ok || th.Thinking != "Hmm, two." {
				t.Errorf("thinking = %#v", msg.Content[0])
			}
		})
	}
}

func TestOpenAIReasoningInterleavedWithText(t *testing.T) {
	// A server sending reasoning and content in alternation, and the same
	// reasoning under both member names in one delta.
	srv := llmtest.NewOpenAIServer(t, llmtest.RawStream(openaiSSE(
		openaiChunk(`{"role":"assistant","content":""}`, "null"),
		openaiChunk(`{"reasoning_content":"a","reasoning":"a"}`, "null"),
		openaiChunk(`{"content":"b"}`, "null"),
		openaiChunk(`{"reasoning_content":"c"}`, "null"),
		openaiChunk(`{"content":"d","reasoning_content":null}`, `"stop"`),
		"[DONE]",
	)))
	rec := &recorder{}
	msg, err := newProvider("openai", srv).Stream(context.Background(), userRequest("x"), rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	wantTypes(t, rec, "start",
		"thinking_start:0", "thinking_delta:0", "thinking_end:0",
		"text_start:1", "text_delta:1", "text_end:1",
		"thinking_start:2", "thinking_delta:2", "thinking_end:2",
		"text_start:3", "text_delta:3", "text_end:3",
		"done(stop)")
	if msg.Text() != "bd" {
		t.Errorf("text = %q", msg.Text())
	}
}

func TestOpenAICompatibleServerErrors(t *testing.T) {
	tests := []struct {
		name      string
		resp      llmtest.Response
		kind      llm.ErrorKind
		retryable bool
	}{
		{"llama.cpp context size", llmtest.HTTPError(400, nil,
			`{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":4096}}`),
			llm.ErrorContextLength, false},
		// vLLM's older form puts the error's members at the top level;
		// read there, its message says the prompt does not fit.
		{"vLLM top-level error", llmtest.HTTPError(400, nil,
			`{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.","type":"BadRequestError","param":null,"code":400}`),
			llm.ErrorContextLength, false},
		{"ollama string error", llmtest.HTTPError(404, nil, `{"error":"model \"llama9\" not found, try pulling it first"}`),
			llm.ErrorUnknown, false},
		{"plain text 503", llmtest.HTTPError(503, nil, "upstream unavailable"), llm.ErrorUnknown, true},
		{"llama.cpp mid-stream", llmtest.RawStream(openaiSSE(
			openaiChunk(`{"role":"assistant","content":""}`, "null"),
			`{"error":{"code":500,"message":"slot unavailable","type":"server_error"}}`)),
			llm.ErrorUnknown, true},
		{"no data at all", llmtest.RawStream(openaiSSE("[DONE]")), llm.ErrorUnknown, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewOpenAIServer(t, tt.resp)
			rec := &recorder{}
			msg, err := newProvider("local", srv).Stream(context.Background(), userRequest("hi"), rec.emit)
			e := asError(t, err)
			if e.Kind != tt.kind || e.Retryable != tt.retryable || msg.StopReason != core.StopReasonError {
				t.Errorf("error = %+v", e)
			}
			wantTypes(t, rec, "start", "error(error)")
		})
	}
}

func TestOpenAIStreamClosedWithoutFinishReason(t *testing.T) {
	srv := llmtest.NewOpenAIServer(t, llmtest.RawStream(openaiSSE(
		openaiChunk(`{"role":"assistant","content":"Hi"}`, "null"),
	)))
	msg, err := newProvider("local", srv).Stream(context.Background(), userRequest("hi"), nil)
	if err != nil || msg.StopReason != core.StopReasonStop || msg.Text() != "Hi" {
		t.Errorf("Stream = %+v, %v", msg, err)
	}
}

// TestOpenAIChunkMembersOfAnotherType: a server that sends a member with an
// unexpected type (a number for content, an object for reasoning) loses
// that member, not its stream; the rest of the chunk still counts.
func TestOpenAIChunkMembersOfAnotherType(t *testing.T) {
	srv := llmtest.NewOpenAIServer(t, llmtest.RawStream(openaiSSE(
		openaiChunk(`{"role":"assistant","content":"a"}`, "null"),
		openaiChunk(`{"content":5,"refusal":"x"}`, "null"),
		openaiChunk(`{"reasoning":{"effort":"low"},"content":"b"}`, "null"),
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":"7","completion_tokens":3}}`,
		openaiChunk(`{"content":"c"}`, `"stop"`),
		"[DONE]",
	)))
	msg, err := newProvider("openai", srv).Stream(context.Background(), userRequest("x"), (&recorder{}).emit)
	if err != nil {
		t.Fatal(err)
	}
	if msg.Text() != "axbc" || msg.StopReason != core.StopReasonStop {
		t.Errorf("text = %q, stop = %s; want axbc, stop", msg.Text(), msg.StopReason)
	}
	if msg.Usage.Output != 3 {
		t.Errorf("usage = %+v; want the completion tokens of the chunk whose prompt_tokens was a string", msg.Usage)
	}
}
