package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/internal/suggest"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// globalFlags are accepted before the command name and after it.
type globalFlags struct {
	config    string
	logLevel  string
	logFormat string
}

func (g *globalFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&g.config, "config", "", "configuration file (default: $SWITCHBOARD_CONFIG, then ./config.yaml, then ~/.switchboard/config.yaml)")
	fs.StringVar(&g.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.StringVar(&g.logFormat, "log-format", "text", "log format: text or json")
}

// command is one subcommand. Adding a command is one entry in commands.
type command struct {
	name    string // words after "switchboard", e.g. "config check"
	args    string // usage of positional arguments
	summary string
	help    string // longer description for --help
	flags   func(fs *flag.FlagSet)
	run     func(ctx context.Context, c *cli, g *globalFlags, args []string) int
}

// commands lists every command: the fixed ones and, for each bridge
// linked from a phone, its link, logout and status.
func (c *cli) commands() []*command {
	return append([]*command{
		initCommand(),
		runCommand(),
		statusCommand(),
		agentCommand(),
		configCheckCommand(),
		configSchemaCommand(),
		configExampleCommand(),
		gatewayTokenCommand(),
		devicesListCommand(),
		devicesDecideCommand(true),
		devicesDecideCommand(false),
		pairingListCommand(),
		pairingDecideCommand(true),
		pairingDecideCommand(false),
		cronListCommand(),
		cronAddCommand(),
		cronRemoveCommand(),
		cronRunCommand(),
		cronRunsCommand(),
		clusterStatusCommand(),
		transcriptsExportCommand(),
		versionCommand(),
	}, linkCommands(c.registry())...)
}

// main parses global flags, finds the command, and runs it.
func (c *cli) main(ctx context.Context, args []string) int {
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-version") {
		args = append([]string{"version"}, args[1:]...) // as most tools take it
	}
	var g globalFlags
	top := flag.NewFlagSet("switchboard", flag.ContinueOnError)
	top.SetOutput(io.Discard)
	g.register(top)
	if err := top.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			c.usage(c.stdout)
			return exitOK
		}
		fmt.Fprintf(c.stderr, "switchboard: %v\n", err)
		c.usage(c.stderr)
		return exitUsage
	}
	rest := top.Args()
	if len(rest) == 0 || rest[0] == "help" {
		if len(rest) > 1 {
			if cmd, _ := c.find(rest[1:]); cmd != nil {
				c.commandUsage(c.stdout, cmd)
				return exitOK
			}
		}
		w := c.stdout
		code := exitOK
		if len(rest) == 0 {
			w, code = c.stderr, exitUsage
		}
		c.usage(w)
		return code
	}
	cmd, n := c.find(rest)
	if cmd == nil {
		if group := c.group(rest[0]); len(group) > 0 {
			if len(rest) > 1 && rest[1] != "-h" && rest[1] != "--help" && rest[1] != "-help" {
				subs := make([]string, 0, len(group))
				for _, cmd := range group {
					_, sub, _ := strings.Cut(cmd.name, " ")
					subs = append(subs, sub)
				}
				fmt.Fprintf(c.stderr, "switchboard: unknown command %q%s\n", rest[0]+" "+rest[1], didYouMean(rest[0]+" ", rest[1], subs))
				c.groupUsage(c.stderr, rest[0], group)
				return exitUsage
			}
			w, code := c.stderr, exitUsage
			if len(rest) > 1 {
				w, code = c.stdout, exitOK
			}
			c.groupUsage(w, rest[0], group)
			return code
		}
		firsts := []string{"help"}
		for _, cmd := range c.commands() {
			first, _, _ := strings.Cut(cmd.name, " ")
			if !slices.Contains(firsts, first) {
				firsts = append(firsts, first)
			}
		}
		fmt.Fprintf(c.stderr, "switchboard: unknown command %q%s\n", rest[0], didYouMean("", rest[0], firsts))
		c.usage(c.stderr)
		return exitUsage
	}
	// Global flags given before the command stay unless repeated after it.
	// Registering them again resets the shared variables, so save them first.
	given := map[string]string{}
	top.Visit(func(f *flag.Flag) { given[f.Name] = f.Value.String() })
	fs := flag.NewFlagSet("switchboard "+cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	g.register(fs)
	for name, value := range given {
		_ = fs.Set(name, value)
	}
	if cmd.flags != nil {
		cmd.flags(fs)
	}
	if err := fs.Parse(rest[n:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			c.commandUsage(c.stdout, cmd)
			return exitOK
		}
		fmt.Fprintf(c.stderr, "switchboard %s: %v\n", cmd.name, err)
		c.commandUsage(c.stderr, cmd)
		return exitUsage
	}
	if _, err := parseLevel(g.logLevel); err != nil {
		fmt.Fprintf(c.stderr, "switchboard: --log-level: %v\n", err)
		return exitUsage
	}
	if g.logFormat != "text" && g.logFormat != "json" {
		fmt.Fprintf(c.stderr, "switchboard: --log-format: %q is not text or json\n", g.logFormat)
		return exitUsage
	}
	return cmd.run(ctx, c, &g, fs.Args())
}

