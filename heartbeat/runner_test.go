package heartbeat_test

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/heartbeat"
)

var telegramTarget = core.HeartbeatConfig{Target: "telegram", To: "-1001"}

func TestAckIsSuppressedAndAlertDeliveredWithoutToken(t *testing.T) {
	r := newRig(t, rigOptions{cfg: telegramTarget})
	long := strings.Repeat("The backup failed again. ", 15) // > ackMaxChars
	for _, tt := range []struct {
		reply      string
		status     heartbeat.Status
		deliveries int
		sent       string
	}{
		{"HEARTBEAT_OK", heartbeat.StatusOkToken, 0, ""},
		{"**HEARTBEAT_OK**.", heartbeat.StatusOkToken, 0, ""},
		{"All quiet. HEARTBEAT_OK", heartbeat.StatusOkToken, 0, ""}, // short remainder: still an ack
		{"", heartbeat.StatusOkEmpty, 0, ""},
		{"Disk is 95% full.", heartbeat.StatusSent, 1, "Disk is 95% full."},
		{long + "HEARTBEAT_OK", heartbeat.StatusSent, 2, strings.TrimSpace(long)},
	} {
		r.provider.Push(llmtest.Text(tt.reply))
		ev := r.run()
		if ev.Status != tt.status {
			t.Errorf("reply %q: status %s (%s), want %s", tt.reply, ev.Status, ev.Reason, tt.status)
		}
		got := r.rec.deliveries()
		if len(got) != tt.deliveries {
			t.Fatalf("reply %q: %d deliveries, want %d: %+v", tt.reply, len(got), tt.deliveries, got)
		}
		if tt.sent == "" {
			continue
		}
		d := got[len(got)-1]
		if d.Route != (core.Route{Channel: "telegram", To: "-1001"}) || len(d.Replies) != 1 || d.Replies[0].Text != tt.sent {
			t.Errorf("reply %q delivered %+v", tt.reply, d)
		}
		if ev.Channel != "telegram" || ev.To != "-1001" || ev.IndicatorType != heartbeat.IndicatorAlert || ev.Preview == "" {
			t.Errorf("alert event = %+v", ev)
		}
	}
}

func TestShowOkDeliversTheAck(t *testing.T) {
	cfg := telegramTarget
	cfg.ShowOk = boolp(true)
	r := newRig(t, rigOptions{cfg: cfg})
	r.provider.Push(llmtest.Text("HEARTBEAT_OK"))
	ev := r.run()
	got := r.rec.deliveries()
	if ev.Status != heartbeat.StatusOkToken || ev.Silent || len(got) != 1 || got[0].Replies[0].Text != "HEARTBEAT_OK" {
		t.Errorf("event %+v, deliveries %+v", ev, got)
	}
}

func TestSkipReasons(t *testing.T) {
	empty := fstest.MapFS{heartbeat.HeartbeatFile: {Data: []byte("# Heartbeat\n\n- \n```\n```\n")}}
	tasks := fstest.MapFS{heartbeat.HeartbeatFile: {Data: []byte("tasks:\n  - name: inbox\n    interval: 1h\n    prompt: Check the inbox\n")}}
	for _, tt := range []struct {
		name   string
		cfg    core.HeartbeatConfig
		ws     fstest.MapFS
		prep   func(r *rig)
		reason string
	}{
		{name: "every 0m", cfg: core.HeartbeatConfig{Every: "0m"}, reason: heartbeat.ReasonDisabled},
		{name: "switched off", prep: func(r *rig) {
			if err := r.hb.SetEnabled(context.Background(), false); err != nil {
				r.t.Fatal(err)
			}
		}, reason: heartbeat.ReasonDisabled},
		{name: "outside active hours", cfg: core.HeartbeatConfig{ActiveHours: core.ActiveHours{Start: "08:00", End: "11:00", Timezone: "UTC"}}, reason: heartbeat.ReasonQuietHours},
		{name: "start == end", cfg: core.HeartbeatConfig{ActiveHours: core.ActiveHours{Start: "09:00", End: "09:00", Timezone: "UTC"}}, reason: heartbeat.ReasonQuietHours},
		{name: "all visibility off", cfg: core.HeartbeatConfig{ShowOk: boolp(false), ShowAlerts: boolp(false), UseIndicator: boolp(false)}, reason: heartbeat.ReasonAlertsDisabled},
		{name: "empty HEARTBEAT.md", ws: empty, reason: heartbeat.ReasonEmptyFile},
		{name: "no task due", ws: tasks, prep: func(r *rig) {
			r.provider.Push(llmtest.Text("HEARTBEAT_OK"))
			if ev := r.run(); ev.Status != heartbeat.StatusOkToken {
				r.t.Fatalf("first tasks heartbeat = %+v", ev)
			}
			r.clock.Advance(30 * time.Minute)
		}, reason: heartbeat.ReasonNoTasksDue},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, rigOptions{cfg: tt.cfg, workspace: tt.ws})
			if tt.prep != nil {
				tt.prep(r)
			}
			calls := r.modelCalls()
			ev := r.run()
			if ev.Status != heartbeat.StatusSkipped || ev.Reason != tt.reason {
				t.Errorf("event = %+v, want skipped %s", ev, tt.reason)
			}
			if r.modelCalls() != calls {
				t.Errorf("a skipped heartbeat called the model")
			}
		})
	}
}

