package llm

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// Defaults of the Anthropic request.
const (
	// anthropicDefaultMaxTokens caps a response when neither the request
	// nor the model config says; the API requires a cap.
	anthropicDefaultMaxTokens = 8192
	// thinkingHeadroom is the room left for the answer above the thinking
	// budget when max_tokens has to grow to fit it.
	thinkingHeadroom = 4096
	// minThinkingBudget is the smallest budget the API accepts.
	minThinkingBudget = 1024
)

// thinkingBudget returns the Anthropic thinking budget, in tokens, of a
// thinking level: minimal and low 1024, medium 4096, high 10000, xhigh
// 32000; off, empty or unknown levels 0 (no thinking).
func thinkingBudget(level ThinkingLevel) int {
	switch level {
	case ThinkingMinimal, ThinkingLow:
		return minThinkingBudget
	case ThinkingMedium:
		return 4096
	case ThinkingHigh:
		return 10000
	case ThinkingXHigh:
		return 32000
	}
	return 0
}

// anthropicRequest is the body of a streaming Messages API call.
type anthropicRequest struct {
	Model     string             `json:"model"`
	MaxTokens int                `json:"max_tokens"`
	Stream    bool               `json:"stream"`
	System    []anthropicText    `json:"system,omitempty"`
	Thinking  *anthropicThinking `json:"thinking,omitempty"`
	Messages  []anthropicMessage `json:"messages"`
	Tools     []anthropicTool    `json:"tools,omitempty"`
}

type anthropicThinking struct {
	Type         string `json:"type"` // "enabled"
	BudgetTokens int    `json:"budget_tokens"`
}

type anthropicMessage struct {
	Role    string `json:"role"` // "user" or "assistant"
	Content []any  `json:"content"`
}

// anthropicCache marks a prompt-cache breakpoint.
type anthropicCache struct {
	Type string `json:"type"` // "ephemeral"
}

var ephemeral = &anthropicCache{Type: "ephemeral"}

// The content blocks we send, one type each, so every member the API
// requires is always present.
type (
	anthropicText struct {
		Type         string          `json:"type"` // "text"
		Text         string          `json:"text"`
		CacheControl *anthropicCache `json:"cache_control,omitempty"`
	}
	anthropicImage struct {
		Type         string               `json:"type"` // "image"
		Source       anthropicImageSource `json:"source"`
		CacheControl *anthropicCache      `json:"cache_control,omitempty"`
	}
	anthropicImageSource struct {
		Type      string `json:"type"` // "base64"
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
	}
	anthropicThinkingBlock struct {
		Type      string `json:"type"` // "thinking"
		Thinking  string `json:"thinking"`
		Signature string `json:"signature"`
	}
	anthropicRedactedThinking struct {
		Type string `json:"type"` // "redacted_thinking"
		Data string `json:"data"`
	}
	anthropicToolUse struct {
		Type  string `json:"type"` // "tool_use"
		ID    string `json:"id"`
		Name  string `json:"name"`
		Input any    `json:"input"`
	}
	anthropicToolResult struct {
		Type         string          `json:"type"` // "tool_result"
		ToolUseID    string          `json:"tool_use_id"`
		IsError      bool            `json:"is_error,omitempty"`
		Content      []any           `json:"content,omitempty"`
		CacheControl *anthropicCache `json:"cache_control,omitempty"`
	}
	anthropicTool struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
)

// anthropicParams maps a Request to the Messages API.
func anthropicParams(req *Request) (*anthropicRequest, error) {
	p := &anthropicRequest{
		Model:    req.Model.ID,
		Stream:   true,
		Messages: anthropicMessages(req.Messages),
	}
	level := req.Thinking
	if !thinkingContinues(p.Messages) {
		level = ThinkingOff
	}
	maxTokens, budget := anthropicTokenLimits(req.MaxTokens, req.Model.MaxTokens, level)
	p.MaxTokens = maxTokens
	if budget > 0 {
		p.Thinking = &anthropicThinking{Type: "enabled", BudgetTokens: budget}
	}
	if req.System != "" {
		// A cache breakpoint after the system prompt (and one after the
		// last user turn, below) lets the next call of a tool loop read
		// the whole prefix from the prompt cache.
		p.System = []anthropicText{{Type: "text", Text: req.System, CacheControl: ephemeral}}
	}
	if n := len(p.Messages); n > 0 && p.Messages[n-1].Role == "user" {
		blocks := p.Messages[n-1].Content
		switch b := blocks[len(blocks)-1].(type) {
		case *anthropicText:
			b.CacheControl = ephemeral
		case *anthropicImage:
			b.CacheControl = ephemeral
		case *anthropicToolResult:
			b.CacheControl = ephemeral
		}
	}
	for _, t := range req.Tools {
		tool, err := anthropicToolOf(t)
		if err != nil {
			return p, err
		}
		p.Tools = append(p.Tools, tool)
	}
	return p, nil
}

