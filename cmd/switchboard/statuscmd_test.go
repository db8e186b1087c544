package main

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Issue 26, finding 10 (the rest): no `switchboard status`, and errors
// pointing command-line users at gateway method and member names
// ("list them with pairing.list", "sessionTarget"). status tells whether
// the daemon runs and, if so, its bridges (state, last error, next retry),
// queue, heartbeat and cron; gateway refusals read in the CLI's words.
func TestFinding10StatusAndErrorsInTheCLIsWords(t *testing.T) {
	state := t.TempDir()
	stateDir := filepath.Join(state, "state")
	// A Telegram API that refuses connections: the bridge fails.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAPI := "http://" + ln.Addr().String()
	ln.Close()
	env := map[string]string{"SWITCHBOARD_STATE_DIR": stateDir, "TG_TOKEN": "123456:test-token"}
	cfgPath := filepath.Join(t.TempDir(), "config.yaml")
	writeFile(t, cfgPath, `gateway:
  port: `+itoa(freePort(t))+`
models:
  providers:
    echo: {api: echo}
agents:
  defaults:
    model: {primary: echo/echo}
channels:
  telegram:
    enabled: true
    botToken: ${TG_TOKEN}
    apiUrl: `+deadAPI+`
`)

	// Before the daemon's first start: not running, and nothing is made.
	tc := newTestCLI(env)
	if code := tc.run("status", "--config", cfgPath); code != exitFailure ||
		!strings.Contains(tc.out.String(), "not running") || !strings.Contains(tc.out.String(), "switchboard run --config "+cfgPath) {
		t.Fatalf("status without a daemon: exit %d, stdout %q, stderr %q", code, tc.out.String(), tc.err.String())
	}
	if _, err := os.Stat(stateDir); !os.IsNotExist(err) {
		t.Errorf("status made the state directory: %v", err)
	}

	d := launchDaemon(t, cfgPath, env, nil)
	var out string
	if !eventually(20*time.Second, func() bool {
		tc := d.cli()
		tc.run("status", "--config", cfgPath)
		out = tc.out.String()
		return strings.Contains(out, "last error:")
	}) {
		t.Fatalf("status never showed the failing bridge's error:\n%s\n%s", out, d.tc.err.String())
	}
	for _, re := range []string{
		`(?m)^Daemon +running, version \S+, up \S+, http://127\.0\.0\.1:\d+/$`,
		`(?m)^Model +echo/echo$`,
		`(?m)^Queue +\d+ sessions, 0 replying, 0 messages waiting$`,
		`(?m)^Heartbeat +(none has run yet|off|\S+, \S+ ago)`,
		`(?m)^Cron +(off|\d+ jobs, \d+ running)`,
		`(?m)^Channels +telegram: \S+ \S+ ago(, retrying (in \S+|now))?; last error: .*connection refused$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("status lacks %s:\n%s", re, out)
		}
	}
	tc = d.cli()
	if code := tc.run("status", "--config", cfgPath, "--json"); code != exitOK {
		t.Fatalf("status --json: exit %d: %s", code, tc.err.String())
	}
	var js daemonStatus
	if err := json.Unmarshal([]byte(tc.out.String()), &js); err != nil || !js.Running || len(js.Channels) != 1 || js.Channels[0].Channel != "telegram" {
		t.Errorf("status --json = %s (%v)", tc.out.String(), err)
	}

	// Refusals in the command line's words.
	for _, c := range []struct {
		args      []string
		want, not string
	}{
		{[]string{"pairing", "approve", "telegram", "ZZZZ9999"}, "switchboard pairing list", "pairing.list"},
		{[]string{"devices", "approve", "nosuch"}, "switchboard devices list", "device.pair.list"},
		{[]string{"cron", "add", "--name", "Bad", "--every", "1h", "--message", "x", "--session", "main"}, "--session main", "sessionTarget"},
	} {
		tc := d.cli()
		code := tc.run(append([]string{"--config", cfgPath}, c.args...)...)
		if code != exitFailure || !strings.Contains(tc.err.String(), c.want) || strings.Contains(tc.err.String(), c.not) ||
			strings.Contains(tc.err.String(), "INVALID_REQUEST") || strings.Contains(tc.err.String(), "params:") {
			t.Errorf("%v: exit %d, stderr %q; want %q and not %q", c.args, code, tc.err.String(), c.want, c.not)
		}
	}
}