func TestActiveHoursInsideRuns(t *testing.T) {
	r := newRig(t, rigOptions{cfg: core.HeartbeatConfig{ActiveHours: core.ActiveHours{Start: "08:00", End: "24:00", Timezone: "UTC"}}})
	r.provider.Push(llmtest.Text("HEARTBEAT_OK"))
	if ev := r.run(); ev.Status != heartbeat.StatusOkToken {
		t.Errorf("inside active hours: %+v", ev)
	}
}

func TestMissingHeartbeatFileStillRuns(t *testing.T) {
	r := newRig(t, rigOptions{workspace: fstest.MapFS{"SOUL.md": {Data: []byte("x")}}})
	r.provider.Push(llmtest.Text("HEARTBEAT_OK"))
	if ev := r.run(); ev.Status != heartbeat.StatusOkToken {
		t.Errorf("missing HEARTBEAT.md: %+v", ev)
	}
}

func TestEmptyFileRunsWhenSystemEventsWait(t *testing.T) {
	empty := fstest.MapFS{heartbeat.HeartbeatFile: {Data: []byte("# Heartbeat\n")}}
	r := newRig(t, rigOptions{workspace: empty})
	r.disp.EnqueueSystemEvent(r.hb.SessionKey(), "Reminder: call the bank", queueTrusted)
	r.provider.Push(llmtest.Text("HEARTBEAT_OK"))
	if ev := r.run(); ev.Status != heartbeat.StatusOkToken {
		t.Fatalf("heartbeat with a waiting system event: %+v", ev)
	}
	req := r.provider.Requests()[0]
	if got := lastUserText(req); !strings.Contains(got, "Reminder: call the bank") {
		t.Errorf("the system event did not reach the prompt: %q", got)
	}
}

func TestTasksDuePromptAndRunTimes(t *testing.T) {
	ws := fstest.MapFS{heartbeat.HeartbeatFile: {Data: []byte("tasks:\n  - name: inbox\n    interval: 1h\n    prompt: Check the inbox\n  - name: backups\n    interval: 4h\n    prompt: Check the backups\n")}}
	r := newRig(t, rigOptions{workspace: ws})
	r.provider.Push(llmtest.Text("HEARTBEAT_OK"))
	r.run()
	first := lastUserText(r.provider.Requests()[0])
	if !strings.HasPrefix(first, "Run the following periodic tasks") || !strings.Contains(first, "Check the inbox") || !strings.Contains(first, "Check the backups") {
		t.Fatalf("first tasks prompt = %q", first)
	}
	r.clock.Advance(time.Hour)
	r.provider.Push(llmtest.Text("HEARTBEAT_OK"))
	r.run()
	second := lastUserText(r.provider.Requests()[1])
	if !strings.Contains(second, "Check the inbox") || strings.Contains(second, "Check the backups") {
		t.Errorf("after 1h only inbox is due: %q", second)
	}
	// A failed turn does not advance the tasks: inbox is due again.
	r.clock.Advance(time.Hour)
	r.provider.Push(llmtest.HTTPError(400, nil, ""))
	if ev := r.run(); ev.Status != heartbeat.StatusFailed {
		t.Fatalf("failing model: %+v", ev)
	}
	r.provider.Push(llmtest.Text("HEARTBEAT_OK"))
	r.run()
	if got := lastUserText(r.provider.Requests()[len(r.provider.Requests())-1]); !strings.Contains(got, "Check the inbox") {
		t.Errorf("inbox not due after a failed run: %q", got)
	}
}