// thinkingContinues reports whether thinking may be enabled for msgs. When
// the request continues a tool loop (it ends with tool results), the API
// requires the assistant turn that called the tools to start with a
// thinking block; a turn made without thinking (thinking was switched on
// since, or another provider made it) cannot be continued with thinking.
func thinkingContinues(msgs []anthropicMessage) bool {
	n := len(msgs)
	if n < 2 || msgs[n-1].Role != "user" {
		return true
	}
	for _, blk := range msgs[n-1].Content {
		if _, ok := blk.(*anthropicToolResult); !ok {
			return true
		}
	}
	prev := msgs[n-2]
	if prev.Role != "assistant" || len(prev.Content) == 0 {
		return true
	}
	switch prev.Content[0].(type) {
	case *anthropicThinkingBlock, *anthropicRedactedThinking:
		return true
	}
	return false
}

// anthropicTokenLimits returns max_tokens and the thinking budget (0 for
// none). max_tokens is the request's cap, else the model's, else 8192; with
// thinking it grows to budget+4096 (within the model's cap) because the
// budget counts against it, and the budget shrinks if the cap is too small.
func anthropicTokenLimits(reqMax, modelMax int, level ThinkingLevel) (maxTokens, budget int) {
	maxTokens = reqMax
	if maxTokens <= 0 {
		maxTokens = modelMax
	}
	if maxTokens <= 0 {
		maxTokens = anthropicDefaultMaxTokens
	}
	budget = thinkingBudget(level)
	if budget == 0 {
		return maxTokens, 0
	}
	if maxTokens < budget+thinkingHeadroom {
		maxTokens = budget + thinkingHeadroom
		if modelMax > 0 && maxTokens > modelMax {
			maxTokens = modelMax
		}
	}
	if budget >= maxTokens {
		budget = maxTokens / 2
	}
	if budget < minThinkingBudget {
		return maxTokens, 0
	}
	return maxTokens, budget
}

// anthropicMessages maps the conversation. Tool results become tool_result
// blocks of a user message, consecutive results sharing one message as the
// API requires. Messages that end up empty are left out, and so are
// message types the API has no place for.
func anthropicMessages(msgs []core.Message) []anthropicMessage {
	out := make([]anthropicMessage, 0, len(msgs))
	toolResults := false // the last message in out holds only tool results
	for _, m := range msgs {
		switch m := m.(type) {
		case *core.UserMessage:
			if m == nil {
				continue
			}
			if blocks := anthropicUserBlocks(m.Content); len(blocks) > 0 {
				out = append(out, anthropicMessage{Role: "user", Content: blocks})
				toolResults = false
			}
		case *core.AssistantMessage:
			if m == nil {
				continue
			}
			if blocks := anthropicAssistantBlocks(m.Content); len(blocks) > 0 {
				out = append(out, anthropicMessage{Role: "assistant", Content: blocks})
				toolResults = false
			}
		case *core.ToolResultMessage:
			if m == nil {
				continue
			}
			blk := anthropicToolResultOf(m)
			if toolResults {
				last := &out[len(out)-1]
				last.Content = append(last.Content, blk)
			} else {
				out = append(out, anthropicMessage{Role: "user", Content: []any{blk}})
				toolResults = true
			}
		}
	}
	return out
}

