package tools_test

import (
	"context"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/tools"
	"github.com/switchboardhq/switchboard/core/tools/toolstest"
)

// BenchmarkExecutorRun measures the executor's own cost: one call of an
// instant tool with a required parameter, one before, after and persist
// hook each, and an event sink that discards.
func BenchmarkExecutorRun(b *testing.B) {
	result := tools.TextResult("ok")
	f := toolstest.NewFunc("read",
		`{"type":"object","properties":{"file_path":{"type":"string"},"limit":{"type":"number"}},"required":["file_path"]}`,
		func(context.Context, tools.Call, func(tools.Result)) (tools.Result, error) { return result, nil })
	ex := newExecutor(f)
	ex.Hooks.Before = append(ex.Hooks.Before, func(context.Context, *tools.Call) tools.Decision { return tools.Decision{} })
	ex.Hooks.After = append(ex.Hooks.After, func(context.Context, tools.Call, tools.Result, error) {})
	ex.Hooks.Persist = append(ex.Hooks.Persist, func(context.Context, *core.ToolResultMessage) {})
	emit := func(core.AgentEvent) {}
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		args map[string]any
	}{
		{"schema-names", map[string]any{"file_path": "/tmp/a", "limit": 200.0}},
		{"camelCase", map[string]any{"filePath": "/tmp/a", "limit": 200.0}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			call := tools.Call{ID: "call_1", Name: "read", Args: bc.args}
			b.ReportAllocs()
			for b.Loop() {
				if msg := ex.Run(ctx, call, emit); msg.IsError {
					b.Fatal("error result")
				}
			}
		})
	}
}

// BenchmarkRunBatch measures a batch of four instant calls run in parallel.
func BenchmarkRunBatch(b *testing.B) {
	ex := newExecutor(toolstest.Text("a", "ok"))
	calls := []tools.Call{{ID: "1", Name: "a"}, {ID: "2", Name: "a"}, {ID: "3", Name: "a"}, {ID: "4", Name: "a"}}
	emit := func(core.AgentEvent) {}
	b.ReportAllocs()
	for b.Loop() {
		ex.RunBatch(context.Background(), calls, emit)
	}
}

// BenchmarkPolicyDecide measures the before_tool_call policy with three
// rules, one of which blocks the call: it runs on every tool call.
func BenchmarkPolicyDecide(b *testing.B) {
	p, err := tools.NewPolicy([]tools.PolicyRule{
		{Channels: []string{"whatsapp"}, Allow: []string{"message", "web_fetch"}},
		{Agents: []string{"ops"}, Deny: []string{"group:runtime"}},
		{ChatTypes: []core.ChatType{core.ChatGroup, core.ChatChannel}, Deny: []string{"group:fs", "group:runtime"}},
	})
	if err != nil {
		b.Fatal(err)
	}
	call := tools.Call{Name: "write", AgentID: "main", Route: core.Route{Channel: "telegram", To: "-100"}, ChatType: core.ChatGroup}
	b.ReportAllocs()
	for b.Loop() {
		if !p.Decide(call).Block {
			b.Fatal("not blocked")
		}
	}
}
