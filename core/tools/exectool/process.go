package exectool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core/tools"
)

type processTool Tools

const processSchema = `{"type":"object","properties":{` +
	`"action":{"type":"string","enum":["list","poll","log","kill"],"description":"list: the background commands; poll: status and output since the last poll; log: all kept output; kill: stop it."},` +
	`"id":{"type":"string","description":"The background command's id, from exec (poll, log, kill)."}},"required":["action"]}`

// Spec describes process: owner-only, like exec.
func (t *processTool) Spec() tools.Spec {
	return tools.Spec{
		Name:        "process",
		Description: "Manage commands exec left running in the background: list them, poll one for new output, read its whole log, or kill it.",
		Parameters:  json.RawMessage(processSchema),
		Flags:       tools.Flags{OwnerOnly: true, Background: true},
		Timeout:     time.Duration(t.cfg.CleanupMs)*time.Millisecond + 10*time.Second,
	}
}

// Execute runs one action.
func (t *processTool) Execute(ctx context.Context, call tools.Call, _ func(tools.Result)) (tools.Result, error) {
	action, _ := call.Args["action"].(string)
	if action == "list" {
		var b strings.Builder
		for _, p := range (*Tools)(t).procs.all() {
			fmt.Fprintf(&b, "%s  %-9s %6s  %s\n", p.id, p.status(), p.duration().Round(time.Second), p.plan.Command())
		}
		if b.Len() == 0 {
			return tools.TextResult("No background commands."), nil
		}
		return tools.TextResult(b.String()), nil
	}
	id, _ := call.Args["id"].(string)
	if id == "" {
		return tools.Result{}, fmt.Errorf("id is required for %s", action)
	}
	p := (*Tools)(t).procs.get(id)
	if p == nil {
		return tools.Result{}, fmt.Errorf("no background command with id %q; action list shows them", id)
	}
	switch action {
	case "poll":
		// Whether it ended is read before the output, so output written
		// just before the end is never reported with "[still running]"
		// and then lost.
		running := p.running()
		text := p.out.Since()
		if running {
			return tools.Result{Content: tools.TextResult(orNone(text) + "\n[still running]").Content, Details: details(p)}, nil
		}
		res := finished(p)
		res.Content = tools.TextResult(orNone(text) + "\n" + lastLine(res.Content.Text())).Content
		return res, nil
	case "log":
		if p.running() {
			return tools.Result{Content: tools.TextResult(orNone(p.out.String()) + "\n[still running]").Content, Details: details(p)}, nil
		}
		return finished(p), nil
	case "kill":
		p.stop("killed")
		select {
		case <-p.done:
		case <-ctx.Done():
			return tools.Result{}, errors.New("the command was signalled but has not exited yet")
		}
		return finished(p), nil
	}
	return tools.Result{}, fmt.Errorf("unknown action %q; use list, poll, log or kill", action)
}

func orNone(s string) string {
	if s == "" {
		return "(no new output)"
	}
	return strings.TrimSuffix(s, "\n")
}

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
