package llm_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/llm"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
)

// conversation is a request exercising every mapping: system prompt, user
// text, user image, an assistant turn with signed, unsigned and redacted
// thinking, signed text and two tool calls, two tool results (one an error
// with an image), a final user message, a custom message that is not sent,
// a tool, and thinking.
func conversation(model string) *llm.Request {
	return &llm.Request{
		Model:  llm.ModelConfig{ID: model, MaxTokens: 64000},
		System: "You are Switchboard.",
		Messages: []core.Message{
			core.NewUserText("Read the file", 1),
			&core.UserMessage{Content: core.UserContent{Blocks: core.Content{
				&core.TextContent{Text: "What's in this screenshot?"},
				&core.ImageContent{Data: "iVBORw0KGgo=", MimeType: "image/png"},
			}}, Timestamp: 2},
			&core.AssistantMessage{Content: core.Content{
				&core.ThinkingContent{Thinking: "I should read it", ThinkingSignature: "sig-1"},
				&core.ThinkingContent{Thinking: "unsigned, from another provider"},
				&core.ThinkingContent{Thinking: "[Reasoning redacted]", ThinkingSignature: "ENCRYPTED", Extra: map[string]json.RawMessage{"redacted": json.RawMessage("true")}},
				&core.TextContent{Text: "Let me read it.", TextSignature: "tsig"},
				&core.ToolCall{ID: "toolu_1", Name: "read", Arguments: map[string]any{"path": "main.go"}},
				&core.ToolCall{ID: "toolu_2", Name: "screenshot"},
			}, StopReason: core.StopReasonToolUse},
			&core.ToolResultMessage{ToolCallID: "toolu_1", ToolName: "read", Content: core.Content{&core.TextContent{Text: "package main"}}},
			&core.ToolResultMessage{ToolCallID: "toolu_2", ToolName: "screenshot", IsError: true, Content: core.Content{
				&core.TextContent{Text: "captured"},
				&core.ImageContent{Data: "AAAA", MimeType: "image/jpeg"},
			}},
			core.NewUserText("Thanks", 3),
			&core.CompactionSummaryMessage{Summary: "not for the model"},
		},
		Tools: []llm.ToolSpec{{
			Name:        "read",
			Description: "Read a file",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`),
		}},
		Thinking: llm.ThinkingHigh,
	}
}

func TestAnthropicRequestMapping(t *testing.T) {
	srv := llmtest.NewAnthropicServer(t, llmtest.Text("ok"))
	if _, err := newProvider("anthropic", srv).Stream(context.Background(), conversation("claude-test"), nil); err != nil {
		t.Fatal(err)
	}
	req := srv.Requests()[0]
	if req.Header.Get("X-Api-Key") != testKey || req.Header.Get("Anthropic-Version") == "" {
		t.Errorf("headers = %v", req.Header)
	}
	jsonEqual(t, req.Body, `{
		"model": "claude-test",
		"max_tokens": 64000,
		"stream": true,
		"system": [{"type": "text", "text": "You are Switchboard.", "cache_control": {"type": "ephemeral"}}],
		"thinking": {"type": "enabled", "budget_tokens": 10000},
		"messages": [
			{"role": "user", "content": [{"type": "text", "text": "Read the file"}]},
			{"role": "user", "content": [
				{"type": "text", "text": "What's in this screenshot?"},
				{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
			]},
			{"role": "assistant", "content": [
				{"type": "thinking", "thinking": "I should read it", "signature": "sig-1"},
				{"type": "redacted_thinking", "data": "ENCRYPTED"},
				{"type": "text", "text": "Let me read it."},
				{"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "main.go"}},
				{"type": "tool_use", "id": "toolu_2", "name": "screenshot", "input": {}}
			]},
			{"role": "user", "content": [
				{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "package main"}]},
				{"type": "tool_result", "tool_use_id": "toolu_2", "is_error": true, "content": [
					{"type": "text", "text": "captured"},
					{"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "AAAA"}}
				]}
			]},
			{"role": "user", "content": [{"type": "text", "text": "Thanks", "cache_control": {"type": "ephemeral"}}]}
		],
		"tools": [{
			"name": "read",
			"description": "Read a file",
			"input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"], "additionalProperties": false}
		}]
	}`)
}

func TestOpenAIRequestMapping(t *testing.T) {
	srv := llmtest.NewOpenAIServer(t, llmtest.Text("ok"))
	if _, err := newProvider("openai", srv).Stream(context.Background(), conversation("gpt-test"), nil); err != nil {
		t.Fatal(err)
	}
	req := srv.Requests()[0]
	if req.Header.Get("Authorization") != "Bearer "+testKey {
		t.Errorf("headers = %v", req.Header)
	}
	jsonEqual(t, req.Body, `{
		"model": "gpt-test",
		"stream": true,
		"stream_options": {"include_usage": true},
		"max_tokens": 64000,
		"reasoning_effort": "high",
		"messages": [
			{"role": "system", "content": "You are Switchboard."},
			{"role": "user", "content": "Read the file"},
			{"role": "user", "content": [
				{"type": "text", "text": "What's in this screenshot?"},
				{"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
			]},
			{"role": "assistant", "content": "Let me read it.", "tool_calls": [
				{"id": "toolu_1", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"main.go\"}"}},
				{"id": "toolu_2", "type": "function", "function": {"name": "screenshot", "arguments": "{}"}}
			]},
			{"role": "tool", "tool_call_id": "toolu_1", "content": "package main"},
			{"role": "tool", "tool_call_id": "toolu_2", "content": "captured\n[image omitted]"},
			{"role": "user", "content": "Thanks"}
		],
		"tools": [{"type": "function", "function": {
			"name": "read",
			"description": "Read a file",
			"parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"], "additionalProperties": false}
		}}]
	}`)
}

func TestAnthropicTokenLimits(t *testing.T) {
	tests := []struct {
		name              string
		reqMax, modelMax  int
		thinking          llm.ThinkingLevel
		wantMax           float64
		wantBudget        float64 // 0: no thinking member
		wantThinkingField bool
	}{
		{"default", 0, 0, "", 8192, 0, false},
		{"model cap", 0, 32000, "", 32000, 0, false},
		{"request cap", 1000, 32000, llm.ThinkingOff, 1000, 0, false},
		{"low grows max", 0, 0, llm.ThinkingLow, 8192, 1024, true},
		{"medium", 0, 0, llm.ThinkingMedium, 8192, 4096, true},
		{"high grows max", 0, 0, llm.ThinkingHigh, 14096, 10000, true},
		{"xhigh within model cap", 0, 20000, llm.ThinkingXHigh, 20000, 10000, true},
		{"xhigh", 0, 128000, llm.ThinkingXHigh, 128000, 32000, true},
		{"minimal", 2000, 0, llm.ThinkingMinimal, 5120, 1024, true},
		{"cap fits a small budget", 0, 1500, llm.ThinkingLow, 1500, 1024, true},
		{"cap too small for thinking", 0, 1000, llm.ThinkingLow, 1000, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewAnthropicServer(t, llmtest.Text("ok"))
			req := userRequest("hi")
			req.MaxTokens = tt.reqMax
			req.Model.MaxTokens = tt.modelMax
			req.Thinking = tt.thinking
			if _, err := newProvider("anthropic", srv).Stream(context.Background(), req, nil); err != nil {
				t.Fatal(err)
			}
			body := srv.Requests()[0].JSON(t)
			if body["max_tokens"] != tt.wantMax {
				t.Errorf("max_tokens = %v, want %v", body["max_tokens"], tt.wantMax)
			}
			th, ok := body["thinking"].(map[string]any)
			if ok != tt.wantThinkingField {
				t.Fatalf("thinking = %v", body["thinking"])
			}
			if ok && th["budget_tokens"] != tt.wantBudget {
				t.Errorf("budget = %v, want %v", th["budget_tokens"], tt.wantBudget)
			}
		})
	}
}

func TestOpenAIRequestOptions(t *testing.T) {
	tests := []struct {
		name     string
		thinking llm.ThinkingLevel
		max      int
		want     map[string]any
		absent   []string
	}{
		{"plain", "", 0, map[string]any{}, []string{"reasoning_effort", "max_tokens", "max_completion_tokens"}},
		{"off", llm.ThinkingOff, 100, map[string]any{"max_tokens": 100.0}, []string{"reasoning_effort"}},
		{"minimal", llm.ThinkingMinimal, 0, map[string]any{"reasoning_effort": "minimal"}, nil},
		{"xhigh", llm.ThinkingXHigh, 0, map[string]any{"reasoning_effort": "xhigh"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewOpenAIServer(t, llmtest.Text("ok"))
			req := userRequest("hi")
			req.Thinking, req.MaxTokens = tt.thinking, tt.max
			if _, err := newProvider("openai", srv).Stream(context.Background(), req, nil); err != nil {
				t.Fatal(err)
			}
			body := srv.Requests()[0].JSON(t)
			for k, v := range tt.want {
				if body[k] != v {
					t.Errorf("%s = %v, want %v", k, body[k], v)
				}
			}
			for _, k := range tt.absent {
				if _, ok := body[k]; ok {
					t.Errorf("%s = %v, want absent", k, body[k])
				}
			}
		})
	}
}

func TestOpenAINoKeyNoAuthorization(t *testing.T) {
	srv := llmtest.NewOpenAIServer(t, llmtest.Text("ok"))
	cfg := srv.Config("")
	p := llm.NewOpenAI("ollama", cfg, llm.ProviderOptions{HTTPClient: srv.Client()})
	if _, err := p.Stream(context.Background(), userRequest("hi"), nil); err != nil {
		t.Fatal(err)
	}
	if h := srv.Requests()[0].Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization = %q, want none for a keyless local server", h)
	}
}

func TestBadToolSchema(t *testing.T) {
	for _, v := range vendors {
		t.Run(v.name, func(t *testing.T) {
			srv := v.newServer(t)
			req := userRequest("hi")
			req.Tools = []llm.ToolSpec{{Name: "broken", Parameters: json.RawMessage(`[1,2]`)}}
			rec := &recorder{}
			msg, err := newProvider("prov", srv).Stream(context.Background(), req, rec.emit)
			e := asError(t, err)
			if e.Retryable || msg.StopReason != core.StopReasonError || len(srv.Requests()) != 0 {
				t.Errorf("error = %+v, message = %+v", e, msg)
			}
			wantTypes(t, rec, "start", "error(error)")
		})
	}
}

func TestToolWithoutSchema(t *testing.T) {
	for _, v := range vendors {
		t.Run(v.name, func(t *testing.T) {
			srv := v.newServer(t, llmtest.Text("ok"))
			req := userRequest("hi")
			req.Tools = []llm.ToolSpec{{Name: "now"}}
			if _, err := newProvider("prov", srv).Stream(context.Background(), req, nil); err != nil {
				t.Fatal(err)
			}
			tools := srv.Requests()[0].JSON(t)["tools"].([]any)
			b, _ := json.Marshal(tools[0])
			want := `{"name":"now","input_schema":{"type":"object","properties":{}}}`
			if v.api == llm.APIOpenAICompletions {
				want = `{"type":"function","function":{"name":"now","parameters":{"type":"object","properties":{}}}}`
			}
			jsonEqual(t, b, want)
		})
	}
}

func TestAnthropicThinkingOffWhenToolTurnHadNone(t *testing.T) {
	turn := func(withThinking bool) *llm.Request {
		call := &core.AssistantMessage{Content: core.Content{&core.ToolCall{ID: "t1", Name: "read"}}}
		if withThinking {
			call.Content = append(core.Content{&core.ThinkingContent{Thinking: "plan", ThinkingSignature: "s"}}, call.Content...)
		}
		req := userRequest("read it")
		req.Thinking = llm.ThinkingMedium
		req.Messages = append(req.Messages, call, &core.ToolResultMessage{ToolCallID: "t1", ToolName: "read", Content: core.Content{&core.TextContent{Text: "data"}}})
		return req
	}
	for _, tt := range []struct {
		name         string
		withThinking bool
		wantMax      float64
	}{
		{"continued with thinking", true, 8192},
		{"tool turn without thinking", false, 8192},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewAnthropicServer(t, llmtest.Text("ok"))
			if _, err := newProvider("anthropic", srv).Stream(context.Background(), turn(tt.withThinking), nil); err != nil {
				t.Fatal(err)
			}
			body := srv.Requests()[0].JSON(t)
			if _, ok := body["thinking"]; ok != tt.withThinking {
				t.Errorf("thinking = %v, want present %v", body["thinking"], tt.withThinking)
			}
			if body["max_tokens"] != tt.wantMax {
				t.Errorf("max_tokens = %v", body["max_tokens"])
			}
		})
	}
}
