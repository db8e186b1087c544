package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/switchboardhq/switchboard/config"
	"github.com/switchboardhq/switchboard/gateway/client"
)

// daemonStatus is what `switchboard status` gathers from the running
// daemon, each part from one gateway method; a part the daemon does not
// offer (cron off, no heartbeat runner) is left out.
type daemonStatus struct {
	Running bool   `json:"running"`
	URL     string `json:"url"`
	Status  *struct {
		Version      string `json:"version"`
		UptimeMs     int64  `json:"uptimeMs"`
		DefaultModel string `json:"defaultModel"`
		Connections  int    `json:"connections"`
		Queue        *struct {
			Sessions int `json:"sessions"`
			Active   int `json:"active"`
			Queued   int `json:"queued"`
		} `json:"queue"`
	} `json:"status,omitempty"`
	Channels  []channelLine `json:"channels"`
	Heartbeat *struct {
		TS     int64  `json:"ts"`
		Status string `json:"status"`
		Reason string `json:"reason,omitempty"`
	} `json:"lastHeartbeat,omitempty"`
	Cron *struct {
		Enabled      bool  `json:"enabled"`
		Jobs         int   `json:"jobs"`
		Running      int   `json:"running"`
		NextWakeAtMs int64 `json:"nextWakeAtMs,omitempty"`
	} `json:"cron,omitempty"`
}

// channelLine is one bridge account's part of channels.status.
type channelLine struct {
	Channel   string `json:"channel"`
	AccountID string `json:"accountId"`
	State     string `json:"state"`
	Since     int64  `json:"stateSince,omitempty"`
	LastError string `json:"lastError,omitempty"`
	RetryAt   int64  `json:"retryAt,omitempty"`
}

func statusCommand() *command {
	var asJSON bool
	return &command{
		name:    "status",
		summary: "show whether the daemon runs, its bridges, queue, last heartbeat and cron",
		help: `Asks the running daemon (through its gateway on this machine) for its version
and uptime, the model, each chat bridge's state with its last error and next
retry, the queue (sessions, running turns, waiting messages), the last
heartbeat and the cron scheduler. Exit code 1 when the daemon is not running.`,
		flags: func(fs *flag.FlagSet) {
			fs.BoolVar(&asJSON, "json", false, "print JSON instead of a table")
		},
		run: func(ctx context.Context, c *cli, g *globalFlags, args []string) int {
			if len(args) > 0 {
				fmt.Fprintf(c.stderr, "switchboard status: takes no arguments, got %q\n", args)
				return exitUsage
			}
			cfg, path, stateDir, code := c.loadConfigAndState(g.config, config.ForManagement)
			if cfg == nil {
				return code
			}
			ctx, cancel := context.WithTimeout(ctx, devicesTimeout)
			defer cancel()
			st := daemonStatus{URL: gatewayURL(cfg.Gateway)}
			cl, err := dialDaemon(ctx, cfg, stateDir)
			if err != nil {
				fmt.Fprintf(c.stderr, "switchboard status: %v\n", err)
				return exitFailure
			}
			if cl == nil {
				if asJSON {
					writeJSON(c.stdout, st)
				} else {
					fmt.Fprintf(c.stdout, "Daemon     not running (nothing answers at %s); start it with %s\n", st.URL, c.suggest(c.withConfig(path, "run")...))
				}
				return exitFailure
			}
			defer cl.Close()
			st.Running = true
			if err := st.gather(ctx, cl); err != nil {
				fmt.Fprintf(c.stderr, "switchboard status: %s\n", cliError(err))
				return exitFailure
			}
			if asJSON {
				writeJSON(c.stdout, st)
			} else {
				st.print(c.stdout, time.Now())
			}
			return exitOK
		},
	}
}

