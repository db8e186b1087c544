package e2e

import (
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
)

// TestWebChatQuickstart is the README's path: start the daemon with the
// echo provider, take the token `switchboard gateway token` prints, paste
// it into the page, chat.
func TestWebChatQuickstart(t *testing.T) {
	needBrowser(t)
	d := newDaemon(t, nil)
	d.start()
	tb := openTab(t, d.url())
	tb.waitFor("the connect form", `!document.getElementById("login").hidden`)
	token := d.token()
	tb.login(token)

	stored := eval[string](tb, `localStorage.getItem("switchboard.gatewayToken")`)
	href := eval[string](tb, `location.href`)
	if stored != token {
		t.Errorf("localStorage token = %q, want the pasted token", stored)
	}
	if strings.Contains(href, token) {
		t.Errorf("the token is in the URL %s", href)
	}

	tb.send("hello from the browser")
	tb.waitAssistant("hello from the browser")
	tb.waitIdle()
	if got := tb.text("#messages .bubble-user"); !strings.Contains(got, "hello from the browser") {
		t.Errorf("user bubble = %q", got)
	}
}

// connected starts a daemon whose agent talks to a fake Anthropic server
// playing script, and returns a tab logged in to it.
func connected(t *testing.T, script ...llmtest.Response) (*daemon, *llmtest.Server, *tab) {
	t.Helper()
	needBrowser(t)
	model := llmtest.NewAnthropicServer(t, script...)
	d := newDaemon(t, model)
	d.start()
	tb := openTab(t, d.url())
	tb.login(d.token())
	return d, model, tb
}

// TestWebChatStreamsReply: the reply appears while the model is still
// streaming, with a cursor on the streaming block, and is complete at the
// end.
func TestWebChatStreamsReply(t *testing.T) {
	gate := make(chan struct{})
	_, _, tb := connected(t, llmtest.Text("Hello", " from", " the", " model.").Gated(gate))
	tb.send("hi there")

	// message_start, content_block_start, ping, then the first delta.
	for range 4 {
		gate <- struct{}{}
	}
	tb.waitAssistant("Hello")
	if got := tb.text("#messages .bubble-assistant"); strings.Contains(got, "from") {
		t.Fatalf("the rest of the reply arrived before the model sent it: %q", got)
	}
	tb.waitFor("a cursor on the streaming block", `!!document.querySelector("#messages .bubble-assistant .block.streaming .cursor")`)
	if enabled := eval[bool](tb, `!document.getElementById("abort-button").disabled`); !enabled {
		t.Error("the Stop button is disabled while the reply streams")
	}

	close(gate)
	tb.waitAssistant("Hello from the model.")
	tb.waitIdle()
	if n := eval[int](tb, `document.querySelectorAll("#messages .cursor").length`); n != 0 {
		t.Errorf("%d cursors left after the reply ended", n)
	}
	if got := tb.text("#messages .bubble-user"); !strings.Contains(got, "hi there") {
		t.Errorf("user bubble = %q, want the sent text", got)
	}
}

// toolScript is a turn with thinking, text and a tool call, then a text
// answer after the tool result: text + tool + text.
func toolScript() []llmtest.Response {
	return []llmtest.Response{
		llmtest.Reply(
			llmtest.ThinkingBlock("sig-1", "The user wants their sessions; ", "I will list them."),
			llmtest.TextBlock("Let me check your sessions."),
			llmtest.ToolCallBlock(llmtest.Call("sessions_list", `{"limit":5}`)),
		),
		llmtest.Text("You have one session: ", "the main one."),
	}
}

// recordToolStates makes the page record every state a tool block takes.
const recordToolStates = `(() => {
  window.__toolStates = [];
  new MutationObserver((records) => {
    for (const r of records) {
      if (r.type === "attributes" && r.target.classList.contains("block-toolCall")) window.__toolStates.push(r.target.dataset.state);
    }
  }).observe(document.getElementById("messages"), {subtree: true, attributes: true, attributeFilter: ["data-state"]});
  return true;
})()`

// blockLayout describes the rendered conversation: per bubble, its role
// and its blocks' types in DOM order.
const blockLayout = `[...document.querySelectorAll("#messages .bubble")].map(b =>
  (b.classList.contains("bubble-user") ? "user:" : "assistant:") +
  [...b.querySelectorAll(":scope > .bubble-content > .block")].map(x => x.className.split(" ")[1].replace("block-", "")).join(","))`

