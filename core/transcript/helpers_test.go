package transcript_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/transcript"
)

// Message builders for tests. Timestamps are small integers so golden
// output stays readable.

func user(text string, ts int64) *core.UserMessage { return core.NewUserText(text, ts) }

func assistant(ts int64, blocks ...core.ContentBlock) *core.AssistantMessage {
	return &core.AssistantMessage{
		Content: blocks, API: "anthropic-messages", Provider: "anthropic", Model: "claude-opus-4-6",
		StopReason: core.StopReasonStop, Timestamp: ts,
	}
}

func text(s string) *core.TextContent { return &core.TextContent{Text: s} }

func call(id, name string) *core.ToolCall {
	return &core.ToolCall{ID: id, Name: name, Arguments: map[string]any{"path": "/tmp/" + id}}
}

func result(id, name, s string, ts int64) *core.ToolResultMessage {
	return &core.ToolResultMessage{ToolCallID: id, ToolName: name, Content: core.Content{text(s)}, Timestamp: ts}
}

// encode returns msgs as one JSON array, the form tests compare.
func encode(t testing.TB, msgs []core.Message) string {
	t.Helper()
	b, err := core.Messages(msgs).MarshalJSON()
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	return string(b)
}

// line returns m as a transcript line with its newline.
func line(t testing.TB, m core.Message) []byte {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var c bytes.Buffer
	if err := json.Compact(&c, b); err != nil {
		t.Fatal(err)
	}
	return append(c.Bytes(), '\n')
}

// sampleMessages is a realistic little conversation: text, a tool call
// with its result, an unknown role, thinking.
func sampleMessages() []core.Message {
	raw := &core.RawMessage{JSON: json.RawMessage(`{"role":"bashExecution","command":"ls","output":"a\nb","exitCode":0,"timestamp":4}`)}
	return []core.Message{
		user("Read the file main.ts", 1),
		assistant(2, text("Let me read that file."), call("call_1", "read")),
		result("call_1", "read", "...file contents...", 3),
		raw,
		assistant(5, &core.ThinkingContent{Thinking: "short", ThinkingSignature: "sig"}, text("The file contains a server.")),
		user("thanks", 6),
	}
}

// writeLines writes msgs as a transcript file and returns its path and
// bytes.
func writeLines(t testing.TB, msgs []core.Message) (string, []byte) {
	t.Helper()
	var b []byte
	for _, m := range msgs {
		b = append(b, line(t, m)...)
	}
	return writeFile(t, b), b
}

func writeFile(t testing.TB, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agents", "main", "sessions", "s1.jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// open opens path and closes it at the end of the test.
func open(t testing.TB, path string) (*transcript.File, transcript.LoadReport) {
	t.Helper()
	f, rep, err := transcript.Open(path, transcript.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f, rep
}

// reopenClean opens path again and checks that the load needs no repair
// and gives the same messages and skipped lines as want.
func reopenClean(t testing.TB, path string, want transcript.LoadReport) {
	t.Helper()
	before := readFile(t, path)
	f, rep, err := transcript.Open(path, transcript.Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer f.Close()
	if rep.TruncatedTail || rep.AddedNewline || rep.BackupPath != "" {
		t.Errorf("reopen repaired again: %+v", rep)
	}
	if got, w := encode(t, rep.Messages), encode(t, want.Messages); got != w {
		t.Errorf("reopen loaded other messages:\n got %s\nwant %s", got, w)
	}
	if !equalInts(rep.SkippedLines, want.SkippedLines) {
		t.Errorf("reopen skipped %v, first load %v", rep.SkippedLines, want.SkippedLines)
	}
	if after := readFile(t, path); !bytes.Equal(before, after) {
		t.Errorf("reopen changed the file")
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
