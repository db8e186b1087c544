package llm_test

import (
	"context"
	"errors"
	"math"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/llm"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
)

// The tests in this file run each scenario against both APIs' fakes and
// expect the same events from both providers.

func TestStreamText(t *testing.T) {
	for _, v := range vendors {
		t.Run(v.name, func(t *testing.T) {
			srv := v.newServer(t, llmtest.Text("Hello", ", world").
				WithUsage(llmtest.Usage{Input: 1500, Output: 200, CacheRead: 100, CacheWrite: 1500}))
			rec := &recorder{}
			msg, err := newProvider("prov", srv).Stream(context.Background(), userRequest("hi"), rec.emit)
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			wantTypes(t, rec, "start", "text_start:0", "text_delta:0", "text_delta:0", "text_end:0", "done(stop)")
			if got := rec.ofType(core.AssistantEventTextEnd)[0].Content; got != "Hello, world" {
				t.Errorf("text_end content = %q", got)
			}
			if deltas := rec.ofType(core.AssistantEventTextDelta); deltas[0].Delta != "Hello" || deltas[1].Delta != ", world" {
				t.Errorf("deltas = %+v", deltas)
			}
			if msg.Text() != "Hello, world" || msg.StopReason != core.StopReasonStop || msg.ErrorMessage != "" {
				t.Errorf("message = %+v", msg)
			}
			if msg.API != string(v.api) || msg.Provider != "prov" || msg.Model != "test-model" || msg.Timestamp != fixedTime.UnixMilli() {
				t.Errorf("message metadata = api %q provider %q model %q timestamp %d", msg.API, msg.Provider, msg.Model, msg.Timestamp)
			}
			// The start event's message was empty when it was emitted.
			if got := rec.ofType(core.AssistantEventStart)[0].Partial; got == "" || !jsonHasEmptyContent(got) {
				t.Errorf("start partial = %s", got)
			}
		})
	}
}

func jsonHasEmptyContent(msgJSON string) bool {
	var m core.AssistantMessage
	return m.UnmarshalJSON([]byte(msgJSON)) == nil && len(m.Content) == 0
}

func TestStreamUsageAndCost(t *testing.T) {
	for _, v := range vendors {
		t.Run(v.name, func(t *testing.T) {
			srv := v.newServer(t, llmtest.Text("ok").
				WithUsage(llmtest.Usage{Input: 1500, Output: 200, CacheRead: 1000, CacheWrite: 500}))
			msg, err := newProvider("prov", srv).Stream(context.Background(), userRequest("hi"), nil)
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			want := core.Usage{Input: 1500, Output: 200, CacheRead: 1000, CacheWrite: 500, TotalTokens: 1700}
			if v.api == llm.APIOpenAICompletions {
				want.CacheWrite = 0 // chat completions do not report cache writes
			}
			// Prices per million: input 3, output 15, cache read 0.3,
			// cache write 3.75.
			want.Cost = core.Cost{
				Input:      1500 * 3 / 1e6,
				Output:     200 * 15 / 1e6,
				CacheRead:  1000 * 0.3 / 1e6,
				CacheWrite: float64(want.CacheWrite) * 3.75 / 1e6,
			}
			want.Cost.Total = want.Cost.Input + want.Cost.Output + want.Cost.CacheRead + want.Cost.CacheWrite
			got := msg.Usage
			if got.Input != want.Input || got.Output != want.Output || got.CacheRead != want.CacheRead ||
				got.CacheWrite != want.CacheWrite || got.TotalTokens != want.TotalTokens {
				t.Errorf("usage = %+v, want %+v", got, want)
			}
			for _, c := range [][2]float64{
				{got.Cost.Input, want.Cost.Input}, {got.Cost.Output, want.Cost.Output},
				{got.Cost.CacheRead, want.Cost.CacheRead}, {got.Cost.CacheWrite, want.Cost.CacheWrite},
				{got.Cost.Total, want.Cost.Total},
			} {
				if math.Abs(c[0]-c[1]) > 1e-12 {
					t.Errorf("cost = %+v, want %+v", got.Cost, want.Cost)
					break
				}
			}
		})
	}
}