// TestWebChatToolCall: thinking is collapsible, the tool block shows its
// name and arguments and goes executing → done with the result, and text
// + tool + text render in order, one bubble per model response.
func TestWebChatToolCall(t *testing.T) {
	_, model, tb := connected(t, toolScript()...)
	if !eval[bool](tb, recordToolStates) {
		t.Fatal("could not install the tool-state recorder")
	}
	tb.send("which sessions do I have?")
	tb.waitAssistant("You have one session: the main one.")
	tb.waitIdle()

	states := eval[[]string](tb, `window.__toolStates`)
	if i := slices.Index(states, "executing"); i < 0 || !slices.Contains(states[i:], "done") {
		t.Errorf("tool block states = %q, want executing then done", states)
	}
	layout := eval[[]string](tb, blockLayout)
	want := []string{"user:text", "assistant:thinking,text,toolCall", "assistant:text"}
	if !slices.Equal(layout, want) {
		t.Errorf("layout = %q, want %q", layout, want)
	}
	if name := tb.text("#messages .block-toolCall .tool-name"); name != "sessions_list" {
		t.Errorf("tool name = %q", name)
	}
	if args := tb.text("#messages .block-toolCall .tool-args"); !strings.Contains(args, `"limit": 5`) {
		t.Errorf("tool arguments = %q, want the call's arguments", args)
	}
	// The result shown is the one the model got back.
	tb.waitFor("the tool result", `document.querySelector("#messages .block-toolCall .tool-result").textContent.length > 0`)
	res := tb.text("#messages .block-toolCall .tool-result")
	if reqs := model.Requests(); len(reqs) < 2 || !strings.Contains(string(reqs[1].Body), strings.TrimSpace(res)) {
		t.Errorf("tool result shown = %q, not what the model received", res)
	}
	if open := eval[bool](tb, `document.querySelector("#messages .block-thinking details").open`); open {
		t.Error("the thinking block is expanded; it should start collapsed")
	}
	if got := tb.text("#messages .block-thinking"); !strings.Contains(got, "I will list them.") {
		t.Errorf("thinking block = %q", got)
	}
	if n := len(model.Requests()); n != 2 {
		t.Errorf("the model got %d requests, want 2 (the call, then the answer)", n)
	}
}

// TestWebChatReloadKeepsHistory: after a reload the page reconnects with
// the stored token and shows the conversation from chat.history, blocks
// and tool results included.
func TestWebChatReloadKeepsHistory(t *testing.T) {
	_, _, tb := connected(t, toolScript()...)
	tb.send("which sessions do I have?")
	tb.waitAssistant("the main one.")
	tb.waitIdle()
	live := eval[[]string](tb, blockLayout)

	tb.do("reload", chromedp.Reload())
	tb.waitConnected()
	if visible := eval[bool](tb, `!document.getElementById("login").hidden`); visible {
		t.Error("the connect form is shown after a reload; the token should have been kept")
	}
	tb.waitAssistant("You have one session: the main one.")
	if got := eval[[]string](tb, blockLayout); !slices.Equal(got, live) {
		t.Errorf("layout after reload = %q, want the live one %q", got, live)
	}
	if state := eval[string](tb, `document.querySelector("#messages .block-toolCall").dataset.state`); state != "done" {
		t.Errorf("tool block state after reload = %q, want done", state)
	}
	if got := tb.text("#messages .bubble-user"); !strings.Contains(got, "which sessions do I have?") {
		t.Errorf("user bubble after reload = %q", got)
	}
}

// TestWebChatAbort: the Stop button ends a reply mid-stream.
func TestWebChatAbort(t *testing.T) {
	_, _, tb := connected(t, llmtest.Text("Working", " on", " it").HangAfter(1))
	tb.send("do something long")
	tb.waitAssistant("Working")
	tb.do("click Stop", chromedp.WaitEnabled(chromedp.CSS("#abort-button")), chromedp.Click(chromedp.CSS("#abort-button")))
	tb.waitFor("the stopped notice", `[...document.querySelectorAll("#messages .inline-error")].some(e => e.textContent.includes("Stopped"))`)
	tb.waitIdle()
	if got := tb.text("#messages .bubble-assistant"); strings.Contains(got, "on it") {
		t.Errorf("text after the abort arrived anyway: %q", got)
	}
}

