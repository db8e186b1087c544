package tools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/tools"
	"github.com/switchboardhq/switchboard/core/tools/toolstest"
)

// fixedNow is the clock of every test executor: 1740000000000 ms.
var fixedNow = time.UnixMilli(1740000000000)

// recorder collects events as their wire JSON and fails the test if emit
// is ever called concurrently.
type recorder struct {
	t        testing.TB
	inFlight atomic.Int32
	mu       sync.Mutex
	lines    []string
	events   []core.AgentEvent
	// ends receives the ToolCallID of each tool_execution_end.
	ends chan string
}

func newRecorder(t testing.TB) *recorder {
	return &recorder{t: t, ends: make(chan string, 64)}
}

func (r *recorder) emit(ev core.AgentEvent) {
	if r.inFlight.Add(1) != 1 {
		r.t.Errorf("emit called concurrently (event %s of %s)", ev.Type, ev.ToolCallID)
	}
	defer r.inFlight.Add(-1)
	b, err := json.Marshal(&ev)
	if err != nil {
		r.t.Errorf("marshal %s event: %v", ev.Type, err)
	}
	r.mu.Lock()
	r.lines = append(r.lines, string(b))
	r.events = append(r.events, ev)
	r.mu.Unlock()
	if ev.Type == core.AgentEventToolExecutionEnd {
		r.ends <- ev.ToolCallID
	}
}

func (r *recorder) Lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.lines)
}

// linesOf returns the events of one call, in the order emitted.
func (r *recorder) linesOf(id string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for i, ev := range r.events {
		if ev.ToolCallID == id {
			out = append(out, r.lines[i])
		}
	}
	return out
}

func msgJSON(t testing.TB, msg *core.ToolResultMessage) string {
	t.Helper()
	if msg == nil {
		t.Fatal("nil result message")
	}
	b, err := json.Marshal(msg)
	if err != nil {
		t.Fatalf("marshal result: %v", err)
	}
	return string(b)
}

func startLine(id, name, args string) string {
	return `{"type":"tool_execution_start","toolCallId":"` + id + `","toolName":"` + name + `","args":` + args + `}`
}

func updateLine(id, name, args, partial string) string {
	return `{"type":"tool_execution_update","toolCallId":"` + id + `","toolName":"` + name + `","args":` + args + `,"partialResult":` + partial + `}`
}

func endLine(id, name, result string, isError bool) string {
	return `{"type":"tool_execution_end","toolCallId":"` + id + `","toolName":"` + name + `","result":` + result + `,"isError":` + fmt.Sprint(isError) + `}`
}

func resultLine(id, name, content string, isError bool) string {
	return `{"role":"toolResult","toolCallId":"` + id + `","toolName":"` + name + `","content":` + content + `,"isError":` + fmt.Sprint(isError) + `,"timestamp":1740000000000}`
}

// text is the JSON of a content array with one text block.
func text(s string) string {
	b, _ := json.Marshal(s)
	return `[{"type":"text","text":` + string(b) + `}]`
}

func newExecutor(ts ...tools.Tool) *tools.Executor {
	r := tools.NewRegistry()
	r.MustRegister(ts...)
	return &tools.Executor{Registry: r, Now: func() time.Time { return fixedNow }}
}

// echo answers args["text"] and puts the arguments it saw in details.
func newEcho() *toolstest.Func {
	return toolstest.NewFunc("echo",
		`{"type":"object","properties":{"text":{"type":"string"},"file_path":{"type":"string"}},"required":["text"]}`,
		func(_ context.Context, call tools.Call, _ func(tools.Result)) (tools.Result, error) {
			details, err := json.Marshal(call.Args)
			if err != nil {
				return tools.Result{}, err
			}
			s, _ := call.Args["text"].(string)
			return tools.Result{Content: core.Content{&core.TextContent{Text: s}}, Details: details}, nil
		})
}

