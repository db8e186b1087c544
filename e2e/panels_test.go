package e2e

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/gateway/client"
)

// TestWebChatControlPanels: the status panels load, and a remote device's
// pairing request appears in the page and is approved from it.
func TestWebChatControlPanels(t *testing.T) {
	needBrowser(t)
	d := newDaemon(t, nil)
	d.start()
	tb := openTab(t, d.url())
	token := d.token()
	tb.login(token)

	tb.waitFor("the channels panel", `document.getElementById("channels").textContent.includes("No chat platforms configured")`)
	tb.waitFor("the heartbeat panel", `document.getElementById("heartbeat").textContent.includes("No heartbeat has run yet")`)
	tb.waitFor("the cron panel", `document.getElementById("cron").textContent.includes("No cron jobs")`)
	tb.waitFor("the pairing panel", `!document.getElementById("pairing-panel").hidden && document.getElementById("pairing").textContent.includes("No pending requests")`)
	tb.waitFor("the approvals panel to stay hidden with exec off",
		`document.getElementById("approvals-panel").hidden && document.getElementById("approvals").textContent.includes("tools.exec.enabled is false")`)

	// A device connecting from another machine (as a proxy reports it)
	// must be paired.
	_, dev, _ := ed25519.GenerateKey(rand.Reader)
	opts := client.Options{
		URL: "ws://127.0.0.1:" + strconv.Itoa(d.port) + "/", Token: token, Device: dev,
		Scopes: []string{"operator.read", "operator.write"},
		Header: http.Header{"X-Forwarded-For": {"203.0.113.7"}},
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	_, err := client.Dial(ctx, opts)
	var ce *client.ConnectError
	if !errors.As(err, &ce) || !strings.Contains(strings.ToLower(err.Error()), "pairing") {
		t.Fatalf("remote device connect: %v, want a pairing-required refusal", err)
	}

	tb.waitFor("the pairing request in the page", `!!document.querySelector("#pairing .pairing-request")`)
	if row := tb.text("#pairing .pairing-request"); !strings.Contains(row, "operator.read, operator.write") {
		t.Errorf("pairing request row = %q, want the scopes the device asked for", row)
	}
	tb.do("approve", chromedp.Click(chromedp.CSS(`#pairing .pairing-request button:not(.danger)`)))
	tb.waitFor("the request to go", `document.getElementById("pairing").textContent.includes("No pending requests")`)

	c, err := client.Dial(ctx, opts)
	if err != nil {
		t.Fatalf("connect after approval from the page: %v", err)
	}
	_ = c.Close()

	// A job added elsewhere appears in the cron panel (the cron event).
	admin, err := client.Dial(ctx, client.Options{URL: "ws://127.0.0.1:" + strconv.Itoa(d.port) + "/", Token: token, Scopes: []string{"operator.admin"}})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Call(ctx, "cron.add", map[string]any{"id": "panel-job", "name": "Panel job",
		"schedule": map[string]any{"kind": "every", "everyMs": 3600000},
		"payload":  map[string]any{"kind": "systemEvent", "text": "hello"}}); err != nil {
		t.Fatalf("cron.add: %v", err)
	}
	tb.waitFor("the job in the cron panel", `document.getElementById("cron").textContent.includes("Panel job")`)
}

// TestWebChatKeyboardAndPhoneWidth: Shift+Enter makes a new line and
// Enter sends; at a phone's width the page does not scroll sideways and
// the panels open from their buttons.
func TestWebChatKeyboardAndPhoneWidth(t *testing.T) {
	_, _, tb := connected(t, llmtest.Text("Got both lines."))
	tb.do("phone width", chromedp.EmulateViewport(390, 844))
	tb.do("type two lines",
		chromedp.Focus(chromedp.CSS("#composer-input")),
		chromedp.SendKeys(chromedp.CSS("#composer-input"), "line one"),
		chromedp.KeyEvent(kb.Enter, chromedp.KeyModifiers(kb.ModifierShift)),
		chromedp.SendKeys(chromedp.CSS("#composer-input"), "line two"))
	if v := eval[string](tb, `document.getElementById("composer-input").value`); v != "line one\nline two" {
		t.Fatalf("after Shift+Enter the box holds %q, want two lines", v)
	}
	tb.do("press Enter", chromedp.KeyEvent(kb.Enter))
	tb.waitAssistant("Got both lines.")
	if n := eval[int](tb, `document.querySelectorAll("#messages .bubble-user br").length`); n != 1 {
		t.Errorf("the sent message shows %d line breaks, want 1", n)
	}
	if wide := eval[bool](tb, `document.documentElement.scrollWidth > window.innerWidth`); wide {
		t.Error("the page scrolls sideways at 390 px")
	}
	if shown := eval[bool](tb, `getComputedStyle(document.getElementById("panels")).display !== "none"`); shown {
		t.Error("the panels cover the chat at phone width before being opened")
	}
	tb.do("open the panels", chromedp.Click(chromedp.CSS("#toggle-panels")))
	tb.waitFor("the panels to open", `getComputedStyle(document.getElementById("panels")).display !== "none" && document.getElementById("toggle-panels").getAttribute("aria-expanded") === "true"`)
	tb.do("press Escape", chromedp.KeyEvent(kb.Escape))
	tb.waitFor("Escape to close the panels", `getComputedStyle(document.getElementById("panels")).display === "none" && document.activeElement.id === "toggle-panels"`)
}

// TestWebChatNewSession: /new starts a fresh transcript; the page shows
// the new conversation only.
func TestWebChatNewSession(t *testing.T) {
	_, model, tb := connected(t, llmtest.Text("First reply."))
	tb.send("an old message")
	tb.waitAssistant("First reply.")
	tb.waitIdle()

	model.Push(llmtest.Text("Fresh start. What shall we do?"))
	tb.send("/new")
	tb.waitAssistant("Fresh start.")
	tb.waitIdle()
	tb.waitFor("the old conversation to go", `!document.getElementById("messages").textContent.includes("an old message")`)
	if got := tb.text("#messages"); strings.Contains(got, "First reply.") {
		t.Errorf("the old reply is still shown after /new: %q", got)
	}
}

// TestWebChatApprovesExec: with exec enabled, a command the model wants to
// run appears whole in the approvals panel; approving it there runs it and
// the answer arrives. The panel stays hidden when exec is off (the other
// panel test).
func TestWebChatApprovesExec(t *testing.T) {
	needBrowser(t)
	long := strings.Repeat("x", 300) + "-tail"
	model := llmtest.NewAnthropicServer(t,
		llmtest.ToolCalls(llmtest.Call("exec", `{"argv":["echo","from-the-page","`+long+`"]}`)),
		llmtest.Text("The command ran."),
	)
	d := newDaemonWith(t, model, "tools:\n  exec:\n    enabled: true\n")
	d.start()
	tb := openTab(t, d.url())
	tb.login(d.token())
	tb.waitFor("the approvals panel", `!document.getElementById("approvals-panel").hidden && document.getElementById("approvals").textContent.includes("No commands waiting")`)
	tb.send("run echo")
	tb.waitFor("the approval request", `!!document.querySelector("#approvals .approval-request")`)
	if got := tb.text("#approvals .approval-command"); got != "echo from-the-page "+long {
		t.Fatalf("the panel shows %q, want the whole command", got)
	}
	tb.do("approve", chromedp.Click(chromedp.CSS(`#approvals .approval-request button:not(.danger)`)))
	tb.waitFor("the request to go", `document.getElementById("approvals").textContent.includes("No commands waiting")`)
	tb.waitAssistant("The command ran.")
	reqs := model.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "from-the-page "+long+`\n[exit code 0`) {
		t.Fatalf("the model did not get the command's output")
	}
}

