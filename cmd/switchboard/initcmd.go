package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/config"
)

// initModel is a model choice `switchboard init` can write.
type initModel struct {
	Name     string // --model value and provider name
	API      string // models.providers.<name>.api
	BaseURL  string
	KeyVar   string // the environment variable that holds its key
	KeyWrite string // the apiKey value written: a ${VAR} reference or the pasted key, quoted
	ModelID  string
}

// initModels are the choices, the echo demo first.
var initModels = []initModel{
	{Name: "echo", API: "echo", ModelID: "echo"},
	{Name: "anthropic", API: "anthropic-messages", KeyVar: "ANTHROPIC_API_KEY", ModelID: "claude-opus-4-6"},
	{Name: "openai", API: "openai-completions", BaseURL: "https://api.openai.com/v1", KeyVar: "OPENAI_API_KEY", ModelID: "gpt-5.1"},
}

func findInitModel(name string) (initModel, bool) {
	for _, m := range initModels {
		if m.Name == name {
			return m, true
		}
	}
	return initModel{}, false
}

// starterConfig is the file `switchboard init` writes: short, commented,
// every line one a newcomer may want to change.
var starterConfig = template.Must(template.New("config").Parse(`# Switchboard configuration, written by switchboard init.
# Every key, with its default and what it does: switchboard config example
# Check a change before restarting: switchboard config check --config {{.Path}}

# Where sessions, transcripts, the gateway token and paired devices live.
stateDir: {{.StateDir}}

gateway:
  # The web chat page and the OpenClaw-compatible WebSocket API. loopback
  # keeps them on this machine; clients need the token
  # (switchboard gateway token) or the one-time link switchboard run prints.
  bind: loopback
  port: {{.Port}}

models:
  providers:
{{- if eq .Model.Name "echo"}}
    # The echo model answers with your own words: no key, no network.
    # For a real model, export ANTHROPIC_API_KEY (or OPENAI_API_KEY) and run
    # switchboard init --force, or add a provider here.
    echo:
      api: echo
{{- else}}
    {{.Model.Name}}:
      api: {{.Model.API}}
{{- if .Model.BaseURL}}
      baseUrl: {{.Model.BaseURL}}
{{- end}}
      apiKey: {{.Model.KeyWrite}}
      models:
        - id: {{.Model.ModelID}}
    # The echo model needs no key: select echo/echo below to try without one.
    echo:
      api: echo
{{- end}}

agents:
  defaults:
    # provider/model, from the providers above.
    model:
      primary: {{.Model.Name}}/{{.Model.ModelID}}
    heartbeat:
      # A scheduled check-in with the agent; 0m turns it off.
      every: 30m
      target: none

# Chat platforms: add a section per bridge (telegram, slack, discord,
# whatsapp); switchboard config example shows each one's keys. Direct
# messages need pairing (switchboard pairing list) and groups a mention.
`))

func initCommand() *command {
	var model string
	var force bool
	var port int
	return &command{
		name:    "init",
		summary: "write a starter configuration and the state directory",
		help: `Writes a short, commented configuration (to --config, else $SWITCHBOARD_CONFIG,
else ~/.switchboard/config.yaml) and makes the state directory. The model is
--model when given; else Anthropic or OpenAI when ANTHROPIC_API_KEY or
OPENAI_API_KEY is set (the file refers to the variable, never holds its value);
else, on a terminal, the key you paste (kept in the file, mode 0600); else the
echo model, which needs no key. An existing file is kept unless --force.
Then start the daemon with switchboard run: it prints a link that signs your
browser in once.`,
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&model, "model", "", "echo, anthropic or openai (default: detected from the environment)")
			fs.BoolVar(&force, "force", false, "overwrite an existing configuration file")
			fs.IntVar(&port, "port", 18789, "the gateway's port")
		},
		run: func(_ context.Context, c *cli, g *globalFlags, args []string) int {
			if len(args) > 0 {
				fmt.Fprintf(c.stderr, "switchboard init: takes no arguments, got %q (the file goes in --config)\n", args)
				return exitUsage
			}
			if port < 1 || port > 65535 {
				fmt.Fprintf(c.stderr, "switchboard init: --port %d is not a TCP port (1–65535)\n", port)
				return exitUsage
			}
			if _, ok := findInitModel(model); model != "" && !ok {
				fmt.Fprintf(c.stderr, "switchboard init: --model %q is not echo, anthropic or openai%s\n", model, didYouMean("", model, []string{"echo", "anthropic", "openai"}))
				return exitUsage
			}
			return c.runInit(g, model, force, port)
		},
	}
}

