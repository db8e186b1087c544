package heartbeat_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/heartbeat"
)

// "Remind me every Monday at 9": the model calls the cron tool, the job is
// stored with delivery to the asking chat, and when it fires its answer
// arrives there.
func TestCronToolEndToEnd(t *testing.T) {
	r := cronRig(t, rigOptions{})
	route := core.Route{Channel: "telegram", To: "42"}
	r.provider.Push(
		llmtest.ToolCalls(llmtest.Call("cron", `{"action":"add","name":"Stand-up","cron":"0 9 * * 1","tz":"UTC","message":"Remind the user about the stand-up."}`)),
		llmtest.Text("Done: every Monday at 9."),
	)
	if _, err := r.disp.Submit(context.Background(), core.Inbound{SessionKey: "agent:main:telegram:direct:42", Route: route, ChatType: core.ChatDirect,
		Sender: core.Sender{ID: ownerID}, Body: "remind me every Monday at 9 about the stand-up", MessageID: "m1"}); err != nil {
		t.Fatal(err)
	}
	waitDeliveries(t, r, 1)
	jobs := r.cron.List()
	if len(jobs) != 1 {
		t.Fatalf("jobs = %+v", jobs)
	}
	j := jobs[0]
	monday := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC) // epoch is Saturday the 21st
	if j.Name != "Stand-up" || j.Delivery == nil || j.Delivery.Channel != "telegram" || j.Delivery.To != "42" ||
		j.State.NextRunAtMs != monday.UnixMilli() {
		t.Fatalf("job = %+v (delivery %+v)", j, j.Delivery)
	}
	// The tool result told the model what happened.
	reqs := r.provider.Requests()
	if !strings.Contains(toolResultText(reqs[1].Messages), "Added job") {
		t.Errorf("tool result: %s", toolResultText(reqs[1].Messages))
	}
	waitIdle(t, r)
	r.provider.Push(llmtest.Text("⏰ Stand-up now!"))
	r.clock.AdvanceTo(monday)
	got := waitDeliveries(t, r, 2)
	if last := got[len(got)-1]; last.Route != route || last.Replies[0].Text != "⏰ Stand-up now!" {
		t.Errorf("reminder delivered as %+v", last)
	}

	// list and remove.
	waitIdle(t, r)
	r.provider.Push(
		llmtest.ToolCalls(llmtest.Call("cron", `{"action":"list"}`)),
		llmtest.ToolCalls(llmtest.Call("cron", `{"action":"remove","id":"`+j.ID+`"}`)),
		llmtest.Text("Removed."),
	)
	if _, err := r.disp.Submit(context.Background(), core.Inbound{SessionKey: "agent:main:telegram:direct:42", Route: route, ChatType: core.ChatDirect,
		Sender: core.Sender{ID: ownerID}, Body: "stop the stand-up reminder", MessageID: "m2"}); err != nil {
		t.Fatal(err)
	}
	waitDeliveries(t, r, 3)
	if n := len(r.cron.List()); n != 0 {
		t.Errorf("jobs after remove = %d", n)
	}
	reqs = r.provider.Requests()
	if !strings.Contains(toolResultText(reqs[len(reqs)-2].Messages), j.ID+": Stand-up") {
		t.Errorf("list result: %s", toolResultText(reqs[len(reqs)-2].Messages))
	}

	// Someone else in a group cannot schedule work that would later run
	// as the owner's turn.
	waitIdle(t, r)
	r.provider.Push(
		llmtest.ToolCalls(llmtest.Call("cron", `{"action":"add","every":"1m","message":"post spam"}`)),
		llmtest.Text("I can't."),
	)
	if _, err := r.disp.Submit(context.Background(), core.Inbound{SessionKey: "agent:main:telegram:group:-5", Route: core.Route{Channel: "telegram", To: "-5"},
		ChatType: core.ChatGroup, WasMentioned: true, Sender: core.Sender{ID: "99"}, Body: "remind everyone every minute", MessageID: "m3"}); err != nil {
		t.Fatal(err)
	}
	waitDeliveries(t, r, 4)
	if n := len(r.cron.List()); n != 0 {
		t.Errorf("a non-owner added %d jobs", n)
	}
	reqs = r.provider.Requests()
	if got := toolResultText(reqs[len(reqs)-1].Messages); !strings.Contains(got, "tool is restricted to the owner") {
		t.Errorf("non-owner tool result: %s", got)
	}
}

func TestCronToolRefusesBadArguments(t *testing.T) {
	r := cronRig(t, rigOptions{})
	tool := &heartbeat.CronTool{Cron: r.cron}
	for _, tt := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"action": "add", "message": "x"}, "exactly one of at"},
		{map[string]any{"action": "add", "every": "1h", "at": "20m", "message": "x"}, "exactly one of at"},
		{map[string]any{"action": "add", "every": "soon", "message": "x"}, "every"},
		{map[string]any{"action": "add", "every": "1h"}, "message is required"},
		{map[string]any{"action": "add", "cron": "0 9 * *", "message": "x", "deliver": "none"}, "schedule"},
		{map[string]any{"action": "remove"}, "id is required"},
		{map[string]any{"action": "remove", "id": "nope"}, `no job "nope"`},
		{map[string]any{"action": "explode"}, "action must be"},
		{map[string]any{"action": "add", "every": "1h", "message": "x"}, "no chat to deliver to"},
	} {
		_, err := tool.Execute(context.Background(), toolCall(tt.args), nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: err %v, want %q", tt.args, err, tt.want)
		}
	}
}