// find returns the command named by the leading words of args and how many
// words its name took.
func (c *cli) find(args []string) (*command, int) {
	for _, cmd := range c.commands() {
		words := strings.Fields(cmd.name)
		if len(args) >= len(words) && strings.Join(args[:len(words)], " ") == cmd.name {
			return cmd, len(words)
		}
	}
	return nil, 0
}

// didYouMean is "; did you mean \"<prefix><closest>\"?" when one of
// candidates is a likely intended spelling of got, else "".
func didYouMean(prefix, got string, candidates []string) string {
	if s := suggest.Closest(got, candidates); s != "" {
		return fmt.Sprintf("; did you mean %q?", prefix+s)
	}
	return ""
}

// group returns the commands whose name starts with word, e.g. "config".
func (c *cli) group(word string) []*command {
	var out []*command
	for _, cmd := range c.commands() {
		if first, _, ok := strings.Cut(cmd.name, " "); ok && first == word {
			out = append(out, cmd)
		}
	}
	return out
}

func (c *cli) usage(w io.Writer) {
	fmt.Fprintf(w, "Switchboard connects chat platforms to an LLM agent.\n\nUsage:\n  switchboard [global flags] <command> [flags] [args]\n\nCommands:\n")
	for _, cmd := range c.commands() {
		fmt.Fprintf(w, "  %-16s %s\n", cmd.name, cmd.summary)
	}
	fmt.Fprintf(w, "\nGlobal flags:\n")
	printFlags(w, func(fs *flag.FlagSet) { new(globalFlags).register(fs) })
	fmt.Fprintf(w, "\nRun 'switchboard <command> --help' for a command's flags.\n")
}

func (c *cli) groupUsage(w io.Writer, word string, group []*command) {
	fmt.Fprintf(w, "Usage:\n  switchboard %s <command>\n\nCommands:\n", word)
	for _, cmd := range group {
		fmt.Fprintf(w, "  %-16s %s\n", cmd.name, cmd.summary)
	}
}

func (c *cli) commandUsage(w io.Writer, cmd *command) {
	fmt.Fprintf(w, "Usage:\n  switchboard %s [flags]", cmd.name)
	if cmd.args != "" {
		fmt.Fprintf(w, " %s", cmd.args)
	}
	fmt.Fprintf(w, "\n\n%s\n", cmd.summary)
	if cmd.help != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(cmd.help))
	}
	if cmd.flags != nil {
		fmt.Fprintf(w, "\nFlags:\n")
		printFlags(w, cmd.flags)
	}
	fmt.Fprintf(w, "\nGlobal flags:\n")
	printFlags(w, func(fs *flag.FlagSet) { new(globalFlags).register(fs) })
}

func printFlags(w io.Writer, register func(fs *flag.FlagSet)) {
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	register(fs)
	fs.VisitAll(func(f *flag.Flag) {
		def := ""
		if f.DefValue != "" && f.DefValue != "false" {
			def = fmt.Sprintf(" (default %q)", f.DefValue)
		}
		fmt.Fprintf(w, "  --%-12s %s%s\n", f.Name, f.Usage, def)
	})
}

// parseLevel reads a --log-level value.
func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("%q is not debug, info, warn or error", s)
	}
	return l, nil
}

// logger builds the process logger from the global flags. It writes to
// stderr; nothing logs secrets, so no redaction is needed here.
func (c *cli) logger(g *globalFlags) *slog.Logger {
	level, _ := parseLevel(g.logLevel)
	opts := &slog.HandlerOptions{Level: level}
	if g.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(c.stderr, opts))
	}
	return slog.New(slog.NewTextHandler(c.stderr, opts))
}
