package llmtest

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/llm"
)

// NewOpenAIServer starts a fake OpenAI-compatible chat completions API
// (POST /v1/chat/completions) that answers with script, one Response per
// request: chat.completion.chunk events (role, content, reasoning_content,
// tool_calls by index, finish_reason, then a usage chunk as with
// stream_options.include_usage) ending in "data: [DONE]", or an error chunk,
// or an HTTP error with OpenAI's error body.
func NewOpenAIServer(t testing.TB, script ...Response) *Server {
	return newServer(t, openaiVendor{}, script)
}

// openaiVendor speaks chat completions.
type openaiVendor struct{}

func (openaiVendor) name() string               { return "openai" }
func (openaiVendor) api() llm.API               { return llm.APIOpenAICompletions }
func (openaiVendor) path() string               { return "/v1/chat/completions" }
func (openaiVendor) baseURL(root string) string { return root + "/v1" }

func (openaiVendor) streamHeader(h http.Header) {
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
}

func (openaiVendor) render(r Response, model string) []sseEvent {
	ids := toolIDs(r, "call_%d")
	// The position of each tool-call block among the calls: its index.
	index := map[int]int{}
	for i, b := range r.blocks {
		if b.kind == kindToolCall {
			index[i] = len(index)
		}
	}
	reasoning := r.reasoningField
	if reasoning == "" {
		reasoning = "reasoning_content"
	}
	prefix := `{"id":"chatcmpl-llmtest","object":"chat.completion.chunk","created":1700000000,"model":` + quote(model) + `,"system_fingerprint":"fp_llmtest","choices":[`
	chunk := func(delta, finish string, isDelta bool) sseEvent {
		return sse("", prefix+`{"index":0,"delta":`+delta+`,"logprobs":null,"finish_reason":`+finish+`}],"usage":null}`, isDelta)
	}
	indexField := func(block int) string {
		if r.omitIndex {
			return ""
		}
		return fmt.Sprintf(`"index":%d,`, index[block])
	}
	ev := []sseEvent{chunk(`{"role":"assistant","content":"","refusal":null}`, "null", false)}
	for _, s := range r.plan() {
		b := r.blocks[s.block]
		switch {
		case s.op == opStart && b.kind == kindToolCall:
			ev = append(ev, chunk(fmt.Sprintf(`{"tool_calls":[{%s"id":%s,"type":"function","function":{"name":%s,"arguments":""}}]}`,
				indexField(s.block), quote(ids[s.block]), quote(b.call.Name)), "null", false))
		case s.op != opDelta:
			// Blocks have no start or stop of their own in chat
			// completions, and no signatures.
		case b.kind == kindText:
			ev = append(ev, chunk(`{"content":`+quote(s.text)+`}`, "null", true))
		case b.kind == kindThinking:
			ev = append(ev, chunk(`{`+quote(reasoning)+`:`+quote(s.text)+`}`, "null", true))
		case b.kind == kindToolCall:
			ev = append(ev, chunk(fmt.Sprintf(`{"tool_calls":[{%s"function":{"arguments":%s}}]}`, indexField(s.block), quote(s.text)), "null", true))
		}
	}
	if r.midError != "" {
		return append(ev, sse("", fmt.Sprintf(`{"error":{"message":%s,"type":%s,"param":null,"code":null}}`,
			quote("The server had an error while processing your request. Sorry about that!"), quote(r.midError)), false))
	}
	finish := r.stopReason()
	switch finish {
	case "toolUse":
		finish = "tool_calls"
	case "max_tokens":
		finish = "length"
	}
	u := r.usage
	prompt := u.Input + u.CacheRead
	ev = append(ev,
		chunk(`{}`, quote(finish), false),
		sse("", fmt.Sprintf(`{"id":"chatcmpl-llmtest","object":"chat.completion.chunk","created":1700000000,"model":%s,"system_fingerprint":"fp_llmtest","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":%d,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}`,
			quote(model), prompt, u.Output, prompt+u.Output, u.CacheRead), false),
		sse("", "[DONE]", false))
	return ev
}

func (openaiVendor) errorBody(r Response) string {
	typ, code := "invalid_request_error", "null"
	var msg string
	switch {
	case r.errKind == errContextLength:
		code = quote("context_length_exceeded")
		msg = "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens. Please reduce the length of the messages."
	case r.status == http.StatusUnauthorized:
		code = quote("invalid_api_key")
		msg = "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys."
	case r.status == http.StatusTooManyRequests:
		typ, code = "requests", quote("rate_limit_exceeded")
		msg = "Rate limit reached for requests. Please try again later."
	case r.status >= 500:
		typ = "server_error"
		msg = "The server had an error while processing your request. Sorry about that!"
	default:
		msg = strings.ToLower(http.StatusText(r.status))
	}
	return fmt.Sprintf(`{"error":{"message":%s,"type":%s,"param":null,"code":%s}}`, quote(msg), quote(typ), code)
}
