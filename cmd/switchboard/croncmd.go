package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/switchboardhq/switchboard/config"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/gateway/client"
	"github.com/switchboardhq/switchboard/gateway/protocol"
	"github.com/switchboardhq/switchboard/heartbeat"
)

// cronNotRunning is what a cron command says when no daemon answers: jobs
// live in the running daemon's scheduler, so there is no offline mode.
const cronNotRunning = `the daemon is not running; start it with "switchboard run" (jobs live in its scheduler)`

// cronCellRunes bounds the free-text cells of the cron tables.
const cronCellRunes = 60

// cronRunsLimit is how many runs `cron runs` shows by default.
const cronRunsLimit = 20

func cronListCommand() *command {
	var all bool
	register := func(fs *flag.FlagSet) {
		v := all // see cronTrailingFlags
		fs.BoolVar(&all, "all", false, "include disabled jobs")
		all = v
	}
	return &command{
		name:    "cron list",
		summary: "list the scheduled jobs of the running daemon",
		help: `Lists the cron jobs of the running daemon: their id, name, schedule, next run
(in local time) and how the last run went. Disabled jobs are left out unless
--all is given; they are marked "disabled". Jobs from the configuration file
(cron.jobs) and jobs added with "switchboard cron add" are both listed.`,
		flags: register,
		run: func(ctx context.Context, c *cli, g *globalFlags, args []string) int {
			args, code := c.cronTrailingFlags("list", g, register, args)
			if code != exitOK {
				return code
			}
			if len(args) > 0 {
				fmt.Fprintf(c.stderr, "switchboard cron list: takes no arguments\n")
				return exitUsage
			}
			return c.cron(ctx, g, func(ctx context.Context, cl *client.Client) error {
				raw, err := cl.Call(ctx, "cron.list", map[string]bool{"includeDisabled": all})
				if err != nil {
					return err
				}
				var out struct{ Jobs []heartbeat.Job }
				if err := json.Unmarshal(raw, &out); err != nil {
					return fmt.Errorf("cron.list: %w", err)
				}
				if len(out.Jobs) == 0 {
					if all {
						fmt.Fprintf(c.stdout, "No cron jobs; add one with \"switchboard cron add\".\n")
					} else {
						fmt.Fprintf(c.stdout, "No enabled cron jobs; \"switchboard cron list --all\" shows disabled ones too.\n")
					}
					return nil
				}
				writeCronJobs(c.stdout, out.Jobs)
				return nil
			})
		},
	}
}

// writeCronJobs prints jobs as a table.
func writeCronJobs(w io.Writer, jobs []heartbeat.Job) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tSCHEDULE\tNEXT RUN\tLAST")
	for _, j := range jobs {
		next := cronTime(j.State.NextRunAtMs)
		if !j.IsEnabled() {
			next = "disabled"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", j.ID, clipCell(j.Name), j.Schedule.String(), next, lastRun(j.State))
	}
	tw.Flush()
}

// lastRun describes a job's last run: "-" before the first, "running"
// during one, else its status and error.
func lastRun(st heartbeat.JobState) string {
	switch {
	case st.RunningAtMs != 0:
		return "running since " + cronTime(st.RunningAtMs)
	case st.LastStatus == "":
		return "-"
	case st.LastError == "" && st.LastDeliveryStatus == "not-delivered":
		// A best-effort delivery failed; the run itself went well.
		return clipCell(st.LastStatus + ", not delivered: " + st.LastDeliveryError)
	case st.LastError == "":
		return st.LastStatus
	}
	s := st.LastStatus
	if st.ConsecutiveErrors > 1 {
		s += fmt.Sprintf(" (%d in a row)", st.ConsecutiveErrors)
	}
	return clipCell(s + ": " + st.LastError)
}

// cronAddFlags are the flags of `cron add`.
type cronAddFlags struct {
	id, name                 string
	at, every, expr, tz      string
	exact                    bool
	message, systemEvent     string
	session                  string
	announce, webhook, model string
	disabled                 bool
}

