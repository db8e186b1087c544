package heartbeat

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/prompt"
	"github.com/switchboardhq/switchboard/queue"
)

// RunOnce runs one heartbeat now, unless a skip rule applies, and returns
// its event (also recorded as the last event and sent to OnEvent).
// trigger names the cause ("interval", "wake", "manual", "cron:<jobId>").
// Heartbeats run one at a time.
func (r *Runner) RunOnce(ctx context.Context, trigger string) Event {
	r.runMu.Lock()
	defer r.runMu.Unlock()
	start := r.clock.Now()
	ev := r.run(ctx, trigger, start)
	ev.TS = r.clock.Now().UnixMilli()
	ev.AgentID, ev.SessionKey, ev.Trigger = r.opts.AgentID, string(r.session), trigger
	if _, _, indicator := r.opts.Config.Visibility(); !indicator {
		ev.IndicatorType = ""
	}
	r.mu.Lock()
	r.st.Last = &ev
	snap := r.st
	r.mu.Unlock()
	if err := r.save(ctx, snap); err != nil {
		r.log.Warn("could not persist the heartbeat state", "err", err)
	}
	if ev.Status == StatusFailed {
		r.log.Warn("heartbeat failed", "agent", r.opts.AgentID, "reason", ev.Reason, "trigger", trigger)
	} else {
		r.log.Debug("heartbeat", "agent", r.opts.AgentID, "status", ev.Status, "reason", ev.Reason)
	}
	if r.deps.OnEvent != nil {
		r.deps.OnEvent(ev)
	}
	return ev
}

// skipped is a skipped heartbeat's event.
func skipped(reason string) Event { return Event{Status: StatusSkipped, Reason: reason} }

