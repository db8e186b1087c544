package agent_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/core/tools"
)

// lastMessageJSON returns the last message of a model request as JSON:
// for a request that follows a tool call, the tool result the model sees.
func lastMessageJSON(t *testing.T, req llmtest.Request) string {
	t.Helper()
	msgs, ok := req.JSON(t)["messages"].([]any)
	if !ok || len(msgs) == 0 {
		t.Fatalf("request has no messages: %s", req.Body)
	}
	raw, err := json.Marshal(msgs[len(msgs)-1])
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func TestFileToolsEndToEnd(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "ws")
	jail, err := tools.OpenJail(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { jail.Close() })
	h := newHarness(t, harnessOptions{
		tools: tools.FileTools(jail),
		script: []llmtest.Response{
			llmtest.ToolCalls(llmtest.Call("write", `{"path":"notes/todo.md","content":"- buy milk\n- call Ada\n"}`)),
			llmtest.ToolCalls(llmtest.Call("read", `{"path":"notes/todo.md"}`)),
			llmtest.ToolCalls(llmtest.Call("edit", `{"path":"notes/todo.md","old_string":"buy milk","new_string":"buy oat milk"}`)),
			llmtest.ToolCalls(llmtest.Call("ls", `{"path":"notes"}`)),
			llmtest.ToolCalls(llmtest.Call("read", `{"path":"../../etc/passwd"}`)),
			llmtest.Text("Your list is updated."),
		},
	})
	res := h.runTurn(agent.Turn{Inbound: dm("add oat milk to my list"), SenderIsOwner: true}, nil)
	if len(res.Replies) != 1 || res.Replies[0].Text != "Your list is updated." {
		t.Fatalf("replies = %+v", res.Replies)
	}

	reqs := h.server.Requests()
	if len(reqs) != 6 {
		t.Fatalf("the model was called %d times, want 6", len(reqs))
	}
	// Request i+1 carries the result of call i.
	for i, want := range []string{
		"Created notes/todo.md: wrote 22 bytes.",
		`notes/todo.md (lines 1–2 of 2)\n- buy milk\n- call Ada\n`,
		"Edited notes/todo.md: 1 replacement.",
		`notes/ (1 entry)\ntodo.md  26 bytes`,
		`.. leads outside the workspace; give a path inside it`,
	} {
		got := lastMessageJSON(t, reqs[i+1])
		if !strings.Contains(got, want) {
			t.Errorf("tool result %d the model saw = %s, want it to contain %q", i+1, got, want)
		}
		if isErr := strings.Contains(got, `"is_error":true`); isErr != (i == 4) {
			t.Errorf("tool result %d is_error = %v: %s", i+1, isErr, got)
		}
	}
	if got := lastMessageJSON(t, reqs[5]); !strings.Contains(got, `\"status\":\"error\",\"tool\":\"read\"`) ||
		!strings.Contains(got, `../../etc/passwd`) {
		t.Errorf("the traversal did not come back as a seed-002 error envelope naming the path: %s", got)
	}

	results := toolResults(h.transcriptLines(res.SessionID))
	if len(results) != 5 {
		t.Fatalf("transcript has %d tool results, want 5", len(results))
	}
	if results[4]["isError"] != true || !strings.Contains(contentText(results[4]), ".. leads outside the workspace") {
		t.Errorf("transcript traversal result = %v", results[4])
	}

	data, err := os.ReadFile(filepath.Join(ws, "notes", "todo.md"))
	if err != nil || string(data) != "- buy oat milk\n- call Ada\n" {
		t.Errorf("file on disk = %q, %v", data, err)
	}
	fi, err := os.Stat(filepath.Join(ws, "notes", "todo.md"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode = %v, %v", fi, err)
	}
}
