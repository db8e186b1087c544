package llm_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/llm"
)

func TestMessageBuilderEdges(t *testing.T) {
	rec := &recorder{}
	b := llm.NewMessageBuilder(llm.APIAnthropicMessages, "p", llm.ModelConfig{ID: "m"}, fixedTime, rec.emit)
	b.Start()
	th := b.StartThinking()
	b.AppendThinking(th, "x")
	b.SetThinkingSignature(th, "sig-")
	b.SetThinkingSignature(th, "rest")
	b.AppendText(th, "not a text block")    // ignored
	b.AppendToolCall(th, "not a tool call") // ignored
	b.End(th)
	b.End(th)                    // ignored
	b.AppendThinking(th, "late") // ignored: closed
	tc := b.StartToolCall("id1", "write")
	b.AppendToolCall(tc, `{"path": "a", "content": "unterminated`)
	b.AppendText(99, "out of range") // ignored
	b.End(-1)                        // ignored
	msg, err := b.Done(core.StopReasonLength)
	if err != nil {
		t.Fatal(err)
	}
	wantTypes(t, rec, "start", "thinking_start:0", "thinking_delta:0", "thinking_end:0",
		"toolcall_start:1", "toolcall_delta:1", "toolcall_end:1", "done(length)")
	if th := msg.Content[0].(*core.ThinkingContent); th.Thinking != "x" || th.ThinkingSignature != "sig-rest" {
		t.Errorf("thinking = %+v", th)
	}
	if c := msg.ToolCalls()[0]; c.Arguments == nil || len(c.Arguments) != 0 {
		t.Errorf("broken arguments = %#v, want {}", c.Arguments)
	}
	if b.ToolCall(0) != nil || b.ToolCall(1) == nil || b.ToolCall(5) != nil {
		t.Error("ToolCall lookup")
	}
}

func TestMessageBuilderFailures(t *testing.T) {
	b := llm.NewMessageBuilder(llm.APIEcho, "p", llm.ModelConfig{ID: "m"}, fixedTime, nil)
	b.Start()
	msg, err := b.Fail(nil)
	e := asError(t, err)
	if e.Provider != "p" || e.Model != "m" || msg.ErrorMessage == "" || msg.StopReason != core.StopReasonError {
		t.Errorf("Fail(nil) = %+v, %+v", msg, e)
	}

	ctx, cancel := context.WithTimeout(context.Background(), -time.Second)
	defer cancel()
	b = llm.NewMessageBuilder(llm.APIEcho, "p", llm.ModelConfig{ID: "m"}, fixedTime, nil)
	msg, err = b.Abort(ctx)
	e = asError(t, err)
	if e.Kind != llm.ErrorTimeout || !errors.Is(err, context.DeadlineExceeded) || msg.StopReason != core.StopReasonAborted {
		t.Errorf("Abort(deadline) = %+v, %+v", msg, e)
	}
}
