package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/switchboardhq/switchboard/config"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
)

func agentCommand() *command {
	var message, session string
	return &command{
		name:    "agent",
		summary: "send one message to the agent and print its answer",
		help: `Runs one agent turn in this process, as the daemon would for a chat message:
the configured model answers, with the session's history, and the turn is
written to its transcript. The reply is printed to stdout as a chat would
receive it (reply tags, MEDIA: lines and silent replies handled); errors go
to stderr.

The daemon must not be running on the same state directory (it holds the
state store); with the example configuration the echo model answers with
your own words.`,
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&message, "message", "", "the message to send (required)")
			fs.StringVar(&message, "m", "", "shorthand for --message")
			fs.StringVar(&session, "session", "main", `session key, e.g. "main" or "agent:main:cli:direct:me"`)
		},
		run: func(ctx context.Context, c *cli, g *globalFlags, args []string) int {
			if len(args) > 0 {
				fmt.Fprintf(c.stderr, "switchboard agent: unexpected arguments %q; quote the message and pass it with -m\n", args)
				return exitUsage
			}
			if message == "" {
				fmt.Fprintln(c.stderr, "switchboard agent: --message is required, e.g. switchboard agent -m \"hello\"")
				return exitUsage
			}
			cfg, configPath, code := c.loadConfig(g.config, config.ForRun)
			if cfg == nil {
				return code
			}
			stateDir, err := cfg.ResolveStateDir(c.lookup, c.home)
			if err != nil {
				fmt.Fprintf(c.stderr, "switchboard: %v\n", err)
				return exitUsage
			}
			log := c.logger(g)
			st, err := openStore(ctx, cfg, stateDir)
			if err != nil {
				fmt.Fprintf(c.stderr, "switchboard: %v\n", err)
				return exitFailure
			}
			defer st.Close()
			runner, closeTools, err := newRunner(cfg, st, log, runnerOptions{stateDir: stateDir, home: c.home, configPath: configPath})
			if err != nil {
				fmt.Fprintf(c.stderr, "switchboard: %v\n", err)
				return exitUsage
			}
			defer runner.Close()
			defer closeTools()

			ctx, stop := c.cancelOnSignal(ctx)
			defer stop()

			in := core.Inbound{
				SessionKey: core.ResolveRequestSessionKey(runner.AgentID(), session),
				Route:      core.Route{Channel: "cli", To: "cli"},
				ChatType:   core.ChatDirect,
				Body:       message,
				Timestamp:  time.Now().UnixMilli(),
			}
			res, err := runner.Run(ctx, agent.Turn{Inbound: in, SenderIsOwner: true})
			if err != nil {
				fmt.Fprintf(c.stderr, "switchboard: %v\n", err)
				return exitFailure
			}
			for _, r := range res.Replies {
				w := c.stdout
				if r.IsError {
					w = c.stderr
				}
				fmt.Fprintln(w, r.Text)
				for _, u := range append([]string{r.MediaURL}, r.MediaURLs...) {
					if u != "" {
						fmt.Fprintln(w, "media:", u)
					}
				}
			}
			if res.Aborted {
				fmt.Fprintln(c.stderr, "switchboard: aborted")
				return exitFailure
			}
			if res.Err != nil {
				return exitFailure
			}
			return exitOK
		},
	}
}
