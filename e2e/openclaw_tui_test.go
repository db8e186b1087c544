package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core/llm/llmtest"
)

// tuiTimeout bounds every wait on the TUI's screen: OpenClaw starts in
// seconds, and CI runs the race-detector daemon on two cores.
const tuiTimeout = 60 * time.Second

// tuiPane is `openclaw tui` running in its own tmux server.
type tuiPane struct {
	t      *testing.T
	socket string // tmux -L name, private to the test
}

// needTmux skips the test without tmux, and fails it under CI.
func needTmux(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err == nil {
		return
	}
	msg := "e2e: tmux not found; the TUI test drives OpenClaw's TUI in tmux (Debian package tmux; scripts/install-openclaw installs it)"
	if os.Getenv("CI") != "" || os.Getenv("E2E_REQUIRE_OPENCLAW") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// startTUI runs `openclaw tui` against d with token, on session key, in a
// 160×50 tmux window.
func startTUI(t *testing.T, oc *openClaw, d *daemon, token, session string) *tuiPane {
	t.Helper()
	needTmux(t)
	p := &tuiPane{t: t, socket: fmt.Sprintf("sb-e2e-%d-%d", os.Getpid(), time.Now().UnixNano())}
	cmd := oc.command(context.Background(), t.TempDir(), "tui",
		"--url", fmt.Sprintf("ws://127.0.0.1:%d", d.port), "--token", token, "--session", session)
	// tmux runs the command through a shell in its own environment: pass
	// ours (HOME, PATH) by env(1), with each word quoted.
	words := []string{"env", "-i"}
	words = append(words, cmd.Env...)
	words = append(words, cmd.Args...)
	for i, w := range words {
		words[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	p.tmux("new-session", "-d", "-s", "tui", "-x", "160", "-y", "50", strings.Join(words, " "))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the TUI's screen:\n%s", p.screen())
		}
		_ = exec.Command("tmux", "-L", p.socket, "kill-server").Run()
	})
	return p
}

// tmux runs a tmux command on the test's server.
func (p *tuiPane) tmux(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", p.socket}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// screen is the pane's text with its scrollback, wrapped lines joined.
func (p *tuiPane) screen() string {
	out, err := exec.Command("tmux", "-L", p.socket, "capture-pane", "-p", "-J", "-S", "-", "-t", "tui").CombinedOutput()
	if err != nil {
		return fmt.Sprintf("(capture-pane: %v: %s)", err, out)
	}
	return string(out)
}

// statusLine is the TUI's activity line: the last line above the footer
// that names the connection.
func (p *tuiPane) statusLine() string {
	lines := strings.Split(p.screen(), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], "connected") || strings.Contains(lines[i], "disconnected") || strings.Contains(lines[i], "reconnecting") {
			return strings.TrimSpace(lines[i])
		}
	}
	return ""
}

