package agent_test

import (
	"context"
	"errors"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
)

func TestSessionOperations(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, harnessOptions{script: []llmtest.Response{
		llmtest.Text("first"), llmtest.Text("A short summary."), llmtest.Text("after compaction"),
	}})
	if _, _, ok, err := h.runner.History(ctx, dmKey); ok || err != nil {
		t.Fatalf("history of an unknown session: ok=%v err=%v", ok, err)
	}
	first := h.run(dm("hello"), nil)
	entry, msgs, ok, err := h.runner.History(ctx, dmKey)
	if err != nil || !ok || entry.SessionID != first.SessionID || len(msgs) != 2 {
		t.Fatalf("History = %+v, %d messages, %v, %v", entry, len(msgs), ok, err)
	}

	e, err := h.runner.Patch(ctx, dmKey, func(e *core.SessionEntry) { e.Label = "Ada's chat"; e.ThinkingLevel = "high" })
	if err != nil || e.Label != "Ada's chat" || h.entry(dmKey).ThinkingLevel != "high" {
		t.Fatalf("Patch = %+v, %v", e, err)
	}

	note := &core.AssistantMessage{Content: core.Content{&core.TextContent{Text: "[note] injected"}}, API: "inject", Provider: "gateway", Model: "inject", StopReason: core.StopReasonStop}
	if err := h.runner.Inject(ctx, dmKey, note); err != nil {
		t.Fatal(err)
	}
	if _, msgs, _, _ := h.runner.History(ctx, dmKey); len(msgs) != 3 {
		t.Errorf("after Inject %d messages, want 3", len(msgs))
	}

	var phases []string
	if err := h.runner.Compact(ctx, dmKey, func(ev agent.CompactionEvent) { phases = append(phases, ev.Phase+":"+ev.Reason) }); err != nil {
		t.Fatalf("Compact: %v", err)
	}
	if len(phases) != 2 || phases[0] != "start:manual" {
		t.Errorf("compaction events = %v", phases)
	}
	if h.entry(dmKey).CompactionCount != 1 || h.entry(dmKey).Label != "Ada's chat" {
		t.Errorf("entry after Compact = %+v", h.entry(dmKey))
	}
	h.run(dm("and now?"), nil) // the summary carries the history forward

	reset, err := h.runner.Reset(ctx, dmKey)
	if err != nil || reset.SessionID == first.SessionID || reset.Label != "Ada's chat" {
		t.Fatalf("Reset = %+v, %v", reset, err)
	}
	if lines := h.transcriptLines(first.SessionID); len(lines) == 0 {
		t.Errorf("Reset removed the old transcript")
	}
	if err := h.runner.Delete(ctx, dmKey); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, _ := h.runner.History(ctx, dmKey); ok {
		t.Errorf("session still indexed after Delete")
	}
}

func TestSessionOperationsRefuseABusySession(t *testing.T) {
	gate := make(chan struct{})
	h := newHarness(t, harnessOptions{script: []llmtest.Response{llmtest.Text("slow").Gated(gate)}})
	streaming := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var once bool
		_, _ = h.runner.Run(context.Background(), agent.Turn{Inbound: dm("hi"), Sink: func(ev core.AgentEvent) {
			if ev.Type == core.AgentEventTurnStart && !once {
				once = true
				close(streaming)
			}
		}})
	}()
	<-streaming
	if _, err := h.runner.Reset(context.Background(), dmKey); !errors.Is(err, agent.ErrBusy) {
		t.Errorf("Reset during a run: %v, want ErrBusy", err)
	}
	close(gate)
	<-done
}
