package heartbeat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core/tools"
)

// cronToolSchema is the cron tool's parameter schema.
const cronToolSchema = `{"type":"object","properties":{` +
	`"action":{"type":"string","enum":["list","add","remove"],"description":"list the scheduled jobs, add one, or remove one by id."},` +
	`"name":{"type":"string","description":"add: a short name for the job, e.g. \"Monday stand-up reminder\"."},` +
	`"at":{"type":"string","description":"add, one-time: when, as an ISO time with its zone (2026-11-23T09:00:00+01:00) or a delay from now (20m, 2h, 1d)."},` +
	`"every":{"type":"string","description":"add, repeating at a fixed interval: 30m, 2h, 1d."},` +
	`"cron":{"type":"string","description":"add, repeating on a calendar: a 5-field cron expression, e.g. \"0 9 * * 1\" for Mondays at 9:00."},` +
	`"tz":{"type":"string","description":"add with cron: the IANA time zone the expression is in, e.g. Europe/Berlin. Ask the user if unsure."},` +
	`"message":{"type":"string","description":"add: what to do or say when it runs, written as an instruction to yourself, e.g. \"Remind the user about the stand-up.\""},` +
	`"deliver":{"type":"string","enum":["here","none"],"description":"add: here (default) sends the result to this chat; none keeps it in the job's history."},` +
	`"id":{"type":"string","description":"remove: the job id from list."}},"required":["action"]}`

// CronTool is the agent's cron tool: it lists, adds and removes scheduled
// jobs, so a user can say "remind me every Monday at 9". Added jobs run an
// isolated turn with the message and, by default, announce its answer to
// the chat the request came from. Set Cron before the first turn.
type CronTool struct {
	// Cron is the cron service.
	Cron *Cron
}

var _ tools.Tool = (*CronTool)(nil)

// Spec describes the tool to the model.
func (t *CronTool) Spec() tools.Spec {
	return tools.Spec{
		Name: "cron",
		Description: "Schedule work for later: reminders and recurring tasks. action add with one of at (once), every (interval) " +
			"or cron (calendar, with tz) and a message saying what to do then; the result is sent to this chat. " +
			"action list shows the jobs with their ids and next run; action remove deletes one by id.",
		Parameters: json.RawMessage(cronToolSchema),
		// Jobs run later as the owner's turns: only owners create them.
		Flags: tools.Flags{OwnerOnly: true},
	}
}

// Execute runs one call.
func (t *CronTool) Execute(ctx context.Context, call tools.Call, _ func(tools.Result)) (tools.Result, error) {
	if t.Cron == nil {
		return tools.Result{}, errors.New("the scheduler is not running")
	}
	str := func(k string) string {
		s, _ := call.Args[k].(string)
		return strings.TrimSpace(s)
	}
	switch str("action") {
	case "list":
		return t.list(), nil
	case "remove":
		id := str("id")
		if id == "" {
			return tools.Result{}, errors.New("id is required to remove a job; call cron with action list to see the ids")
		}
		ok, err := t.Cron.Remove(ctx, id)
		if err != nil {
			return tools.Result{}, err
		}
		if !ok {
			return tools.Result{}, fmt.Errorf("no job %q; call cron with action list to see the ids", id)
		}
		return tools.TextResult("Removed job " + id + "."), nil
	case "add":
		return t.add(ctx, call, str)
	}
	return tools.Result{}, fmt.Errorf("action must be list, add or remove; got %q", str("action"))
}

func (t *CronTool) list() tools.Result {
	jobs := t.Cron.List()
	if len(jobs) == 0 {
		return tools.TextResult("No scheduled jobs.")
	}
	var b strings.Builder
	for _, j := range jobs {
		next := "no next run"
		if j.State.NextRunAtMs > 0 {
			next = "next " + time.UnixMilli(j.State.NextRunAtMs).UTC().Format(time.RFC3339)
		}
		state := ""
		if !j.IsEnabled() {
			state = " (disabled)"
		}
		fmt.Fprintf(&b, "- %s: %s, %s, %s%s\n", j.ID, j.Name, j.Schedule.String(), next, state)
	}
	return tools.TextResult(strings.TrimRight(b.String(), "\n"))
}

func (t *CronTool) add(ctx context.Context, call tools.Call, str func(string) string) (tools.Result, error) {
	var s Schedule
	n := 0
	if v := str("at"); v != "" {
		s, n = Schedule{Kind: ScheduleAt, At: v}, n+1
	}
	if v := str("every"); v != "" {
		ms, err := ParseEveryMs(v)
		if err != nil {
			return tools.Result{}, fmt.Errorf("every: %w", err)
		}
		s, n = Schedule{Kind: ScheduleEvery, EveryMs: ms}, n+1
	}
	if v := str("cron"); v != "" {
		s, n = Schedule{Kind: ScheduleCron, Expr: v, TZ: str("tz")}, n+1
	}
	if n != 1 {
		return tools.Result{}, errors.New("give exactly one of at (once), every (interval) or cron (calendar)")
	}
	msg := str("message")
	if msg == "" {
		return tools.Result{}, errors.New("message is required: what to do or say when the job runs")
	}
	spec := JobSpec{Name: str("name"), AgentID: call.AgentID, Schedule: s, SessionTarget: TargetIsolated,
		Payload: Payload{Kind: PayloadAgentTurn, Message: msg}}
	if d := str("deliver"); d != "none" {
		r := call.Route
		if r.Channel == "" || r.To == "" {
			return tools.Result{}, errors.New("this conversation has no chat to deliver to; use deliver none")
		}
		spec.Delivery = &Delivery{Mode: DeliveryAnnounce, Channel: string(r.Channel), To: string(r.To), AccountID: string(r.AccountID)}
	}
	j, err := t.Cron.Add(ctx, spec)
	if err != nil {
		return tools.Result{}, err
	}
	next := "it has no future run"
	if j.State.NextRunAtMs > 0 {
		next = "first run " + time.UnixMilli(j.State.NextRunAtMs).UTC().Format(time.RFC3339)
	}
	res := tools.TextResult(fmt.Sprintf("Added job %s (%s): %s; %s.", j.ID, j.Name, j.Schedule.String(), next))
	res.Details, _ = json.Marshal(j)
	return res, nil
}