// register adds the flags to fs, keeping the values already parsed (see
// cronTrailingFlags).
func (o *cronAddFlags) register(fs *flag.FlagSet) {
	saved := *o
	defer func() { *o = saved }()
	fs.StringVar(&o.id, "id", "", "job id, such as daily-report (default: generated)")
	fs.StringVar(&o.name, "name", "", "short human name of the job (required)")
	fs.StringVar(&o.at, "at", "", `run once at a time ("2026-11-21T09:00:00+01:00") or after a duration ("20m")`)
	fs.StringVar(&o.every, "every", "", `run at a fixed interval: "90s", "15m", "2h", "1d"`)
	fs.StringVar(&o.expr, "cron", "", `run when a cron expression matches, such as "0 9 * * 1-5"`)
	fs.StringVar(&o.tz, "tz", "", `IANA time zone of --cron, such as Europe/Berlin (default: the host's)`)
	fs.BoolVar(&o.exact, "exact", false, "run --cron jobs exactly on time, without the automatic stagger of top-of-hour jobs")
	fs.StringVar(&o.message, "message", "", "run an agent turn with this message")
	fs.StringVar(&o.systemEvent, "system-event", "", "put this line in the main session and wake the heartbeat")
	fs.StringVar(&o.session, "session", "", "where a --message turn runs: isolated (default), main or session:<name>")
	fs.StringVar(&o.announce, "announce", "", "send the answer to <channel>:<to> on an enabled channel, such as telegram:-100123 or slack:channel:C123")
	fs.StringVar(&o.webhook, "webhook", "", "POST the answer as JSON to this https URL")
	fs.StringVar(&o.model, "model", "", "model of the turn, as provider/model (default: the agent's)")
	fs.BoolVar(&o.disabled, "disabled", false, "add the job switched off")
}

// spec builds the job the flags describe, or returns a usage error. The
// daemon validates the rest and names the field of any problem.
func (o *cronAddFlags) spec(now time.Time) (heartbeat.JobSpec, error) {
	var j heartbeat.JobSpec
	if strings.TrimSpace(o.name) == "" {
		return j, errors.New("--name is required: a short human name for the job")
	}
	j.ID, j.Name = o.id, o.name

	schedules := 0
	for _, s := range []string{o.at, o.every, o.expr} {
		if s != "" {
			schedules++
		}
	}
	if schedules != 1 {
		return j, errors.New(`give exactly one schedule: --at WHEN (once), --every DURATION (an interval) or --cron "EXPR" (a cron expression)`)
	}
	if o.expr == "" && (o.tz != "" || o.exact) {
		return j, errors.New("--tz and --exact apply to --cron schedules only")
	}
	switch {
	case o.at != "":
		if _, err := heartbeat.ParseAt(o.at, now); err != nil {
			return j, fmt.Errorf("--at: %w", err)
		}
		j.Schedule = heartbeat.Schedule{Kind: heartbeat.ScheduleAt, At: o.at}
	case o.every != "":
		ms, err := heartbeat.ParseEveryMs(o.every)
		if err != nil {
			return j, fmt.Errorf("--every: %w", err)
		}
		j.Schedule = heartbeat.Schedule{Kind: heartbeat.ScheduleEvery, EveryMs: ms}
	default:
		j.Schedule = heartbeat.Schedule{Kind: heartbeat.ScheduleCron, Expr: o.expr, TZ: o.tz}
		if o.exact {
			j.Schedule.StaggerMs = new(int64)
		}
	}
	if err := j.Schedule.Validate(); err != nil {
		return j, scheduleFlagError(err)
	}

	if (o.message == "") == (o.systemEvent == "") {
		return j, errors.New("give exactly one payload: --message TEXT (an agent turn) or --system-event TEXT (a line for the main session)")
	}
	if o.announce != "" && o.webhook != "" {
		return j, errors.New("give at most one of --announce and --webhook")
	}
	if o.systemEvent != "" {
		if o.session != "" && o.session != heartbeat.TargetMain {
			return j, errors.New("--system-event goes to the main session; leave out --session, or use --message for a turn of its own")
		}
		if o.announce != "" || o.webhook != "" || o.model != "" {
			return j, errors.New("--announce, --webhook and --model apply to --message jobs only")
		}
		j.SessionTarget = heartbeat.TargetMain
		j.Payload = heartbeat.Payload{Kind: heartbeat.PayloadSystemEvent, Text: o.systemEvent}
	} else {
		j.SessionTarget = o.session
		j.Payload = heartbeat.Payload{Kind: heartbeat.PayloadAgentTurn, Message: o.message, Model: o.model}
	}
	switch {
	case o.announce != "":
		channel, to, ok := strings.Cut(o.announce, ":")
		if !ok || channel == "" || to == "" {
			return j, fmt.Errorf("--announce %q: write <channel>:<to>, such as telegram:-100123 or slack:channel:C123", o.announce)
		}
		j.Delivery = &heartbeat.Delivery{Mode: heartbeat.DeliveryAnnounce, Channel: strings.ToLower(channel), To: to}
	case o.webhook != "":
		j.Delivery = &heartbeat.Delivery{Mode: heartbeat.DeliveryWebhook, To: o.webhook}
	}
	if o.disabled {
		j.Enabled = new(bool)
	}
	return j, nil
}

