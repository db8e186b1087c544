package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// imageOmitted stands in for an image in a tool result: chat completions
// take only text there.
const imageOmitted = "[image omitted]"

// openaiRequest is the body of a streaming chat completion.
type openaiRequest struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens           int             `json:"max_tokens,omitempty"`
	MaxCompletionTokens int             `json:"max_completion_tokens,omitempty"`
	ReasoningEffort     string          `json:"reasoning_effort,omitempty"`
	Messages            []openaiMessage `json:"messages"`
	Tools               []openaiTool    `json:"tools,omitempty"`
}

// openaiMessage is a system, user, assistant or tool message. Content is
// a string or, for a user message with an image, a list of parts; nil
// leaves it out (an assistant message that only calls tools).
type openaiMessage struct {
	Role       string           `json:"role"`
	Content    any              `json:"content,omitempty"`
	ToolCalls  []openaiToolCall `json:"tool_calls,omitempty"`
	ToolCallID string           `json:"tool_call_id,omitempty"`
}

// openaiPart is a part of a user message: text, or an image by URL.
type openaiPart struct {
	Type     string          `json:"type"` // "text" or "image_url"
	Text     string          `json:"text,omitempty"`
	ImageURL *openaiImageURL `json:"image_url,omitempty"`
}

type openaiImageURL struct {
	URL string `json:"url"`
}

type openaiToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"` // "function"
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type openaiTool struct {
	Type     string `json:"type"` // "function"
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// openaiParams maps a Request to chat completions. maxCompletionTokens
// picks the field that carries the response cap: OpenAI's own API wants
// max_completion_tokens (its reasoning models reject max_tokens), while
// Ollama, vLLM and llama.cpp servers have long understood max_tokens.
func openaiParams(req *Request, maxCompletionTokens bool) (*openaiRequest, error) {
	p := &openaiRequest{Model: req.Model.ID, Stream: true}
	p.StreamOptions.IncludeUsage = true
	p.Messages = make([]openaiMessage, 0, len(req.Messages)+1)
	if req.System != "" {
		p.Messages = append(p.Messages, openaiMessage{Role: "system", Content: req.System})
	}
	p.Messages = appendOpenAIMessages(p.Messages, req.Messages)
	for _, t := range req.Tools {
		tool, err := openaiToolOf(t)
		if err != nil {
			return p, err
		}
		p.Tools = append(p.Tools, tool)
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = req.Model.MaxTokens
	}
	if maxTokens > 0 {
		if maxCompletionTokens {
			p.MaxCompletionTokens = maxTokens
		} else {
			p.MaxTokens = maxTokens
		}
	}
	p.ReasoningEffort = reasoningEffort(req.Thinking)
	return p, nil
}

// reasoningEffort maps a thinking level to reasoning_effort; "" (off, or
// not set) leaves the field out so models without reasoning accept the
// request.
func reasoningEffort(level ThinkingLevel) string {
	switch level {
	case ThinkingMinimal, ThinkingLow, ThinkingMedium, ThinkingHigh, ThinkingXHigh:
		return string(level)
	}
	return ""
}

// appendOpenAIMessages maps the conversation. Thinking is not sent back
// (chat completions have no place for it); messages that end up empty and
// message types the API has no place for are left out.
func appendOpenAIMessages(out []openaiMessage, msgs []core.Message) []openaiMessage {
	for _, m := range msgs {
		switch m := m.(type) {
		case *core.UserMessage:
			if m == nil {
				continue
			}
			if u, ok := openaiUser(m.Content); ok {
				out = append(out, u)
			}
		case *core.AssistantMessage:
			if m == nil {
				continue
			}
			if a, ok := openaiAssistant(m.Content); ok {
				out = append(out, a)
			}
		case *core.ToolResultMessage:
			if m == nil {
				continue
			}
			out = append(out, openaiMessage{Role: "tool", ToolCallID: m.ToolCallID, Content: toolResultText(m.Content)})
		}
	}
	return out
}

// openaiUser maps a user message: a plain string when it is one piece of
// text, else content parts with images as data URLs.
func openaiUser(c core.UserContent) (openaiMessage, bool) {
	if c.Blocks == nil {
		if strings.TrimSpace(c.Text) == "" {
			return openaiMessage{}, false
		}
		return openaiMessage{Role: "user", Content: c.Text}, true
	}
	var parts []openaiPart
	for _, blk := range c.Blocks {
		switch b := blk.(type) {
		case *core.TextContent:
			if b != nil && b.Text != "" {
				parts = append(parts, openaiPart{Type: "text", Text: b.Text})
			}
		case *core.ImageContent:
			if b != nil && b.Data != "" {
				parts = append(parts, openaiPart{Type: "image_url", ImageURL: &openaiImageURL{URL: "data:" + b.MimeType + ";base64," + b.Data}})
			}
		}
	}
	switch {
	case len(parts) == 0:
		return openaiMessage{}, false
	case len(parts) == 1 && parts[0].Type == "text":
		// Some local servers still take only string content.
		return openaiMessage{Role: "user", Content: parts[0].Text}, true
	}
	return openaiMessage{Role: "user", Content: parts}, true
}

// openaiAssistant maps an earlier reply: its text, joined, and its tool
// calls with their arguments as a JSON string.
func openaiAssistant(c core.Content) (openaiMessage, bool) {
	var text strings.Builder
	a := openaiMessage{Role: "assistant"}
	for _, blk := range c {
		switch b := blk.(type) {
		case *core.TextContent:
			if b != nil {
				text.WriteString(b.Text)
			}
		case *core.ToolCall:
			if b == nil {
				continue
			}
			call := openaiToolCall{ID: b.ID, Type: "function"}
			call.Function.Name, call.Function.Arguments = b.Name, argumentsJSON(b.Arguments)
			a.ToolCalls = append(a.ToolCalls, call)
		}
	}
	if strings.TrimSpace(text.String()) != "" {
		a.Content = text.String()
	}
	return a, a.Content != nil || len(a.ToolCalls) > 0
}

// argumentsJSON encodes tool-call arguments; nil is {}.
func argumentsJSON(args map[string]any) string {
	if args == nil {
		return "{}"
	}
	b, err := json.Marshal(args)
	if err != nil {
		return "{}"
	}
	return string(b)
}

// toolResultText is a tool result's text, images replaced by a note, as a
// tool message carries only text. Servers reject an empty tool message, so
// a result without output says so.
func toolResultText(c core.Content) string {
	var parts []string
	for _, blk := range c {
		switch b := blk.(type) {
		case *core.TextContent:
			if b != nil && b.Text != "" {
				parts = append(parts, b.Text)
			}
		case *core.ImageContent:
			parts = append(parts, imageOmitted)
		}
	}
	if len(parts) == 0 {
		return "(no output)"
	}
	return strings.Join(parts, "\n")
}

// emptyObjectSchema is the parameters of a tool that declares none.
var emptyObjectSchema = json.RawMessage(`{"type":"object","properties":{}}`)

// openaiToolOf maps a tool to a function tool; its JSON Schema goes as
// it is, once checked to be an object.
func openaiToolOf(t ToolSpec) (openaiTool, error) {
	tool := openaiTool{Type: "function"}
	tool.Function.Name, tool.Function.Description, tool.Function.Parameters = t.Name, t.Description, emptyObjectSchema
	if len(t.Parameters) > 0 && string(t.Parameters) != "null" {
		raw, err := openaiSchemas.get(t.Parameters, checkObjectSchema)
		if err != nil {
			return openaiTool{}, fmt.Errorf("tool %q: parameters must be a JSON Schema object: %w", t.Name, err)
		}
		tool.Function.Parameters = raw
	}
	return tool, nil
}

// openaiSchemas holds the tool schemas checkObjectSchema passed.
var openaiSchemas schemaCache

// checkObjectSchema returns a copy of params if it is a JSON object (a
// copy: the cache must not share the caller's bytes).
func checkObjectSchema(params json.RawMessage) (json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(params, &obj); err != nil {
		return nil, err
	}
	return bytes.Clone(params), nil
}