// TestFinding6CronPanelSaysWhatRunNowDoes (issue 26, finding 6): "Run now"
// on a disabled one-shot job ran it and deleted it without asking, and a
// job whose answer went to a channel that is off showed "last ok". The
// panel asks before running a disabled job, saying it stays; Cancel runs
// nothing; after the run the job is still listed, disabled. A failed
// announcement shows as a failed run, with the reason.
func TestFinding6CronPanelSaysWhatRunNowDoes(t *testing.T) {
	needBrowser(t)
	d := newDaemonWith(t, nil, `cron:
  jobs:
    - id: dentist
      name: Dentist
      enabled: false
      schedule: {kind: at, at: "2099-12-01T09:00:00Z"}
      payload: {kind: systemEvent, text: "Dentist at 10."}
    - id: news
      name: News
      schedule: {kind: every, everyMs: 3600000}
      payload: {kind: agentTurn, message: "Three things happened."}
      delivery: {mode: announce, channel: telegram, to: "123"}
`)
	d.start()
	tb := openTab(t, d.url())
	token := d.token()
	tb.login(token)
	row := func(id string) string { return `document.querySelector('#cron .cron-job[data-id="` + id + `"]')` }
	tb.waitFor("both jobs in the cron panel", row("dentist")+` && `+row("news"))

	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	admin, err := client.Dial(ctx, client.Options{URL: "ws://127.0.0.1:" + strconv.Itoa(d.port) + "/", Token: token, Scopes: []string{"operator.admin"}})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	runsOf := func(id string) string {
		raw, err := admin.Call(ctx, "cron.runs", map[string]any{"id": id})
		if err != nil {
			t.Fatalf("cron.runs: %v", err)
		}
		return string(raw)
	}

	dentist := `#cron .cron-job[data-id="dentist"]`
	tb.do("Run now on the disabled job", chromedp.Click(chromedp.CSS(dentist+` > button`)))
	tb.waitFor("the question", `!`+row("dentist")+`.querySelector(".cron-confirm").hidden`)
	if q := tb.text(dentist + ` .cron-confirm p`); !strings.Contains(q, "“Dentist” is disabled") || !strings.Contains(q, "stays disabled and is not deleted") {
		t.Errorf("the question = %q, want it to say the job is disabled and stays", q)
	}
	tb.do("Cancel", chromedp.Click(chromedp.CSS(dentist+` .cron-confirm button:last-child`)))
	tb.waitFor("the question to go", row("dentist")+`.querySelector(".cron-confirm").hidden && !`+row("dentist")+`.querySelector(":scope > button").hidden`)
	if runs := runsOf("dentist"); strings.Contains(runs, "runId") {
		t.Fatalf("Cancel ran the job: %s", runs)
	}

	tb.do("Run now again", chromedp.Click(chromedp.CSS(dentist+` > button`)))
	tb.waitFor("the question", `!`+row("dentist")+`.querySelector(".cron-confirm").hidden`)
	tb.do("Run once", chromedp.Click(chromedp.CSS(dentist+` .cron-confirm button:first-of-type`)))
	tb.waitFor("the run to finish with the job kept, disabled",
		row("dentist")+` && `+row("dentist")+`.querySelector(".cron-info").textContent.startsWith("disabled · ") && `+
			row("dentist")+`.querySelector(".cron-info").textContent.endsWith("last ok") && `+
			row("dentist")+`.querySelector(".cron-note").textContent === "Started; the job stays disabled."`)

	tb.do("Run now on the job announcing to a channel that is off", chromedp.Click(chromedp.CSS(`#cron .cron-job[data-id="news"] > button`)))
	tb.waitFor("the failed run with its reason", row("news")+` && `+row("news")+`.querySelector(".cron-info").textContent.endsWith("last error") && `+
		row("news")+`.querySelector(".cron-problem").textContent.includes('Last run failed: delivery failed: channel "telegram" is not enabled')`)
	if hidden := eval[bool](tb, row("news")+`.querySelector(".cron-confirm").hidden`); !hidden {
		t.Error("an enabled repeating job asked before running")
	}
}

