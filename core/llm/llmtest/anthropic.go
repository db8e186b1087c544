package llmtest

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/switchboardhq/switchboard/core/llm"
)

// NewAnthropicServer starts a fake Anthropic Messages API
// (POST /v1/messages) that answers with script, one Response per request:
// message_start, content_block_start, ping, content_block_delta
// (text_delta, thinking_delta, signature_delta, input_json_delta),
// content_block_stop, message_delta and message_stop events, or an error
// event, or an HTTP error with Anthropic's error body.
func NewAnthropicServer(t testing.TB, script ...Response) *Server {
	return newServer(t, anthropicVendor{}, script)
}

// anthropicVendor speaks the Messages API.
type anthropicVendor struct{}

func (anthropicVendor) name() string               { return "anthropic" }
func (anthropicVendor) api() llm.API               { return llm.APIAnthropicMessages }
func (anthropicVendor) path() string               { return "/v1/messages" }
func (anthropicVendor) baseURL(root string) string { return root }

func (anthropicVendor) streamHeader(h http.Header) {
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
}

func (anthropicVendor) render(r Response, model string) []sseEvent {
	ids := toolIDs(r, "toolu_%02d")
	u := r.usage
	ev := []sseEvent{sse("message_start", fmt.Sprintf(
		`{"type":"message_start","message":{"id":"msg_llmtest","type":"message","role":"assistant","model":%s,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":1}}}`,
		quote(model), u.Input, u.CacheWrite, u.CacheRead), false)}
	pinged := false
	for _, s := range r.plan() {
		b := r.blocks[s.block]
		switch s.op {
		case opStart:
			var cb string
			switch b.kind {
			case kindText:
				cb = `{"type":"text","text":""}`
			case kindThinking:
				cb = `{"type":"thinking","thinking":"","signature":""}`
			case kindToolCall:
				cb = fmt.Sprintf(`{"type":"tool_use","id":%s,"name":%s,"input":{}}`, quote(ids[s.block]), quote(b.call.Name))
			}
			ev = append(ev, sse("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":%s}`, s.block, cb), false))
			if !pinged {
				ev = append(ev, sse("ping", `{"type": "ping"}`, false))
				pinged = true
			}
		case opDelta:
			var d string
			switch b.kind {
			case kindText:
				d = `{"type":"text_delta","text":` + quote(s.text) + `}`
			case kindThinking:
				d = `{"type":"thinking_delta","thinking":` + quote(s.text) + `}`
			case kindToolCall:
				d = `{"type":"input_json_delta","partial_json":` + quote(s.text) + `}`
			}
			ev = append(ev, sse("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":%s}`, s.block, d), true))
		case opSignature:
			ev = append(ev, sse("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"signature_delta","signature":%s}}`, s.block, quote(s.text)), false))
		case opStop:
			ev = append(ev, sse("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, s.block), false))
		}
	}
	if r.midError != "" {
		return append(ev, sse("error", fmt.Sprintf(`{"type":"error","error":{"type":%s,"message":%s}}`, quote(r.midError), quote(anthropicErrorMessage(r.midError))), false))
	}
	stop := r.stopReason()
	switch stop {
	case "stop":
		stop = "end_turn"
	case "toolUse":
		stop = "tool_use"
	case "length":
		stop = "max_tokens"
	}
	return append(ev,
		sse("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%s,"stop_sequence":null},"usage":{"output_tokens":%d}}`, quote(stop), u.Output), false),
		sse("message_stop", `{"type":"message_stop"}`, false))
}

// anthropicErrorMessage is the message Anthropic sends with an error type.
func anthropicErrorMessage(errType string) string {
	switch errType {
	case "overloaded_error":
		return "Overloaded"
	case "api_error":
		return "Internal server error"
	case "rate_limit_error":
		return "Number of request tokens has exceeded your per-minute rate limit"
	case "authentication_error":
		return "invalid x-api-key"
	case "permission_error":
		return "Your API key does not have permission to use the specified resource."
	case "not_found_error":
		return "model: not found"
	case "request_too_large":
		return "Request exceeds the maximum allowed number of bytes."
	}
	return "Invalid request"
}

func (anthropicVendor) errorBody(r Response) string {
	typ := "invalid_request_error"
	msg := ""
	switch {
	case r.errKind == errContextLength:
		msg = "prompt is too long: 208310 tokens > 200000 maximum"
	case r.status == http.StatusUnauthorized:
		typ = "authentication_error"
	case r.status == http.StatusForbidden:
		typ = "permission_error"
	case r.status == http.StatusNotFound:
		typ = "not_found_error"
	case r.status == http.StatusRequestEntityTooLarge:
		typ = "request_too_large"
	case r.status == http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case r.status == 529:
		typ = "overloaded_error"
	case r.status >= 500:
		typ = "api_error"
	}
	if msg == "" {
		msg = anthropicErrorMessage(typ)
	}
	return fmt.Sprintf(`{"type":"error","error":{"type":%s,"message":%s},"request_id":"req_llmtest"}`, quote(typ), quote(msg))
}

// toolIDs returns the id of each tool-call block of r, by block index:
// its own, or format applied to its 1-based position among the calls.
func toolIDs(r Response, format string) map[int]string {
	ids := map[int]string{}
	n := 0
	for i, b := range r.blocks {
		if b.kind != kindToolCall {
			continue
		}
		n++
		ids[i] = b.call.ID
		if ids[i] == "" {
			ids[i] = fmt.Sprintf(format, n)
		}
	}
	return ids
}
