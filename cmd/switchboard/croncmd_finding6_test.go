package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// cronDaemon starts the daemon on cfgPath (testConfig plus extra YAML) and
// stops it when the test ends; it returns the environment and the config
// path for cronCLI, and the daemon's log.
func cronDaemon(t *testing.T, extra string) (env map[string]string, cfgPath string, logs func() string) {
	t.Helper()
	env = map[string]string{"SWITCHBOARD_STATE_DIR": t.TempDir()}
	cfgPath = testConfig(t, freePort(t))
	if extra != "" {
		b, err := os.ReadFile(cfgPath)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, cfgPath, string(b)+extra)
	}
	daemon := newTestCLI(env)
	done := make(chan int, 1)
	go func() { done <- daemon.run("run", "--config", cfgPath, "--log-format", "json") }()
	waitReady(t, "http://"+listenAddr(t, daemon.err.String))
	t.Cleanup(func() {
		daemon.sigs <- os.Interrupt
		if code := <-done; code != exitOK {
			t.Errorf("run exit %d: %s", code, daemon.err.String())
		}
	})
	return env, cfgPath, daemon.err.String
}

// Issue 26, finding 6a: `switchboard cron run` of a disabled one-shot job
// ran it and deleted it. The job is kept, disabled, and the command says
// so; for an enabled one-shot it says the job goes when the run succeeds.
func TestFinding6CronRunSaysWhatHappensToTheJob(t *testing.T) {
	env, cfgPath, logs := cronDaemon(t, "")
	for _, args := range [][]string{
		{"add", "--id", "dentist", "--name", "Dentist", "--at", "2h", "--system-event", "Dentist at 10.", "--disabled"},
		{"add", "--id", "tea", "--name", "Tea", "--at", "2h", "--system-event", "Tea is ready."},
	} {
		if code, out, errOut := cronCLI(env, cfgPath, args...); code != exitOK {
			t.Fatalf("cron %q: exit %d: %s%s", args, code, out, errOut)
		}
	}
	code, out, errOut := cronCLI(env, cfgPath, "run", "dentist")
	if code != exitOK || !regexp.MustCompile(`^Started run \S+ of job dentist \(disabled: it runs this once and stays disabled\)\n$`).MatchString(out) {
		t.Fatalf("cron run of a disabled one-shot: exit %d: %q %s", code, out, errOut)
	}
	code, out, errOut = cronCLI(env, cfgPath, "run", "tea")
	if code != exitOK || !regexp.MustCompile(`^Started run \S+ of job tea \(one-shot: the job is deleted when this run succeeds\)\n$`).MatchString(out) {
		t.Fatalf("cron run of an enabled one-shot: exit %d: %q %s", code, out, errOut)
	}
	var list string
	if !eventually(15*time.Second, func() bool {
		_, list, _ = cronCLI(env, cfgPath, "list", "--all")
		return !strings.Contains(list, "tea") && regexp.MustCompile(`(?m)^dentist +Dentist +at \S+ +disabled +ok$`).MatchString(list)
	}) {
		t.Fatalf("cron list --all after the runs:\n%s\n%s", list, logs())
	}
}

// Issue 26, finding 6b: a job announcing to a channel that is not enabled
// showed "last ok" while the log said its answer went nowhere. The run is
// an error, with the reason, in `cron runs` and `cron list`, and the
// daemon warns about the job when it starts.
func TestFinding6AnnounceThatWentNowhereFailsTheRun(t *testing.T) {
	env, cfgPath, logs := cronDaemon(t, `cron:
  jobs:
    - id: news
      name: News
      schedule: {kind: every, everyMs: 3600000}
      payload: {kind: agentTurn, message: "Three things happened."}
      delivery: {mode: announce, channel: telegram, to: "123"}
`)
	if !regexp.MustCompile(`"msg":"a cron job announces to a chat this daemon cannot reach; its runs fail until it can".*"job":"news"`).MatchString(logs()) {
		t.Errorf("no warning about the job at start:\n%s", logs())
	}
	if code, out, errOut := cronCLI(env, cfgPath, "run", "news"); code != exitOK {
		t.Fatalf("cron run: exit %d: %s%s", code, out, errOut)
	}
	row := regexp.MustCompile(`(?m)^\S+ +news +\S+ +error +\S+ +delivery failed: channel "telegram" is not enabled`)
	var runs string
	if !eventually(15*time.Second, func() bool {
		_, runs, _ = cronCLI(env, cfgPath, "runs", "news")
		return row.MatchString(runs)
	}) {
		t.Fatalf("cron runs never showed the run failed:\n%s\n%s", runs, logs())
	}
	if _, out, _ := cronCLI(env, cfgPath, "list"); !regexp.MustCompile(`(?m)^news +News +every 1h +\S+ +error: delivery failed: channel "telegram"`).MatchString(out) {
		t.Errorf("cron list after the failed announcement:\n%s", out)
	}
}

// Issue 26, finding 6c: `cron add --announce telegram:123` was accepted
// with Telegram off. The daemon refuses it, naming the channel, how to
// turn it on and the channels that are on; a misspelt one gets the
// closest name. Nothing is added.
func TestFinding6CronAddRefusesAChannelThatIsOff(t *testing.T) {
	env, cfgPath, _ := cronDaemon(t, "")
	for _, tt := range []struct{ target, want string }{
		{"telegram:123", `delivery: channel "telegram" is not enabled (enabled: none); turn it on under channels.telegram and restart` + "\n"},
		{"Telgram:123", `delivery: no channel "telgram" (did you mean "telegram"?); enabled: none` + "\n"},
	} {
		code, out, errOut := cronCLI(env, cfgPath, "add", "--name", "Brief", "--every", "1h", "--message", "hi", "--announce", tt.target)
		if code != exitFailure || out != "" || !strings.HasPrefix(errOut, "switchboard cron: ") || !strings.HasSuffix(errOut, tt.want) {
			t.Errorf("cron add --announce %s: exit %d, stdout %q, stderr %q; want exit %d, stderr %q", tt.target, code, out, errOut, exitFailure, tt.want)
		}
	}
	if code, out, errOut := cronCLI(env, cfgPath, "list", "--all"); code != exitOK || !strings.HasPrefix(out, "No cron jobs") {
		t.Errorf("cron list after the refused adds: exit %d: %s%s", code, out, errOut)
	}
}