// run applies the skip rules in OpenClaw's order, runs the turn and
// decides what of its reply to deliver.
func (r *Runner) run(ctx context.Context, trigger string, start time.Time) Event {
	cfg := r.opts.Config
	r.mu.Lock()
	disabled := r.interval <= 0 || r.st.Disabled
	r.mu.Unlock()
	if disabled {
		return skipped(ReasonDisabled)
	}
	if !cfg.ActiveHours.Active(start, r.opts.UserLocation) {
		return skipped(ReasonQuietHours)
	}
	showOk, showAlerts, indicator := cfg.Visibility()
	if !showOk && !showAlerts && !indicator {
		return skipped(ReasonAlertsDisabled)
	}
	if r.deps.Dispatcher.Busy(r.session) || r.deps.Dispatcher.LaneWaiting(queue.LaneMain) > 0 {
		return skipped(ReasonRequestsInFlight)
	}
	body, due, reason := r.prompt(start)
	if reason != "" {
		return skipped(reason)
	}
	route, target := r.target(ctx)
	ev := Event{Channel: string(route.Channel), To: string(route.To), AccountID: string(route.AccountID)}

	r.mu.Lock()
	r.seq++
	runID := fmt.Sprintf("heartbeat-%s-%d-%d", r.opts.AgentID, start.UnixMilli(), r.seq)
	ch := make(chan outcome, 1)
	r.pending[runID] = ch
	r.mu.Unlock()
	forget := func() {
		r.mu.Lock()
		delete(r.pending, runID)
		r.mu.Unlock()
	}
	in := core.Inbound{
		Kind: core.InboundHeartbeat, AgentID: r.opts.AgentID, SessionKey: r.session,
		Route: route, Body: body,
	}
	rcpt, err := r.deps.Dispatcher.SubmitWith(ctx, in, queue.SubmitOptions{
		RunID: runID, Model: cfg.Model, NoDeliver: true,
		Timeout: time.Duration(cfg.TimeoutSeconds) * time.Second,
	})
	if err != nil {
		forget()
		ev.Status, ev.Reason, ev.IndicatorType = StatusFailed, err.Error(), IndicatorError
		return ev
	}
	if rcpt.Disposition != queue.Running {
		forget()
		return skipped(ReasonRequestsInFlight)
	}
	var out outcome
	select {
	case out = <-ch:
	case <-ctx.Done():
		forget()
		ev.Status, ev.Reason, ev.IndicatorType = StatusFailed, "stopped before the heartbeat turn ended", IndicatorError
		return ev
	}
	ev.DurationMs = r.clock.Now().Sub(start).Milliseconds()
	switch {
	case out.err != nil:
		ev.Status, ev.Reason, ev.IndicatorType = StatusFailed, out.err.Error(), IndicatorError
		return ev
	case out.res == nil:
		ev.Status, ev.Reason, ev.IndicatorType = StatusFailed, "the heartbeat turn returned no result", IndicatorError
		return ev
	case out.res.Err != nil && len(out.res.Replies) > 0 && out.res.Replies[0].IsError:
		ev.Status, ev.Reason, ev.IndicatorType = StatusFailed, out.res.Err.Error(), IndicatorError
		return ev
	case out.res.Aborted:
		ev.Status, ev.Reason, ev.IndicatorType = StatusFailed, "the heartbeat turn was aborted", IndicatorError
		return ev
	}
	r.tasksRan(ctx, due, start)

	if len(out.res.Replies) == 0 {
		ev.Status, ev.IndicatorType, ev.Silent = StatusOkToken, IndicatorOk, true
		if out.res.Final == nil || strings.TrimSpace(out.res.Final.Text()) == "" {
			ev.Status = StatusOkEmpty
		}
		if showOk && target {
			if err := r.deliver(ctx, runID, route, []core.ReplyPayload{{Text: "HEARTBEAT_OK"}}); err == nil {
				ev.Silent = false
			}
		}
		return ev
	}

	text, media := alertText(out.res.Replies)
	ev.Preview, ev.HasMedia, ev.IndicatorType = preview(text), media, IndicatorAlert
	switch {
	case !showAlerts:
		ev.Status, ev.Reason, ev.Silent = StatusSkipped, ReasonAlertsHidden, true
		return ev
	case !target:
		ev.Status, ev.Reason, ev.Silent = StatusSkipped, ReasonNoTarget, true
		return ev
	case cfg.DirectPolicy == "block" && r.isDirect(route):
		ev.Status, ev.Reason, ev.Silent = StatusSkipped, ReasonDMBlocked, true
		return ev
	}
	r.mu.Lock()
	dup := r.st.LastAlert == text && start.UnixMilli()-r.st.LastAlertAt < DuplicateWindow.Milliseconds()
	r.mu.Unlock()
	if dup {
		ev.Status, ev.Reason, ev.Silent = StatusSkipped, ReasonDuplicate, true
		return ev
	}
	if err := r.deliver(ctx, runID, route, out.res.Replies); err != nil {
		ev.Status, ev.Reason, ev.IndicatorType = StatusFailed, "delivery failed: "+err.Error(), IndicatorError
		return ev
	}
	r.mu.Lock()
	r.st.LastAlert, r.st.LastAlertAt = text, start.UnixMilli()
	r.mu.Unlock()
	ev.Status = StatusSent
	return ev
}

// prompt builds the heartbeat's user message. It returns a skip reason
// instead when HEARTBEAT.md leaves nothing to do and no system event is
// waiting: an effectively empty file (empty-heartbeat-file), or a tasks
// block with no task due (no-tasks-due). A missing file still runs.
func (r *Runner) prompt(now time.Time) (body string, due []Task, skip string) {
	body = r.opts.Config.Prompt
	if strings.TrimSpace(body) == "" {
		body = prompt.DefaultHeartbeatPrompt
	}
	if r.opts.Workspace == nil {
		return body, nil, ""
	}
	raw, err := fs.ReadFile(r.opts.Workspace, HeartbeatFile)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			r.log.Warn("could not read HEARTBEAT.md; running the heartbeat anyway", "err", err)
		}
		return body, nil, ""
	}
	events := r.deps.Dispatcher.PendingSystemEvents(r.session) > 0
	content := string(raw)
	tasks, hasBlock, errs := ParseTasks(content)
	for _, e := range errs {
		r.log.Warn("HEARTBEAT.md task ignored", "err", e)
	}
	if hasBlock {
		r.mu.Lock()
		due = DueTasks(tasks, r.st.Tasks, now)
		r.mu.Unlock()
		switch {
		case len(due) > 0:
			return TasksPrompt(due), due, ""
		case !events:
			return "", nil, ReasonNoTasksDue
		}
		return body, nil, ""
	}
	if IsEffectivelyEmpty(content) && !events {
		return "", nil, ReasonEmptyFile
	}
	return body, nil, ""
}

