package agent_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/core/tools"
	"github.com/switchboardhq/switchboard/core/tools/toolstest"
)

// seedKeys are the members of each role's line in seed 000 §6.
var seedKeys = map[string][]string{
	"user":       {"content", "role", "timestamp"},
	"assistant":  {"api", "content", "model", "provider", "role", "stopReason", "timestamp", "usage"},
	"toolResult": {"content", "isError", "role", "timestamp", "toolCallId", "toolName"},
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestParallelToolTurnStreamsSeedEventsAndWritesSeedTranscript(t *testing.T) {
	for _, vendor := range []string{"anthropic", "openai"} {
		t.Run(vendor, func(t *testing.T) {
			read := toolstest.Text("read", "import { createServer } from 'http';")
			ls := toolstest.Text("ls", "main.ts\nutil.ts")
			h := newHarness(t, harnessOptions{
				openai: vendor == "openai",
				tools:  []tools.Tool{read, ls},
				script: []llmtest.Response{
					llmtest.ToolCalls(llmtest.Call("read", `{"file_path":"main.ts"}`), llmtest.Call("ls", `{"dir":"."}`)).
						WithUsage(llmtest.Usage{Input: 100, Output: 50}),
					llmtest.Text("The file ", "imports http.").WithUsage(llmtest.Usage{Input: 200, Output: 10}),
				},
			})
			rec := &recorder{}
			res := h.run(dm("Read the file main.ts"), rec)

			if res.Err != nil || res.Aborted {
				t.Fatalf("result: err=%v aborted=%v", res.Err, res.Aborted)
			}
			if read.Calls() != 1 || ls.Calls() != 1 {
				t.Errorf("tool calls: read=%d ls=%d, want 1 each", read.Calls(), ls.Calls())
			}
			if len(res.Replies) != 1 || res.Replies[0].Text != "The file imports http." {
				t.Errorf("replies = %+v", res.Replies)
			}

			// The seed-000 §5.2 lifecycle. The two tool executions run in
			// parallel, so only their per-call order is fixed.
			types := rec.types()
			var tool []string
			var rest []string
			for _, ty := range types {
				if strings.HasPrefix(ty, "tool_execution_") {
					tool = append(tool, ty)
					continue
				}
				rest = append(rest, ty)
			}
			wantRest := []string{
				"agent_start", "message_start", "message_end",
				"turn_start", "message_start", "message_update", "message_end", "turn_end",
				"turn_start", "message_start", "message_update", "message_end", "turn_end",
				"agent_end",
			}
			if !reflect.DeepEqual(rest, wantRest) {
				t.Errorf("event sequence:\n got %v\nwant %v", rest, wantRest)
			}
			if len(tool) != 4 {
				t.Errorf("tool events = %v, want start and end for each call", tool)
			}
			checkToolLifecycles(t, rec)

			// The transcript has the shape of seed 000 §6.
			lines := h.transcriptLines(res.SessionID)
			var roles []string
			for _, l := range lines {
				role, _ := l["role"].(string)
				roles = append(roles, role)
				if want := seedKeys[role]; !reflect.DeepEqual(keys(l), want) {
					t.Errorf("%s line keys = %v, want seed 000 §6's %v", role, keys(l), want)
				}
			}
			if want := []string{"user", "assistant", "toolResult", "toolResult", "assistant"}; !reflect.DeepEqual(roles, want) {
				t.Fatalf("transcript roles = %v, want %v", roles, want)
			}
			if lines[1]["stopReason"] != "toolUse" || lines[4]["stopReason"] != "stop" {
				t.Errorf("stop reasons = %v, %v", lines[1]["stopReason"], lines[4]["stopReason"])
			}
			calls := lines[1]["content"].([]any)
			if len(calls) != 2 || lines[2]["toolCallId"] != calls[0].(map[string]any)["id"] || lines[3]["toolCallId"] != calls[1].(map[string]any)["id"] {
				t.Errorf("tool results are not in call order: calls %v, results %v %v", calls, lines[2]["toolCallId"], lines[3]["toolCallId"])
			}
			// The second request carried both results back to the model.
			reqs := h.server.Requests()
			if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "createServer") || !strings.Contains(string(reqs[1].Body), "util.ts") {
				t.Errorf("the second model request lacks the tool results (%d requests)", len(reqs))
			}
			e := h.entry(dmKey)
			if e.SessionID != res.SessionID || e.Usage.Input != 300 || e.Usage.Output != 60 || e.LastRoute == nil || e.LastRoute.To != "42" {
				t.Errorf("sessions index entry = %+v", e)
			}
		})
	}
}