// waitFor polls the screen until cond holds.
func (p *tuiPane) waitFor(what string, cond func(screen string) bool) {
	p.t.Helper()
	deadline := time.NewTimer(tuiTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond(p.screen()) {
		select {
		case <-deadline.C:
			p.t.Fatalf("waiting for the TUI to show %s (%s)", what, tuiTimeout)
		case <-tick.C:
		}
	}
}

// waitText waits until the screen contains s.
func (p *tuiPane) waitText(s string) {
	p.t.Helper()
	p.waitFor(fmt.Sprintf("%q", s), func(screen string) bool { return strings.Contains(screen, s) })
}

// waitIdle waits until the activity line says the TUI is idle.
func (p *tuiPane) waitIdle() {
	p.t.Helper()
	p.waitFor("connected | idle", func(string) bool { return strings.Contains(p.statusLine(), "connected | idle") })
}

// typeLine types s into the editor as a user would, and presses Enter
// once the editor shows it (before that, Enter could land in a completion
// menu).
func (p *tuiPane) typeLine(s string) {
	p.t.Helper()
	p.tmux("send-keys", "-t", "tui", "-l", s)
	p.waitText(s)
	p.tmux("send-keys", "-t", "tui", "Enter")
}

// noFailures fails the test for every line in which the TUI reports a
// method it could not use ("<what> failed: …"; before sessions.describe
// existed: "session description failed: unknown method"). The TUI clears
// its log on /new and on a reload, so each phase checks its own.
func (p *tuiPane) noFailures() {
	p.t.Helper()
	for _, line := range strings.Split(p.screen(), "\n") {
		if strings.Contains(line, "failed") || strings.Contains(line, "unknown method") {
			p.t.Errorf("the TUI reported a failure: %s", strings.TrimSpace(line))
		}
	}
}

// awaitRequest waits until the model has received its n-th request and the
// TUI has taken chat.send's answer (its activity line no longer says
// "sending"). Only then does the test let the model answer: OpenClaw's TUI
// stays "waiting" for good when a whole run ends before it has handled
// chat.send's response, which a fake model answering in microseconds
// would provoke and a real one never does.
func (p *tuiPane) awaitRequest(model *llmtest.Server, n int) {
	p.t.Helper()
	p.waitFor(fmt.Sprintf("model request %d and chat.send answered", n), func(string) bool {
		return len(model.Requests()) >= n && !strings.Contains(p.statusLine(), "sending")
	})
}

// TestOpenClawTUI chats with Switchboard through OpenClaw's own TUI: it
// connects with the gateway token, sends a line and shows the model's
// answer as it streams, starts a new session with /new, aborts a long
// answer with Escape, and carries on after the daemon restarts.
func TestOpenClawTUI(t *testing.T) {
	oc := needOpenClaw(t)
	first, long, fresh, after := make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan struct{})
	model := llmtest.NewAnthropicServer(t,
		llmtest.Text("Hello", " from the fake model,", " streamed in parts.").Gated(first),
		llmtest.Text("Working on a long answer", " that never ends").Gated(long).HangAfter(1),
		llmtest.Text("Fresh session reply.").Gated(fresh),
		llmtest.Text("Back after the restart.").Gated(after),
	)
	d := newDaemon(t, model)
	d.start()
	tok := d.token()
	p := startTUI(t, oc, d, tok, "tui-e2e")
	p.waitText("session agent:main:tui-e2e")
	p.waitIdle()

	// A line, answered as the model streams it.
	p.typeLine("Say hello to the suite")
	p.awaitRequest(model, 1)
	for range 4 { // message_start, content_block_start, ping, the first delta
		first <- struct{}{}
	}
	p.waitText("Hello")
	if s := p.screen(); strings.Contains(s, "streamed in parts") {
		t.Fatalf("the whole answer showed before the model sent it:\n%s", s)
	}
	close(first)
	p.waitText("Hello from the fake model, streamed in parts.")
	p.waitIdle()
	p.noFailures()

	// Escape aborts a long answer mid-stream.
	p.typeLine("Write a long answer")
	p.awaitRequest(model, 2)
	close(long)
	p.waitText("Working on a long answer")
	p.tmux("send-keys", "-t", "tui", "Escape")
	p.waitText("run aborted")
	if strings.Contains(p.screen(), "that never ends") {
		t.Error("text the model never sent was shown")
	}
	p.noFailures()

	// /new moves the TUI to a fresh session, whose prompt carries none of
	// the first session's conversation.
	p.typeLine("/new")
	p.waitText("new session: agent:main:tui-")
	p.waitIdle()
	p.typeLine("First line of the new session")
	p.awaitRequest(model, 3)
	close(fresh)
	p.waitText("Fresh session reply.")
	if body := string(model.Requests()[2].Body); strings.Contains(body, "Say hello to the suite") || !strings.Contains(body, "First line of the new session") {
		t.Errorf("the new session's model request carries the old conversation or lacks the new line:\n%s", body)
	}
	p.waitIdle()
	p.noFailures()

	// The daemon restarts; the TUI reconnects by itself and chats on.
	d.stop()
	p.waitFor("the connection lost", func(string) bool {
		s := p.statusLine()
		return !strings.Contains(s, "connected | idle")
	})
	d.start()
	p.waitIdle()
	p.typeLine("Still there after the restart?")
	p.awaitRequest(model, 4)
	close(after)
	p.waitText("Back after the restart.")
	p.waitIdle()
	p.noFailures()
	if dir := artifactsDir(t); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, t.Name()+".txt"), []byte(p.screen()), 0o644); err != nil {
			t.Logf("saving the TUI's screen: %v", err)
		}
	}
}
