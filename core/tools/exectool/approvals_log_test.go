package exectool_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core/tools/exectool"
)

// logBuffer is a slog text handler's output, safe for the goroutines that
// log into it.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// lines returns what was logged so far, one entry a line.
func (l *logBuffer) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Split(strings.TrimSpace(l.b.String()), "\n")
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// TestFinding4ApprovalLogged is issue 26's finding 4, the daemon's side: a
// command waiting for approval said nothing in the daemon's log, so a user
// watching the terminal learnt of it only from the model's "denied" 120 s
// later. Now the log says that a command waits, which session asked, what
// (shortened, credentials masked, variables' values never), when it
// expires and where to answer; and how it ended.
func TestFinding4ApprovalLogged(t *testing.T) {
	t.Run("exec request, answered", func(t *testing.T) {
		r := newRig(t, exectool.Config{})
		var logs logBuffer
		r.approvals.Logger = logs.logger()
		r.approvals.AnswerAt = "in the web chat at http://127.0.0.1:18789/"
		done := r.start(context.Background(), "exec", argv("echo", "hello"))
		req := r.request()
		waiting := logs.lines()
		if len(waiting) != 1 {
			t.Fatalf("while waiting the log holds %d lines, want 1: %q", len(waiting), waiting)
		}
		for _, want := range []string{"level=INFO", "waiting for an operator's approval", "id=" + req.ID, "session=agent:main:main",
			`command="echo hello"`, "commandBytes=10", "timeout=2m0s", "expires=" + time.UnixMilli(req.ExpiresAtMs).Format("15:04:05"),
			`answer="approve or deny it in the web chat at http://127.0.0.1:18789/"`} {
			if !strings.Contains(waiting[0], want) {
				t.Errorf("the waiting line lacks %q: %s", want, waiting[0])
			}
		}
		if err := r.approvals.Resolve(req.ID, exectool.AllowOnce, "webchat-ui:abc", req.Request.CommandHash); err != nil {
			t.Fatal(err)
		}
		r.result(done)
		lines := logs.lines()
		if len(lines) != 2 {
			t.Fatalf("after the answer the log holds %d lines, want 2: %q", len(lines), lines)
		}
		for _, want := range []string{"level=INFO", "approval answered", "id=" + req.ID, "decision=allow-once", "by=webchat-ui:abc"} {
			if !strings.Contains(lines[1], want) {
				t.Errorf("the answered line lacks %q: %s", want, lines[1])
			}
		}
	})

	t.Run("denied", func(t *testing.T) {
		var logs logBuffer
		a, _, requested := fakeClockApprovals(&logs)
		got := make(chan exectool.ApprovalResolved, 1)
		go func() {
			got <- a.Request(context.Background(), exectool.ApprovalDetails{Command: "rm -rf build", SessionKey: "agent:main:main"})
		}()
		id := <-requested
		if err := a.Resolve(id, exectool.Deny, "cli", ""); err != nil {
			t.Fatal(err)
		}
		<-got
		lines := logs.lines()
		if len(lines) != 2 || !strings.Contains(lines[1], "approval answered") || !strings.Contains(lines[1], "decision=deny") {
			t.Fatalf("log: %q", lines)
		}
		// Without AnswerAt the line still says where to answer.
		if !strings.Contains(lines[0], "in the web chat or any gateway client with the operator.approvals scope") {
			t.Errorf("the waiting line does not say where to answer: %s", lines[0])
		}
	})

	t.Run("expired", func(t *testing.T) {
		var logs logBuffer
		a, fire, _ := fakeClockApprovals(&logs)
		got := make(chan exectool.ApprovalResolved, 1)
		go func() {
			got <- a.Request(context.Background(), exectool.ApprovalDetails{Command: "make deploy", SessionKey: "agent:main:main"})
		}()
		(<-fire)() // the timeout passes unanswered
		if res := <-got; res.Reason != "timeout" {
			t.Fatalf("resolved %+v, want a timeout", res)
		}
		lines := logs.lines()
		if len(lines) != 2 {
			t.Fatalf("log: %q", lines)
		}
		for _, want := range []string{"level=WARN", "approval expired", "command was denied", `command="make deploy"`} {
			if !strings.Contains(lines[1], want) {
				t.Errorf("the expired line lacks %q: %s", want, lines[1])
			}
		}
	})

	t.Run("withdrawn with its run", func(t *testing.T) {
		var logs logBuffer
		a, _, requested := fakeClockApprovals(&logs)
		ctx, cancel := context.WithCancel(context.Background())
		got := make(chan exectool.ApprovalResolved, 1)
		go func() { got <- a.Request(ctx, exectool.ApprovalDetails{Command: "sleep 1"}) }()
		<-requested
		cancel()
		<-got
		lines := logs.lines()
		if len(lines) != 2 || !strings.Contains(lines[1], "level=INFO") || !strings.Contains(lines[1], "approval withdrawn") {
			t.Fatalf("log: %q", lines)
		}
	})

	t.Run("no secrets, long commands cut", func(t *testing.T) {
		for _, c := range []struct {
			command string
			secrets []string
			keep    []string
		}{
			{`curl -H 'Authorization: Bearer sk-live-0123456789' https://api.example.com/v1`, []string{"sk-live-0123456789"}, []string{"curl -H", "https://api.example.com/v1"}},
			{`mysql --password=hunter22 -u root`, []string{"hunter22"}, []string{"mysql --password=***", "-u root"}},
			{`deploy --token ghp_a1b2c3d4 now`, []string{"ghp_a1b2c3d4"}, []string{"deploy --token ***", "now"}},
			{`git clone https://bob:s3cretpass@git.example.com/r.git`, []string{"s3cretpass"}, []string{"https://bob:***@git.example.com/r.git"}},
			{`aws s3 ls AKIAIOSFODNN7EXAMPLE1234567`, []string{"AKIAIOSFODNN7EXAMPLE1234567"}, []string{"aws s3 ls ***"}},
			{`echo ` + strings.Repeat("x", 5000) + "-tail", []string{"-tail"}, []string{"echo xxxx", "…", "commandBytes=5010"}},
		} {
			var logs logBuffer
			a, _, requested := fakeClockApprovals(&logs)
			ctx, cancel := context.WithCancel(context.Background())
			got := make(chan exectool.ApprovalResolved, 1)
			go func() {
				got <- a.Request(ctx, exectool.ApprovalDetails{Command: c.command, Env: map[string]string{"API_TOKEN": "envvalue-never-logged"}})
			}()
			<-requested
			cancel()
			<-got
			all := strings.Join(logs.lines(), "\n")
			for _, s := range append(c.secrets, "envvalue-never-logged") {
				if strings.Contains(all, s) {
					t.Errorf("the log of %.60q shows %q:\n%s", c.command, s, all)
				}
			}
			for _, k := range c.keep {
				if !strings.Contains(all, k) {
					t.Errorf("the log of %.60q lacks %q:\n%s", c.command, k, all)
				}
			}
			if n := len(logs.lines()[0]); n > 600 {
				t.Errorf("the waiting line is %d bytes long; the command must be cut", n)
			}
		}
	})
}

// fakeClockApprovals returns Approvals logging to logs, whose timeouts the
// test fires from fire, and which announce each request on requested.
func fakeClockApprovals(logs *logBuffer) (a *exectool.Approvals, fire chan func(), requested chan string) {
	fire, requested = make(chan func(), 1), make(chan string, 1)
	return &exectool.Approvals{
		Logger:    logs.logger(),
		AfterFunc: func(_ time.Duration, f func()) exectool.Timer { fire <- f; return stopTimer{} },
		OnEvent: func(name string, payload any) {
			if name == exectool.EventRequested {
				requested <- payload.(exectool.ApprovalRequest).ID
			}
		},
	}, fire, requested
}