func (c *cli) runInit(g *globalFlags, modelName string, force bool, port int) int {
	path := g.config
	if path == "" {
		if p, ok := c.lookup("SWITCHBOARD_CONFIG"); ok && p != "" {
			path = p
		} else if c.home != "" {
			path = filepath.Join(c.home, ".switchboard", "config.yaml")
		} else {
			fmt.Fprintf(c.stderr, "switchboard init: no home directory to put the configuration in; name a file with --config\n")
			return exitUsage
		}
	}
	if _, err := os.Stat(path); err == nil && !force {
		fmt.Fprintf(c.stderr, "switchboard init: %s already exists; start with %s, or run init again with --force to replace it\n",
			path, c.suggest(c.withConfig(path, "run")...))
		return exitFailure
	}
	model, note, code := c.chooseInitModel(modelName)
	if code != exitOK {
		return code
	}
	stateDir := filepath.Join(c.home, ".switchboard")
	if env, ok := c.lookup("SWITCHBOARD_STATE_DIR"); ok && env != "" {
		stateDir = env
	}
	var b strings.Builder
	if err := starterConfig.Execute(&b, map[string]any{"Path": path, "StateDir": stateDir, "Port": port, "Model": model}); err != nil {
		fmt.Fprintf(c.stderr, "switchboard init: %v\n", err)
		return exitFailure
	}
	if _, _, err := writeFileAtomic(path, []byte(b.String()), true); err != nil {
		fmt.Fprintf(c.stderr, "switchboard init: %v\n", err)
		return exitFailure
	}
	// The file must load as written.
	cfg, err := config.LoadFor(path, c.lookup, config.ForManagement) // the key may be exported later
	if err != nil {
		fmt.Fprintf(c.stderr, "switchboard init: the written %s does not load (a bug; please report it): %v\n", path, err)
		return exitFailure
	}
	dir, err := cfg.ResolveStateDir(c.lookup, c.home)
	if err == nil {
		err = os.MkdirAll(dir, 0o700)
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "switchboard init: state directory: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(c.stdout, "Wrote %s (model %s/%s) and the state directory %s.\n", path, model.Name, model.ModelID, dir)
	if note != "" {
		fmt.Fprintf(c.stdout, "%s\n", note)
	}
	fmt.Fprintf(c.stdout, "Next: %s\n", c.suggest(c.withConfig(path, "run")...))
	fmt.Fprintf(c.stdout, "It prints a link to http://127.0.0.1:%d/ that signs this machine's browser in once.\n", port)
	return exitOK
}

// withConfig returns args with --config path added when the default search
// would not find path.
func (c *cli) withConfig(path string, args ...string) []string {
	if found, err := config.Find("", c.lookup, c.home); err == nil && sameFile(found, path) {
		return args
	}
	return append(args, "--config", path)
}

func sameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// chooseInitModel picks the model init writes: --model, else a key in the
// environment, else one pasted on a terminal, else echo. note tells the
// user what was chosen and why, when that is not obvious.
func (c *cli) chooseInitModel(name string) (m initModel, note string, code int) {
	if name != "" {
		m, _ := findInitModel(name) // checked by the command
		if m.KeyVar != "" {
			m.KeyWrite = "${" + m.KeyVar + "}"
			if v, _ := c.lookup(m.KeyVar); v == "" {
				note = "Export " + m.KeyVar + " before starting: the configuration reads the key from it."
			}
		}
		return m, note, exitOK
	}
	for _, m := range initModels[1:] {
		if v, _ := c.lookup(m.KeyVar); v != "" {
			m.KeyWrite = "${" + m.KeyVar + "}"
			return m, "Found " + m.KeyVar + " in the environment: the configuration reads the key from it, so export it wherever the daemon runs.", exitOK
		}
	}
	echo := initModels[0]
	if c.readSecret == nil {
		return echo, "No ANTHROPIC_API_KEY or OPENAI_API_KEY in the environment and no terminal to ask on: using the echo model, which answers with your own words. " +
			"For a real model, export a key and run init again with --force, or edit models.providers in the file.", exitOK
	}
	key, err := c.readSecret("Paste an Anthropic or OpenAI API key for a real model, or press Enter for the echo demo model: ")
	if err != nil {
		fmt.Fprintf(c.stderr, "switchboard init: reading the key: %v\n", err)
		return echo, "", exitFailure
	}
	key = strings.TrimSpace(key)
	if key == "" {
		return echo, "Using the echo model, which answers with your own words. For a real model, run init again with --force.", exitOK
	}
	if strings.ContainsAny(key, "\"\\\n\r\t ") || !printable(key) {
		fmt.Fprintf(c.stderr, "switchboard init: that key holds spaces, quotes or control characters; API keys do not. Nothing was written.\n")
		return echo, "", exitUsage
	}
	m, _ = findInitModel("openai")
	if strings.HasPrefix(key, "sk-ant-") {
		m, _ = findInitModel("anthropic")
	}
	m.KeyWrite = `"` + key + `"`
	return m, "The key is kept in the file, readable by you only (mode 0600). To keep it out of the file, export " + m.KeyVar + " and run init again with --force.", exitOK
}

func printable(s string) bool {
	for _, r := range s {
		if r < 0x21 || r > 0x7e {
			return false
		}
	}
	return true
}

func configExampleCommand() *command {
	return &command{
		name:    "config example",
		summary: "print the example configuration, every key documented",
		help: `Prints config.yaml.example as this binary carries it: every key with its
default and documentation, the echo model selected so it runs without keys.
switchboard config example > config.yaml gives a file to edit.`,
		run: func(_ context.Context, c *cli, _ *globalFlags, args []string) int {
			if len(args) > 0 {
				fmt.Fprintf(c.stderr, "switchboard config example: takes no arguments\n")
				return exitUsage
			}
			fmt.Fprint(c.stdout, switchboard.ExampleConfig)
			return exitOK
		},
	}
}
