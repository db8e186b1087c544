package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/switchboardhq/switchboard/gateway/client"
)

// signInURL matches the one-time link in the daemon's ready line.
var signInURL = regexp.MustCompile(`signInURL="?(http://127\.0\.0\.1:\d+/#login=[A-Z2-7]+)`)

// TestFirstTenMinutes is issue 26's way in, from an empty HOME with the
// built binary only: `switchboard init`, `switchboard run`, open the link
// it prints, chat with the echo model. The page shows the user's own words
// echoed (no metadata block), and /new and a heartbeat as system notes.
func TestFirstTenMinutes(t *testing.T) {
	needBrowser(t)
	home := t.TempDir()
	port := freePort(t)
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	if tmp := os.Getenv("TMPDIR"); tmp != "" {
		env = append(env, "TMPDIR="+tmp)
	}

	initCmd := exec.Command(binPath, "init", "--port", strconv.Itoa(port))
	initCmd.Env, initCmd.Dir = env, home
	out, err := initCmd.CombinedOutput()
	if err != nil {
		t.Fatalf("switchboard init: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "echo model") || !strings.Contains(string(out), binPath+" run\n") {
		t.Errorf("init's output does not name the echo model and the next command:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(home, ".switchboard", "config.yaml")); err != nil {
		t.Fatalf("init wrote no configuration: %v", err)
	}

	logs := &syncBuffer{}
	run := exec.Command(binPath, "run")
	run.Env, run.Dir = env, home
	run.Stdout, run.Stderr = logs, logs
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = run.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = run.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = run.Process.Kill()
			<-done
			t.Error("switchboard run did not stop within 30 s of SIGTERM")
		}
		if t.Failed() {
			t.Logf("switchboard output:\n%s", logs.String())
		}
	})
	var link string
	deadline := time.Now().Add(30 * time.Second)
	for link == "" {
		if m := signInURL.FindStringSubmatch(logs.String()); m != nil {
			link = m[1]
			break
		}
		select {
		case <-done:
			t.Fatalf("switchboard run exited:\n%s", logs.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no sign-in link in the log within 30 s:\n%s", logs.String())
		}
	}

	tb := openTab(t, link)
	tb.waitConnected()
	if href := eval[string](tb, `location.href`); strings.Contains(href, "#login") {
		t.Errorf("the sign-in code stays in the address bar: %s", href)
	}
	if eval[string](tb, `localStorage.getItem("switchboard.deviceToken") || ""`) == "" {
		t.Error("the page kept no device token after signing in")
	}

	tb.send("hello there")
	tb.waitAssistant("echo: hello there")
	tb.waitIdle()
	if got := eval[[]string](tb, `[...document.querySelectorAll("#messages .bubble-assistant .block-text")].map(b => b.textContent.trim())`); len(got) != 1 || got[0] != "echo: hello there" {
		t.Errorf("the echo's text blocks are %q, want only the user's words", got)
	}
	if txt := tb.text("#messages"); strings.Contains(txt, "untrusted metadata") || strings.Contains(txt, "Conversation info") {
		t.Errorf("the chat shows prompt scaffolding:\n%s", txt)
	}

	tb.send("/new")
	tb.waitFor("the /new note", `!!document.querySelector('#messages .system-note[data-source="reset"]')`)
	tb.waitAssistant("a new session has started")
	tb.waitIdle()
	if n := eval[int](tb, `[...document.querySelectorAll("#messages .bubble-user")].filter(b => b.textContent.includes("Session Startup")).length`); n != 0 {
		t.Error("the session startup prompt shows as the user's words")
	}

	// A heartbeat: the daemon's own poll, shown as a note after a reload.
	tok := exec.Command(binPath, "gateway", "token")
	tok.Env, tok.Dir = env, home
	token, err := tok.Output()
	if err != nil {
		t.Fatalf("switchboard gateway token: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	admin, err := client.Dial(ctx, client.Options{URL: "ws://127.0.0.1:" + strconv.Itoa(port) + "/", Token: strings.TrimSpace(string(token)), Scopes: []string{"operator.admin"}})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Call(ctx, "wake", map[string]any{"mode": "now", "text": "Nightly backup finished"}); err != nil {
		t.Fatalf("wake: %v", err)
	}
	if _, err := admin.Next(ctx, func(e client.Event) bool { return e.Name == "heartbeat" }); err != nil {
		t.Fatalf("no heartbeat ran: %v", err)
	}
	tb.do("reload", chromedp.Reload())
	tb.waitConnected()
	tb.waitFor("the heartbeat note", `!!document.querySelector('#messages .system-note[data-source="heartbeat"]')`)
	if n := eval[int](tb, `[...document.querySelectorAll("#messages .bubble-user")].filter(b => b.textContent.includes("HEARTBEAT")).length`); n != 0 {
		t.Error("the heartbeat poll shows as the user's words after a reload")
	}
	if !strings.Contains(tb.text(`#messages .system-note[data-source="reset"]`), "New session started") {
		t.Errorf("the /new note reads %q", tb.text(`#messages .system-note[data-source="reset"]`))
	}
}