func TestDuplicateAlertSuppressedFor24h(t *testing.T) {
	r := newRig(t, rigOptions{cfg: telegramTarget})
	for i, want := range []heartbeat.Status{heartbeat.StatusSent, heartbeat.StatusSkipped} {
		r.provider.Push(llmtest.Text("Disk is full."))
		ev := r.run()
		if ev.Status != want {
			t.Fatalf("alert %d: %+v, want %s", i, ev, want)
		}
		if want == heartbeat.StatusSkipped && ev.Reason != heartbeat.ReasonDuplicate {
			t.Errorf("reason = %q", ev.Reason)
		}
		r.clock.Advance(time.Hour)
	}
	// A different alert goes out; then, after 24 h, the first one again.
	r.provider.Push(llmtest.Text("Disk is full again."))
	if ev := r.run(); ev.Status != heartbeat.StatusSent {
		t.Fatalf("new alert: %+v", ev)
	}
	r.clock.Advance(heartbeat.DuplicateWindow)
	r.provider.Push(llmtest.Text("Disk is full again."))
	if ev := r.run(); ev.Status != heartbeat.StatusSent {
		t.Errorf("same alert after 24h: %+v", ev)
	}
	if n := len(r.rec.deliveries()); n != 3 {
		t.Errorf("deliveries = %d, want 3", n)
	}
}

func TestTargetLastAndDirectPolicy(t *testing.T) {
	cfg := core.HeartbeatConfig{Target: "last"}
	r := newRig(t, rigOptions{cfg: cfg})
	// No conversation yet: nowhere to deliver.
	r.provider.Push(llmtest.Text("Alert!"))
	if ev := r.run(); ev.Status != heartbeat.StatusSkipped || ev.Reason != heartbeat.ReasonNoTarget {
		t.Fatalf("no last route: %+v", ev)
	}
	// A DM to the main session sets its last route.
	route := core.Route{Channel: "telegram", To: "42"}
	r.provider.Push(llmtest.Text("hello"))
	if _, err := r.disp.Submit(context.Background(), core.Inbound{SessionKey: r.hb.SessionKey(), Route: route, ChatType: core.ChatDirect, Body: "hi", MessageID: "1"}); err != nil {
		t.Fatal(err)
	}
	waitDeliveries(t, r, 1)
	waitIdle(t, r)
	r.provider.Push(llmtest.Text("Alert two"))
	ev := r.run()
	got := r.rec.deliveries()
	if ev.Status != heartbeat.StatusSent || got[len(got)-1].Route != route {
		t.Fatalf("target last: %+v, deliveries %+v", ev, got)
	}

	blocked := newRig(t, rigOptions{cfg: core.HeartbeatConfig{Target: "telegram", To: "42", DirectPolicy: "block"}})
	blocked.provider.Push(llmtest.Text("Alert three"))
	if ev := blocked.run(); ev.Status != heartbeat.StatusSkipped || ev.Reason != heartbeat.ReasonDMBlocked {
		t.Errorf("directPolicy block: %+v", ev)
	}
	if n := len(blocked.rec.deliveries()); n != 0 {
		t.Errorf("blocked alert delivered")
	}
}

func TestLastEventAndSwitchPersist(t *testing.T) {
	dir := t.TempDir()
	r := newRig(t, rigOptions{dir: dir})
	r.provider.Push(llmtest.Text("HEARTBEAT_OK"))
	r.run()
	if err := r.hb.SetEnabled(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	r.close()
	again := newRig(t, rigOptions{dir: dir})
	last, ok := again.hb.Last()
	if !ok || last.Status != heartbeat.StatusOkToken || last.Trigger != "manual" || last.SessionKey != "agent:main:main" {
		t.Errorf("last after restart = %+v %v", last, ok)
	}
	if again.hb.Enabled() {
		t.Error("set-heartbeats off was forgotten")
	}
	if _, ok := again.hb.NextRun(); ok {
		t.Error("a switched-off runner reports a next run")
	}
}
