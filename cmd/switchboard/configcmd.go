package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/switchboardhq/switchboard/config"
)

func configCheckCommand() *command {
	return &command{
		name:    "config check",
		args:    "[file]",
		summary: "validate a configuration file and report every problem",
		help: `Reads the configuration (the file argument, else --config, else the default
search order), expands ${VAR} references from the environment and validates it,
as run does: each model in use must have the API key its endpoint needs.
Prints each problem as file:line:col: key.path: message. Exit code 2 when the
file has problems.`,
		run: func(_ context.Context, c *cli, g *globalFlags, args []string) int {
			if len(args) > 1 {
				fmt.Fprintf(c.stderr, "switchboard config check: takes at most one file, got %d arguments\n", len(args))
				return exitUsage
			}
			path := g.config
			if len(args) == 1 {
				path = args[0]
			}
			cfg, path, code := c.loadConfig(path, config.ForRun)
			if cfg == nil {
				return code
			}
			fmt.Fprintf(c.stdout, "%s: ok\n", path)
			return exitOK
		},
	}
}

func configSchemaCommand() *command {
	return &command{
		name:    "config schema",
		summary: "print the JSON Schema of the configuration file",
		help: `Prints a JSON Schema (draft 2020-12) describing every configuration key with
its type, default and documentation. Editors use it for completion and checks.`,
		run: func(_ context.Context, c *cli, _ *globalFlags, args []string) int {
			if len(args) > 0 {
				fmt.Fprintf(c.stderr, "switchboard config schema: takes no arguments\n")
				return exitUsage
			}
			b, err := config.Schema()
			if err != nil {
				fmt.Fprintf(c.stderr, "switchboard config schema: %v\n", err)
				return exitFailure
			}
			fmt.Fprintf(c.stdout, "%s\n", b)
			return exitOK
		},
	}
}

// loadConfigAndState loads the configuration for use and resolves its
// state directory; a nil configuration means exit with code (the error is
// printed).
func (c *cli) loadConfigAndState(explicit string, use config.Use) (cfg *config.Config, path, stateDir string, code int) {
	cfg, path, code = c.loadConfig(explicit, use)
	if cfg == nil {
		return nil, "", "", code
	}
	stateDir, err := cfg.ResolveStateDir(c.lookup, c.home)
	if err != nil {
		fmt.Fprintf(c.stderr, "switchboard: %v\n", err)
		return nil, "", "", exitUsage
	}
	return cfg, path, stateDir, 0
}

// loadConfig finds and loads the configuration for use: config.ForRun for
// a command that calls models (run, agent, config check), which then needs
// their API keys; config.ForManagement for one that manages the daemon or
// its state, which does not. It prints problems to stderr; on failure it
// returns a nil config and the exit code to use.
func (c *cli) loadConfig(explicit string, use config.Use) (*config.Config, string, int) {
	path, err := config.Find(explicit, c.lookup, c.home)
	if err != nil {
		fmt.Fprintf(c.stderr, "switchboard: %v\n", err)
		return nil, "", exitUsage
	}
	cfg, err := config.LoadFor(path, c.lookup, use)
	if err != nil {
		var problems config.Errors
		if errors.As(err, &problems) {
			for _, p := range problems {
				fmt.Fprintln(c.stderr, p.Error())
			}
			s := "s"
			if len(problems) == 1 {
				s = ""
			}
			fmt.Fprintf(c.stderr, "%s: %d problem%s\n", path, len(problems), s)
			return nil, path, exitUsage
		}
		fmt.Fprintf(c.stderr, "switchboard: %v\n", err)
		return nil, path, exitUsage
	}
	c.warnReadableSecrets(path)
	return cfg, path, exitOK
}

// warnReadableSecrets warns when the configuration file holds a secret
// written in it (not a ${VAR} reference) and users other than its owner
// may read it. It only warns: the file is the operator's.
func (c *cli) warnReadableSecrets(path string) {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm()&0o077 == 0 {
		return
	}
	data, err := os.ReadFile(path)
	if err != nil || !holdsInlineSecret(data) {
		return
	}
	fmt.Fprintf(c.stderr, "switchboard: warning: %s holds a secret written in it and other users may read it (mode %#o); "+
		"run chmod 600 %s, or move the secret to the environment (${VAR})\n", path, fi.Mode().Perm(), path)
}
