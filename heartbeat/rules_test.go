package heartbeat_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/heartbeat"
	"github.com/switchboardhq/switchboard/queue"
)

// The configured prompt is the heartbeat's user message, verbatim; the
// model and session overrides apply.
func TestPromptModelAndSessionOverrides(t *testing.T) {
	r := newRig(t, rigOptions{cfg: core.HeartbeatConfig{Prompt: "Check the servers. Reply HEARTBEAT_OK if fine.", Model: "scripted/cheap", Session: "ops"}})
	r.provider.Push(llmtest.Text("HEARTBEAT_OK"))
	ev := r.run()
	if ev.Status != heartbeat.StatusOkToken || ev.SessionKey != "agent:main:ops" {
		t.Fatalf("event = %+v", ev)
	}
	req := r.provider.Requests()[0]
	if got := lastUserText(req); got != "Check the servers. Reply HEARTBEAT_OK if fine." {
		t.Errorf("prompt = %q", got)
	}
	if req.Model.ID != "cheap" {
		t.Errorf("model = %q, want the heartbeat.model override", req.Model.ID)
	}
}

func TestAckMaxCharsSetsTheAckThreshold(t *testing.T) {
	r := newRig(t, rigOptions{cfg: core.HeartbeatConfig{AckMaxChars: 5, Target: "telegram", To: "-1"}})
	r.provider.Push(llmtest.Text("All quiet. HEARTBEAT_OK"))
	if ev := r.run(); ev.Status != heartbeat.StatusSent || ev.Preview != "All quiet." {
		t.Errorf("with ackMaxChars 5 a 10-char remainder is an alert: %+v", ev)
	}
}

func TestTargetsAndVisibility(t *testing.T) {
	for _, tt := range []struct {
		name   string
		cfg    core.HeartbeatConfig
		status heartbeat.Status
		reason string
		route  core.Route
		ind    string
	}{
		{name: "target none keeps alerts in the transcript", cfg: core.HeartbeatConfig{}, status: heartbeat.StatusSkipped, reason: heartbeat.ReasonNoTarget, ind: heartbeat.IndicatorAlert},
		{name: "telegram forum topic", cfg: core.HeartbeatConfig{Target: "telegram", To: "-1001:topic:7", AccountID: "ops"}, status: heartbeat.StatusSent,
			route: core.Route{Channel: "telegram", To: "-1001", ThreadID: "7", AccountID: "ops"}, ind: heartbeat.IndicatorAlert},
		{name: "showAlerts false", cfg: core.HeartbeatConfig{Target: "telegram", To: "-1", ShowAlerts: boolp(false)}, status: heartbeat.StatusSkipped, reason: heartbeat.ReasonAlertsHidden, ind: heartbeat.IndicatorAlert},
		{name: "useIndicator false", cfg: core.HeartbeatConfig{Target: "telegram", To: "-1", UseIndicator: boolp(false)}, status: heartbeat.StatusSent, route: core.Route{Channel: "telegram", To: "-1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, rigOptions{cfg: tt.cfg})
			r.provider.Push(llmtest.Text("The disk is full."))
			ev := r.run()
			if ev.Status != tt.status || ev.Reason != tt.reason || ev.IndicatorType != tt.ind {
				t.Errorf("event = %+v", ev)
			}
			got := r.rec.deliveries()
			if tt.route == (core.Route{}) {
				if len(got) != 0 {
					t.Errorf("delivered %+v", got)
				}
				return
			}
			if len(got) != 1 || got[0].Route != tt.route {
				t.Errorf("deliveries = %+v, want to %+v", got, tt.route)
			}
		})
	}
}

func TestFailedTurnIsAnErrorEvent(t *testing.T) {
	r := newRig(t, rigOptions{cfg: core.HeartbeatConfig{Target: "telegram", To: "-1"}})
	r.provider.Push(llmtest.HTTPError(400, nil, ""))
	ev := r.run()
	if ev.Status != heartbeat.StatusFailed || ev.IndicatorType != heartbeat.IndicatorError || ev.Reason == "" {
		t.Errorf("event = %+v", ev)
	}
	if n := len(r.rec.deliveries()); n != 0 {
		t.Errorf("a failed heartbeat delivered %d messages", n)
	}
}

// A heartbeat turn's transcript pair is filtered from the next context
// when it was an ack, and kept when it was an alert (openclaw-facts §6.3).
func TestAckPairsFilteredFromLaterContext(t *testing.T) {
	r := newRig(t, rigOptions{})
	r.provider.Push(llmtest.Text("HEARTBEAT_OK"))
	r.run()
	r.provider.Push(llmtest.Text("Backup failed last night."))
	r.run()
	r.provider.Push(llmtest.Text("hello"))
	if _, err := r.disp.Submit(context.Background(), core.Inbound{SessionKey: r.hb.SessionKey(), Route: core.Route{Channel: "telegram", To: "1"}, ChatType: core.ChatDirect, Body: "hi", MessageID: "1"}); err != nil {
		t.Fatal(err)
	}
	waitDeliveries(t, r, 1)
	reqs := r.provider.Requests()
	var texts []string
	for _, m := range reqs[2].Messages {
		switch m := m.(type) {
		case *core.UserMessage:
			texts = append(texts, "user:"+m.Text())
		case *core.AssistantMessage:
			texts = append(texts, "assistant:"+m.Text())
		}
	}
	joined := strings.Join(texts, "|")
	if strings.Count(joined, "Read HEARTBEAT.md") != 1 || strings.Contains(joined, "assistant:HEARTBEAT_OK") || !strings.Contains(joined, "Backup failed") {
		t.Errorf("context = %s", joined)
	}
}

