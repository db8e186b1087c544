package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// cronCLI runs one cron command against cfgPath in a fresh testCLI.
func cronCLI(env map[string]string, cfgPath string, args ...string) (code int, stdout, stderr string) {
	tc := newTestCLI(env)
	full := append([]string{"cron", args[0], "--config", cfgPath}, args[1:]...)
	code = tc.run(full...)
	return code, tc.out.String(), tc.err.String()
}

// A job is added, listed, run and removed with `switchboard cron` through
// the running daemon, whose echo model answers the run at once.
func TestCronThroughTheRunningDaemon(t *testing.T) {
	env := map[string]string{"SWITCHBOARD_STATE_DIR": t.TempDir()}
	cfgPath := testConfig(t, freePort(t))
	daemon := newTestCLI(env)
	done := make(chan int, 1)
	go func() { done <- daemon.run("run", "--config", cfgPath, "--log-format", "json") }()
	waitReady(t, "http://"+listenAddr(t, daemon.err.String))

	code, out, errOut := cronCLI(env, cfgPath, "add", "--id", "hourly", "--name", "Hourly check", "--every", "1h", "--message", "ping from cron")
	if code != exitOK || !strings.HasPrefix(out, "Added job hourly: every 1h, next run ") {
		t.Fatalf("cron add: exit %d: %s%s", code, out, errOut)
	}
	code, out, errOut = cronCLI(env, cfgPath, "add", "--id", "paused", "--name", "Paused", "--cron", "0 9 * * 1", "--tz", "Europe/Berlin",
		"--system-event", "weekly review", "--disabled")
	if code != exitOK || out != "Added job paused: cron 0 9 * * 1 (Europe/Berlin), disabled\n" {
		t.Fatalf("cron add --disabled: exit %d: %s%s", code, out, errOut)
	}
	// The daemon's validation names the field.
	if code, out, errOut := cronCLI(env, cfgPath, "add", "--name", "Bad", "--every", "1h", "--message", "x", "--session", "main"); code != exitFailure ||
		!strings.Contains(errOut, "--session main") || strings.Contains(errOut, "INVALID_REQUEST") {
		t.Errorf("cron add of an invalid job: exit %d: %s%s", code, out, errOut)
	}

	code, out, errOut = cronCLI(env, cfgPath, "list")
	if code != exitOK || !regexp.MustCompile(`(?m)^ID +NAME +SCHEDULE +NEXT RUN +LAST$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^hourly +Hourly check +every 1h +\d{4}-\d\d-\d\dT\S+ +-$`).MatchString(out) || strings.Contains(out, "paused") {
		t.Fatalf("cron list: exit %d:\n%s%s", code, out, errOut)
	}
	code, out, errOut = cronCLI(env, cfgPath, "list", "--all")
	if code != exitOK || !regexp.MustCompile(`(?m)^paused +Paused +cron 0 9 \* \* 1 \(Europe/Berlin\) +disabled +-$`).MatchString(out) {
		t.Fatalf("cron list --all: exit %d:\n%s%s", code, out, errOut)
	}

	// Flags may follow the id.
	if code, out, errOut := cronCLI(env, cfgPath, "run", "hourly", "--due"); code != exitOK || out != "Job hourly is not due; nothing ran\n" {
		t.Fatalf("cron run --due: exit %d: %s%s", code, out, errOut)
	}
	code, out, errOut = cronCLI(env, cfgPath, "run", "hourly")
	m := regexp.MustCompile(`^Started run (\S+) of job hourly\n$`).FindStringSubmatch(out)
	if code != exitOK || m == nil {
		t.Fatalf("cron run: exit %d: %s%s", code, out, errOut)
	}
	runID := m[1]
	row := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(runID) + ` +hourly +\S+ +ok +\S+ +.*ping from cron`)
	var runs string
	if !eventually(15*time.Second, func() bool {
		_, runs, _ = cronCLI(env, cfgPath, "runs", "hourly", "--limit", "5")
		return row.MatchString(runs)
	}) {
		t.Fatalf("cron runs never showed run %s ok:\n%s\n%s", runID, runs, daemon.err.String())
	}
	if !strings.HasPrefix(runs, "RUN ") || !strings.Contains(runs, "ERROR/SUMMARY") {
		t.Errorf("cron runs header:\n%s", runs)
	}
	if code, out, errOut := cronCLI(env, cfgPath, "list"); code != exitOK || !regexp.MustCompile(`(?m)^hourly .* ok$`).MatchString(out) {
		t.Errorf("cron list after the run: exit %d:\n%s%s", code, out, errOut)
	}
	if code, out, errOut := cronCLI(env, cfgPath, "run", "nosuch"); code != exitFailure || errOut != "switchboard cron: no job nosuch (see switchboard cron list)\n" {
		t.Errorf("cron run of an unknown job: exit %d: %s%s", code, out, errOut)
	}

	if code, out, errOut := cronCLI(env, cfgPath, "rm", "hourly"); code != exitOK || out != "Removed job hourly\n" {
		t.Fatalf("cron rm: exit %d: %s%s", code, out, errOut)
	}
	if code, out, errOut := cronCLI(env, cfgPath, "rm", "hourly"); code != exitFailure || errOut != "switchboard cron: no job hourly (see switchboard cron list)\n" {
		t.Errorf("cron rm again: exit %d: %s%s", code, out, errOut)
	}
	if code, out, errOut := cronCLI(env, cfgPath, "list"); code != exitOK || strings.Contains(out, "hourly") {
		t.Errorf("cron list after rm: exit %d:\n%s%s", code, out, errOut)
	}

	daemon.sigs <- os.Interrupt
	if code := <-done; code != exitOK {
		t.Fatalf("run exit %d: %s", code, daemon.err.String())
	}
}