// checkToolLifecycles asserts each tool call's events come start, (update),
// end.
func checkToolLifecycles(t *testing.T, rec *recorder) {
	t.Helper()
	state := map[string]string{}
	for _, ev := range rec.events {
		switch ev.Type {
		case core.AgentEventToolExecutionStart:
			if state[ev.ToolCallID] != "" {
				t.Errorf("%s started twice", ev.ToolCallID)
			}
			state[ev.ToolCallID] = "started"
		case core.AgentEventToolExecutionUpdate:
			if state[ev.ToolCallID] != "started" {
				t.Errorf("%s update outside its execution", ev.ToolCallID)
			}
		case core.AgentEventToolExecutionEnd:
			if state[ev.ToolCallID] != "started" {
				t.Errorf("%s ended without starting", ev.ToolCallID)
			}
			state[ev.ToolCallID] = "ended"
		}
	}
	for id, s := range state {
		if s != "ended" {
			t.Errorf("%s never ended", id)
		}
	}
}

// toolResults returns the transcript's tool-result lines.
func toolResults(lines []map[string]any) []map[string]any {
	var out []map[string]any
	for _, l := range lines {
		if l["role"] == "toolResult" {
			out = append(out, l)
		}
	}
	return out
}

func contentText(l map[string]any) string {
	if s, ok := l["content"].(string); ok {
		return s
	}
	var b strings.Builder
	for _, c := range l["content"].([]any) {
		if m, ok := c.(map[string]any); ok && m["type"] == "text" {
			b.WriteString(m["text"].(string))
		}
	}
	return b.String()
}

func TestBlockedToolIsNotExecutedAndTheModelSeesTheEnvelope(t *testing.T) {
	exec := toolstest.Text("exec", "ran")
	h := newHarness(t, harnessOptions{
		tools: []tools.Tool{exec},
		executor: func(e *tools.Executor) {
			e.Hooks.Before = append(e.Hooks.Before, func(_ context.Context, c *tools.Call) tools.Decision {
				return tools.Decision{Block: true, Reason: "Tool blocked by policy: safe-bin mode"}
			})
		},
		script: []llmtest.Response{
			llmtest.ToolCalls(llmtest.Call("exec", `{"command":"rm -rf /"}`)),
			llmtest.Text("I am not allowed to run that."),
		},
	})
	res := h.run(dm("clean up"), nil)
	if exec.Calls() != 0 {
		t.Fatalf("a blocked tool ran %d times", exec.Calls())
	}
	results := toolResults(h.transcriptLines(res.SessionID))
	if len(results) != 1 || results[0]["isError"] != true ||
		contentText(results[0]) != `{"status":"blocked","tool":"exec","reason":"Tool blocked by policy: safe-bin mode"}` {
		t.Fatalf("blocked result = %v", results)
	}
	if !strings.Contains(string(h.server.Requests()[1].Body), `safe-bin mode`) {
		t.Errorf("the model was not told the call was blocked")
	}
	if res.Replies[0].Text != "I am not allowed to run that." {
		t.Errorf("reply = %+v", res.Replies)
	}
}

