package llm

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"

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

// anthropicParams maps a Request to the Messages API.
func anthropicParams(req *Request) (anthropic.MessageNewParams, error) {
	p := anthropic.MessageNewParams{
		Model:    anthropic.Model(req.Model.ID),
		Messages: anthropicMessages(req.Messages),
	}
	level := req.Thinking
	if !thinkingContinues(p.Messages) {
		level = ThinkingOff
	}
	maxTokens, budget := anthropicTokenLimits(req.MaxTokens, req.Model.MaxTokens, level)
	p.MaxTokens = int64(maxTokens)
	if budget > 0 {
		p.Thinking = anthropic.ThinkingConfigParamOfEnabled(int64(budget))
	}
	if req.System != "" {
		// A cache breakpoint after the system prompt (and one after the
		// last user turn, below) lets the next call of a tool loop read
		// the whole prefix from the prompt cache.
		p.System = []anthropic.TextBlockParam{{Text: req.System, CacheControl: anthropic.NewCacheControlEphemeralParam()}}
	}
	if n := len(p.Messages); n > 0 && p.Messages[n-1].Role == anthropic.MessageParamRoleUser {
		blocks := p.Messages[n-1].Content
		if cc := blocks[len(blocks)-1].GetCacheControl(); cc != nil {
			*cc = anthropic.NewCacheControlEphemeralParam()
		}
	}
	for _, t := range req.Tools {
		tool, err := anthropicTool(t)
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
func thinkingContinues(msgs []anthropic.MessageParam) bool {
	n := len(msgs)
	if n < 2 || msgs[n-1].Role != anthropic.MessageParamRoleUser {
		return true
	}
	for _, blk := range msgs[n-1].Content {
		if blk.OfToolResult == nil {
			return true
		}
	}
	prev := msgs[n-2]
	if prev.Role != anthropic.MessageParamRoleAssistant || len(prev.Content) == 0 {
		return true
	}
	return prev.Content[0].OfThinking != nil || prev.Content[0].OfRedactedThinking != nil
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
func anthropicMessages(msgs []core.Message) []anthropic.MessageParam {
	out := make([]anthropic.MessageParam, 0, len(msgs))
	toolResults := false // the last message in out holds only tool results
	for _, m := range msgs {
		switch m := m.(type) {
		case *core.UserMessage:
			if m == nil {
				continue
			}
			if blocks := anthropicUserBlocks(m.Content); len(blocks) > 0 {
				out = append(out, anthropic.NewUserMessage(blocks...))
				toolResults = false
			}
		case *core.AssistantMessage:
			if m == nil {
				continue
			}
			if blocks := anthropicAssistantBlocks(m.Content); len(blocks) > 0 {
				out = append(out, anthropic.NewAssistantMessage(blocks...))
				toolResults = false
			}
		case *core.ToolResultMessage:
			if m == nil {
				continue
			}
			blk := anthropicToolResult(m)
			if toolResults {
				last := &out[len(out)-1]
				last.Content = append(last.Content, blk)
			} else {
				out = append(out, anthropic.NewUserMessage(blk))
				toolResults = true
			}
		}
	}
	return out
}

func anthropicUserBlocks(c core.UserContent) []anthropic.ContentBlockParamUnion {
	if c.Blocks == nil {
		if strings.TrimSpace(c.Text) == "" {
			return nil
		}
		return []anthropic.ContentBlockParamUnion{anthropic.NewTextBlock(c.Text)}
	}
	var out []anthropic.ContentBlockParamUnion
	for _, blk := range c.Blocks {
		switch b := blk.(type) {
		case *core.TextContent:
			// The API rejects empty and whitespace-only text blocks.
			if b != nil && strings.TrimSpace(b.Text) != "" {
				out = append(out, anthropic.NewTextBlock(b.Text))
			}
		case *core.ImageContent:
			if b != nil && b.Data != "" {
				out = append(out, anthropic.NewImageBlockBase64(b.MimeType, b.Data))
			}
		}
	}
	return out
}

// anthropicAssistantBlocks maps an earlier reply. Text goes back without
// its signature; thinking goes back only when signed, since the API
// rejects unsigned thinking (a reply from another provider, or one cut
// short); redacted thinking goes back as the encrypted data it came as.
func anthropicAssistantBlocks(c core.Content) []anthropic.ContentBlockParamUnion {
	var out []anthropic.ContentBlockParamUnion
	for _, blk := range c {
		switch b := blk.(type) {
		case *core.TextContent:
			if b != nil && strings.TrimSpace(b.Text) != "" {
				out = append(out, anthropic.NewTextBlock(b.Text))
			}
		case *core.ThinkingContent:
			switch {
			case b == nil || b.ThinkingSignature == "":
			case isRedacted(b):
				out = append(out, anthropic.NewRedactedThinkingBlock(b.ThinkingSignature))
			default:
				out = append(out, anthropic.NewThinkingBlock(b.ThinkingSignature, b.Thinking))
			}
		case *core.ToolCall:
			if b == nil {
				continue
			}
			var args any = b.Arguments
			if b.Arguments == nil {
				args = map[string]any{}
			}
			out = append(out, anthropic.NewToolUseBlock(b.ID, args, b.Name))
		}
	}
	return out
}

// isRedacted reports a thinking block built by StartRedactedThinking.
func isRedacted(t *core.ThinkingContent) bool {
	return string(t.Extra["redacted"]) == "true"
}

func anthropicToolResult(m *core.ToolResultMessage) anthropic.ContentBlockParamUnion {
	r := anthropic.ToolResultBlockParam{ToolUseID: m.ToolCallID}
	if m.IsError {
		r.IsError = anthropic.Bool(true)
	}
	for _, blk := range m.Content {
		switch b := blk.(type) {
		case *core.TextContent:
			if b != nil && b.Text != "" {
				r.Content = append(r.Content, anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: b.Text}})
			}
		case *core.ImageContent:
			if b != nil && b.Data != "" {
				r.Content = append(r.Content, anthropic.ToolResultBlockParamContentUnion{OfImage: &anthropic.ImageBlockParam{
					Source: anthropic.ImageBlockParamSourceUnion{OfBase64: &anthropic.Base64ImageSourceParam{
						Data:      b.Data,
						MediaType: anthropic.Base64ImageSourceMediaType(b.MimeType),
					}},
				}})
			}
		}
	}
	return anthropic.ContentBlockParamUnion{OfToolResult: &r}
}

// anthropicTool maps a tool; its JSON Schema becomes input_schema, whose
// properties and required members the SDK models as fields and the rest
// (definitions, additionalProperties, ...) as extra fields.
func anthropicTool(t ToolSpec) (anthropic.ToolUnionParam, error) {
	var schema anthropic.ToolInputSchemaParam
	if len(t.Parameters) > 0 && string(t.Parameters) != "null" {
		var m map[string]any
		if err := json.Unmarshal(t.Parameters, &m); err != nil {
			return anthropic.ToolUnionParam{}, fmt.Errorf("tool %q: parameters must be a JSON Schema object: %w", t.Name, err)
		}
		for k, v := range m {
			switch k {
			case "type":
			case "properties":
				schema.Properties = v
			case "required":
				schema.Required = stringList(v)
			default:
				if schema.ExtraFields == nil {
					schema.ExtraFields = map[string]any{}
				}
				schema.ExtraFields[k] = v
			}
		}
	}
	if schema.Properties == nil {
		schema.Properties = map[string]any{}
	}
	tool := anthropic.ToolParam{Name: t.Name, InputSchema: schema}
	if t.Description != "" {
		tool.Description = anthropic.String(t.Description)
	}
	return anthropic.ToolUnionParam{OfTool: &tool}, nil
}

// stringList returns the strings of a decoded JSON array.
func stringList(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