// scheduleFlagError renames the schedule fields of err's FieldErrors to
// the flags that set them.
func scheduleFlagError(err error) error {
	flags := map[string]string{"at": "--at", "everyMs": "--every", "expr": "--cron", "tz": "--tz", "staggerMs": "--exact"}
	list := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	}
	out := make([]error, 0, len(list))
	for _, e := range list {
		var fe *core.FieldError
		if errors.As(e, &fe) {
			if f, ok := flags[fe.Path]; ok {
				e = fmt.Errorf("%s: %s", f, fe.Message)
			}
		}
		out = append(out, e)
	}
	return errors.Join(out...)
}

func cronAddCommand() *command {
	var o cronAddFlags
	return &command{
		name:    "cron add",
		summary: "schedule a job in the running daemon",
		help: `Adds a job to the running daemon's scheduler. It needs a name, exactly one
schedule and exactly one payload:

  --at WHEN          once: an RFC 3339 time, "2026-11-21 09:00" (UTC), or a
                     duration from now such as "20m"
  --every DURATION   at an interval: "90s", "15m", "2h", "1d"
  --cron "EXPR"      when a 5-field cron expression matches, in --tz (default:
                     the host's zone); top-of-hour expressions are spread over
                     5 minutes unless --exact is given

  --message TEXT       the agent runs a turn with TEXT, in a fresh session each
                       time (--session isolated, the default), in a named one
                       (--session session:<name>), and its answer can go to a
                       chat (--announce telegram:-100123, on a channel enabled
                       in the configuration) or a URL (--webhook)
  --system-event TEXT  TEXT is put in the main session and the heartbeat wakes

Examples:
  switchboard cron add --name "Morning brief" --cron "0 8 * * 1-5" --tz Europe/Berlin \
    --message "Summarise my calendar for today" --announce telegram:123456
  switchboard cron add --name "Tea" --at 20m --system-event "Remind me the tea is ready"

The job is kept in the state store and survives restarts. Problems with the
job are reported by the daemon with the field they concern.`,
		flags: o.register,
		run: func(ctx context.Context, c *cli, g *globalFlags, args []string) int {
			args, code := c.cronTrailingFlags("add", g, o.register, args)
			if code != exitOK {
				return code
			}
			if len(args) > 0 {
				fmt.Fprintf(c.stderr, "switchboard cron add: takes no arguments (quote a --message or --cron value with spaces); got %q\n", args)
				return exitUsage
			}
			spec, err := o.spec(time.Now())
			if err != nil {
				fmt.Fprintf(c.stderr, "switchboard cron add: %v\n", err)
				return exitUsage
			}
			return c.cron(ctx, g, func(ctx context.Context, cl *client.Client) error {
				raw, err := cl.Call(ctx, "cron.add", spec)
				if err != nil {
					return err
				}
				var j heartbeat.Job
				if err := json.Unmarshal(raw, &j); err != nil {
					return fmt.Errorf("cron.add: %w", err)
				}
				next := "next run " + cronTime(j.State.NextRunAtMs)
				if !j.IsEnabled() {
					next = "disabled"
				}
				fmt.Fprintf(c.stdout, "Added job %s: %s, %s\n", j.ID, j.Schedule.String(), next)
				return nil
			})
		},
	}
}

func cronRemoveCommand() *command {
	return &command{
		name:    "cron rm",
		args:    "<id>",
		summary: "remove a job from the running daemon",
		help: `Removes a job (see "switchboard cron list" for the ids) with its schedule;
its run history stays in "switchboard cron runs". A job from the
configuration file comes back the next time the daemon starts: remove it
from cron.jobs there instead.`,
		run: func(ctx context.Context, c *cli, g *globalFlags, args []string) int {
			args, code := c.cronTrailingFlags("rm", g, nil, args)
			if code != exitOK {
				return code
			}
			if len(args) != 1 || args[0] == "" {
				fmt.Fprintf(c.stderr, "switchboard cron rm: takes one argument, the job id\n")
				return exitUsage
			}
			id := args[0]
			return c.cron(ctx, g, func(ctx context.Context, cl *client.Client) error {
				raw, err := cl.Call(ctx, "cron.remove", map[string]string{"id": id})
				if err != nil {
					return err
				}
				var out struct{ Removed bool }
				if err := json.Unmarshal(raw, &out); err != nil {
					return fmt.Errorf("cron.remove: %w", err)
				}
				if !out.Removed {
					return noJob(id)
				}
				fmt.Fprintf(c.stdout, "Removed job %s\n", id)
				return nil
			})
		},
	}
}