func TestStreamThinkingAndText(t *testing.T) {
	for _, v := range vendors {
		t.Run(v.name, func(t *testing.T) {
			srv := v.newServer(t, llmtest.Reply(
				llmtest.ThinkingBlock("sig-Ep4BCkYIBRgCKkDx", "Let me ", "think."),
				llmtest.TextBlock("The answer", " is 4."),
			))
			rec := &recorder{}
			msg, err := newProvider("prov", srv).Stream(context.Background(), userRequest("2+2?"), rec.emit)
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			wantTypes(t, rec, "start",
				"thinking_start:0", "thinking_delta:0", "thinking_delta:0", "thinking_end:0",
				"text_start:1", "text_delta:1", "text_delta:1", "text_end:1",
				"done(stop)")
			if len(msg.Content) != 2 {
				t.Fatalf("content = %#v", msg.Content)
			}
			th, ok := msg.Content[0].(*core.ThinkingContent)
			if !ok || th.Thinking != "Let me think." {
				t.Fatalf("content[0] = %#v", msg.Content[0])
			}
			wantSig := "sig-Ep4BCkYIBRgCKkDx"
			if v.api == llm.APIOpenAICompletions {
				wantSig = "" // chat completions carry no signatures
			}
			if th.ThinkingSignature != wantSig {
				t.Errorf("signature = %q, want %q", th.ThinkingSignature, wantSig)
			}
			if got := rec.ofType(core.AssistantEventThinkingEnd)[0].Content; got != "Let me think." {
				t.Errorf("thinking_end content = %q", got)
			}
			if msg.Text() != "The answer is 4." {
				t.Errorf("text = %q", msg.Text())
			}
		})
	}
}

func TestStreamInterleavedToolCalls(t *testing.T) {
	for _, v := range vendors {
		t.Run(v.name, func(t *testing.T) {
			srv := v.newServer(t, llmtest.ToolCalls(
				llmtest.Call("read", `{"path":"src/main.go","limit":200}`).WithID("call_read"),
				llmtest.Call("exec", `{"command":"ls -la","env":{"A":"ü"}}`).WithID("call_exec"),
				llmtest.Call("now", "").WithID("call_now"),
			))
			rec := &recorder{}
			msg, err := newProvider("prov", srv).Stream(context.Background(), userRequest("go"), rec.emit)
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			wantTypes(t, rec, "start",
				"toolcall_start:0", "toolcall_start:1", "toolcall_start:2",
				"toolcall_delta:0", "toolcall_delta:1",
				"toolcall_delta:0", "toolcall_delta:1",
				"toolcall_delta:0", "toolcall_delta:1",
				"toolcall_end:0", "toolcall_end:1", "toolcall_end:2",
				"done(toolUse)")
			want := []core.ToolCall{
				{ID: "call_read", Name: "read", Arguments: map[string]any{"path": "src/main.go", "limit": 200.0}},
				{ID: "call_exec", Name: "exec", Arguments: map[string]any{"command": "ls -la", "env": map[string]any{"A": "ü"}}},
				{ID: "call_now", Name: "now", Arguments: map[string]any{}},
			}
			ends := rec.ofType(core.AssistantEventToolCallEnd)
			for i, w := range want {
				if !reflect.DeepEqual(*ends[i].ToolCall, w) {
					t.Errorf("toolcall_end %d = %+v, want %+v", i, *ends[i].ToolCall, w)
				}
			}
			calls := msg.ToolCalls()
			if len(calls) != 3 || !reflect.DeepEqual(*calls[1], want[1]) {
				t.Errorf("message tool calls = %+v", calls)
			}
			if msg.StopReason != core.StopReasonToolUse {
				t.Errorf("stop reason = %q", msg.StopReason)
			}
		})
	}
}

