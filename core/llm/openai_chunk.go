package llm

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

// newStreaming sends a streaming chat completion as the SDK's
// ChatCompletionService.NewStreaming does (same client options, auth and
// SSE decoding, error events included) but decodes each chunk into
// openaiChunk, which holds only what the stream handler reads. The SDK's
// ChatCompletionChunk is decoded by its reflection-based decoder, which
// cost ~33 µs and 7 KB per chunk: most of a turn's CPU with a fast model
// (BenchmarkOpenAIStream).
func (p *OpenAI) newStreaming(ctx context.Context, params openai.ChatCompletionNewParams) *ssestream.Stream[openaiChunk] {
	var raw *http.Response
	err := p.client.Post(ctx, "chat/completions", params, &raw, option.WithJSONSet("stream", true))
	return ssestream.NewStream[openaiChunk](ssestream.NewDecoder(raw), err)
}

// openaiChunk is the part of a chat.completion.chunk the stream uses.
type openaiChunk struct {
	Choices []openaiChoiceDelta `json:"choices"`
	// Usage is nil unless the chunk carries it (the last one, with
	// stream_options.include_usage).
	Usage *openaiUsage `json:"usage"`
}

// UnmarshalJSON decodes what it can and ignores members of an unexpected
// type, as the SDK's decoder did: a server that sends "content": 1 or an
// object for "arguments" loses that member, not its stream.
func (c *openaiChunk) UnmarshalJSON(b []byte) error {
	type plain openaiChunk
	err := json.Unmarshal(b, (*plain)(c))
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
