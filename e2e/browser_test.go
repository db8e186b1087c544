package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// waitTimeout bounds every wait for the page; generous, because CI runs
// the race-detector build on two cores.
const waitTimeout = 20 * time.Second

// tab is one browser tab on the web chat page.
type tab struct {
	t   *testing.T
	ctx context.Context

	mu         sync.Mutex
	dialogs    []string // JavaScript dialogs the page opened (alert, confirm…)
	exceptions []string // uncaught exceptions
}

// openTab opens url in a new tab. When the test ends the tab saves a
// screenshot and the test fails if the page threw an uncaught exception
// or opened a dialog.
func openTab(t *testing.T, url string) *tab {
	t.Helper()
	needBrowser(t)
	ctx, cancel := chromedp.NewContext(browserCtx)
	tb := &tab{t: t, ctx: ctx}
	if err := chromedp.Listen(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *page.EventJavascriptDialogOpening:
			tb.mu.Lock()
			tb.dialogs = append(tb.dialogs, string(ev.Type)+": "+ev.Message)
			tb.mu.Unlock()
			// A dialog stalls the page until it is handled; dismiss it off
			// the event loop.
			go func() { _, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{}) }()
		case *runtime.EventExceptionThrown:
			msg := ev.ExceptionDetails.Text
			if ex := ev.ExceptionDetails.Exception; ex != nil && ex.Description != "" {
				msg += " " + ex.Description
			}
			tb.mu.Lock()
			tb.exceptions = append(tb.exceptions, msg)
			tb.mu.Unlock()
		}
	}); err != nil {
		cancel()
		t.Fatalf("open a tab: %v", err)
	}
	t.Cleanup(cancel)
	t.Cleanup(func() {
		tb.screenshot(t.Name())
		tb.mu.Lock()
		defer tb.mu.Unlock()
		if len(tb.dialogs) > 0 {
			t.Errorf("the page opened JavaScript dialogs: %q", tb.dialogs)
		}
		if len(tb.exceptions) > 0 {
			t.Errorf("the page threw uncaught exceptions: %q", tb.exceptions)
		}
	})
	tb.do("open "+url, chromedp.Navigate(url))
	return tb
}

// do runs actions, failing the test with what was being done.
func (tb *tab) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, waitTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		tb.t.Fatalf("%s: %v", what, err)
	}
}

// eval evaluates a JavaScript expression (awaiting a promise) and decodes
// its value.
func eval[T any](tb *tab, expr string) T {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, waitTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		tb.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitFor polls a JavaScript condition until it is truthy.
func (tb *tab) waitFor(what, cond string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, waitTimeout)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool]("!!("+cond+")", chromedp.WithPollingInterval(25*time.Millisecond), chromedp.WithPollingTimeout(waitTimeout)))
	if err != nil {
		state, _ := chromedp.Run(tb.ctx, chromedp.Evaluate[string](`document.getElementById("conn-state").textContent`))
		body, _ := chromedp.Run(tb.ctx, chromedp.Evaluate[string](`document.getElementById("messages").innerText`))
		tb.t.Fatalf("waiting for %s (%s): %v\nconnection: %q\nmessages:\n%s", what, cond, err, state, body)
	}
}

// text returns the textContent of the first element matching sel.
func (tb *tab) text(sel string) string {
	tb.t.Helper()
	return eval[string](tb, fmt.Sprintf(`(document.querySelector(%q)||{}).textContent||""`, sel))
}

// js quotes s as a JavaScript string literal.
func js(s string) string { return fmt.Sprintf("%q", s) }

// login pastes the token into the connect form and waits for the
// connection.
func (tb *tab) login(token string) {
	tb.t.Helper()
	tb.do("paste the token",
		chromedp.WaitVisible(chromedp.CSS("#token-input")),
		chromedp.SendKeys(chromedp.CSS("#token-input"), token),
		chromedp.Click(chromedp.CSS("#connect-button")))
	tb.waitConnected()
}

// waitConnected waits for the connection pill to say connected and the
// composer to be usable.
func (tb *tab) waitConnected() {
	tb.t.Helper()
	tb.waitFor("the page to connect", `document.getElementById("conn-state").dataset.state === "connected" && !document.getElementById("composer-input").disabled`)
}

// send types text into the message box and presses Enter.
func (tb *tab) send(text string) {
	tb.t.Helper()
	tb.do("send "+text,
		chromedp.Focus(chromedp.CSS("#composer-input")),
		chromedp.SendKeys(chromedp.CSS("#composer-input"), text),
		chromedp.SendKeys(chromedp.CSS("#composer-input"), kb.Enter))
}

// waitAssistant waits until an assistant bubble's text contains want.
func (tb *tab) waitAssistant(want string) {
	tb.t.Helper()
	tb.waitFor("an assistant reply containing "+want,
		`[...document.querySelectorAll("#messages .bubble-assistant")].some(b => b.textContent.includes(`+js(want)+`))`)
}

// waitIdle waits until no run is live (the reply is complete).
func (tb *tab) waitIdle() {
	tb.t.Helper()
	tb.waitFor("the run to end", `!document.querySelector("#messages .live, #messages .streaming") && document.getElementById("abort-button").disabled`)
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// artifactsDir is where scenarios save what they saw: $E2E_ARTIFACTS, else
// e2e/artifacts; "" (logged) when it cannot be made.
func artifactsDir(t *testing.T) string {
	dir := os.Getenv("E2E_ARTIFACTS")
	if dir == "" {
		dir = "artifacts"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Logf("artifacts: %v", err)
		return ""
	}
	return dir
}

// screenshot saves the page as a PNG artifact named after the scenario.
func (tb *tab) screenshot(name string) {
	dir := artifactsDir(tb.t)
	if dir == "" {
		return
	}
	ctx, cancel := context.WithTimeout(tb.ctx, 10*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		tb.t.Logf("screenshot: %v", err)
		return
	}
	path := filepath.Join(dir, strings.Trim(unsafeName.ReplaceAllString(name, "_"), "_")+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		tb.t.Logf("screenshot: %v", err)
		return
	}
	tb.t.Logf("screenshot: %s", path)
}