func TestRunLifecycle(t *testing.T) {
	type afterSeen struct {
		err  error
		args map[string]any
	}
	edit := toolstest.NewFunc("edit",
		`{"type":"object","properties":{"path":{},"oldText":{},"newText":{}},"required":["path","oldText","newText"]}`,
		func(_ context.Context, call tools.Call, _ func(tools.Result)) (tools.Result, error) {
			d, _ := json.Marshal(call.Args)
			return tools.Result{Content: core.Content{&core.TextContent{Text: "edited"}}, Details: d}, nil
		})
	admin := toolstest.Text("admin", "done")
	admin.Def.Flags.OwnerOnly = true
	errTool := toolstest.NewFunc("fail", "", func(context.Context, tools.Call, func(tools.Result)) (tools.Result, error) {
		return tools.Result{}, errors.New("command required")
	})
	errWithOutput := toolstest.NewFunc("fail_out", "", func(context.Context, tools.Call, func(tools.Result)) (tools.Result, error) {
		return tools.TextResult("exit status 2\nstderr: boom"), errors.New("exit status 2")
	})
	boom := toolstest.NewFunc("boom", "", func(context.Context, tools.Call, func(tools.Result)) (tools.Result, error) {
		panic("kaboom")
	})
	empty := toolstest.NewFunc("empty", "", nil)
	nilBlocks := toolstest.NewFunc("nil_blocks", "", func(context.Context, tools.Call, func(tools.Result)) (tools.Result, error) {
		return tools.Result{Content: core.Content{nil, (*core.TextContent)(nil)}}, nil
	})
	img := toolstest.NewFunc("image", "", func(context.Context, tools.Call, func(tools.Result)) (tools.Result, error) {
		return tools.Result{Content: core.Content{
			&core.TextContent{Text: "MEDIA:/tmp/a.png"},
			&core.ImageContent{Data: "AAAAAAAAAAAAAAAA", MimeType: "image/png"}, // 12 bytes
			&core.ImageContent{Data: "AAAAAAA=", MimeType: "image/png"},         // 5 bytes
		}}, nil
	})
	long := toolstest.Text("long", "héllo wörld")
	short := toolstest.Text("short", "hello")

	const echoCall = `{"text":"hi"}`
	tests := []struct {
		name      string
		call      tools.Call
		setup     func(*tools.Executor)
		wantCalls map[*toolstest.Func]int
		wantMsg   string
		// wantEvents defaults to start with the call's args and end with
		// the message's content and isError.
		wantEvents []string
		wantAfter  func(t *testing.T, seen afterSeen)
		// cancelled runs the call with a context already cancelled.
		cancelled bool
	}{
		{
			name:      "success",
			call:      tools.Call{ID: "c1", Name: "echo", Args: map[string]any{"text": "hi"}},
			wantCalls: map[*toolstest.Func]int{nil: 1},
			wantMsg:   `{"role":"toolResult","toolCallId":"c1","toolName":"echo","content":` + text("hi") + `,"details":{"text":"hi"},"isError":false,"timestamp":1740000000000}`,
			wantEvents: []string{
				startLine("c1", "echo", echoCall),
				endLine("c1", "echo", `{"content":`+text("hi")+`,"details":{"text":"hi"}}`, false),
			},
			wantAfter: func(t *testing.T, seen afterSeen) {
				if seen.err != nil {
					t.Errorf("after hook err = %v", seen.err)
				}
			},
		},
		{
			name:      "blocked by a before hook",
			call:      tools.Call{ID: "c1", Name: "echo", Args: map[string]any{"text": "rm -rf /"}},
			wantCalls: map[*toolstest.Func]int{nil: 0},
			setup: func(e *tools.Executor) {
				e.Hooks.Before = append(e.Hooks.Before,
					func(_ context.Context, c *tools.Call) tools.Decision {
						if strings.HasPrefix(c.Args["text"].(string), "rm") {
							return tools.Decision{Block: true, Reason: "Tool blocked by policy: safe-bin mode"}
						}
						return tools.Decision{}
					},
					func(context.Context, *tools.Call) tools.Decision {
						t.Error("hook after a block ran")
						return tools.Decision{}
					})
			},
			wantMsg: resultLine("c1", "echo", text(`{"status":"blocked","tool":"echo","reason":"Tool blocked by policy: safe-bin mode"}`), true),
			wantAfter: func(t *testing.T, seen afterSeen) {
				if !errors.Is(seen.err, tools.ErrBlocked) {
					t.Errorf("after hook err = %v, want ErrBlocked", seen.err)
				}
			},
		},
		{
			name:    "block without a reason",
			call:    tools.Call{ID: "c1", Name: "echo", Args: map[string]any{"text": "x"}},
			setup:   func(e *tools.Executor) { e.Hooks.Before = append(e.Hooks.Before, blockAll) },
			wantMsg: resultLine("c1", "echo", text(`{"status":"blocked","tool":"echo","reason":"blocked by a before_tool_call hook"}`), true),
		},
		{
			name: "unknown tool",
			call: tools.Call{ID: "c1", Name: "nope", Args: map[string]any{"a": 1.0}},
			setup: func(e *tools.Executor) {
				e.Hooks.Before = append(e.Hooks.Before, func(context.Context, *tools.Call) tools.Decision {
					t.Error("before hook ran for an unknown tool")
					return tools.Decision{}
				})
			},
			wantMsg: resultLine("c1", "nope", text(`{"status":"error","tool":"nope","error":"unknown tool nope; available: admin, boom, echo, edit, empty, fail, fail_out, image, long, nil_blocks, short"}`), true),
			wantAfter: func(t *testing.T, seen afterSeen) {
				if !errors.Is(seen.err, tools.ErrUnknownTool) {
					t.Errorf("after hook err = %v, want ErrUnknownTool", seen.err)
				}
			},
		},
		{
			name:      "owner-only tool, sender not an owner",
			call:      tools.Call{ID: "c1", Name: "admin"},
			wantCalls: map[*toolstest.Func]int{admin: 0},
			setup: func(e *tools.Executor) {
				// A hook cannot make the sender an owner.
				e.Hooks.Before = append(e.Hooks.Before, func(_ context.Context, c *tools.Call) tools.Decision {
					c.SenderIsOwner = true
					return tools.Decision{}
				})
			},
			wantMsg: resultLine("c1", "admin", text(`{"status":"blocked","tool":"admin","reason":"tool is restricted to the owner"}`), true),
			wantEvents: []string{
				startLine("c1", "admin", `{}`),
				endLine("c1", "admin", `{"content":`+text(`{"status":"blocked","tool":"admin","reason":"tool is restricted to the owner"}`)+`}`, true),
			},
			wantAfter: func(t *testing.T, seen afterSeen) {
				if !errors.Is(seen.err, tools.ErrBlocked) {
					t.Errorf("after hook err = %v, want ErrBlocked", seen.err)
				}
			},
		},
		{
			name:      "owner-only tool, owner",
			call:      tools.Call{ID: "c1", Name: "admin", SenderIsOwner: true},
			wantCalls: map[*toolstest.Func]int{admin: 1},
			wantMsg:   resultLine("c1", "admin", text("done"), false),
		},
		{
			name:      "required parameter absent",
			call:      tools.Call{ID: "c1", Name: "echo", Args: map[string]any{"file_path": "/a"}},
			wantCalls: map[*toolstest.Func]int{nil: 0},
			wantMsg:   resultLine("c1", "echo", text(`{"status":"error","tool":"echo","error":"text required"}`), true),
			wantAfter: func(t *testing.T, seen afterSeen) {
				if !errors.Is(seen.err, tools.ErrRequiredParam) {
					t.Errorf("after hook err = %v, want ErrRequiredParam", seen.err)
				}
			},
		},
		{
			name:      "required parameter empty",
			call:      tools.Call{ID: "c1", Name: "echo", Args: map[string]any{"text": ""}},
			wantCalls: map[*toolstest.Func]int{nil: 0},
			wantMsg:   resultLine("c1", "echo", text(`{"status":"error","tool":"echo","error":"text required"}`), true),
		},
		{
			name:      "required parameter null",
			call:      tools.Call{ID: "c1", Name: "echo", Args: map[string]any{"text": nil}},
			wantCalls: map[*toolstest.Func]int{nil: 0},
			wantMsg:   resultLine("c1", "echo", text(`{"status":"error","tool":"echo","error":"text required"}`), true),
		},
		{
			name:      "error returned",
			call:      tools.Call{ID: "c1", Name: "fail"},
			wantCalls: map[*toolstest.Func]int{errTool: 1},
			wantMsg:   resultLine("c1", "fail", text(`{"status":"error","tool":"fail","error":"command required"}`), true),
			wantAfter: func(t *testing.T, seen afterSeen) {
				if seen.err == nil || seen.err.Error() != "command required" {
					t.Errorf("after hook err = %v, want the tool's error", seen.err)
				}
			},
		},
		{
			name:    "error returned with output",
			call:    tools.Call{ID: "c1", Name: "fail_out"},
			wantMsg: resultLine("c1", "fail_out", `[{"type":"text","text":"{\"status\":\"error\",\"tool\":\"fail_out\",\"error\":\"exit status 2\"}"},{"type":"text","text":"exit status 2\nstderr: boom"}]`, true),
		},
		{
			name:      "panic",
			call:      tools.Call{ID: "c1", Name: "boom"},
			wantCalls: map[*toolstest.Func]int{boom: 1},
			wantMsg:   resultLine("c1", "boom", text(`{"status":"error","tool":"boom","error":"tool boom panicked: kaboom"}`), true),
			wantAfter: func(t *testing.T, seen afterSeen) {
				if !errors.Is(seen.err, tools.ErrPanic) {
					t.Errorf("after hook err = %v, want ErrPanic", seen.err)
				}
			},
		},
		{
			name: "before hook rewrites arguments",
			call: tools.Call{ID: "c1", Name: "echo", Args: map[string]any{"text": "original"}},
			setup: func(e *tools.Executor) {
				e.Hooks.Before = append(e.Hooks.Before,
					func(_ context.Context, c *tools.Call) tools.Decision {
						c.Args["text"] = "rewritten" // in place: the executor's copy
						c.Name = "other"             // ignored
						return tools.Decision{}
					},
					func(_ context.Context, c *tools.Call) tools.Decision {
						// A replacement map is normalized again.
						args := maps.Clone(c.Args)
						args["filePath"] = "/added"
						c.Args = args
						return tools.Decision{}
					})
			},
			wantCalls: map[*toolstest.Func]int{nil: 1},
			wantMsg:   `{"role":"toolResult","toolCallId":"c1","toolName":"echo","content":` + text("rewritten") + `,"details":{"file_path":"/added","text":"rewritten"},"isError":false,"timestamp":1740000000000}`,
			wantEvents: []string{
				startLine("c1", "echo", `{"text":"original"}`),
				endLine("c1", "echo", `{"content":`+text("rewritten")+`,"details":{"file_path":"/added","text":"rewritten"}}`, false),
			},
			wantAfter: func(t *testing.T, seen afterSeen) {
				if seen.args["text"] != "rewritten" || seen.args["file_path"] != "/added" {
					t.Errorf("after hook saw args %v", seen.args)
				}
			},
		},
		{
			name:    "camelCase argument normalized",
			call:    tools.Call{ID: "c1", Name: "echo", Args: map[string]any{"Text": "hi", "filePath": "/a"}},
			wantMsg: `{"role":"toolResult","toolCallId":"c1","toolName":"echo","content":` + text("hi") + `,"details":{"file_path":"/a","text":"hi"},"isError":false,"timestamp":1740000000000}`,
			wantEvents: []string{
				startLine("c1", "echo", `{"Text":"hi","filePath":"/a"}`),
				endLine("c1", "echo", `{"content":`+text("hi")+`,"details":{"file_path":"/a","text":"hi"}}`, false),
			},
		},
		{
			name:    "before hooks see normalized arguments",
			call:    tools.Call{ID: "c1", Name: "echo", Args: map[string]any{"text": "x", "filePath": "/etc/shadow"}},
			setup:   func(e *tools.Executor) { e.Hooks.Before = append(e.Hooks.Before, denyPath("/etc/shadow")) },
			wantMsg: resultLine("c1", "echo", text(`{"status":"blocked","tool":"echo","reason":"path denied"}`), true),
		},
		{
			name:    "Claude Code parameter names",
			call:    tools.Call{ID: "c1", Name: "edit", Args: map[string]any{"file_path": "/a", "old_string": "x", "new_string": "y"}},
			wantMsg: `{"role":"toolResult","toolCallId":"c1","toolName":"edit","content":` + text("edited") + `,"details":{"newText":"y","oldText":"x","path":"/a"},"isError":false,"timestamp":1740000000000}`,
		},
		{
			name: "persist hook rewrites content",
			call: tools.Call{ID: "c1", Name: "short"},
			setup: func(e *tools.Executor) {
				e.Hooks.Persist = append(e.Hooks.Persist, func(_ context.Context, m *core.ToolResultMessage) {
					m.Content = core.Content{&core.TextContent{Text: "[redacted]"}}
					m.Details = json.RawMessage(`{"redacted":true}`)
				})
			},
			wantMsg: `{"role":"toolResult","toolCallId":"c1","toolName":"short","content":` + text("[redacted]") + `,"details":{"redacted":true},"isError":false,"timestamp":1740000000000}`,
			wantEvents: []string{
				startLine("c1", "short", `{}`),
				endLine("c1", "short", `{"content":`+text("[redacted]")+`,"details":{"redacted":true}}`, false),
			},
		},
		{
			name: "persist hook emptying content",
			call: tools.Call{ID: "c1", Name: "short"},
			setup: func(e *tools.Executor) {
				e.Hooks.Persist = append(e.Hooks.Persist, func(_ context.Context, m *core.ToolResultMessage) { m.Content = nil })
			},
			wantMsg: resultLine("c1", "short", text("(no output)"), false),
		},
		{
			name:      "empty result",
			call:      tools.Call{ID: "c1", Name: "empty"},
			wantCalls: map[*toolstest.Func]int{empty: 1},
			wantMsg:   resultLine("c1", "empty", text("(no output)"), false),
		},
		{
			name:    "nil blocks dropped",
			call:    tools.Call{ID: "c1", Name: "nil_blocks"},
			wantMsg: resultLine("c1", "nil_blocks", text("(no output)"), false),
		},
		{
			name:    "oversize image",
			call:    tools.Call{ID: "c1", Name: "image"},
			setup:   func(e *tools.Executor) { e.MaxImageBytes = 10 },
			wantMsg: resultLine("c1", "image", `[{"type":"text","text":"MEDIA:/tmp/a.png"},{"type":"text","text":"[image omitted: 12 bytes exceeds the 10-byte limit]"},{"type":"image","data":"AAAAAAA=","mimeType":"image/png"}]`, false),
		},
		{
			name:    "images within the default limit",
			call:    tools.Call{ID: "c1", Name: "image"},
			wantMsg: resultLine("c1", "image", `[{"type":"text","text":"MEDIA:/tmp/a.png"},{"type":"image","data":"AAAAAAAAAAAAAAAA","mimeType":"image/png"},{"type":"image","data":"AAAAAAA=","mimeType":"image/png"}]`, false),
		},
		{
			name:    "long text truncated",
			call:    tools.Call{ID: "c1", Name: "long"},
			setup:   func(e *tools.Executor) { e.MaxTextChars = 5 },
			wantMsg: resultLine("c1", "long", text("héllo\n…[output truncated: 5 of 11 chars shown]"), false),
		},
		{
			name:    "text at the limit kept",
			call:    tools.Call{ID: "c1", Name: "long"},
			setup:   func(e *tools.Executor) { e.MaxTextChars = 11 },
			wantMsg: resultLine("c1", "long", text("héllo wörld"), false),
		},
		{
			name:      "caller context already cancelled",
			call:      tools.Call{ID: "c1", Name: "short"},
			cancelled: true,
			wantMsg:   resultLine("c1", "short", text(`{"status":"error","tool":"short","error":"aborted"}`), true),
			wantAfter: func(t *testing.T, seen afterSeen) {
				if !errors.Is(seen.err, tools.ErrAborted) {
					t.Errorf("after hook err = %v, want ErrAborted", seen.err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			echo := newEcho()
			ex := newExecutor(echo, edit, admin, errTool, errWithOutput, boom, empty, nilBlocks, img, long, short)
			counts := map[*toolstest.Func]int{}
			for f := range tt.wantCalls {
				if f == nil {
					f = echo
				}
				counts[f] = f.Calls()
			}
			var seen []afterSeen
			ex.Hooks.After = append(ex.Hooks.After, func(_ context.Context, c tools.Call, _ tools.Result, err error) {
				seen = append(seen, afterSeen{err: err, args: c.Args})
			})
			if tt.setup != nil {
				tt.setup(ex)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancelled {
				cancel()
			}
			origArgs := maps.Clone(tt.call.Args)
			rec := newRecorder(t)

			msg := ex.Run(ctx, tt.call, rec.emit)

			if got := msgJSON(t, msg); got != tt.wantMsg {
				t.Errorf("result\n got %s\nwant %s", got, tt.wantMsg)
			}
			want := tt.wantEvents
			if want == nil {
				args := `{}`
				if tt.call.Args != nil {
					b, _ := json.Marshal(tt.call.Args)
					args = string(b)
				}
				result, _ := json.Marshal(tools.Result{Content: msg.Content, Details: msg.Details})
				want = []string{startLine("c1", tt.call.Name, args), endLine("c1", tt.call.Name, string(result), msg.IsError)}
			}
			if got := rec.Lines(); !slices.Equal(got, want) {
				t.Errorf("events\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
			}
			for f, n := range tt.wantCalls {
				if f == nil {
					f = echo
				}
				if got := f.Calls() - counts[f]; got != n {
					t.Errorf("%s executed %d times, want %d", f.Def.Name, got, n)
				}
			}
			if len(seen) != 1 {
				t.Fatalf("after hooks ran %d times, want 1", len(seen))
			}
			if tt.wantAfter != nil {
				tt.wantAfter(t, seen[0])
			}
			if !reflect.DeepEqual(tt.call.Args, origArgs) {
				t.Errorf("the caller's Args changed: %v, was %v", tt.call.Args, origArgs)
			}
		})
	}
}

func blockAll(context.Context, *tools.Call) tools.Decision { return tools.Decision{Block: true} }

func denyPath(p string) tools.BeforeToolCall {
	return func(_ context.Context, c *tools.Call) tools.Decision {
		if c.Args["file_path"] == p {
			return tools.Decision{Block: true, Reason: "path denied"}
		}
		return tools.Decision{}
	}
}

// runAsync runs one call on its own goroutine; the result arrives on the
// returned channel.
func runAsync(ctx context.Context, ex *tools.Executor, call tools.Call, emit func(core.AgentEvent)) <-chan *core.ToolResultMessage {
	done := make(chan *core.ToolResultMessage, 1)
	go func() { done <- ex.Run(ctx, call, emit) }()
	return done
}

func TestRunProgressUpdates(t *testing.T) {
	gate := toolstest.NewGate("slow")
	ex := newExecutor(gate)
	rec := newRecorder(t)
	done := runAsync(context.Background(), ex, tools.Call{ID: "c1", Name: "slow", Args: map[string]any{"n": 1.0}}, rec.emit)

	<-gate.Started()
	gate.Update(tools.TextResult("Starting..."))
	gate.Update(tools.Result{Content: core.Content{&core.TextContent{Text: "50% done..."}}, Details: json.RawMessage(`{"pct":50}`)})
	gate.Release(tools.TextResult("finished"))
	msg := <-done

	if got, want := msgJSON(t, msg), resultLine("c1", "slow", text("finished"), false); got != want {
		t.Errorf("result\n got %s\nwant %s", got, want)
	}
	want := []string{
		startLine("c1", "slow", `{"n":1}`),
		updateLine("c1", "slow", `{"n":1}`, `{"content":`+text("Starting...")+`}`),
		updateLine("c1", "slow", `{"n":1}`, `{"content":`+text("50% done...")+`,"details":{"pct":50}}`),
		endLine("c1", "slow", `{"content":`+text("finished")+`}`, false),
	}
	if got := rec.Lines(); !slices.Equal(got, want) {
		t.Errorf("events\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}

func TestRunUpdateAfterReturnDropped(t *testing.T) {
	var saved func(tools.Result)
	f := toolstest.NewFunc("leaky", "", func(_ context.Context, _ tools.Call, update func(tools.Result)) (tools.Result, error) {
		saved = update
		return tools.TextResult("ok"), nil
	})
	ex := newExecutor(f)
	rec := newRecorder(t)
	ex.Run(context.Background(), tools.Call{ID: "c1", Name: "leaky"}, rec.emit)
	saved(tools.TextResult("too late"))
	if got := rec.Lines(); len(got) != 2 {
		t.Errorf("got %d events, want start and end only:\n%s", len(got), strings.Join(got, "\n"))
	}
}

func TestRunConcurrentUpdatesFromOneTool(t *testing.T) {
	const workers, each = 4, 25
	f := toolstest.NewFunc("fan", "", func(_ context.Context, _ tools.Call, update func(tools.Result)) (tools.Result, error) {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := range each {
					update(tools.TextResult(fmt.Sprintf("w%d i%d", w, i)))
				}
			})
		}
		wg.Wait()
		return tools.TextResult("ok"), nil
	})
	ex := newExecutor(f)
	rec := newRecorder(t)
	ex.Run(context.Background(), tools.Call{ID: "c1", Name: "fan"}, rec.emit)
	lines := rec.Lines()
	if len(lines) != 2+workers*each {
		t.Fatalf("got %d events, want %d", len(lines), 2+workers*each)
	}
	if !strings.Contains(lines[0], "tool_execution_start") || !strings.Contains(lines[len(lines)-1], "tool_execution_end") {
		t.Errorf("first/last events: %s / %s", lines[0], lines[len(lines)-1])
	}
}

func TestRunTimeout(t *testing.T) {
	gate := toolstest.NewGate("hang")
	gate.Def.Timeout = 20 * time.Millisecond
	ex := newExecutor(gate)
	var afterErr error
	ex.Hooks.After = append(ex.Hooks.After, func(_ context.Context, _ tools.Call, _ tools.Result, err error) { afterErr = err })
	rec := newRecorder(t)

	msg := ex.Run(context.Background(), tools.Call{ID: "c1", Name: "hang"}, rec.emit)

	want := resultLine("c1", "hang", text(`{"status":"error","tool":"hang","error":"timed out after 20ms"}`), true)
	if got := msgJSON(t, msg); got != want {
		t.Errorf("result\n got %s\nwant %s", got, want)
	}
	if !errors.Is(afterErr, tools.ErrTimeout) || !errors.Is(afterErr, context.DeadlineExceeded) {
		t.Errorf("after hook err = %v, want ErrTimeout wrapping the tool's error", afterErr)
	}
	if len(gate.Started()) != 1 {
		t.Error("the gate did not start")
	}
}

func TestRunToolOwnDeadlineIsPlainError(t *testing.T) {
	gate := toolstest.NewGate("hang")
	ex := newExecutor(gate)
	ex.DefaultTimeout = time.Hour
	done := runAsync(context.Background(), ex, tools.Call{ID: "c1", Name: "hang"}, nil)
	<-gate.Started()
	// A deadline of the tool's own making is neither a timeout nor an abort.
	gate.Fail(fmt.Errorf("wrapped: %w", context.DeadlineExceeded))
	msg := <-done
	if want := resultLine("c1", "hang", text(`{"status":"error","tool":"hang","error":"wrapped: context deadline exceeded"}`), true); msgJSON(t, msg) != want {
		t.Errorf("result\n got %s\nwant %s", msgJSON(t, msg), want)
	}
}

func TestRunAbortKeepsPartial(t *testing.T) {
	gate := toolstest.NewGate("slow")
	ex := newExecutor(gate)
	var afterErr error
	ex.Hooks.After = append(ex.Hooks.After, func(_ context.Context, _ tools.Call, _ tools.Result, err error) { afterErr = err })
	rec := newRecorder(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := runAsync(ctx, ex, tools.Call{ID: "c1", Name: "slow"}, rec.emit)

	<-gate.Started()
	gate.Update(tools.TextResult("line 1"))
	gate.Update(tools.Result{Content: core.Content{&core.TextContent{Text: "line 1\nline 2"}}, Details: json.RawMessage(`{"lines":2}`)})
	cancel()
	msg := <-done

	content := `[{"type":"text","text":"{\"status\":\"error\",\"tool\":\"slow\",\"error\":\"aborted\"}"},{"type":"text","text":"line 1\nline 2"}]`
	want := `{"role":"toolResult","toolCallId":"c1","toolName":"slow","content":` + content + `,"details":{"lines":2},"isError":true,"timestamp":1740000000000}`
	if got := msgJSON(t, msg); got != want {
		t.Errorf("result\n got %s\nwant %s", got, want)
	}
	lines := rec.Lines()
	if len(lines) != 4 || lines[3] != endLine("c1", "slow", `{"content":`+content+`,"details":{"lines":2}}`, true) {
		t.Errorf("events:\n%s", strings.Join(lines, "\n"))
	}
	if !errors.Is(afterErr, tools.ErrAborted) || !errors.Is(afterErr, context.Canceled) {
		t.Errorf("after hook err = %v, want ErrAborted wrapping context.Canceled", afterErr)
	}
}

func TestRunBatchParallelReverseOrder(t *testing.T) {
	gates := []*toolstest.Gate{toolstest.NewGate("a"), toolstest.NewGate("b"), toolstest.NewGate("c")}
	ex := newExecutor(gates[0], gates[1], gates[2])
	rec := newRecorder(t)
	calls := []tools.Call{
		{ID: "ca", Name: "a", Args: map[string]any{"i": 0.0}},
		{ID: "cb", Name: "b", Args: map[string]any{"i": 1.0}},
		{ID: "cc", Name: "c", Args: map[string]any{"i": 2.0}},
	}
	done := make(chan []*core.ToolResultMessage, 1)
	go func() { done <- ex.RunBatch(context.Background(), calls, rec.emit) }()

	// All three run at once: each has started before any is released.
	for _, g := range gates {
		<-g.Started()
	}
	for i := len(gates) - 1; i >= 0; i-- {
		gates[i].Update(tools.TextResult("working " + gates[i].Def.Name))
		gates[i].Release(tools.TextResult("done " + gates[i].Def.Name))
		if id := <-rec.ends; id != calls[i].ID {
			t.Fatalf("end event of %s, want %s", id, calls[i].ID)
		}
	}
	results := <-done

	for i, c := range calls {
		if got, want := msgJSON(t, results[i]), resultLine(c.ID, c.Name, text("done "+c.Name), false); got != want {
			t.Errorf("results[%d]\n got %s\nwant %s", i, got, want)
		}
		args := fmt.Sprintf(`{"i":%d}`, i)
		want := []string{
			startLine(c.ID, c.Name, args),
			updateLine(c.ID, c.Name, args, `{"content":`+text("working "+c.Name)+`}`),
			endLine(c.ID, c.Name, `{"content":`+text("done "+c.Name)+`}`, false),
		}
		if got := rec.linesOf(c.ID); !slices.Equal(got, want) {
			t.Errorf("events of %s\n got %s\nwant %s", c.ID, strings.Join(got, "\n     "), strings.Join(want, "\n     "))
		}
	}
}

func TestRunBatchManyCallsRace(t *testing.T) {
	f := toolstest.NewFunc("work", `{"type":"object","properties":{"n":{}},"required":["n"]}`,
		func(_ context.Context, c tools.Call, update func(tools.Result)) (tools.Result, error) {
			update(tools.TextResult("half"))
			return tools.TextResult(fmt.Sprint(c.Args["n"])), nil
		})
	ex := newExecutor(f)
	rec := newRecorder(t)
	var calls []tools.Call
	for i := range 16 {
		calls = append(calls, tools.Call{ID: fmt.Sprint("c", i), Name: "work", Args: map[string]any{"n": float64(i)}})
	}
	results := ex.RunBatch(context.Background(), calls, rec.emit)
	for i, r := range results {
		if r.ToolCallID != calls[i].ID || r.Content[0].(*core.TextContent).Text != fmt.Sprint(i) {
			t.Errorf("results[%d] = %s", i, msgJSON(t, r))
		}
		if n := len(rec.linesOf(calls[i].ID)); n != 3 {
			t.Errorf("%s: %d events, want 3", calls[i].ID, n)
		}
	}
	if got := ex.RunBatch(context.Background(), nil, rec.emit); len(got) != 0 {
		t.Errorf("empty batch: %v", got)
	}
	if got := ex.RunBatch(context.Background(), calls[:1], nil); len(got) != 1 || got[0].IsError {
		t.Errorf("batch of one: %v", got)
	}
}

func TestRunSequentialSkip(t *testing.T) {
	var steered atomic.Bool
	first := toolstest.NewFunc("first", "", func(context.Context, tools.Call, func(tools.Result)) (tools.Result, error) {
		steered.Store(true) // a user message arrives while the first call runs
		return tools.TextResult("one"), nil
	})
	second := toolstest.Text("second", "two")
	ex := newExecutor(first, second)
	var persisted []string
	ex.Hooks.Persist = append(ex.Hooks.Persist, func(_ context.Context, m *core.ToolResultMessage) {
		persisted = append(persisted, m.ToolCallID)
	})
	skipping := true
	ex.Hooks.Before = append(ex.Hooks.Before, func(_ context.Context, c *tools.Call) tools.Decision {
		if skipping && c.Name != "first" {
			t.Errorf("before hook ran for skipped call %s", c.ID)
		}
		return tools.Decision{}
	})
	rec := newRecorder(t)
	asked := 0
	skip := func() bool { asked++; return steered.Load() }
	calls := []tools.Call{{ID: "c1", Name: "first"}, {ID: "c2", Name: "second"}, {ID: "c3", Name: "second"}}

	results := ex.RunSequential(context.Background(), calls, rec.emit, skip)

	if got, want := msgJSON(t, results[0]), resultLine("c1", "first", text("one"), false); got != want {
		t.Errorf("results[0]\n got %s\nwant %s", got, want)
	}
	for i := 1; i < 3; i++ {
		if got, want := msgJSON(t, results[i]), resultLine(calls[i].ID, "second", text("Skipped due to queued user message."), true); got != want {
			t.Errorf("results[%d]\n got %s\nwant %s", i, got, want)
		}
	}
	if second.Calls() != 0 {
		t.Errorf("skipped tool executed %d times", second.Calls())
	}
	if asked != 2 {
		t.Errorf("skip asked %d times, want 2 (skipping is sticky)", asked)
	}
	if !slices.Equal(persisted, []string{"c1", "c2", "c3"}) {
		t.Errorf("persist hooks ran for %v", persisted)
	}
	want := []string{
		startLine("c2", "second", `{}`),
		endLine("c2", "second", `{"content":`+text("Skipped due to queued user message.")+`}`, true),
	}
	if got := rec.linesOf("c2"); !slices.Equal(got, want) {
		t.Errorf("events of c2\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}

	// Without a skip function every call runs.
	skipping = false
	results = ex.RunSequential(context.Background(), calls, nil, nil)
	if results[2].IsError || second.Calls() != 2 {
		t.Errorf("nil skip: results[2] = %s, calls %d", msgJSON(t, results[2]), second.Calls())
	}
}

func TestRunNilRegistry(t *testing.T) {
	var ex tools.Executor
	msg := ex.Run(context.Background(), tools.Call{ID: "c1", Name: "read"}, nil)
	if want := `{"status":"error","tool":"read","error":"unknown tool read; available: (none)"}`; msg.Content[0].(*core.TextContent).Text != want {
		t.Errorf("got %s", msgJSON(t, msg))
	}
	if msg.Timestamp == 0 {
		t.Error("no timestamp from the default clock")
	}
}

func TestRunDoesNotModifyToolBlocks(t *testing.T) {
	block := &core.TextContent{Text: strings.Repeat("x", 20)}
	shared := tools.Result{Content: core.Content{block}}
	f := toolstest.NewFunc("static", "", func(context.Context, tools.Call, func(tools.Result)) (tools.Result, error) {
		return shared, nil
	})
	ex := newExecutor(f)
	ex.MaxTextChars = 10
	msg := ex.Run(context.Background(), tools.Call{ID: "c1", Name: "static"}, nil)
	if block.Text != strings.Repeat("x", 20) || shared.Content[0] != block {
		t.Error("validation modified the tool's result")
	}
	if got := msg.Content[0].(*core.TextContent).Text; got != strings.Repeat("x", 10)+"\n…[output truncated: 10 of 20 chars shown]" {
		t.Errorf("truncated text = %q", got)
	}
}

func TestRunPanicLogsStack(t *testing.T) {
	boom := toolstest.NewFunc("boom", "", func(context.Context, tools.Call, func(tools.Result)) (tools.Result, error) {
		panic(fmt.Errorf("bad state %d", 3))
	})
	ex := newExecutor(boom)
	var buf bytes.Buffer
	ex.Logger = slog.New(slog.NewTextHandler(&buf, nil))
	msg := ex.Run(context.Background(), tools.Call{ID: "c1", Name: "boom"}, nil)
	got := msg.Content[0].(*core.TextContent).Text
	if want := `{"status":"error","tool":"boom","error":"tool boom panicked: bad state 3"}`; got != want {
		t.Errorf("result text\n got %s\nwant %s", got, want)
	}
	if strings.Contains(got, "goroutine") || !strings.Contains(buf.String(), "goroutine") || !strings.Contains(buf.String(), "tool=boom") {
		t.Errorf("stack should be in the log only; log:\n%s", buf.String())
	}
}

func TestRunTimeoutKeepsPartial(t *testing.T) {
	f := toolstest.NewFunc("tail", "", func(ctx context.Context, _ tools.Call, update func(tools.Result)) (tools.Result, error) {
		update(tools.TextResult("first lines"))
		<-ctx.Done()
		return tools.Result{}, ctx.Err()
	})
	f.Def.Timeout = 10 * time.Millisecond
	ex := newExecutor(f)
	msg := ex.Run(context.Background(), tools.Call{ID: "c1", Name: "tail"}, nil)
	want := resultLine("c1", "tail", `[{"type":"text","text":"{\"status\":\"error\",\"tool\":\"tail\",\"error\":\"timed out after 10ms\"}"},{"type":"text","text":"first lines"}]`, true)
	if got := msgJSON(t, msg); got != want {
		t.Errorf("result\n got %s\nwant %s", got, want)
	}
}