// A job in session:<name> keeps one session across runs; delivery none
// sends nothing.
func TestCronNamedSessionAndNoDelivery(t *testing.T) {
	job := everyMinute("journal")
	job.SessionTarget = "session:journal"
	job.Delivery = &heartbeat.Delivery{Mode: heartbeat.DeliveryNone}
	r := cronRig(t, rigOptions{}, job)
	for i := range 2 {
		r.provider.Push(llmtest.Text(fmt.Sprintf("entry %d", i)))
		r.clock.Advance(time.Minute)
		r.waitRuns("journal", i+1)
		waitIdle(t, r)
	}
	runs := r.runs("journal")
	if runs[0].SessionKey != "agent:main:journal" || runs[1].SessionKey != runs[0].SessionKey || runs[1].DeliveryStatus != "not-requested" {
		t.Errorf("runs = %+v", runs)
	}
	if n := len(r.rec.deliveries()); n != 0 {
		t.Errorf("delivery none delivered %d", n)
	}
	// The second run saw the first in its history.
	if reqs := r.provider.Requests(); len(reqs[1].Messages) < 3 {
		t.Errorf("the named session did not keep its history: %d messages", len(reqs[1].Messages))
	}
}

// Cron turns run on the cron lane, one at a time by default.
func TestCronLaneRunsOneAtATime(t *testing.T) {
	a, b := everyMinute("a"), everyMinute("b")
	r := cronRig(t, rigOptions{}, a, b)
	gate := make(chan struct{})
	r.provider.Push(llmtest.Text("first").Gated(gate), llmtest.Text("second"))
	r.clock.Advance(time.Minute)
	deadline := time.Now().Add(waitFor)
	for r.disp.LaneWaiting(queue.LaneCron) != 1 || r.modelCalls() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("want one cron turn running and one waiting: waiting %d, calls %d", r.disp.LaneWaiting(queue.LaneCron), r.modelCalls())
		}
		runtime.Gosched()
	}
	close(gate)
	r.waitRuns("a", 1)
	r.waitRuns("b", 1)
}

// Isolated run sessions beyond the most recent few leave the sessions
// index.
func TestCronReapsOldIsolatedSessions(t *testing.T) {
	job := everyMinute("tick")
	job.Delivery = nil
	r := cronRig(t, rigOptions{}, job)
	total := heartbeat.KeepIsolatedSessions + 3
	for i := range total {
		r.provider.Push(llmtest.Text("ok"))
		r.clock.Advance(time.Minute)
		r.waitRuns("tick", i+1)
		waitIdle(t, r)
	}
	entries, err := r.store.ListSessions(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if strings.HasPrefix(string(e.Key), "agent:main:cron:tick:run:") {
			n++
		}
	}
	if n != heartbeat.KeepIsolatedSessions {
		t.Errorf("run sessions in the index = %d, want %d", n, heartbeat.KeepIsolatedSessions)
	}
}

// An isolated run whose answer only promises the work ("On it!") is
// re-prompted once in the same session; its second answer is the result.
func TestCronInterimAnswerRepromptedOnce(t *testing.T) {
	job := everyMinute("report")
	job.Schedule.EveryMs = time.Hour.Milliseconds() // time below moves in small steps
	r := cronRig(t, rigOptions{}, job)
	r.provider.Push(llmtest.Text("On it! I'll put the report together."), llmtest.Text("Report: revenue up 4%."))
	r.clock.Advance(time.Hour)
	deadline := time.Now().Add(waitFor)
	for r.modelCalls() < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("no re-prompt: %d model calls", r.modelCalls())
		}
		r.clock.Advance(100 * time.Millisecond) // the follow-up may wait for a debounce
	}
	runs := r.waitRuns("report", 1)
	if len(runs) != 1 || runs[0].Status != "ok" || runs[0].Summary != "Report: revenue up 4%." {
		t.Fatalf("runs = %+v", runs)
	}
	reqs := r.provider.Requests()
	if got := lastUserText(reqs[1]); got != heartbeat.RepromptText {
		t.Errorf("re-prompt = %q", got)
	}
	if got := r.rec.deliveries(); len(got) != 1 || got[0].Replies[0].Text != "Report: revenue up 4%." {
		t.Errorf("deliveries = %+v, want only the result", got)
	}

	// A second interim answer stands: one re-prompt only.
	waitIdle(t, r)
	r.provider.Push(llmtest.Text("Let me check."), llmtest.Text("I'll get back to you."))
	r.clock.AdvanceTo(epoch.Add(2 * time.Hour))
	for r.modelCalls() < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("model calls = %d", r.modelCalls())
		}
		r.clock.Advance(100 * time.Millisecond)
	}
	runs = r.waitRuns("report", 2)
	if runs[1].Summary != "I'll get back to you." || r.modelCalls() != 4 {
		t.Errorf("second run = %+v, calls %d", runs[1], r.modelCalls())
	}
}
