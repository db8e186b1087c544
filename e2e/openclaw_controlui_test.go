package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/switchboardhq/switchboard/bridges/telegram/telegramtest"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/gateway/client"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// serveControlUI serves OpenClaw's Control UI (dist/control-ui of the
// installed package) as a static site apart from the gateway, as one
// would host it: files as they are, and index.html for the app's own
// routes (/channels, …).
func serveControlUI(t *testing.T, oc *openClaw) *httptest.Server {
	t.Helper()
	root := filepath.Join(filepath.Dir(oc.entry), "dist", "control-ui")
	if _, err := os.Stat(filepath.Join(root, "index.html")); err != nil {
		t.Fatalf("OpenClaw %s has no Control UI at %s: %v", oc.version, root, err)
	}
	files := http.FileServer(http.Dir(root))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(r.URL.Path, "/")))); err != nil {
				http.ServeFile(w, r, filepath.Join(root, "index.html"))
				return
			}
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// waitModelRequest waits until the fake model has had n requests, so a
// test never feeds a gate nobody reads.
func waitModelRequest(t *testing.T, model *llmtest.Server, n int) {
	t.Helper()
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for len(model.Requests()) < n {
		select {
		case <-deadline.C:
			t.Fatalf("the model had %d requests after %s, want %d", len(model.Requests()), waitTimeout, n)
		case <-tick.C:
		}
	}
}

// pageText is the page's visible text.
const pageText = `document.body.innerText`

// noUnknownMethods fails the test when the page shows a method Switchboard
// does not answer as an error ("unknown method: chat.startup" was the chat
// view's whole content before chat.startup existed).
func (tb *tab) noUnknownMethods(where string) {
	tb.t.Helper()
	if text := eval[string](tb, pageText); strings.Contains(text, "unknown method") {
		tb.t.Errorf("%s shows an unknown method:\n%s", where, text)
	}
}

// TestOpenClawControlUI opens OpenClaw's own Control UI, served apart from
// the gateway, in headless Chromium: it signs in with the gateway URL and
// token, lists the sessions, sends a message and shows the reply while the
// model streams it, and its channels page shows the Telegram bridge.
func TestOpenClawControlUI(t *testing.T) {
	oc := needOpenClaw(t)
	needBrowser(t)
	ui := serveControlUI(t, oc)
	gate := make(chan struct{})
	model := llmtest.NewAnthropicServer(t, llmtest.Text("Partial answer", " from the fake model,", " streamed in parts.").Gated(gate))
	tg := telegramtest.New(t)
	d := newDaemonGateway(t, model, fmt.Sprintf("  controlUi:\n    allowedOrigins: [%q]\n", ui.URL), telegramOn(tg))
	d.start()
	tok := d.token()

	// A session to list besides the main one.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	gc, err := client.Dial(ctx, client.Options{URL: fmt.Sprintf("ws://127.0.0.1:%d/", d.port), Token: tok, Scopes: []string{protocol.ScopeRead, protocol.ScopeWrite}})
	if err != nil {
		t.Fatal(err)
	}
	defer gc.Close()
	if _, err := gc.Call(ctx, "sessions.create", map[string]any{"key": "work", "label": "Work chat"}); err != nil {
		t.Fatal(err)
	}

	// Sign in: the page first tries its own origin, finds no gateway there
	// and asks for the gateway's URL and secret.
	tb := openTab(t, ui.URL+"/")
	tb.do("wait for the sign-in form", chromedp.WaitVisible(chromedp.CSS("#login-gate-url")))
	eval[bool](tb, `(function(){
		const set = (id, v) => { const el = document.getElementById(id); el.value = v; el.dispatchEvent(new Event("input", {bubbles: true})); el.dispatchEvent(new Event("change", {bubbles: true})); };
		set("login-gate-url", `+js(fmt.Sprintf("ws://127.0.0.1:%d", d.port))+`);
		set("login-gate-credential", `+js(tok)+`);
		document.querySelector(".login-gate__connect").click();
		return true;
	})()`)
	tb.waitFor("the session list", pageText+`.includes("Work chat")`)
	tb.waitFor("the chat's composer", `!!document.querySelector('textarea[aria-label="Chat composer"]')`)
	if text := eval[string](tb, pageText); strings.Contains(text, "Connect an AI provider") {
		t.Errorf("the Control UI asks for a model although one is configured:\n%s", text)
	}
	tb.noUnknownMethods("the chat view")

	// Chat: the first part shows while the model holds the rest.
	const composer = `textarea[aria-label="Chat composer"]`
	tb.do("send a message",
		chromedp.SendKeys(chromedp.CSS(composer), "Say hello to the Control UI"),
		chromedp.SendKeys(chromedp.CSS(composer), kb.Enter))
	tb.waitFor("the user's message", pageText+`.includes("Say hello to the Control UI")`)
	waitModelRequest(t, model, 1)
	for range 4 { // message_start, content_block_start, ping, the first delta
		gate <- struct{}{}
	}
	tb.waitFor("the first part of the reply", pageText+`.includes("Partial answer")`)
	if eval[bool](tb, pageText+`.includes("streamed in parts")`) {
		t.Fatal("the whole reply showed before the model sent it")
	}
	close(gate)
	tb.waitFor("the whole reply", pageText+`.includes("Partial answer from the fake model, streamed in parts.")`)
	if reqs := model.Requests(); len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), "Say hello to the Control UI") {
		t.Errorf("the model got %d requests; want one with the message", len(reqs))
	}
	tb.noUnknownMethods("the chat after a reply")

	// Channels: the Telegram bridge, running on its fake.
	tb.do("open the channels page", chromedp.Navigate(ui.URL+"/channels"))
	tb.waitFor("the Telegram bridge", pageText+`.includes("Telegram") && `+pageText+`.includes("Running")`)
	tb.waitFor("the DM access requests", pageText+`.includes("DM ACCESS REQUESTS") || `+pageText+`.includes("DM access requests")`)
	tb.noUnknownMethods("the channels page")
}
