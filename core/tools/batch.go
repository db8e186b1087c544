package tools

import (
	"context"
	"sync"

	"github.com/switchboardhq/switchboard/core"
)

// RunBatch runs the tool calls of one model response in parallel (seed 002
// §5.1) and returns their result messages in the order of calls. emit is
// never called concurrently, and each call's events keep their lifecycle
// order (start, updates, end); events of different calls interleave. Every
// goroutine RunBatch starts has finished when it returns.
func (e *Executor) RunBatch(ctx context.Context, calls []Call, emit func(core.AgentEvent)) []*core.ToolResultMessage {
	out := make([]*core.ToolResultMessage, len(calls))
	if len(calls) == 1 {
		out[0] = e.Run(ctx, calls[0], emit)
		return out
	}
	emit = serialized(emit)
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Go(func() { out[i] = e.Run(ctx, c, emit) })
	}
	wg.Wait()
	return out
}

// RunSequential runs the calls one after another, for steering: before
// each call starts it asks skip (which may be nil), and once skip reports
// true that call and every later one is not executed and gets the
// synthetic error result SkippedText, with a start and an end event and
// the persist hooks but no before or after hooks. Results are in the order
// of calls.
func (e *Executor) RunSequential(ctx context.Context, calls []Call, emit func(core.AgentEvent), skip func() bool) []*core.ToolResultMessage {
	out := make([]*core.ToolResultMessage, len(calls))
	skipping := false
	for i, c := range calls {
		if !skipping && skip != nil && skip() {
			skipping = true
		}
		if skipping {
			out[i] = e.Skip(ctx, c, emit)
			continue
		}
		out[i] = e.Run(ctx, c, emit)
	}
	return out
}

// Skip gives call the SkippedText result without running it: a
// tool_execution_start event, the persist hooks, and a tool_execution_end
// event with isError true.
func (e *Executor) Skip(ctx context.Context, call Call, emit func(core.AgentEvent)) *core.ToolResultMessage {
	if emit == nil {
		emit = func(core.AgentEvent) {}
	}
	args := call.Args
	if args == nil {
		args = map[string]any{}
	}
	emit(core.AgentEvent{
		Type:       core.AgentEventToolExecutionStart,
		ToolCallID: call.ID,
		ToolName:   call.Name,
		Args:       args,
	})
	msg := &core.ToolResultMessage{
		ToolCallID: call.ID,
		ToolName:   call.Name,
		Content:    core.Content{&core.TextContent{Text: SkippedText}},
		IsError:    true,
		Timestamp:  e.now().UnixMilli(),
	}
	return e.finish(ctx, msg, emit)
}

// serialized wraps emit so that calls from several goroutines take turns.
func serialized(emit func(core.AgentEvent)) func(core.AgentEvent) {
	if emit == nil {
		return nil
	}
	var mu sync.Mutex
	return func(ev core.AgentEvent) {
		mu.Lock()
		defer mu.Unlock()
		emit(ev)
	}
}
