package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAgentCommandAnswersThroughTheEchoModel(t *testing.T) {
	state := t.TempDir()
	env := map[string]string{"SWITCHBOARD_STATE_DIR": state}
	tc := newTestCLI(env)
	if code := tc.run("agent", "--config", "../../config.yaml.example", "-m", "hello there"); code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, tc.err.String())
	}
	out := tc.out.String()
	if !strings.HasPrefix(out, "echo: ") || !strings.Contains(out, "hello there") {
		t.Errorf("stdout = %q, want the echo of the prompt", out)
	}
	files, _ := filepath.Glob(filepath.Join(state, "agents", "main", "sessions", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("transcripts = %v, want one", files)
	}
	data, _ := os.ReadFile(files[0])
	if strings.Count(string(data), "\n") != 2 {
		t.Errorf("transcript has %d lines, want the prompt and the answer", strings.Count(string(data), "\n"))
	}

	// A second message continues the same session.
	tc = newTestCLI(env)
	if code := tc.run("agent", "--config", "../../config.yaml.example", "-m", "again"); code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, tc.err.String())
	}
	data, _ = os.ReadFile(files[0])
	if strings.Count(string(data), "\n") != 4 {
		t.Errorf("the second turn did not continue the session transcript")
	}
}

func TestAgentCommandUsageErrors(t *testing.T) {
	tc := newTestCLI(nil)
	if code := tc.run("agent", "--config", "../../config.yaml.example"); code != exitUsage || !strings.Contains(tc.err.String(), "--message is required") {
		t.Errorf("no message: exit %d, %q", code, tc.err.String())
	}
	tc = newTestCLI(nil)
	if code := tc.run("agent", "--config", "../../config.yaml.example", "hello"); code != exitUsage || !strings.Contains(tc.err.String(), "-m") {
		t.Errorf("bare argument: exit %d, %q", code, tc.err.String())
	}
}
