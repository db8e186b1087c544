package llm

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// benchConversation is a warm session's request: a system prompt, 20
// turns of user text, an assistant reply with a tool call, its result and
// an answer, and two tools.
func benchConversation() *Request {
	req := &Request{Model: ModelConfig{ID: "m", MaxTokens: 8192}, System: "You are Switchboard. " + fmt.Sprintf("%0500d", 0)}
	for i := range 20 {
		req.Messages = append(req.Messages,
			core.NewUserText(fmt.Sprintf("Conversation info (untrusted metadata): {\"chat\": %d}\nplease look at file %d and tell me what it does", i, i), int64(i)),
			&core.AssistantMessage{Content: core.Content{
				&core.TextContent{Text: "Let me read it."},
				&core.ToolCall{ID: fmt.Sprintf("call_%d", i), Name: "read", Arguments: map[string]any{"path": fmt.Sprintf("f%d.go", i)}},
			}, StopReason: core.StopReasonToolUse},
			&core.ToolResultMessage{ToolCallID: fmt.Sprintf("call_%d", i), ToolName: "read", Content: core.Content{&core.TextContent{Text: fmt.Sprintf("package main // %0200d", i)}}},
			&core.AssistantMessage{Content: core.Content{&core.TextContent{Text: "It prints a greeting and exits; nothing else happens in it."}}, StopReason: core.StopReasonStop},
		)
	}
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"the file"}},"required":["path"]}`)
	req.Tools = []ToolSpec{{Name: "read", Description: "Read a file", Parameters: schema}, {Name: "write", Description: "Write a file", Parameters: schema}}
	return req
}

// BenchmarkAnthropicRequest builds and encodes the request body of a warm
// session's turn (80 messages).
func BenchmarkAnthropicRequest(b *testing.B) {
	req := benchConversation()
	b.ReportAllocs()
	for b.Loop() {
		p, err := anthropicParams(req)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenAIRequest is BenchmarkAnthropicRequest for chat completions.
func BenchmarkOpenAIRequest(b *testing.B) {
	req := benchConversation()
	b.ReportAllocs()
	for b.Loop() {
		p, err := openaiParams(req, false)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(p); err != nil {
			b.Fatal(err)
		}
	}
}