func anthropicUserBlocks(c core.UserContent) []any {
	if c.Blocks == nil {
		if strings.TrimSpace(c.Text) == "" {
			return nil
		}
		return []any{&anthropicText{Type: "text", Text: c.Text}}
	}
	var out []any
	for _, blk := range c.Blocks {
		switch b := blk.(type) {
		case *core.TextContent:
			// The API rejects empty and whitespace-only text blocks.
			if b != nil && strings.TrimSpace(b.Text) != "" {
				out = append(out, &anthropicText{Type: "text", Text: b.Text})
			}
		case *core.ImageContent:
			if b != nil && b.Data != "" {
				out = append(out, anthropicImageOf(b))
			}
		}
	}
	return out
}

// anthropicAssistantBlocks maps an earlier reply. Text goes back without
// its signature; thinking goes back only when signed, since the API
// rejects unsigned thinking (a reply from another provider, or one cut
// short); redacted thinking goes back as the encrypted data it came as.
func anthropicAssistantBlocks(c core.Content) []any {
	var out []any
	for _, blk := range c {
		switch b := blk.(type) {
		case *core.TextContent:
			if b != nil && strings.TrimSpace(b.Text) != "" {
				out = append(out, &anthropicText{Type: "text", Text: b.Text})
			}
		case *core.ThinkingContent:
			switch {
			case b == nil || b.ThinkingSignature == "":
			case isRedacted(b):
				out = append(out, &anthropicRedactedThinking{Type: "redacted_thinking", Data: b.ThinkingSignature})
			default:
				out = append(out, &anthropicThinkingBlock{Type: "thinking", Thinking: b.Thinking, Signature: b.ThinkingSignature})
			}
		case *core.ToolCall:
			if b == nil {
				continue
			}
			var args any = b.Arguments
			if b.Arguments == nil {
				args = map[string]any{}
			}
			out = append(out, &anthropicToolUse{Type: "tool_use", ID: b.ID, Name: b.Name, Input: args})
		}
	}
	return out
}

// isRedacted reports a thinking block built by StartRedactedThinking.
func isRedacted(t *core.ThinkingContent) bool {
	return string(t.Extra["redacted"]) == "true"
}

func anthropicImageOf(b *core.ImageContent) *anthropicImage {
	return &anthropicImage{Type: "image", Source: anthropicImageSource{Type: "base64", MediaType: b.MimeType, Data: b.Data}}
}

func anthropicToolResultOf(m *core.ToolResultMessage) *anthropicToolResult {
	r := &anthropicToolResult{Type: "tool_result", ToolUseID: m.ToolCallID, IsError: m.IsError}
	for _, blk := range m.Content {
		switch b := blk.(type) {
		case *core.TextContent:
			if b != nil && b.Text != "" {
				r.Content = append(r.Content, &anthropicText{Type: "text", Text: b.Text})
			}
		case *core.ImageContent:
			if b != nil && b.Data != "" {
				r.Content = append(r.Content, anthropicImageOf(b))
			}
		}
	}
	return r
}

// anthropicToolOf maps a tool; its JSON Schema becomes input_schema, an
// object schema ("type": "object", with "properties" if it had none).
func anthropicToolOf(t ToolSpec) (anthropicTool, error) {
	params := t.Parameters
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage(`{}`)
	}
	raw, err := anthropicSchemas.get(params, anthropicInputSchema)
	if err != nil {
		return anthropicTool{}, fmt.Errorf("tool %q: parameters must be a JSON Schema object: %w", t.Name, err)
	}
	return anthropicTool{Name: t.Name, Description: t.Description, InputSchema: raw}, nil
}

// anthropicSchemas holds the input schemas anthropicInputSchema made.
var anthropicSchemas schemaCache

// anthropicInputSchema makes a tool's parameters an input_schema: an
// object schema with "properties".
func anthropicInputSchema(params json.RawMessage) (json.RawMessage, error) {
	schema := map[string]json.RawMessage{}
	if err := json.Unmarshal(params, &schema); err != nil {
		return nil, err
	}
	schema["type"] = json.RawMessage(`"object"`)
	if p, ok := schema["properties"]; !ok || string(p) == "null" {
		schema["properties"] = json.RawMessage(`{}`)
	}
	return json.Marshal(schema)
}