func cronRunCommand() *command {
	var due bool
	register := func(fs *flag.FlagSet) {
		v := due // see cronTrailingFlags
		fs.BoolVar(&due, "due", false, "run only if a scheduled run is due")
		due = v
	}
	return &command{
		name:    "cron run",
		args:    "<id>",
		summary: "run a job of the running daemon now",
		help: `Starts a run of a job now, whatever its schedule; its next scheduled run is
unchanged. With --due it runs only if a scheduled run is due (and then
counts as that run). The run goes on in the daemon: follow it with
"switchboard cron runs <id>".

A disabled job runs this once and stays disabled; it is never deleted by
the run. An enabled one-shot job (--at, or deleteAfterRun) is deleted when
the run succeeds, as if its time had come; the command says which.`,
		flags: register,
		run: func(ctx context.Context, c *cli, g *globalFlags, args []string) int {
			args, code := c.cronTrailingFlags("run", g, register, args)
			if code != exitOK {
				return code
			}
			if len(args) != 1 || args[0] == "" {
				fmt.Fprintf(c.stderr, "switchboard cron run: takes one argument, the job id\n")
				return exitUsage
			}
			id, mode := args[0], "force"
			if due {
				mode = "due"
			}
			return c.cron(ctx, g, func(ctx context.Context, cl *client.Client) error {
				raw, err := cl.Call(ctx, "cron.run", map[string]string{"id": id, "mode": mode})
				if isNoJob(err) {
					return noJob(id)
				}
				if err != nil {
					return err
				}
				var out struct {
					Ran        bool
					RunID      string
					Disabled   bool
					DeletesJob bool
				}
				if err := json.Unmarshal(raw, &out); err != nil {
					return fmt.Errorf("cron.run: %w", err)
				}
				switch {
				case out.Ran:
					// What the run does to the job, said (issue 26, finding 6).
					note := ""
					if out.Disabled {
						note = " (disabled: it runs this once and stays disabled)"
					} else if out.DeletesJob {
						note = " (one-shot: the job is deleted when this run succeeds)"
					}
					fmt.Fprintf(c.stdout, "Started run %s of job %s%s\n", out.RunID, id, note)
				case due:
					fmt.Fprintf(c.stdout, "Job %s is not due; nothing ran\n", id)
				default:
					return fmt.Errorf("job %s did not start: it changed while starting; see switchboard cron list and try again", id)
				}
				return nil
			})
		},
	}
}

func cronRunsCommand() *command {
	limit := cronRunsLimit
	register := func(fs *flag.FlagSet) {
		v := limit // see cronTrailingFlags
		fs.IntVar(&limit, "limit", cronRunsLimit, "show at most this many runs")
		limit = v
	}
	return &command{
		name:    "cron runs",
		args:    "[id]",
		summary: "show recent runs of the running daemon's jobs",
		help: `Shows the most recent runs, newest first: of one job when its id is given,
else of every job. A run's status is running, ok, error or skipped (a run
missed while the daemon was down); the last column holds the error of a
failed run or the start of a finished run's answer. A run whose answer
could not be announced (its channel is off or its bridge is not running)
is an error, or "ok, not delivered" for a job with bestEffort delivery.`,
		flags: register,
		run: func(ctx context.Context, c *cli, g *globalFlags, args []string) int {
			args, code := c.cronTrailingFlags("runs", g, register, args)
			if code != exitOK {
				return code
			}
			if len(args) > 1 {
				fmt.Fprintf(c.stderr, "switchboard cron runs: takes at most one argument, the job id\n")
				return exitUsage
			}
			if limit < 1 {
				fmt.Fprintf(c.stderr, "switchboard cron runs: --limit must be at least 1\n")
				return exitUsage
			}
			id := ""
			if len(args) == 1 {
				id = args[0]
			}
			return c.cron(ctx, g, func(ctx context.Context, cl *client.Client) error {
				raw, err := cl.Call(ctx, "cron.runs", map[string]any{"id": id, "limit": limit})
				if err != nil {
					return err
				}
				var out struct{ Entries []heartbeat.RunRecord }
				if err := json.Unmarshal(raw, &out); err != nil {
					return fmt.Errorf("cron.runs: %w", err)
				}
				if len(out.Entries) == 0 {
					if id != "" {
						fmt.Fprintf(c.stdout, "No runs of job %s yet.\n", id)
					} else {
						fmt.Fprintf(c.stdout, "No cron runs yet.\n")
					}
					return nil
				}
				writeCronRuns(c.stdout, out.Entries)
				return nil
			})
		},
	}
}

