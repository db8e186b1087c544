package llm

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/switchboardhq/switchboard/core"
)

// imageOmitted stands in for an image in a tool result: chat completions
// take only text there.
const imageOmitted = "[image omitted]"

// openaiParams maps a Request to chat completions. maxCompletionTokens
// picks the field that carries the response cap: OpenAI's own API wants
// max_completion_tokens (its reasoning models reject max_tokens), while
// Ollama, vLLM and llama.cpp servers have long understood max_tokens.
func openaiParams(req *Request, maxCompletionTokens bool) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(req.Model.ID),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	p.Messages = make([]openai.ChatCompletionMessageParamUnion, 0, len(req.Messages)+1)
	if req.System != "" {
		p.Messages = append(p.Messages, openai.SystemMessage(req.System))
	}
	p.Messages = appendOpenAIMessages(p.Messages, req.Messages)
	for _, t := range req.Tools {
		tool, err := openaiTool(t)
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
			p.MaxCompletionTokens = openai.Int(int64(maxTokens))
		} else {
			p.MaxTokens = openai.Int(int64(maxTokens))
		}
	}
	if effort := reasoningEffort(req.Thinking); effort != "" {
		p.ReasoningEffort = effort
	}
	return p, nil
}

// reasoningEffort maps a thinking level to reasoning_effort; "" (off, or
// not set) leaves the field out so models without reasoning accept the
// request.
func reasoningEffort(level ThinkingLevel) shared.ReasoningEffort {
	switch level {
	case ThinkingMinimal:
		return shared.ReasoningEffortMinimal
	case ThinkingLow:
		return shared.ReasoningEffortLow
	case ThinkingMedium:
		return shared.ReasoningEffortMedium
	case ThinkingHigh:
		return shared.ReasoningEffortHigh
	case ThinkingXHigh:
		return shared.ReasoningEffortXhigh
	}
	return ""
}

// appendOpenAIMessages maps the conversation. Thinking is not sent back
// (chat completions have no place for it); messages that end up empty and
// message types the API has no place for are left out.
func appendOpenAIMessages(out []openai.ChatCompletionMessageParamUnion, msgs []core.Message) []openai.ChatCompletionMessageParamUnion {
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
			out = append(out, openai.ChatCompletionMessageParamUnion{OfTool: &openai.ChatCompletionToolMessageParam{
				ToolCallID: m.ToolCallID,
				Content:    openai.ChatCompletionToolMessageParamContentUnion{OfString: openai.String(toolResultText(m.Content))},
			}})
		}
	}
	return out
}

// openaiUser maps a user message: a plain string when it is one piece of
// text, else content parts with images as data URLs.
func openaiUser(c core.UserContent) (openai.ChatCompletionMessageParamUnion, bool) {
	if c.Blocks == nil {
		if strings.TrimSpace(c.Text) == "" {
			return openai.ChatCompletionMessageParamUnion{}, false
		}
		return openai.UserMessage(c.Text), true
	}
	var parts []openai.ChatCompletionContentPartUnionParam
	for _, blk := range c.Blocks {
		switch b := blk.(type) {
		case *core.TextContent:
			if b != nil && b.Text != "" {
				parts = append(parts, openai.TextContentPart(b.Text))
			}
		case *core.ImageContent:
			if b != nil && b.Data != "" {
				parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{
					URL: "data:" + b.MimeType + ";base64," + b.Data,
				}))
			}
		}
	}
	switch {
	case len(parts) == 0:
		return openai.ChatCompletionMessageParamUnion{}, false
	case len(parts) == 1 && parts[0].OfText != nil:
		// Some local servers still take only string content.
		return openai.UserMessage(parts[0].OfText.Text), true
	}
	return openai.UserMessage(parts), true
}

// openaiAssistant maps an earlier reply: its text, joined, and its tool
// calls with their arguments as a JSON string.
func openaiAssistant(c core.Content) (openai.ChatCompletionMessageParamUnion, bool) {
	var text strings.Builder
	a := &openai.ChatCompletionAssistantMessageParam{}
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
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID: b.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
						Name:      b.Name,
						Arguments: argumentsJSON(b.Arguments),
					},
				},
			})
		}
	}
	if strings.TrimSpace(text.String()) != "" {
		a.Content.OfString = openai.String(text.String())
	}
	if a.Content.OfString.Valid() || len(a.ToolCalls) > 0 {
		return openai.ChatCompletionMessageParamUnion{OfAssistant: a}, true
	}
	return openai.ChatCompletionMessageParamUnion{}, false
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

// openaiTool maps a tool to a function tool.
func openaiTool(t ToolSpec) (openai.ChatCompletionToolUnionParam, error) {
	params := shared.FunctionParameters{"type": "object", "properties": map[string]any{}}
	if len(t.Parameters) > 0 && string(t.Parameters) != "null" {
		params = nil
		if err := json.Unmarshal(t.Parameters, &params); err != nil {
			return openai.ChatCompletionToolUnionParam{}, fmt.Errorf("tool %q: parameters must be a JSON Schema object: %w", t.Name, err)
		}
	}
	def := shared.FunctionDefinitionParam{Name: t.Name, Parameters: params}
	if t.Description != "" {
		def.Description = openai.String(t.Description)
	}
	return openai.ChatCompletionFunctionTool(def), nil
}