// Cron has no offline mode: without a daemon, a cron command says how to
// start one.
func TestCronWithoutDaemon(t *testing.T) {
	env := map[string]string{"SWITCHBOARD_STATE_DIR": t.TempDir()}
	cfgPath := testConfig(t, freePort(t))
	code, out, errOut := cronCLI(env, cfgPath, "list")
	want := "switchboard cron: the daemon is not running; start it with \"switchboard run\" (jobs live in its scheduler)\n"
	if code != exitFailure || out != "" || errOut != want {
		t.Errorf("cron list: exit %d, stdout %q, stderr %q; want exit %d, stderr %q", code, out, errOut, exitFailure, want)
	}
}

// Flag mistakes are usage errors found before the daemon is asked (none
// runs here).
func TestCronUsageErrors(t *testing.T) {
	env := map[string]string{"SWITCHBOARD_STATE_DIR": t.TempDir()}
	cfgPath := testConfig(t, freePort(t))
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"add", "--name", "n", "--message", "hi"}, "give exactly one schedule: --at WHEN (once), --every DURATION"},
		{[]string{"add", "--name", "n", "--every", "1h", "--at", "20m", "--message", "hi"}, "give exactly one schedule"},
		{[]string{"add", "--name", "n", "--every", "1h", "--message", "hi", "--system-event", "hi"}, "give exactly one payload: --message TEXT"},
		{[]string{"add", "--name", "n", "--every", "1h"}, "give exactly one payload"},
		{[]string{"add", "--name", "n", "--every", "soon", "--message", "hi"}, "--every: "},
		{[]string{"add", "--name", "n", "--every", "0s", "--message", "hi"}, "--every: "},
		{[]string{"add", "--name", "n", "--at", "someday", "--message", "hi"}, "--at: "},
		{[]string{"add", "--name", "n", "--cron", "61 * * * *", "--message", "hi"}, "--cron: "},
		{[]string{"add", "--name", "n", "--cron", "0 9 * * *", "--tz", "Mars/Olympus", "--message", "hi"}, "--tz: "},
		{[]string{"add", "--name", "n", "--every", "1h", "--exact", "--message", "hi"}, "--tz and --exact apply to --cron schedules only"},
		{[]string{"add", "--every", "1h", "--message", "hi"}, "--name is required"},
		{[]string{"add", "--name", "n", "--every", "1h", "--message", "hi", "--announce", "telegram"}, "write <channel>:<to>"},
		{[]string{"add", "--name", "n", "--every", "1h", "--message", "hi", "--announce", "telegram:1", "--webhook", "https://x.example/"}, "at most one of --announce and --webhook"},
		{[]string{"add", "--name", "n", "--every", "1h", "--system-event", "hi", "--session", "isolated"}, "--system-event goes to the main session"},
		{[]string{"add", "--name", "n", "--every", "1h", "--message", "hi", "stray"}, "takes no arguments"},
		{[]string{"add", "--name", "n", "--every", "1h", "--message", "hi", "--nope"}, "flag provided but not defined: -nope"},
		{[]string{"rm"}, "takes one argument, the job id"},
		{[]string{"run", "a", "b"}, "takes one argument, the job id"},
		{[]string{"run", "a", "--nope"}, "flag provided but not defined: -nope"},
		{[]string{"runs", "a", "--limit", "0"}, "--limit must be at least 1"},
		{[]string{"list", "extra"}, "takes no arguments"},
	}
	for _, tt := range tests {
		code, out, errOut := cronCLI(env, cfgPath, tt.args...)
		if code != exitUsage || !strings.Contains(errOut, tt.want) || strings.Contains(errOut, "not running") {
			t.Errorf("cron %q: exit %d, stdout %q, stderr %q; want exit %d containing %q", tt.args, code, out, errOut, exitUsage, tt.want)
		}
	}
}

