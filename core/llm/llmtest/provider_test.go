package llmtest_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/llm"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func request(text string) *llm.Request {
	return &llm.Request{Model: llm.ModelConfig{ID: "m"}, Messages: []core.Message{core.NewUserText(text, 1)}}
}

// collect appends each event's type, with its content index, to dst.
func collect(dst *[]string) func(core.AssistantMessageEvent) {
	return func(ev core.AssistantMessageEvent) {
		s := string(ev.Type)
		switch ev.Type {
		case core.AssistantEventStart, core.AssistantEventDone, core.AssistantEventError:
		default:
			s += ":" + strconv.Itoa(ev.ContentIndex)
		}
		*dst = append(*dst, s)
	}
}

func TestScriptedProviderPlaysScript(t *testing.T) {
	p := llmtest.NewScriptedProvider(
		llmtest.Thinking("hmm", "sig", "Hi"),
		llmtest.ToolCalls(llmtest.Call("read", `{"path":"a"}`), llmtest.Call("ls", "")),
	)
	p.Clock = func() time.Time { return time.UnixMilli(42) }
	var ev []string
	msg, err := p.Stream(context.Background(), request("one"), collect(&ev))
	if err != nil || msg.Text() != "Hi" || msg.Timestamp != 42 || msg.Provider != "scripted" {
		t.Fatalf("Stream = %+v, %v", msg, err)
	}
	if th := msg.Content[0].(*core.ThinkingContent); th.ThinkingSignature != "sig" {
		t.Errorf("thinking = %+v", th)
	}
	want := "start thinking_start:0 thinking_delta:0 thinking_end:0 text_start:1 text_delta:1 text_end:1 done"
	if got := strings.Join(ev, " "); got != want {
		t.Errorf("events\n got %s\nwant %s", got, want)
	}
	ev = nil
	msg, err = p.Stream(context.Background(), request("two"), collect(&ev))
	if err != nil || msg.StopReason != core.StopReasonToolUse {
		t.Fatalf("Stream = %+v, %v", msg, err)
	}
	calls := msg.ToolCalls()
	if len(calls) != 2 || calls[0].ID != "call_1" || calls[0].Arguments["path"] != "a" || calls[1].ID != "call_2" || len(calls[1].Arguments) != 0 {
		t.Errorf("calls = %+v %+v", calls[0], calls[1])
	}
	// The script is used up.
	_, err = p.Stream(context.Background(), request("three"), nil)
	var e *llm.Error
	if !errors.As(err, &e) || e.Retryable {
		t.Errorf("exhausted script: %v", err)
	}
	reqs := p.Requests()
	if len(reqs) != 3 || reqs[1].Messages[0].(*core.UserMessage).Text() != "two" {
		t.Errorf("requests = %+v", reqs)
	}
}

func TestScriptedProviderGate(t *testing.T) {
	gate := make(chan struct{})
	p := llmtest.NewScriptedProvider(llmtest.Text("a", "b").Gated(gate))
	events := make(chan core.AssistantEventType, 16)
	done := make(chan *core.AssistantMessage)
	go func() {
		msg, _ := p.Stream(context.Background(), request("x"), func(ev core.AssistantMessageEvent) { events <- ev.Type })
		done <- msg
	}()
	if got := <-events; got != core.AssistantEventStart {
		t.Fatalf("first event %q", got)
	}
	// Each gate value releases exactly one event: start, delta, delta,
	// end, then done.
	for _, want := range []core.AssistantEventType{
		core.AssistantEventTextStart, core.AssistantEventTextDelta, core.AssistantEventTextDelta,
		core.AssistantEventTextEnd,
	} {
		select {
		case ev := <-events:
			t.Fatalf("event %q before the gate opened", ev)
		default:
		}
		gate <- struct{}{}
		if got := <-events; got != want {
			t.Fatalf("event %q, want %q", got, want)
		}
	}
	gate <- struct{}{}
	if got := <-events; got != core.AssistantEventDone {
		t.Fatalf("event %q, want done", got)
	}
	if msg := <-done; msg.Text() != "ab" {
		t.Errorf("text = %q", msg.Text())
	}
}

func TestScriptedProviderHangAndAbort(t *testing.T) {
	p := llmtest.NewScriptedProvider(llmtest.Text("a", "b").HangAfter(1))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	msg, err := p.Stream(ctx, request("x"), func(ev core.AssistantMessageEvent) {
		if ev.Type == core.AssistantEventTextDelta {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || msg.StopReason != core.StopReasonAborted || msg.Text() != "a" {
		t.Errorf("Stream = %+v, %v", msg, err)
	}
}

func TestScriptedProviderErrors(t *testing.T) {
	tests := []struct {
		resp       llmtest.Response
		kind       llm.ErrorKind
		retryable  bool
		retryAfter time.Duration
		text       string
	}{
		{llmtest.RateLimited("3"), llm.ErrorRateLimit, true, 3 * time.Second, ""},
		{llmtest.HTTPError(http.StatusBadGateway, nil, ""), llm.ErrorUnknown, true, 0, ""},
		{llmtest.ContextTooLong(), llm.ErrorContextLength, false, 0, ""},
		{llmtest.HTTPError(http.StatusUnauthorized, nil, ""), llm.ErrorUnknown, false, 0, ""},
		{llmtest.MidStreamError("overloaded_error", "part"), llm.ErrorUnknown, true, 0, "part"},
		{llmtest.Text("no").WithStopReason("refusal"), llm.ErrorRefusal, false, 0, "no"},
		{llmtest.RawStream("data: x\n\n"), llm.ErrorUnknown, false, 0, ""},
	}
	for i, tt := range tests {
		p := llmtest.NewScriptedProvider(tt.resp)
		msg, err := p.Stream(context.Background(), request("x"), nil)
		var e *llm.Error
		if !errors.As(err, &e) || e.Kind != tt.kind || e.Retryable != tt.retryable || e.RetryAfter != tt.retryAfter {
			t.Errorf("%d: error = %+v", i, e)
			continue
		}
		if msg.StopReason != core.StopReasonError || msg.Text() != tt.text || e.Provider != "scripted" || e.Model != "m" {
			t.Errorf("%d: message = %+v", i, msg)
		}
	}
}

func TestServerRecordsAndPushes(t *testing.T) {
	srv := llmtest.NewOpenAIServer(t)
	srv.Push(llmtest.Text("pushed"))
	p := llm.NewOpenAI("o", srv.Config("k"), llm.ProviderOptions{HTTPClient: srv.Client()})
	msg, err := p.Stream(context.Background(), request("hi"), nil)
	if err != nil || msg.Text() != "pushed" {
		t.Fatalf("Stream = %+v, %v", msg, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Method != http.MethodPost || reqs[0].Path != "/v1/chat/completions" || reqs[0].JSON(t)["model"] != "m" {
		t.Errorf("requests = %+v", reqs)
	}
	if srv.Remaining() != 0 {
		t.Errorf("remaining = %d", srv.Remaining())
	}
}
