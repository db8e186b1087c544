package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
)

// TestFinding4InlineApprovalPhoneWidth is issue 26's finding 4: an exec
// approval waiting for the user was easy to miss. The tool card said
// "executing…", at phone width nothing said an approval was pending (the
// side panel is closed there) until the model was told "denied" 120 s
// later, and the daemon's log said nothing. Now, on a 390 px screen, the
// command's own card asks, with the whole command, Approve, Deny and a
// live countdown, and the panel button counts the waiting requests;
// approving runs the command and the card shows its output, denying shows
// on the card and nothing runs. The daemon's log says what waits and where
// to answer.
func TestFinding4InlineApprovalPhoneWidth(t *testing.T) {
	needBrowser(t)
	model := llmtest.NewAnthropicServer(t,
		llmtest.ToolCalls(llmtest.Call("exec", `{"argv":["echo","approved-inline"]}`).WithID("toolu_approve")),
		llmtest.Text("The command ran."),
		llmtest.ToolCalls(llmtest.Call("exec", `{"argv":["touch","denied-inline"]}`).WithID("toolu_deny")),
		llmtest.Text("It was denied."),
	)
	d := newDaemonWith(t, model, "tools:\n  exec:\n    enabled: true\n")
	d.start()
	tb := openTab(t, d.url())
	tb.do("phone width", chromedp.EmulateViewport(390, 844))
	tb.login(d.token())

	// Approve.
	tb.send("run echo")
	card := `#messages .block-toolCall[data-tool-call-id="toolu_approve"]`
	tb.waitFor("the approval on the echo card", `!!document.querySelector(`+js(card+" .approval .approval-approve")+`)`)
	tb.do("see the card's approval",
		chromedp.WaitVisible(chromedp.CSS(card+" .approval-approve")),
		chromedp.WaitVisible(chromedp.CSS(card+" .approval-deny")),
		chromedp.WaitVisible(chromedp.CSS(card+" .approval-countdown")),
		chromedp.WaitVisible(chromedp.CSS("#toggle-panels #approvals-count")))
	if got := tb.text(card + " .approval-command"); got != "echo approved-inline" {
		t.Errorf("the card shows the command %q, want the whole command", got)
	}
	if got := tb.text(card + " .tool-state"); got != "waiting for your approval" {
		t.Errorf("the card's state says %q, want waiting for your approval", got)
	}
	if got := tb.text("#approvals-count"); got != "1" {
		t.Errorf("the panel button's badge says %q, want 1", got)
	}
	if label := eval[string](tb, `document.getElementById("toggle-panels").textContent`); !strings.Contains(label, "1 command waits for approval") {
		t.Errorf("the panel button reads %q to a screen reader, want the waiting count", label)
	}
	first := tb.text(card + " .approval-countdown")
	if !strings.HasPrefix(first, "2:00") && !strings.HasPrefix(first, "1:5") {
		t.Errorf("the countdown starts at %q, want about 2:00 (the 120 s default)", first)
	}
	tb.waitFor("the countdown to run", `document.querySelector(`+js(card+" .approval-countdown")+`).textContent !== `+js(first))
	if wide := eval[bool](tb, `document.documentElement.scrollWidth > window.innerWidth`); wide {
		t.Error("the page scrolls sideways at 390 px with an approval shown")
	}
	if logs := d.logs.String(); !strings.Contains(logs, "waiting for an operator's approval") ||
		!strings.Contains(logs, `command="echo approved-inline"`) || !strings.Contains(logs, "in the web chat at "+d.url()) {
		t.Errorf("the daemon's log does not say that a command waits and where to answer:\n%s", logs)
	}

	tb.screenshot(t.Name() + "_waiting")
	tb.do("approve on the card", chromedp.Click(chromedp.CSS(card+" .approval-approve")))
	tb.waitFor("the card to say approved", `document.querySelector(`+js(card)+`).dataset.approval === "approved" && document.querySelector(`+js(card+" .approval-outcome")+`).textContent.includes("Approved")`)
	tb.waitFor("the badge and the countdown to go", `document.getElementById("approvals-count").hidden && !document.querySelector(`+js(card+" .approval-countdown")+`) && !document.getElementById("messages").hasAttribute("data-approval-clock")`)
	tb.waitAssistant("The command ran.")
	tb.waitIdle()
	tb.waitFor("the command's output on the card", `document.querySelector(`+js(card)+`).dataset.state === "done" && document.querySelector(`+js(card+" .tool-result")+`).textContent.includes("approved-inline")`)
	tb.do("see the output", chromedp.WaitVisible(chromedp.CSS(card+" .tool-result")))
	if got := tb.text(card + " .tool-state"); got != "done" {
		t.Errorf("the approved card's state says %q, want done", got)
	}
	if !strings.Contains(d.logs.String(), "decision=allow-once") {
		t.Errorf("the daemon's log does not say the request was approved:\n%s", d.logs.String())
	}

	// Deny.
	tb.send("run touch")
	card = `#messages .block-toolCall[data-tool-call-id="toolu_deny"]`
	tb.waitFor("the approval on the touch card", `!!document.querySelector(`+js(card+" .approval .approval-deny")+`)`)
	tb.do("see the card's approval", chromedp.WaitVisible(chromedp.CSS(card+" .approval-deny")), chromedp.WaitVisible(chromedp.CSS("#approvals-count")))
	if got := tb.text(card + " .approval-command"); got != "touch denied-inline" {
		t.Errorf("the card shows the command %q", got)
	}
	tb.do("deny on the card", chromedp.Click(chromedp.CSS(card+" .approval-deny")))
	tb.waitFor("the card to say denied", `document.querySelector(`+js(card)+`).dataset.approval === "denied" && document.querySelector(`+js(card+" .tool-state")+`).textContent === "denied" && document.querySelector(`+js(card+" .approval-outcome")+`).textContent.includes("Denied")`)
	tb.waitFor("the badge and the countdown to go", `document.getElementById("approvals-count").hidden && !document.getElementById("messages").hasAttribute("data-approval-clock")`)
	tb.waitAssistant("It was denied.")
	tb.waitIdle()
	tb.waitFor("the refusal on the card", `document.querySelector(`+js(card+" .tool-result")+`).textContent.includes("the operator denied the command")`)
	if got := tb.text(card + " .tool-state"); got != "denied" {
		t.Errorf("the denied card's state says %q, want denied", got)
	}
	ws := filepath.Join(d.dir, "state", "workspace") // where exec runs
	if _, err := os.Stat(ws); err != nil {
		t.Errorf("the workspace: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "denied-inline")); err == nil {
		t.Error("the denied command ran")
	}
	if !strings.Contains(d.logs.String(), "decision=deny") {
		t.Errorf("the daemon's log does not say the request was denied:\n%s", d.logs.String())
	}
}

// TestFinding4InlineApprovalAfterReload: a page opened (or reloaded)
// while a command waits shows the request in the chat, counting down to
// the gateway's expiry, and answers it from there.
func TestFinding4InlineApprovalAfterReload(t *testing.T) {
	needBrowser(t)
	model := llmtest.NewAnthropicServer(t,
		llmtest.ToolCalls(llmtest.Call("exec", `{"argv":["touch","after-reload"]}`).WithID("toolu_reload")),
		llmtest.Text("Denied after the reload."),
	)
	d := newDaemonWith(t, model, "tools:\n  exec:\n    enabled: true\n")
	d.start()
	tb := openTab(t, d.url())
	tb.do("phone width", chromedp.EmulateViewport(390, 844))
	tb.login(d.token())
	tb.send("run touch")
	tb.waitFor("the approval", `!!document.querySelector("#messages .approval .approval-deny")`)

	tb.do("reload", chromedp.Reload())
	tb.waitConnected()
	tb.waitFor("the approval after the reload", `!!document.querySelector("#messages .approval .approval-deny")`)
	tb.do("see it", chromedp.WaitVisible(chromedp.CSS("#messages .approval .approval-countdown")), chromedp.WaitVisible(chromedp.CSS("#approvals-count")))
	if got := tb.text("#messages .approval .approval-command"); got != "touch after-reload" {
		t.Errorf("after the reload the approval shows %q", got)
	}
	if got := tb.text("#messages .approval .approval-countdown"); !strings.HasPrefix(got, "1:") && !strings.HasPrefix(got, "2:00") {
		t.Errorf("after the reload the countdown shows %q, want the time left of 2:00", got)
	}
	tb.do("deny", chromedp.Click(chromedp.CSS("#messages .approval .approval-deny")))
	tb.waitFor("the approval to say denied", `document.querySelector("#messages .approval").dataset.state === "denied" && document.getElementById("approvals-count").hidden`)
	tb.waitAssistant("Denied after the reload.")
	tb.waitIdle()
}

// TestFinding4InlineApprovalExpires: a request nobody answers ends on its
// card as expired and denied, and the countdown's timer stops.
func TestFinding4InlineApprovalExpires(t *testing.T) {
	needBrowser(t)
	model := llmtest.NewAnthropicServer(t,
		llmtest.ToolCalls(llmtest.Call("exec", `{"argv":["touch","expired"]}`).WithID("toolu_expire")),
		llmtest.Text("Nobody answered."),
	)
	d := newDaemonWith(t, model, "tools:\n  exec:\n    enabled: true\n    approvalTimeoutSec: 2\n")
	d.start()
	tb := openTab(t, d.url())
	tb.do("phone width", chromedp.EmulateViewport(390, 844))
	tb.login(d.token())
	tb.send("run touch")
	card := `#messages .block-toolCall[data-tool-call-id="toolu_expire"]`
	tb.waitFor("the card to say expired", `document.querySelector(`+js(card)+`)?.dataset.approval === "expired" && document.querySelector(`+js(card+" .tool-state")+`).textContent === "expired · denied"`)
	if got := tb.text(card + " .approval-outcome"); !strings.Contains(got, "nobody answered in time") {
		t.Errorf("the expired card says %q", got)
	}
	tb.waitFor("the badge and the timer to go", `document.getElementById("approvals-count").hidden && !document.getElementById("messages").hasAttribute("data-approval-clock") && !document.querySelector(".approval-countdown")`)
	tb.waitAssistant("Nobody answered.")
	if logs := d.logs.String(); !strings.Contains(logs, "level=WARN") || !strings.Contains(logs, "approval expired") {
		t.Errorf("the daemon's log does not warn that the request expired:\n%s", logs)
	}
}
