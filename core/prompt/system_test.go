package prompt

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/switchboardhq/switchboard/core"
)

func TestSystemStableAcrossTurns(t *testing.T) {
	opts := func(in *core.Inbound, tools []ToolSummary) SystemOptions {
		return SystemOptions{Tools: tools, Heartbeats: true, Workspace: testWorkspace(), Inbound: in}
	}
	tools := []ToolSummary{{Name: "read", Description: "r"}, {Name: "exec", Description: "e"}}
	first := System(opts(seedGroup(), tools))
	// The next turn: another message, another sender, tools listed in
	// another order.
	next := seedGroup()
	next.MessageID, next.Timestamp, next.Body = "msg_2", seedMs+60000, "and now?"
	next.Sender = core.Sender{ID: "+1999", Name: "Zed"}
	next.ReplyTo = &core.QuotedMessage{ID: "msg_abc123", Body: "earlier"}
	reversed := []ToolSummary{tools[1], tools[0]}
	if got := System(opts(next, reversed)); got != first {
		t.Errorf("system prompt changed between turns:\n%s\n---\n%s", first, got)
	}
}

func TestSystemWorkspace(t *testing.T) {
	ws := fstest.MapFS{"AGENTS.md": {Data: []byte("agents")}, "USER.md": {Data: []byte("   \n")}}
	got := System(SystemOptions{Workspace: ws})
	if !strings.Contains(got, "# Project Context") || !strings.Contains(got, "## AGENTS.md\n\nagents") {
		t.Errorf("AGENTS.md missing:\n%s", got)
	}
	for _, absent := range []string{"## USER.md", "## SOUL.md", "embody its persona", "## Heartbeats", TrustedHeading} {
		if strings.Contains(got, absent) {
			t.Errorf("unexpected %q", absent)
		}
	}
	if got := System(SystemOptions{Workspace: fstest.MapFS{}}); strings.Contains(got, "# Project Context") {
		t.Error("empty workspace still has a project context")
	}
	custom := System(SystemOptions{Workspace: ws, Files: []string{"USER.md", "AGENTS.md", "MISSING.md"}})
	if !strings.Contains(custom, "## AGENTS.md") {
		t.Error("custom file list ignored")
	}
	if got := System(SystemOptions{Identity: "You are Clawd.", Heartbeats: true, HeartbeatPrompt: "Check the queue."}); !strings.HasPrefix(got, "You are Clawd.\n") || !strings.Contains(got, "Heartbeat prompt: Check the queue.\n") {
		t.Errorf("identity or heartbeat prompt ignored:\n%s", got)
	}
}

func TestTruncateContextFile(t *testing.T) {
	content := "HEAD-" + strings.Repeat("a", 600) + strings.Repeat("b", 300) + "-TAIL"
	got := truncateContextFile(content, "TOOLS.md", 200)
	if !strings.Contains(got, "[...truncated, read TOOLS.md for full content...]") {
		t.Error("marker missing")
	}
	if !strings.HasPrefix(got, content[:140]) || !strings.HasSuffix(got, content[len(content)-40:]) {
		t.Error("head or tail not kept")
	}
	if !strings.Contains(got, "…(truncated TOOLS.md: kept 140+40 chars of 910)…") {
		t.Errorf("summary line: %q", got)
	}
	if got := truncateContextFile("short", "X.md", 200); got != "short" {
		t.Errorf("short file changed: %q", got)
	}
	// Multi-byte text is cut on character boundaries.
	if got := truncateContextFile(strings.Repeat("é", 300), "U.md", 100); !strings.HasPrefix(got, strings.Repeat("é", 70)+"\n") {
		t.Errorf("cut inside a character: %q", got[:20])
	}
}