// writeCronRuns prints runs as a table.
func writeCronRuns(w io.Writer, runs []heartbeat.RunRecord) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tJOB\tSTARTED\tSTATUS\tDURATION\tERROR/SUMMARY")
	for _, r := range runs {
		dur := "-"
		if r.FinishedAtMs != 0 {
			dur = (time.Duration(r.DurationMs) * time.Millisecond).String()
		}
		status, text := r.Status, r.Error
		if text == "" && r.DeliveryStatus == "not-delivered" && r.DeliveryError != "" {
			// A best-effort delivery failed: the answer went nowhere.
			status, text = r.Status+", not delivered", r.DeliveryError
		}
		if text == "" {
			text = r.Summary
		}
		if text == "" {
			text = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.RunID, r.JobID, cronTime(r.StartedAtMs), status, dur, clipCell(text))
	}
	tw.Flush()
}

// cron connects to the running daemon and runs fn; cron jobs live in the
// daemon's scheduler, so without a daemon there is nothing to do.
func (c *cli) cron(ctx context.Context, g *globalFlags, fn func(context.Context, *client.Client) error) int {
	cfg, _, stateDir, code := c.loadConfigAndState(g.config, config.ForManagement)
	if cfg == nil {
		return code
	}
	ctx, cancel := context.WithTimeout(ctx, devicesTimeout)
	defer cancel()
	cl, err := dialDaemon(ctx, cfg, stateDir)
	if err != nil {
		fmt.Fprintf(c.stderr, "switchboard cron: %v\n", err)
		return exitFailure
	}
	if cl == nil {
		fmt.Fprintf(c.stderr, "switchboard cron: %s\n", cronNotRunning)
		return exitFailure
	}
	defer cl.Close()
	if err := fn(ctx, cl); err != nil {
		// The daemon's message names the field and the fix.
		fmt.Fprintf(c.stderr, "switchboard cron: %s\n", cliError(err))
		return exitFailure
	}
	return exitOK
}

// cronTrailingFlags parses the flags that follow a positional argument, as
// in "switchboard cron run nightly --due": the flag package stops at the
// first argument that is not a flag, leaving the rest in args. register
// must keep the values its variables hold (registering a flag sets its
// variable to the default), so flags given before the argument keep their
// values. It returns the positional arguments, or a usage exit code.
func (c *cli) cronTrailingFlags(name string, g *globalFlags, register func(*flag.FlagSet), args []string) ([]string, int) {
	return c.trailingFlags("cron "+name, g, register, args)
}

// trailingFlags is cronTrailingFlags for any command ("cluster status").
func (c *cli) trailingFlags(name string, g *globalFlags, register func(*flag.FlagSet), args []string) ([]string, int) {
	fs := flag.NewFlagSet("switchboard "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	saved := *g
	g.register(fs)
	*g = saved
	if register != nil {
		register(fs)
	}
	var pos []string
	for len(args) > 0 {
		a := args[0]
		if a == "--" {
			return append(pos, args[1:]...), exitOK
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			args = args[1:]
			continue
		}
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprintf(c.stderr, "switchboard %s: see \"switchboard %s --help\"\n", name, name)
			} else {
				fmt.Fprintf(c.stderr, "switchboard %s: %v (see \"switchboard %s --help\")\n", name, err, name)
			}
			return nil, exitUsage
		}
		rest := fs.Args()
		if consumed := args[:len(args)-len(rest)]; len(consumed) > 0 && consumed[len(consumed)-1] == "--" {
			return append(pos, rest...), exitOK
		}
		args = rest
	}
	return pos, exitOK
}

// noJob is the error for an id the daemon does not know.
func noJob(id string) error {
	return fmt.Errorf("no job %s (see switchboard cron list)", id)
}

// isNoJob reports whether the daemon answered that the job does not exist;
// the sentinel's text is all that crosses the wire.
func isNoJob(err error) bool {
	var es *protocol.ErrorShape
	return errors.As(err, &es) && strings.Contains(es.Message, heartbeat.ErrJobNotFound.Error())
}

// cronTime formats a Unix ms instant in local time, "-" for none.
func cronTime(ms int64) string {
	if ms == 0 {
		return "-"
	}
	return time.UnixMilli(ms).Local().Format(time.RFC3339)
}

// clipCell fits free text into a table cell: one line, at most
// cronCellRunes runes.
func clipCell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > cronCellRunes {
		return string(r[:cronCellRunes-1]) + "…"
	}
	return s
}