func TestStreamTextThenToolCall(t *testing.T) {
	for _, v := range vendors {
		t.Run(v.name, func(t *testing.T) {
			srv := v.newServer(t, llmtest.Reply(
				llmtest.TextBlock("Let me read that."),
				llmtest.ToolCallBlock(llmtest.Call("read", `{"path":"a"}`)),
			))
			rec := &recorder{}
			msg, err := newProvider("prov", srv).Stream(context.Background(), userRequest("go"), rec.emit)
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			wantTypes(t, rec, "start",
				"text_start:0", "text_delta:0", "text_end:0",
				"toolcall_start:1", "toolcall_delta:1", "toolcall_delta:1", "toolcall_delta:1", "toolcall_end:1",
				"done(toolUse)")
			if c := msg.ToolCalls(); len(c) != 1 || c[0].Arguments["path"] != "a" {
				t.Errorf("tool calls = %+v", c)
			}
		})
	}
}

func TestStreamMidStreamError(t *testing.T) {
	for _, v := range vendors {
		t.Run(v.name, func(t *testing.T) {
			errType := "overloaded_error"
			if v.api == llm.APIOpenAICompletions {
				errType = "server_error"
			}
			srv := v.newServer(t, llmtest.MidStreamError(errType, "Hel", "lo"))
			rec := &recorder{}
			msg, err := newProvider("prov", srv).Stream(context.Background(), userRequest("hi"), rec.emit)
			e := asError(t, err)
			wantTypes(t, rec, "start", "text_start:0", "text_delta:0", "text_delta:0", "error(error)")
			if !e.Retryable || e.Kind != llm.ErrorUnknown || e.StatusCode != 0 || e.Provider != "prov" || e.Model != "test-model" {
				t.Errorf("error = %+v", e)
			}
			if msg.StopReason != core.StopReasonError || msg.Text() != "Hello" || msg.ErrorMessage == "" {
				t.Errorf("message = stop %q text %q errorMessage %q", msg.StopReason, msg.Text(), msg.ErrorMessage)
			}
			if msg.ErrorMessage != e.Message {
				t.Errorf("errorMessage %q != error message %q", msg.ErrorMessage, e.Message)
			}
		})
	}
}