// The announce target splits at the first ':' only, so Slack and Discord
// targets keep their kind.
func TestCronAddSpec(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	o := cronAddFlags{name: "n", every: "15m", message: "hi", announce: "Slack:channel:C123", model: "openai/gpt-4o"}
	j, err := o.spec(now)
	if err != nil {
		t.Fatal(err)
	}
	if d := j.Delivery; d == nil || d.Mode != "announce" || d.Channel != "slack" || d.To != "channel:C123" {
		t.Errorf("delivery = %+v", j.Delivery)
	}
	if j.Schedule.EveryMs != 15*60*1000 || j.Payload.Kind != "agentTurn" || j.Payload.Model != "openai/gpt-4o" || j.SessionTarget != "" || !j.IsEnabled() {
		t.Errorf("spec = %+v", j)
	}

	o = cronAddFlags{name: "n", expr: "0 * * * *", exact: true, systemEvent: "tick"}
	j, err = o.spec(now)
	if err != nil {
		t.Fatal(err)
	}
	if j.Schedule.StaggerMs == nil || *j.Schedule.StaggerMs != 0 || j.SessionTarget != "main" || j.Payload.Kind != "systemEvent" || j.Payload.Text != "tick" {
		t.Errorf("spec = %+v", j)
	}

	o = cronAddFlags{name: "n", at: "20m", message: "hi", webhook: "https://hooks.example.com/cron", disabled: true}
	j, err = o.spec(now)
	if err != nil {
		t.Fatal(err)
	}
	if j.Schedule.At != "20m" || j.Delivery == nil || j.Delivery.Mode != "webhook" || j.Delivery.To != "https://hooks.example.com/cron" || j.IsEnabled() {
		t.Errorf("spec = %+v", j)
	}
}

func TestCronHelp(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"cron"}, "switchboard cron <command>"},
		{[]string{"cron", "add", "--help"}, "--every"},
		{[]string{"cron", "runs", "--help"}, `(default "20")`},
		{[]string{"help", "cron", "run"}, "--due"},
	} {
		tc := newTestCLI(nil)
		tc.run(tt.args...)
		if out := tc.out.String() + tc.err.String(); !strings.Contains(out, tt.want) {
			t.Errorf("%q: %q, want it to contain %q", tt.args, out, tt.want)
		}
	}
	// Values given before --help are not shown as defaults.
	tc := newTestCLI(nil)
	if code := tc.run("cron", "add", "--every", "2h", "--help"); code != exitOK || strings.Contains(tc.out.String(), `"2h")`) {
		t.Errorf("cron add --every 2h --help: exit %d:\n%s", code, tc.out.String())
	}
}