func TestToolErrorBecomesAnErrorResultAndAFallbackReply(t *testing.T) {
	failing := toolstest.NewFunc("fetch", "", func(context.Context, tools.Call, func(tools.Result)) (tools.Result, error) {
		return tools.Result{}, errors.New("connection refused")
	})
	h := newHarness(t, harnessOptions{
		tools: []tools.Tool{failing},
		script: []llmtest.Response{
			llmtest.ToolCalls(llmtest.Call("fetch", `{"url":"https://example.com"}`)),
			llmtest.Text(""), // the model has nothing to add
		},
	})
	res := h.run(dm("fetch it"), nil)
	results := toolResults(h.transcriptLines(res.SessionID))
	if len(results) != 1 || results[0]["isError"] != true || contentText(results[0]) != `{"status":"error","tool":"fetch","error":"connection refused"}` {
		t.Fatalf("error result = %v", results)
	}
	if len(res.Replies) != 1 || !res.Replies[0].IsError || !strings.Contains(res.Replies[0].Text, "connection refused") {
		t.Errorf("want a fallback error reply naming the tool error, got %+v", res.Replies)
	}
}

func TestToolTimeoutIsAnErrorResult(t *testing.T) {
	gate := toolstest.NewGate("slow")
	gate.Def.Timeout = 30 * time.Millisecond
	h := newHarness(t, harnessOptions{
		tools: []tools.Tool{gate},
		script: []llmtest.Response{
			llmtest.ToolCalls(llmtest.Call("slow", `{}`)),
			llmtest.Text("It timed out."),
		},
	})
	res := h.run(dm("go"), nil)
	results := toolResults(h.transcriptLines(res.SessionID))
	if len(results) != 1 || !strings.Contains(contentText(results[0]), `"error":"timed out after 30ms"`) {
		t.Fatalf("timeout result = %v", results)
	}
	if res.Replies[0].Text != "It timed out." {
		t.Errorf("the turn did not continue after the timeout: %+v", res.Replies)
	}
}

func TestAbortMidToolKeepsHistoryAndHintsTheNextTurn(t *testing.T) {
	gate := toolstest.NewGate("build")
	h := newHarness(t, harnessOptions{
		tools: []tools.Tool{gate},
		script: []llmtest.Response{
			llmtest.ToolCalls(llmtest.Call("build", `{}`)),
			llmtest.Text("Resuming."),
		},
	})
	type out struct {
		res *agent.Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := h.runner.Run(context.Background(), agent.Turn{Inbound: dm("build it")})
		done <- out{res, err}
	}()
	<-gate.Started()
	gate.Update(tools.TextResult("compiling 3/10"))
	if phase, _ := h.runner.State(dmKey); phase != agent.PhaseStreaming {
		t.Errorf("phase during a tool call = %v, want streaming", phase)
	}
	ended, ok := h.runner.Abort(dmKey)
	if !ok {
		t.Fatal("Abort found no active run")
	}
	<-ended
	o := <-done
	if o.err != nil || !o.res.Aborted || len(o.res.Replies) != 0 {
		t.Fatalf("aborted run: err=%v aborted=%v replies=%+v", o.err, o.res.Aborted, o.res.Replies)
	}
	lines := h.transcriptLines(o.res.SessionID)
	results := toolResults(lines)
	if len(results) != 1 || !strings.Contains(contentText(results[0]), `"error":"aborted"`) || !strings.Contains(contentText(results[0]), "compiling 3/10") {
		t.Fatalf("aborted tool result = %v", results)
	}
	if !h.entry(dmKey).AbortedLastRun {
		t.Errorf("the sessions index does not remember the abort")
	}
	if phase, _ := h.runner.State(dmKey); phase != agent.PhaseIdle {
		t.Errorf("phase after the run = %v", phase)
	}

	// The next prompt carries the abort hint once.
	h.run(dm("carry on"), nil)
	reqs := h.server.Requests()
	if !strings.Contains(string(reqs[len(reqs)-1].Body), "The previous agent run was aborted by the user") {
		t.Errorf("the next prompt lacks the abort hint")
	}
	if h.entry(dmKey).AbortedLastRun {
		t.Errorf("the abort flag was not cleared")
	}
}