func TestStreamHTTPErrors(t *testing.T) {
	tests := []struct {
		name       string
		resp       llmtest.Response
		kind       llm.ErrorKind
		retryable  bool
		retryAfter float64 // seconds
		message    string  // substring
	}{
		{"429 retry-after seconds", llmtest.RateLimited("7"), llm.ErrorRateLimit, true, 7, "HTTP 429"},
		{"429 retry-after-ms", llmtest.HTTPError(429, http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"2"}}, ""), llm.ErrorRateLimit, true, 1.5, "HTTP 429"},
		{"429 http date", llmtest.RateLimited(fixedTime.Add(42 * 1e9).Format(http.TimeFormat)), llm.ErrorRateLimit, true, 42, "HTTP 429"},
		{"529 overloaded", llmtest.HTTPError(529, nil, ""), llm.ErrorUnknown, true, 0, "HTTP 529"},
		{"500", llmtest.HTTPError(500, nil, ""), llm.ErrorUnknown, true, 0, "HTTP 500"},
		{"502 html", llmtest.HTTPError(502, nil, "<html>bad gateway</html>"), llm.ErrorUnknown, true, 0, "HTTP 502"},
		{"503 empty", llmtest.HTTPError(503, http.Header{"Retry-After": {"3"}}, " "), llm.ErrorUnknown, true, 3, "HTTP 503"},
		{"504", llmtest.HTTPError(504, nil, ""), llm.ErrorUnknown, true, 0, "HTTP 504"},
		{"408", llmtest.HTTPError(408, nil, ""), llm.ErrorTimeout, true, 0, "HTTP 408"},
		{"context too long", llmtest.ContextTooLong(), llm.ErrorContextLength, false, 0, "HTTP 400"},
		{"401", llmtest.HTTPError(401, nil, ""), llm.ErrorUnknown, false, 0, "check models.providers.prov.apiKey"},
		{"403", llmtest.HTTPError(403, nil, ""), llm.ErrorUnknown, false, 0, "check models.providers.prov.apiKey"},
		{"400 other", llmtest.HTTPError(400, nil, ""), llm.ErrorUnknown, false, 0, "HTTP 400"},
		{"404", llmtest.HTTPError(404, nil, ""), llm.ErrorUnknown, false, 0, "HTTP 404"},
	}
	for _, v := range vendors {
		for _, tt := range tests {
			t.Run(v.name+"/"+tt.name, func(t *testing.T) {
				srv := v.newServer(t, tt.resp)
				rec := &recorder{}
				msg, err := newProvider("prov", srv).Stream(context.Background(), userRequest("hi"), rec.emit)
				e := asError(t, err)
				wantTypes(t, rec, "start", "error(error)")
				if e.Kind != tt.kind || e.Retryable != tt.retryable || e.RetryAfter.Seconds() != tt.retryAfter {
					t.Errorf("error = kind %q retryable %v retryAfter %v; want %q %v %vs (%s)", e.Kind, e.Retryable, e.RetryAfter, tt.kind, tt.retryable, tt.retryAfter, e.Message)
				}
				if !strings.Contains(e.Error(), tt.message) || !strings.Contains(e.Error(), "prov/test-model: ") {
					t.Errorf("error %q does not contain %q", e.Error(), tt.message)
				}
				if e.StatusCode == 0 {
					t.Errorf("status code not set: %+v", e)
				}
				if msg.StopReason != core.StopReasonError || msg.ErrorMessage != e.Message || len(msg.Content) != 0 {
					t.Errorf("message = %+v", msg)
				}
				noKey(t, errorTexts(err)...)
				noKey(t, msg.ErrorMessage)
			})
		}
	}
}

func TestStreamKeyNeverInErrors(t *testing.T) {
	for _, v := range vendors {
		t.Run(v.name, func(t *testing.T) {
			// Servers that quote the key back, in every kind of error.
			echo := `{"type":"error","error":{"type":"invalid_request_error","message":"key ` + testKey + ` is bad"},"error_message":"` + testKey + `"}`
			if v.api == llm.APIOpenAICompletions {
				echo = `{"error":{"message":"Incorrect API key provided: ` + testKey + `","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`
			}
			srv := v.newServer(t,
				llmtest.HTTPError(401, nil, echo),
				llmtest.HTTPError(400, nil, echo),
				llmtest.HTTPError(500, http.Header{"X-Echo": {testKey}}, echo),
				llmtest.HTTPError(403, nil, echo),
			)
			p := newProvider("prov", srv)
			for range 4 {
				msg, err := p.Stream(context.Background(), userRequest("hi"), nil)
				if err == nil {
					t.Fatal("no error")
				}
				noKey(t, errorTexts(err)...)
				noKey(t, msg.ErrorMessage)
			}
			// The key did go out, in the vendor's header.
			h := srv.Requests()[0].Header
			if h.Get("X-Api-Key") != testKey && h.Get("Authorization") != "Bearer "+testKey {
				t.Errorf("request headers carry no key: %v", h)
			}
		})
	}
}

