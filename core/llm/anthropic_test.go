package llm_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/llm"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
)

// anthropicSSE joins "event\tdata" lines into an Anthropic event stream.
func anthropicSSE(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		name, data, _ := strings.Cut(e, "\t")
		b.WriteString("event: " + name + "\ndata: " + data + "\n\n")
	}
	return b.String()
}

const anthropicMessageStart = "message_start\t" + `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"test-model","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`

func TestAnthropicRedactedThinkingServerToolsAndCumulativeUsage(t *testing.T) {
	srv := llmtest.NewAnthropicServer(t, llmtest.RawStream(anthropicSSE(
		anthropicMessageStart,
		"content_block_start\t"+`{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix"}}`,
		"ping\t"+`{"type": "ping"}`,
		"content_block_stop\t"+`{"type":"content_block_stop","index":0}`,
		"content_block_start\t"+`{"type":"content_block_start","index":1,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}`,
		"content_block_delta\t"+`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"query\":\"x\"}"}}`,
		"content_block_stop\t"+`{"type":"content_block_stop","index":1}`,
		"content_block_start\t"+`{"type":"content_block_start","index":2,"content_block":{"type":"text","text":"Hi"}}`,
		"content_block_delta\t"+`{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":" there"}}`,
		"content_block_delta\t"+`{"type":"content_block_delta","index":2,"delta":{"type":"citations_delta","citation":{"type":"char_location","cited_text":"x"}}}`,
		"content_block_stop\t"+`{"type":"content_block_stop","index":2}`,
		"message_delta\t"+`{"type":"message_delta","delta":{"stop_reason":"pause_turn","stop_sequence":null},"usage":{"input_tokens":12,"cache_creation_input_tokens":0,"cache_read_input_tokens":5,"output_tokens":42}}`,
		"message_stop\t"+`{"type":"message_stop"}`,
	)))
	rec := &recorder{}
	msg, err := newProvider("anthropic", srv).Stream(context.Background(), userRequest("hi"), rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	wantTypes(t, rec, "start",
		"thinking_start:0", "thinking_delta:0", "thinking_end:0",
		"text_start:1", "text_delta:1", "text_delta:1", "text_end:1",
		"done(stop)")
	th, ok := msg.Content[0].(*core.ThinkingContent)
	if !ok || th.ThinkingSignature != "EmwKAhgBEgy3va3pzix" || string(th.Extra["redacted"]) != "true" {
		t.Errorf("redacted thinking = %#v", msg.Content[0])
	}
	if msg.Text() != "Hi there" {
		t.Errorf("text = %q", msg.Text())
	}
	u := msg.Usage
	if u.Input != 12 || u.Output != 42 || u.CacheRead != 5 || u.CacheWrite != 0 || u.TotalTokens != 54 {
		t.Errorf("usage = %+v", u)
	}
}

func TestAnthropicTruncatedStream(t *testing.T) {
	srv := llmtest.NewAnthropicServer(t, llmtest.RawStream(anthropicSSE(
		anthropicMessageStart,
		"content_block_start\t"+`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		"content_block_delta\t"+`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}`,
	)))
	rec := &recorder{}
	msg, err := newProvider("anthropic", srv).Stream(context.Background(), userRequest("hi"), rec.emit)
	e := asError(t, err)
	if !e.Retryable || msg.StopReason != core.StopReasonError || msg.Text() != "Hel" {
		t.Errorf("error %+v, message %+v", e, msg)
	}
	wantTypes(t, rec, "start", "text_start:0", "text_delta:0", "error(error)")
}

func TestAnthropicStopReasons(t *testing.T) {
	tests := map[string]core.StopReason{
		"end_turn":                      core.StopReasonStop,
		"stop_sequence":                 core.StopReasonStop,
		"pause_turn":                    core.StopReasonStop,
		"max_tokens":                    core.StopReasonLength,
		"model_context_window_exceeded": core.StopReasonLength,
		"tool_use":                      core.StopReasonToolUse,
	}
	for stop, want := range tests {
		t.Run(stop, func(t *testing.T) {
			srv := llmtest.NewAnthropicServer(t, llmtest.Text("x").WithStopReason(stop))
			msg, err := newProvider("anthropic", srv).Stream(context.Background(), userRequest("hi"), nil)
			if err != nil || msg.StopReason != want {
				t.Errorf("stop reason = %q, %v; want %q", msg.StopReason, err, want)
			}
		})
	}
}

func TestAnthropicErrorEvents(t *testing.T) {
	tests := []struct {
		errType   string
		kind      llm.ErrorKind
		retryable bool
	}{
		{"overloaded_error", llm.ErrorUnknown, true},
		{"api_error", llm.ErrorUnknown, true},
		{"rate_limit_error", llm.ErrorRateLimit, true},
		{"invalid_request_error", llm.ErrorUnknown, false},
	}
	for _, tt := range tests {
		t.Run(tt.errType, func(t *testing.T) {
			srv := llmtest.NewAnthropicServer(t, llmtest.MidStreamError(tt.errType))
			rec := &recorder{}
			msg, err := newProvider("anthropic", srv).Stream(context.Background(), userRequest("hi"), rec.emit)
			e := asError(t, err)
			if e.Kind != tt.kind || e.Retryable != tt.retryable || msg.StopReason != core.StopReasonError {
				t.Errorf("error = %+v", e)
			}
			wantTypes(t, rec, "start", "error(error)")
		})
	}
}