// TestFinding8ChannelsPanelSummarizesErrors (issue 26, finding 8): a
// channel that cannot reach its API shows what is wrong in words, naming
// the host it used (apiUrl, not discord.com), when it tries again, and the
// whole error folded; nothing in the panel is wider than the panel, at a
// desktop's width and a phone's.
func TestFinding8ChannelsPanelSummarizesErrors(t *testing.T) {
	needBrowser(t)
	down := "127.0.0.1:" + strconv.Itoa(freePort(t)) // nothing listens there
	d := newDaemonWith(t, nil, "channels:\n  discord:\n    enabled: true\n    token: MTE.e2e.token-that-is-never-sent\n    apiUrl: http://"+down+"/api/v9/\n")
	d.start()
	tb := openTab(t, d.url())
	tb.login(d.token())

	const row = `document.querySelector('#channels .channel[data-channel="discord"]')`
	tb.waitFor("the discord row's summary", row+` && `+row+`.querySelector(".channel-summary")`)
	if got, want := tb.text(`#channels .channel[data-channel="discord"] .channel-summary`), "cannot reach "+down+" (connection refused)"; got != want {
		t.Errorf("summary = %q, want %q", got, want)
	}
	// Its next attempt counts down, and the row asks again after it.
	tb.waitFor("retrying in …", row+` && /^retrying in \d+ (s|min)$/.test((`+row+`.querySelector(".channel-retry")||{}).textContent||"")`)

	detail := tb.text(`#channels .channel[data-channel="discord"] .channel-error`)
	if !strings.Contains(detail, down) || strings.Contains(detail, "discord.com") {
		t.Errorf("detail = %q, want the whole error naming %s and not discord.com", detail, down)
	}
	if open := eval[bool](tb, row+`.querySelector(".channel-detail").open`); open {
		t.Error("the whole error is shown unfolded")
	}
	tb.do("unfold the detail", chromedp.Click(chromedp.CSS(`#channels .channel[data-channel="discord"] .channel-detail summary`)))

	fits := `[...document.querySelectorAll("#panels, #channels, #channels .channel, #channels .channel *")].every((e) => e.scrollWidth <= e.clientWidth || e.clientWidth === 0)`
	if !eval[bool](tb, fits) {
		t.Errorf("something in the channels panel is wider than its box: %s",
			eval[string](tb, `[...document.querySelectorAll("#panels, #channels, #channels .channel, #channels .channel *")].filter((e) => e.scrollWidth > e.clientWidth && e.clientWidth > 0).map((e) => e.className || e.id).join(", ")`))
	}
	tb.do("phone width", chromedp.EmulateViewport(390, 844))
	tb.do("open the panels", chromedp.Click(chromedp.CSS("#toggle-panels")))
	tb.waitFor("the panels to open", `getComputedStyle(document.getElementById("panels")).display !== "none"`)
	tb.waitFor("the discord row at phone width", row+` && `+row+`.querySelector(".channel-summary")`)
	if !eval[bool](tb, fits) {
		t.Error("at 390 px something in the channels panel is wider than its box")
	}
	if wide := eval[bool](tb, `document.documentElement.scrollWidth > window.innerWidth`); wide {
		t.Error("the page scrolls sideways at 390 px")
	}
}