// gather asks the daemon for each part; status and channels.status must
// answer, last-heartbeat and cron.status may be off.
func (st *daemonStatus) gather(ctx context.Context, cl *client.Client) error {
	get := func(method string, v any) error {
		raw, err := cl.Call(ctx, method, map[string]any{})
		if err != nil {
			return err
		}
		return json.Unmarshal(raw, v)
	}
	if err := get("status", &st.Status); err != nil {
		return err
	}
	var ch struct {
		Order    []string                     `json:"channelOrder"`
		Accounts map[string][]json.RawMessage `json:"channelAccounts"`
	}
	if err := get("channels.status", &ch); err != nil {
		return err
	}
	for _, name := range ch.Order {
		for _, raw := range ch.Accounts[name] {
			var line channelLine
			if err := json.Unmarshal(raw, &line); err != nil {
				return err
			}
			st.Channels = append(st.Channels, line)
		}
	}
	if get("last-heartbeat", &st.Heartbeat) != nil {
		st.Heartbeat = nil
	}
	if get("cron.status", &st.Cron) != nil {
		st.Cron = nil
	}
	return nil
}

// print writes the status as aligned lines, times relative to now.
func (st *daemonStatus) print(w io.Writer, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	s := st.Status
	fmt.Fprintf(tw, "Daemon\trunning, version %s, up %s, %s\n", s.Version, (time.Duration(s.UptimeMs) * time.Millisecond).Round(time.Second), st.URL)
	if s.DefaultModel != "" {
		fmt.Fprintf(tw, "Model\t%s\n", s.DefaultModel)
	}
	if q := s.Queue; q != nil {
		fmt.Fprintf(tw, "Queue\t%d sessions, %d replying, %d messages waiting\n", q.Sessions, q.Active, q.Queued)
	}
	switch hb := st.Heartbeat; {
	case hb == nil:
		fmt.Fprintf(tw, "Heartbeat\toff\n")
	case hb.TS == 0:
		fmt.Fprintf(tw, "Heartbeat\tnone has run yet\n")
	default:
		line := hb.Status + ", " + ago(now, hb.TS)
		if hb.Reason != "" {
			line += " (" + hb.Reason + ")"
		}
		fmt.Fprintf(tw, "Heartbeat\t%s\n", line)
	}
	switch cr := st.Cron; {
	case cr == nil || !cr.Enabled:
		fmt.Fprintf(tw, "Cron\toff\n")
	default:
		line := fmt.Sprintf("%d jobs, %d running", cr.Jobs, cr.Running)
		if cr.NextWakeAtMs > 0 {
			line += ", next " + until(now, cr.NextWakeAtMs)
		}
		fmt.Fprintf(tw, "Cron\t%s\n", line)
	}
	if len(st.Channels) == 0 {
		fmt.Fprintf(tw, "Channels\tnone configured (the web chat page is the only way in)\n")
	}
	for i, ch := range st.Channels {
		label := ""
		if i == 0 {
			label = "Channels"
		}
		name := ch.Channel
		if ch.AccountID != "" && ch.AccountID != "default" {
			name += " (" + ch.AccountID + ")"
		}
		line := name + ": " + ch.State
		if ch.Since > 0 {
			line += " " + ago(now, ch.Since)
		}
		if ch.RetryAt > 0 {
			line += ", retrying " + until(now, ch.RetryAt)
		}
		if ch.LastError != "" {
			line += "; last error: " + firstLine(ch.LastError)
		}
		fmt.Fprintf(tw, "%s\t%s\n", label, line)
	}
	tw.Flush()
}

// ago says how long before now ms was: "5s ago".
func ago(now time.Time, ms int64) string {
	d := now.Sub(time.UnixMilli(ms)).Round(time.Second)
	if d < 0 {
		d = 0
	}
	return d.String() + " ago"
}

// until says how long after now ms is: "in 5s", or "now" when past.
func until(now time.Time, ms int64) string {
	d := time.UnixMilli(ms).Sub(now).Round(time.Second)
	if d <= 0 {
		return "now"
	}
	return "in " + d.String()
}

// firstLine is s up to its first line break, at most 160 runes.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if r := []rune(s); len(r) > 160 {
		s = string(r[:159]) + "…"
	}
	return s
}

// writeJSON prints v indented.
func writeJSON(w io.Writer, v any) {
	b, _ := json.MarshalIndent(v, "", "  ")
	fmt.Fprintf(w, "%s\n", b)
}
