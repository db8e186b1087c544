package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/switchboardhq/switchboard/core/llm/llmtest"
)

// TestWebChatSessionsPeopleRecognise (issue 26): the session list and the
// chat's head name sessions by their chat, not their keys; New chat starts
// a fresh session, named by its first words, and the first one stays a
// click away; the head shows the kind and the model; times are relative.
func TestWebChatSessionsPeopleRecognise(t *testing.T) {
	_, model, tb := connected(t, llmtest.Text("Hello."))
	tb.send("hello")
	tb.waitAssistant("Hello.")
	tb.waitIdle()
	tb.waitFor("the first chat named by its words", `document.getElementById("session-title").textContent === "hello"`)
	if sub := tb.text("#session-sub"); !strings.Contains(sub, "Web chat") || !strings.Contains(sub, "model fake/scripted") {
		t.Errorf("the chat's head says %q, want the kind and the model", sub)
	}

	tb.do("start a new chat", chromedp.Click(chromedp.CSS("#new-chat")))
	tb.waitFor("an empty new chat", `document.getElementById("session-title").textContent === "New chat" && document.getElementById("messages").textContent.includes("No messages yet")`)
	model.Push(llmtest.Text("Lisbon in May is lovely."))
	tb.send("Plan the trip to Lisbon")
	tb.waitAssistant("Lisbon in May is lovely.")
	tb.waitIdle()
	tb.waitFor("the new chat named in the list", `[...document.querySelectorAll("#session-list .session-name")].some(n => n.textContent === "Plan the trip to Lisbon")`)
	names := eval[[]string](tb, `[...document.querySelectorAll("#session-list .session-name")].map(n => n.textContent)`)
	for _, n := range names {
		if strings.HasPrefix(n, "agent:") {
			t.Errorf("the session list shows a key: %q", names)
		}
	}
	if !strings.Contains(tb.text("#session-list"), "just now") {
		t.Errorf("the session list has no relative time: %q", tb.text("#session-list"))
	}

	tb.do("back to the first chat", chromedp.Click(chromedp.CSS(`#session-list .session:not([aria-current="true"])`)))
	tb.waitFor("the first chat's history", `document.getElementById("session-title").textContent === "hello" && document.getElementById("messages").textContent.includes("Hello.")`)
	if strings.Contains(tb.text("#messages"), "Lisbon") {
		t.Error("the first chat shows the second's messages")
	}

	// /new in the first chat: the old conversation stays reachable, read only.
	model.Push(llmtest.Text("Fresh start."))
	tb.send("/new")
	tb.waitAssistant("Fresh start.")
	tb.waitIdle()
	tb.waitFor("the earlier conversation offered", `!document.getElementById("earlier-select").hidden && document.getElementById("earlier-select").options.length === 2`)
	if opt := eval[string](tb, `document.getElementById("earlier-select").options[1].textContent`); !strings.HasPrefix(opt, "Earlier: hello (ended ") {
		t.Errorf("the earlier conversation is offered as %q", opt)
	}
	tb.do("read the earlier conversation", chromedp.SetValue(chromedp.CSS("#earlier-select"), eval[string](tb, `document.getElementById("earlier-select").options[1].value`)),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("earlier-select").dispatchEvent(new Event("change"))`))
	tb.waitFor("the earlier messages, read only", `document.getElementById("messages").textContent.includes("Hello.") && !document.getElementById("messages").textContent.includes("Fresh start.") && document.getElementById("composer-input").disabled && !document.getElementById("notice").hidden`)
	tb.do("back to the current conversation", chromedp.SetValue(chromedp.CSS("#earlier-select"), ""),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("earlier-select").dispatchEvent(new Event("change"))`))
	tb.waitFor("the current conversation, writable", `document.getElementById("messages").textContent.includes("Fresh start.") && !document.getElementById("composer-input").disabled && document.getElementById("notice").hidden`)
}