func TestAbortMidStreamKeepsThePartialAnswer(t *testing.T) {
	h := newHarness(t, harnessOptions{script: []llmtest.Response{
		llmtest.Text("Once ", "upon ", "a time").HangAfter(2),
	}})
	done := make(chan *agent.Result, 1)
	rec := &recorder{}
	started := make(chan struct{})
	var once bool
	go func() {
		res, _ := h.runner.Run(context.Background(), agent.Turn{Inbound: dm("tell a story"), Sink: func(ev core.AgentEvent) {
			rec.sink(ev)
			if ev.Type == core.AgentEventMessageUpdate && ev.AssistantMessageEvent.Type == core.AssistantEventTextDelta && !once {
				once = true
				close(started)
			}
		}})
		done <- res
	}()
	<-started
	ended, _ := h.runner.Abort(dmKey)
	<-ended
	res := <-done
	lines := h.transcriptLines(res.SessionID)
	last := lines[len(lines)-1]
	if last["role"] != "assistant" || last["stopReason"] != "aborted" || !strings.HasPrefix(contentText(last), "Once ") {
		t.Fatalf("last transcript line = %v, want the partial answer with stopReason aborted", last)
	}
}

func TestSteerMidTurnReachesTheModelAtTheNextBoundary(t *testing.T) {
	gate := toolstest.NewGate("search")
	h := newHarness(t, harnessOptions{
		tools: []tools.Tool{gate},
		script: []llmtest.Response{
			llmtest.ToolCalls(llmtest.Call("search", `{"q":"flights"}`)),
			llmtest.Text("Found flights, and I checked trains too."),
		},
	})
	if h.runner.Steer(dmKey, &core.Inbound{Body: "x"}) {
		t.Fatal("Steer with no active run must refuse")
	}
	done := make(chan *agent.Result, 1)
	go func() {
		res, _ := h.runner.Run(context.Background(), agent.Turn{Inbound: dm("find flights to Rome")})
		done <- res
	}()
	<-gate.Started()
	steer := dm("also check trains")
	steer.MessageID = "m2"
	if !h.runner.Steer(dmKey, &steer) {
		t.Fatal("Steer refused while the run was streaming")
	}
	gate.Release(tools.TextResult("3 flights"))
	res := <-done

	roles := []string{}
	lines := h.transcriptLines(res.SessionID)
	for _, l := range lines {
		roles = append(roles, l["role"].(string))
	}
	if want := []string{"user", "assistant", "toolResult", "user", "assistant"}; !reflect.DeepEqual(roles, want) {
		t.Fatalf("roles = %v, want %v", roles, want)
	}
	if !strings.Contains(contentText(lines[3]), "also check trains") {
		t.Errorf("steered message = %q", contentText(lines[3]))
	}
	// It reached the model in the same run, after the tool result.
	reqs := h.server.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "also check trains") {
		t.Errorf("the second request does not carry the steered message")
	}
	if res.Replies[0].Text != "Found flights, and I checked trains too." {
		t.Errorf("reply = %+v", res.Replies)
	}
}

func TestNewAndResetStartAFreshTranscriptAndKeepTheOld(t *testing.T) {
	h := newHarness(t, harnessOptions{script: []llmtest.Response{
		llmtest.Text("one"), llmtest.Text("Hello again!"), llmtest.Text("two"),
	}})
	first := h.run(dm("hi"), nil)
	second := h.run(dm("/new"), nil)
	if second.SessionID == first.SessionID {
		t.Fatal("/new kept the session id")
	}
	if len(h.transcriptLines(first.SessionID)) != 2 {
		t.Errorf("the old transcript changed")
	}
	reqs := h.server.Requests()
	if !strings.Contains(string(reqs[1].Body), "A new session was started via /new or /reset") {
		t.Errorf("a bare /new did not send the session-start prompt")
	}
	if strings.Contains(string(reqs[1].Body), `"hi`) {
		t.Errorf("the new session still sees the old history")
	}
	third := h.run(dm("/reset what's up?"), nil)
	if third.SessionID == second.SessionID {
		t.Fatal("/reset kept the session id")
	}
	body := string(h.server.Requests()[2].Body)
	if !strings.Contains(body, "what's up?") || strings.Contains(body, "/reset") {
		t.Errorf("/reset with text should send the text without the command")
	}
}