// tasksRan records the due tasks as run at now; only a completed turn
// advances them.
func (r *Runner) tasksRan(ctx context.Context, due []Task, now time.Time) {
	if len(due) == 0 {
		return
	}
	r.mu.Lock()
	if r.st.Tasks == nil {
		r.st.Tasks = map[string]int64{}
	}
	for _, t := range due {
		r.st.Tasks[t.Name] = now.UnixMilli()
	}
	snap := r.st
	r.mu.Unlock()
	if err := r.save(ctx, snap); err != nil {
		r.log.Warn("could not persist heartbeat task times", "err", err)
	}
}

// deliver sends replies to the target.
func (r *Runner) deliver(ctx context.Context, runID string, route core.Route, replies []core.ReplyPayload) error {
	if r.deps.Deliverer == nil {
		return errors.New("no deliverer")
	}
	return r.deps.Deliverer.Deliver(context.WithoutCancel(ctx), queue.Delivery{
		Kind: queue.DeliveryReply, RunID: runID, SessionKey: r.session, Route: route, Replies: replies,
	})
}

// alertText joins the replies' text and reports attachments.
func alertText(replies []core.ReplyPayload) (string, bool) {
	var parts []string
	media := false
	for _, p := range replies {
		if t := strings.TrimSpace(p.Text); t != "" {
			parts = append(parts, t)
		}
		if p.MediaURL != "" || len(p.MediaURLs) > 0 {
			media = true
		}
	}
	return strings.Join(parts, "\n\n"), media
}

// target resolves where alerts go; ok is false for none (or for a chat
// the target's channel cannot read, which is logged).
func (r *Runner) target(ctx context.Context) (core.Route, bool) {
	cfg := r.opts.Config
	channel, account := cfg.Target, cfg.AccountID
	switch cfg.Target {
	case "", "none":
		return core.Route{}, false
	case "last":
		if r.deps.Sessions == nil {
			return core.Route{}, false
		}
		e, ok, err := r.deps.Sessions.GetSession(ctx, r.session)
		if err != nil || !ok || e.LastRoute == nil {
			return core.Route{}, false
		}
		route := *e.LastRoute
		if account != "" {
			route.AccountID = core.AccountID(account)
		}
		if cfg.To == "" {
			return route, route.Channel != "" && route.To != ""
		}
		channel, account = string(route.Channel), string(route.AccountID)
	}
	route, err := r.resolve(channel, account, cfg.To)
	if err != nil {
		r.log.Warn("heartbeat target is not a chat its channel can reach; alerts go nowhere", "target", channel, "to", cfg.To, "err", err)
		return core.Route{}, false
	}
	return route, route.To != ""
}

// resolve reads a chat on channel through Targets (web chat, which no
// bridge provides, and a daemon without Targets take it as written).
func (r *Runner) resolve(channel, account, to string) (core.Route, error) {
	if r.deps.Targets == nil || channel == string(core.WebchatChannel) {
		return core.Route{Channel: core.ChannelName(channel), AccountID: core.AccountID(account), To: core.ChatID(to)}, nil
	}
	return r.deps.Targets.Resolve(channel, account, to)
}

// isDirect reports a target that is a direct chat, for directPolicy
// block: the heartbeat session's own kind for target "last", else what the
// channel's bridge tells from the chat id (web chat is direct).
func (r *Runner) isDirect(route core.Route) bool {
	if r.opts.Config.Target == "last" && r.opts.Config.To == "" {
		if p, err := core.ParseSessionKey(string(r.session)); err == nil {
			return p.Kind == core.SessionKindMain || p.Kind == core.SessionKindDirect
		}
	}
	if route.Channel == core.WebchatChannel {
		return true
	}
	return r.deps.Targets != nil && r.deps.Targets.IsDirect(route)
}