func TestStreamAbort(t *testing.T) {
	for _, v := range vendors {
		t.Run(v.name, func(t *testing.T) {
			srv := v.newServer(t, llmtest.Text("one ", "two ", "three").HangAfter(1))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			rec := &recorder{onEvent: func(e event) {
				if e.Type == core.AssistantEventTextDelta {
					cancel()
				}
			}}
			msg, err := newProvider("prov", srv).Stream(ctx, userRequest("count"), rec.emit)
			e := asError(t, err)
			wantTypes(t, rec, "start", "text_start:0", "text_delta:0", "error(aborted)")
			if msg.StopReason != core.StopReasonAborted || msg.Text() != "one " || msg.ErrorMessage == "" {
				t.Errorf("message = stop %q text %q errorMessage %q", msg.StopReason, msg.Text(), msg.ErrorMessage)
			}
			if e.Retryable || !isCanceled(err) {
				t.Errorf("error = %+v", e)
			}
		})
	}
}

func TestStreamCancelledBeforeRequest(t *testing.T) {
	for _, v := range vendors {
		t.Run(v.name, func(t *testing.T) {
			srv := v.newServer(t)
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			rec := &recorder{}
			msg, err := newProvider("prov", srv).Stream(ctx, userRequest("hi"), rec.emit)
			if err == nil || msg.StopReason != core.StopReasonAborted {
				t.Fatalf("Stream = %+v, %v", msg, err)
			}
			wantTypes(t, rec, "start", "error(aborted)")
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d requests sent", n)
			}
		})
	}
}

func TestStreamLength(t *testing.T) {
	for _, v := range vendors {
		t.Run(v.name, func(t *testing.T) {
			srv := v.newServer(t, llmtest.Reply(
				llmtest.TextBlock("cut"),
				llmtest.ToolCallBlock(llmtest.Call("write", `{"path":"a","content":"x`)),
			).WithStopReason("length"))
			rec := &recorder{}
			msg, err := newProvider("prov", srv).Stream(context.Background(), userRequest("hi"), rec.emit)
			if err != nil {
				t.Fatal(err)
			}
			if msg.StopReason != core.StopReasonLength {
				t.Errorf("stop reason = %q", msg.StopReason)
			}
			// Arguments cut short by max_tokens parse as {}.
			if c := msg.ToolCalls(); len(c) != 1 || c[0].Arguments == nil || len(c[0].Arguments) != 0 {
				t.Errorf("tool calls = %+v", c)
			}
			if got := rec.types(); got[len(got)-1] != "done(length)" {
				t.Errorf("events = %v", got)
			}
		})
	}
}

func TestStreamRefusal(t *testing.T) {
	for _, v := range vendors {
		t.Run(v.name, func(t *testing.T) {
			stop := "refusal"
			if v.api == llm.APIOpenAICompletions {
				stop = "content_filter"
			}
			srv := v.newServer(t, llmtest.Text("I can't").WithStopReason(stop))
			rec := &recorder{}
			msg, err := newProvider("prov", srv).Stream(context.Background(), userRequest("hi"), rec.emit)
			e := asError(t, err)
			if e.Kind != llm.ErrorRefusal || e.Retryable {
				t.Errorf("error = %+v", e)
			}
			wantTypes(t, rec, "start", "text_start:0", "text_delta:0", "text_end:0", "error(error)")
			if msg.StopReason != core.StopReasonError || msg.Text() != "I can't" {
				t.Errorf("message = %+v", msg)
			}
		})
	}
}

func TestStreamExtraHeaders(t *testing.T) {
	for _, v := range vendors {
		t.Run(v.name, func(t *testing.T) {
			srv := v.newServer(t, llmtest.Text("ok"))
			cfg := srv.Config(testKey)
			cfg.Headers = map[string]string{"X-Team": "switchboard", "X-Other": "2"}
			p, err := llm.NewProvider("prov", cfg, llm.ProviderOptions{HTTPClient: srv.Client()})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Stream(context.Background(), userRequest("hi"), nil); err != nil {
				t.Fatal(err)
			}
			h := srv.Requests()[0].Header
			if h.Get("X-Team") != "switchboard" || h.Get("X-Other") != "2" {
				t.Errorf("headers = %v", h)
			}
		})
	}
}

func isCanceled(err error) bool { return errors.Is(err, context.Canceled) }