func TestContextOverflowCompactsAndRetriesOnce(t *testing.T) {
	h := newHarness(t, harnessOptions{script: []llmtest.Response{
		llmtest.Text("first answer"),
		llmtest.Text("second answer"),
		llmtest.ContextTooLong(),
		llmtest.Text("We discussed two things."), // the summary
		llmtest.Text("third answer"),
	}})
	h.run(dm("first question"), nil)
	h.run(dm("second question"), nil)
	var phases []string
	res, err := h.runner.Run(context.Background(), agent.Turn{Inbound: dm("third question"), OnCompaction: func(ev agent.CompactionEvent) {
		phases = append(phases, ev.Phase+":"+ev.Reason)
	}})
	if err != nil || res.Err != nil {
		t.Fatalf("run: %v %v", err, res.Err)
	}
	if res.Replies[0].Text != "third answer" {
		t.Errorf("reply = %+v", res.Replies)
	}
	if !reflect.DeepEqual(phases, []string{"start:overflow", "end:overflow"}) {
		t.Errorf("compaction events = %v", phases)
	}
	lines := h.transcriptLines(res.SessionID)
	var sawEntry bool
	for _, l := range lines {
		if l["role"] == core.RoleCompactionSummary {
			sawEntry = l["summary"] == "We discussed two things."
		}
	}
	if !sawEntry {
		t.Errorf("no compaction entry in the transcript")
	}
	reqs := h.server.Requests()
	if last := string(reqs[len(reqs)-1].Body); !strings.Contains(last, "We discussed two things.") {
		t.Errorf("the retried request does not carry the summary")
	}
	if h.entry(dmKey).CompactionCount != 1 {
		t.Errorf("compaction count = %d", h.entry(dmKey).CompactionCount)
	}
}

func TestModelFailureGivesAnErrorReplyAndKeepsTheTurn(t *testing.T) {
	h := newHarness(t, harnessOptions{script: []llmtest.Response{
		llmtest.HTTPError(401, nil, ""),
	}})
	res := h.run(dm("hi"), nil)
	if res.Err == nil || len(res.Replies) != 1 || !res.Replies[0].IsError {
		t.Fatalf("result = %+v", res)
	}
	if strings.Contains(res.Replies[0].Text, "sk-test-secret") || strings.Contains(res.Err.Error(), "sk-test-secret") {
		t.Errorf("the API key leaked into an error")
	}
	lines := h.transcriptLines(res.SessionID)
	if lines[len(lines)-1]["stopReason"] != "error" {
		t.Errorf("the failed answer is not recorded with stopReason error")
	}
}

func TestHeartbeatAckIsSilentAndKeepsUpdatedAt(t *testing.T) {
	h := newHarness(t, harnessOptions{
		cfg: agent.Config{Heartbeat: agent.HeartbeatConfig{Enabled: true, Prompt: "Read HEARTBEAT.md if it exists."}},
		script: []llmtest.Response{
			llmtest.Text("hello"), llmtest.Text("HEARTBEAT_OK"), llmtest.Text("Disk is 95% full!"),
		},
	})
	h.run(dm("hi"), nil)
	before := h.entry(dmKey).UpdatedAt
	// A heartbeat poll as the scheduler sends it: no sender, no message id.
	hb := core.Inbound{Kind: core.InboundHeartbeat, SessionKey: dmKey, Route: core.Route{Channel: "telegram", To: "42"}, Body: "Read HEARTBEAT.md if it exists."}
	if res := h.run(hb, nil); len(res.Replies) != 0 {
		t.Errorf("a heartbeat ack produced replies: %+v", res.Replies)
	}
	if got := h.entry(dmKey).UpdatedAt; got != before {
		t.Errorf("a heartbeat moved updatedAt from %d to %d", before, got)
	}
	res := h.run(hb, nil)
	if len(res.Replies) != 1 || res.Replies[0].Text != "Disk is 95% full!" {
		t.Errorf("a heartbeat alert = %+v", res.Replies)
	}
	// The ack pair is filtered from later context.
	msgs := fmt.Sprint(h.server.Requests()[2].JSON(t)["messages"])
	if strings.Count(msgs, "Read HEARTBEAT.md if it exists.") != 1 || strings.Contains(msgs, "HEARTBEAT_OK") {
		t.Errorf("the earlier heartbeat poll and ack were not filtered from history")
	}
}

