package llm_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/llm"
)

func TestEcho(t *testing.T) {
	req := &llm.Request{
		Model: llm.ModelConfig{ID: "echo"},
		Messages: []core.Message{
			core.NewUserText("first", 1),
			&core.AssistantMessage{Content: core.Content{&core.TextContent{Text: "echo: first"}}},
			&core.UserMessage{Content: core.UserContent{Blocks: core.Content{
				&core.TextContent{Text: "hello big "},
				&core.ImageContent{Data: "AAAA", MimeType: "image/png"},
				&core.TextContent{Text: "world"},
			}}},
		},
		Tools: []llm.ToolSpec{{Name: "read"}},
	}
	rec := &recorder{}
	msg, err := llm.NewEcho("echo", llm.ProviderOptions{Clock: fixedClock}).Stream(context.Background(), req, rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	wantTypes(t, rec, "start", "text_start:0",
		"text_delta:0", "text_delta:0", "text_delta:0", "text_delta:0",
		"text_end:0", "done(stop)")
	var deltas []string
	for _, e := range rec.ofType(core.AssistantEventTextDelta) {
		deltas = append(deltas, e.Delta)
	}
	if want := []string{"echo: ", "hello ", "big ", "world"}; !slices.Equal(deltas, want) {
		t.Errorf("deltas = %q, want %q", deltas, want)
	}
	if msg.Text() != "echo: hello big world" || msg.StopReason != core.StopReasonStop || len(msg.ToolCalls()) != 0 {
		t.Errorf("message = %+v", msg)
	}
	if msg.API != "echo" || msg.Provider != "echo" || msg.Model != "echo" || msg.Timestamp != fixedTime.UnixMilli() {
		t.Errorf("metadata = %+v", msg)
	}
	if msg.Usage != (core.Usage{}) {
		t.Errorf("usage = %+v", msg.Usage)
	}
}

func TestEchoCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &recorder{onEvent: func(e event) {
		if e.Type == core.AssistantEventTextDelta {
			cancel()
		}
	}}
	msg, err := llm.NewEcho("echo", llm.ProviderOptions{}).Stream(ctx, userRequest("one two three"), rec.emit)
	if !errors.Is(err, context.Canceled) || msg.StopReason != core.StopReasonAborted || msg.Text() != "echo: " {
		t.Errorf("Stream = %+v, %v", msg, err)
	}
	wantTypes(t, rec, "start", "text_start:0", "text_delta:0", "error(aborted)")
	if msg.ErrorMessage == "" {
		t.Error("aborted message has no errorMessage")
	}
}

func TestEchoNoUserMessage(t *testing.T) {
	msg, err := llm.NewEcho("echo", llm.ProviderOptions{}).Stream(context.Background(), nil, nil)
	if err != nil || msg.Text() != "echo: " {
		t.Errorf("Stream = %+v, %v", msg, err)
	}
}
