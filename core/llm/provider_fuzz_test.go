package llm

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// fuzzKey is the API key of the fuzzed providers; no error may show it.
const fuzzKey = "sk-fuzz-KEY-0123456789"

// bodyTransport answers every request with status and body.
type bodyTransport struct {
	status int
	header http.Header
	body   string
}

func (t bodyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	return &http.Response{
		StatusCode: t.status,
		Header:     t.header,
		Body:       io.NopCloser(strings.NewReader(t.body)),
		Request:    req,
	}, nil
}

// fuzzStream runs one response through the provider api and checks what
// every response must give: a message, an *Error on failure, a known stop
// reason, and no API key anywhere.
func fuzzStream(t *testing.T, api API, status int, retryAfter, body string) {
	h := http.Header{"Content-Type": {"text/event-stream"}}
	if retryAfter != "" {
		h.Set("Retry-After", retryAfter)
	}
	p, err := NewProvider("fuzz", ProviderConfig{API: api, APIKey: fuzzKey, BaseURL: "http://model.invalid"},
		ProviderOptions{HTTPClient: &http.Client{Transport: bodyTransport{status: status, header: h, body: body}}, Clock: func() time.Time { return time.Unix(0, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	events := 0
	msg, err := p.Stream(context.Background(), &Request{Model: ModelConfig{ID: "m"}, Messages: []core.Message{core.NewUserText("hi", 1)}},
		func(core.AssistantMessageEvent) { events++ })
	if msg == nil {
		t.Fatal("no message")
	}
	if events < 2 {
		t.Errorf("%d events; want start and an end at least", events)
	}
	switch {
	case err == nil && msg.StopReason != core.StopReasonStop && msg.StopReason != core.StopReasonLength && msg.StopReason != core.StopReasonToolUse:
		t.Errorf("no error, stop reason %q", msg.StopReason)
	case err != nil:
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("error %T %v is not an *Error", err, err)
		}
		if msg.StopReason != core.StopReasonError {
			t.Errorf("error %v with stop reason %q", err, msg.StopReason)
		}
		for x := error(e); x != nil; x = errors.Unwrap(x) {
			if strings.Contains(x.Error(), fuzzKey) {
				t.Fatalf("the API key shows in %q", x.Error())
			}
		}
	}
	if strings.Contains(msg.ErrorMessage, fuzzKey) {
		t.Fatalf("the API key shows in the message's error %q", msg.ErrorMessage)
	}
}

// FuzzAnthropicStream feeds any response a server could send (status,
// Retry-After, body) through the Anthropic provider: SSE framing, event
// decoding and error bodies.
func FuzzAnthropicStream(f *testing.F) {
	for _, seed := range []string{
		"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":4095,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"n\"}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":4095,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\"\"}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":-1,\"content_block\":{\"type\":\"thinking\"}}\n\nevent: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":9999999}\n\n",
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"" + fuzzKey + "\"}}\n\n",
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"index\":\"x\",\"usage\":{\"output_tokens\":\"7\"}}\n\n",
		"event: x\ndata: {\n\n",
		"{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"slow down " + fuzzKey + "\"}}",
	} {
		f.Add(200, "", seed)
		f.Add(429, "3", seed)
	}
	f.Add(529, "Wed, 21 Oct 2015 07:28:00 GMT", "<html>overloaded</html>")
	f.Fuzz(func(t *testing.T, status int, retryAfter, body string) {
		if status < 100 || status > 999 {
			status = 200
		}
		fuzzStream(t, APIAnthropicMessages, status, retryAfter, body)
	})
}

// FuzzOpenAIStream is FuzzAnthropicStream for chat completions.
func FuzzOpenAIStream(f *testing.F) {
	for _, seed := range []string{
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":\"}}]}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"function\":{\"arguments\":\"1}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"r\",\"reasoning\":{\"x\":1}}}]}\n\ndata: {\"error\":{\"message\":\"" + fuzzKey + "\",\"code\":500}}\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"cut",
		"data: [DONE]\n\n",
		"{\"error\":\"model not found\"}",
		"{\"object\":\"error\",\"message\":\"maximum context length\",\"type\":7,\"code\":400}",
		"{\"error\":{\"message\":\"Incorrect API key provided: " + fuzzKey + "\",\"code\":\"invalid_api_key\"}}",
	} {
		f.Add(200, "", seed)
		f.Add(400, "", seed)
	}
	f.Add(503, "1.5", "upstream unavailable")
	f.Fuzz(func(t *testing.T, status int, retryAfter, body string) {
		if status < 100 || status > 999 {
			status = 200
		}
		fuzzStream(t, APIOpenAICompletions, status, retryAfter, body)
	})
}