func TestRunawayToolLoopStops(t *testing.T) {
	script := make([]llmtest.Response, 0, 5)
	for i := range 5 {
		script = append(script, llmtest.ToolCalls(llmtest.Call("ping", fmt.Sprintf(`{"n":%d}`, i))))
	}
	h := newHarness(t, harnessOptions{
		cfg:    agent.Config{MaxIterations: 3},
		tools:  []tools.Tool{toolstest.Text("ping", "pong")},
		script: script,
	})
	res := h.run(dm("loop"), nil)
	if res.Err == nil || !strings.Contains(res.Err.Message, "exceeded 3 model calls") {
		t.Fatalf("err = %v", res.Err)
	}
	if n := len(h.server.Requests()); n != 3 {
		t.Errorf("model calls = %d, want 3", n)
	}
}

func TestSecondRunOfABusySessionIsRefused(t *testing.T) {
	gate := make(chan struct{})
	h := newHarness(t, harnessOptions{script: []llmtest.Response{llmtest.Text("slow").Gated(gate)}})
	streaming := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var once bool
		_, _ = h.runner.Run(context.Background(), agent.Turn{Inbound: dm("first"), Sink: func(ev core.AgentEvent) {
			if ev.Type == core.AgentEventTurnStart && !once {
				once = true
				close(streaming)
			}
		}})
	}()
	<-streaming
	if phase, _ := h.runner.State(dmKey); phase != agent.PhaseStreaming {
		t.Errorf("phase = %v, want streaming", phase)
	}
	if _, err := h.runner.Run(context.Background(), agent.Turn{Inbound: dm("second")}); !errors.Is(err, agent.ErrBusy) {
		t.Errorf("second run: %v, want ErrBusy", err)
	}
	close(gate)
	<-done
}

// TestSmallContextWindowCompactsBeforeItIsFull: with a local model's 8,192
// tokens, the default reserve and recent-history sizes (20,000 each) are
// scaled down, so the history is compacted before the window is full, and
// the compaction leaves room for the next turns instead of repeating.
func TestSmallContextWindowCompactsBeforeItIsFull(t *testing.T) {
	var script []llmtest.Response
	for range 40 {
		script = append(script, llmtest.Text("noted"))
	}
	h := newHarness(t, harnessOptions{contextWindow: 8192, script: script})
	var compactedAt []int
	for i := range 24 {
		body := fmt.Sprintf("message %d: %s", i, strings.Repeat("word ", 400)) // ~500 tokens
		res, err := h.runner.Run(context.Background(), agent.Turn{Inbound: dm(body), OnCompaction: func(ev agent.CompactionEvent) {
			if ev.Phase == "end" {
				if ev.Err != nil {
					t.Errorf("turn %d: compaction failed: %v", i, ev.Err)
				}
				if ev.TokensAfter >= 8192-2048 {
					t.Errorf("turn %d: %d tokens after compaction, not below the threshold", i, ev.TokensAfter)
				}
				compactedAt = append(compactedAt, i)
			}
		}})
		if err != nil || res.Err != nil {
			t.Fatalf("turn %d: %v %v", i, err, res.Err)
		}
	}
	if len(compactedAt) == 0 {
		t.Fatal("24 turns of ~500 tokens in an 8,192-token window never compacted")
	}
	for j := 1; j < len(compactedAt); j++ {
		if compactedAt[j]-compactedAt[j-1] < 3 {
			t.Errorf("compactions at turns %v: one right after another", compactedAt)
		}
	}
	if got := h.entry(dmKey).CompactionCount; got != len(compactedAt) {
		t.Errorf("CompactionCount = %d, want %d", got, len(compactedAt))
	}
}
