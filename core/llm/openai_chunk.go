package llm

import (
	"encoding/json"
	"errors"
)

// openaiChunk is the part of a chat.completion.chunk the stream uses,
// decoded with encoding/json into these few members only.
type openaiChunk struct {
	Choices []openaiChoiceDelta `json:"choices"`
	// Usage is nil unless the chunk carries it (the last one, with
	// stream_options.include_usage).
	Usage *openaiUsage `json:"usage"`
	// Error is set when a server reports a failure mid-stream.
	Error json.RawMessage `json:"error"`
}

// UnmarshalJSON decodes what it can and ignores members of an unexpected
// type: a server that sends "content": 1 or an object for "arguments"
// loses that member, not its stream.
func (c *openaiChunk) UnmarshalJSON(b []byte) error {
	type plain openaiChunk
	return decodeLenient(b, (*plain)(c))
}

// decodeLenient decodes b into v, keeping what decodes: a member of an
// unexpected type leaves its field as it was instead of failing the whole
// value. Malformed JSON is still an error.
func decodeLenient(b []byte, v any) error {
	err := json.Unmarshal(b, v)
	if te := (*json.UnmarshalTypeError)(nil); errors.As(err, &te) {
		return nil
	}
	return err
}

type openaiChoiceDelta struct {
	Index        int64       `json:"index"`
	Delta        openaiDelta `json:"delta"`
	FinishReason string      `json:"finish_reason"`
}

type openaiDelta struct {
	Content string `json:"content"`
	Refusal string `json:"refusal"`
	// ReasoningContent (DeepSeek, vLLM, llama.cpp) and Reasoning (Ollama,
	// OpenRouter) carry reasoning text; kept raw, as only a string counts.
	ReasoningContent json.RawMessage       `json:"reasoning_content"`
	Reasoning        json.RawMessage       `json:"reasoning"`
	ToolCalls        []openaiToolCallDelta `json:"tool_calls"`
}

type openaiToolCallDelta struct {
	// Index is nil when the server omits it.
	Index    *int64 `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

func (tc openaiToolCallDelta) index() int64 {
	if tc.Index == nil {
		return 0
	}
	return *tc.Index
}

type openaiUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}