// TestWebChatModelError: a failing model shows the error inline, and the
// page stays usable.
func TestWebChatModelError(t *testing.T) {
	_, model, tb := connected(t, llmtest.HTTPError(400, nil, ""))
	tb.send("this will fail")
	tb.waitFor("an inline error", `!!document.querySelector("#messages .bubble-assistant .inline-error")`)
	tb.waitIdle()
	if msg := tb.text("#messages .bubble-assistant .inline-error"); strings.TrimSpace(msg) == "" {
		t.Error("the inline error is empty")
	}
	model.Push(llmtest.Text("Better now."))
	tb.send("try again")
	tb.waitAssistant("Better now.")
}

// TestWebChatReconnectsAfterRestart: when the daemon restarts, the page
// shows that it lost the connection, reconnects by itself, and the
// conversation goes on.
func TestWebChatReconnectsAfterRestart(t *testing.T) {
	d, model, tb := connected(t, llmtest.Text("Before the restart."))
	tb.send("first")
	tb.waitAssistant("Before the restart.")
	tb.waitIdle()

	d.stop()
	tb.waitFor("the page to notice the restart", `document.getElementById("conn-state").dataset.state !== "connected"`)
	if enabled := eval[bool](tb, `!document.getElementById("send-button").disabled`); enabled {
		t.Error("Send is enabled while disconnected")
	}
	d.start()
	tb.waitConnected()
	tb.waitAssistant("Before the restart.")

	model.Push(llmtest.Text("After the restart."))
	tb.send("second")
	tb.waitAssistant("After the restart.")
}

// TestWebChatWrongToken: a wrong token is refused with a clear message and
// is not kept.
func TestWebChatWrongToken(t *testing.T) {
	needBrowser(t)
	d := newDaemon(t, nil)
	d.start()
	tb := openTab(t, d.url())
	tb.do("paste a wrong token",
		chromedp.WaitVisible(chromedp.CSS("#token-input")),
		chromedp.SendKeys(chromedp.CSS("#token-input"), "not-the-token-0123456789abcdef"),
		chromedp.Click(chromedp.CSS("#connect-button")))
	tb.waitFor("the refusal", `document.getElementById("login-error").textContent.length > 0`)
	msg := tb.text("#login-error")
	for _, want := range []string{"refused", "token"} {
		if !strings.Contains(strings.ToLower(msg), want) {
			t.Errorf("error %q does not mention %q", msg, want)
		}
	}
	if state := eval[string](tb, `document.getElementById("conn-state").dataset.state`); state != "failed" {
		t.Errorf("connection state = %q, want failed", state)
	}
	if kept := eval[bool](tb, `localStorage.getItem("switchboard.gatewayToken") !== null`); kept {
		t.Error("the refused token was kept in localStorage")
	}
	// The right token still works afterwards.
	tb.login(d.token())
}

// TestWebChatFailedTool: a tool call that fails shows the failed state and
// the error the model got.
func TestWebChatFailedTool(t *testing.T) {
	_, model, tb := connected(t,
		llmtest.ToolCalls(llmtest.Call("no_such_tool", `{"x":1}`)),
		llmtest.Text("That tool does not exist."))
	tb.send("use a tool that is not there")
	tb.waitAssistant("That tool does not exist.")
	tb.waitIdle()
	tb.waitFor("the failed tool's result", `document.querySelector("#messages .block-toolCall .tool-result").textContent.length > 0`)
	if state := eval[string](tb, `document.querySelector("#messages .block-toolCall").dataset.state`); state != "failed" {
		t.Errorf("tool block state = %q, want failed", state)
	}
	const why = "unknown tool no_such_tool"
	if res := tb.text("#messages .block-toolCall .tool-result"); !strings.Contains(res, why) {
		t.Errorf("failed tool result shown = %q, want the error %q", res, why)
	}
	if reqs := model.Requests(); len(reqs) < 2 || !strings.Contains(string(reqs[1].Body), why) {
		t.Error("the model did not get the same error back")
	}
}
