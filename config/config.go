// Package config is Switchboard's configuration: one typed struct (Config)
// read from one YAML file.
//
// Loading (Load, Parse) does, in order:
//
//   - parse the YAML with positions (github.com/goccy/go-yaml); a syntax
//     error is reported at the line of the mistake with what to write
//     instead, and every key written twice in one mapping is an error;
//   - expand ${VAR} and ${VAR:-default} in every string value from the
//     environment ("$${" writes a literal "${"); a missing variable without a
//     default is an error naming it;
//   - decode onto Default(): keys absent from the file keep their default;
//     unknown keys are errors with a "did you mean" suggestion, except keys
//     starting with "x-", which hold YAML anchors (&name) for reuse;
//   - validate: enumerations (a value near a valid one gets a "did you
//     mean"), `min`/`max` tags, and each struct's Validate
//     method (see core.FieldError);
//   - for a run (ForRun, what Parse and Load do): every model provider a
//     model reference uses has the API key its endpoint needs. Reading for
//     management (ForManagement) skips this, and lets a provider's apiKey
//     reference an unset variable: those commands call no model.
//
// Every problem is reported, not only the first, as Errors of the form
// "file:line:col: key.path: message".
//
// Each package owns its own section's struct and defaults (gateway.Config,
// llm.ModelsConfig, core.SessionConfig, ...); this package composes them. Key
// names follow OpenClaw's where the concept is the same. Schema exports the
// JSON Schema, with every field's doc comment as its description.
package config

//go:generate go run ./internal/gendocs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/discord"
	"github.com/switchboardhq/switchboard/bridges/slack"
	"github.com/switchboardhq/switchboard/bridges/telegram"
	"github.com/switchboardhq/switchboard/bridges/whatsapp"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/llm"
	"github.com/switchboardhq/switchboard/core/tools"
	"github.com/switchboardhq/switchboard/core/tools/exectool"
	"github.com/switchboardhq/switchboard/gateway"
	"github.com/switchboardhq/switchboard/heartbeat"
	"github.com/switchboardhq/switchboard/queue"
	"github.com/switchboardhq/switchboard/store"
)

// Config is the whole configuration of one Switchboard process.
type Config struct {
	// StateDir is the directory for everything Switchboard writes: the state
	// database, transcripts, media and the WhatsApp device store. Default
	// "~/.switchboard". The environment variable SWITCHBOARD_STATE_DIR, when
	// set, takes precedence.
	StateDir string `json:"stateDir,omitempty"`
	// Store chooses where state is kept: SQLite in the state directory
	// (default) or a PostgreSQL database.
	Store store.Config `json:"store"`
	// Gateway configures the HTTP and WebSocket listener.
	Gateway gateway.Config `json:"gateway"`
	// Models lists the model providers turns can use.
	Models llm.ModelsConfig `json:"models"`
	// Agents holds the agent settings: model, workspace, concurrency.
	Agents core.AgentsConfig `json:"agents"`
	// Session controls how conversations map to sessions (session keys).
	Session core.SessionConfig `json:"session"`
	// Messages controls how inbound messages are handled: the queue modes
	// for messages that arrive while a session is busy.
	Messages MessagesConfig `json:"messages"`
	// Channels configures the chat platform bridges.
	Channels ChannelsConfig `json:"channels"`
	// Cron holds scheduled jobs: reminders, reports, anything that should
	// run on a schedule. Jobs can also be added at runtime.
	Cron heartbeat.CronConfig `json:"cron"`
	// Tools decides which tools the agent has and where it may use them,
	// and configures exec (off by default).
	Tools ToolsConfig `json:"tools"`
	// Commands holds who counts as the bot's owner.
	Commands CommandsConfig `json:"commands"`
}

// ToolsConfig is the `tools:` section. Tool names: message, cron,
// sessions_list, sessions_history, web_fetch, read, write, edit, ls, exec,
// process; groups: group:fs (read, write, edit, ls), group:runtime (exec,
// process), group:web, group:sessions, group:messaging, group:automation.
type ToolsConfig struct {
	// Allow, when set, is the only tools the agent has (names or groups);
	// the others are not offered to the model at all.
	Allow []string `json:"allow,omitempty"`
	// Deny removes tools from the agent (names or groups), e.g.
	// [web_fetch] to keep it off the network.
	Deny []string `json:"deny,omitempty"`
	// Policies are before_tool_call rules: per agent, channel and chat
	// type, which tools may run. A blocked call returns {"status":
	// "blocked", "tool": ..., "reason": "Tool blocked by policy: ..."} to
	// the model. Every matching rule applies.
	Policies []tools.PolicyRule `json:"policies,omitempty"`
	// Exec configures the exec and process tools: off unless enabled,
	// owner-only, and every command approved by an operator.
	Exec exectool.Config `json:"exec"`
}

// Validate checks the tool names.
func (t ToolsConfig) Validate() error {
	if _, err := tools.ExpandNames(t.Allow); err != nil {
		return core.FieldErrorf("allow", err.Error())
	}
	if _, err := tools.ExpandNames(t.Deny); err != nil {
		return core.FieldErrorf("deny", err.Error())
	}
	return nil
}

// CommandsConfig is the `commands:` section.
type CommandsConfig struct {
	// OwnerAllowFrom lists the bot's owners as "<channel>:<sender id>"
	// ("telegram:123456789", "slack:U0123ABC", "discord:80351110224678912",
	// "whatsapp:+15551234567"), or "*" for everyone. Only owners' messages
	// may use the owner-only tools: write, edit, exec, process, cron,
	// sessions_list, sessions_history, and message to a chat other than the
	// current one.
	// Heartbeats, cron jobs and messages sent through the gateway count as
	// the owner's. Default none.
	OwnerAllowFrom []string `json:"ownerAllowFrom,omitempty"`
}

// Validate checks the owner entries.
func (c CommandsConfig) Validate() error {
	if _, err := tools.NewOwners(c.OwnerAllowFrom); err != nil {
		return core.FieldErrorf("ownerAllowFrom", err.Error())
	}
	return nil
}

// ChannelsConfig is the `channels:` section: one entry per chat platform.
type ChannelsConfig struct {
	// Telegram is the Telegram bot (long polling through the Bot API).
	Telegram telegram.Config `json:"telegram"`
	// Slack is the Slack app (Socket Mode or the Events API over HTTP).
	Slack slack.Config `json:"slack"`
	// Discord is the Discord bot (the gateway plus REST).
	Discord discord.Config `json:"discord"`
	// WhatsApp is a WhatsApp account linked as a device (WhatsApp Web),
	// with `switchboard whatsapp link` or from the web page.
	WhatsApp whatsapp.Config `json:"whatsapp"`
}

// Section returns the section of channel (its key under channels:) as the
// bridge package's own type, which a bridge Descriptor's New takes; ok is
// false when no section has that key. Sections are found by their keys, so
// a bridge added to ChannelsConfig needs nothing more here.
func (c ChannelsConfig) Section(channel string) (bridges.Section, bool) {
	v := reflect.ValueOf(c)
	f, ok := fieldsOf(v.Type()).byName[channel]
	if !ok {
		return nil, false
	}
	sec, ok := v.FieldByIndex(f.index).Interface().(bridges.Section)
	return sec, ok
}

// Names lists the channel sections' keys, sorted.
func (c ChannelsConfig) Names() []string {
	return slices.Clone(fieldsOf(reflect.TypeFor[ChannelsConfig]()).names)
}

// MessagesConfig is the `messages:` section of the configuration.
type MessagesConfig struct {
	// Queue decides what happens to a message that arrives while its
	// session is running a turn: steer, followup, collect, steer-backlog or
	// interrupt, with a debounce, a cap and a drop policy.
	Queue queue.Config `json:"queue"`
	// AckReaction is the emoji the bot puts on a message it took, so the
	// sender sees it was received, on platforms with reactions; "" turns
	// it off. Default "👀".
	AckReaction string `json:"ackReaction"`
	// AckReactionScope is which messages get it: "group-mentions" (default:
	// group messages addressed to the bot), "group-all", "direct", "all" or
	// "none".
	AckReactionScope bridges.AckScope `json:"ackReactionScope,omitempty"`
	// GroupChat configures group conversations on every platform.
	GroupChat GroupChatConfig `json:"groupChat"`
}

// GroupChatConfig is `messages.groupChat:`.
type GroupChatConfig struct {
	// MentionPatterns are regular expressions (case-insensitive) that count
	// as addressing the bot in a group, besides the platform's own
	// @mentions, e.g. ["\\bhey bot\\b"]. Nested repetition is refused.
	MentionPatterns []string `json:"mentionPatterns,omitempty"`
}

// Validate checks that the patterns compile.
func (g GroupChatConfig) Validate() error {
	if _, err := bridges.NewMentions(g.MentionPatterns); err != nil {
		return core.FieldErrorf("mentionPatterns", err.Error())
	}
	return nil
}

// Default returns the configuration used for every key a file leaves out.
// The defaults themselves belong to the package that owns each section.
func Default() Config {
	return Config{
		Gateway:  gateway.DefaultConfig(),
		Agents:   core.DefaultAgentsConfig(),
		Session:  core.DefaultSessionConfig(),
		Messages: MessagesConfig{Queue: queue.DefaultConfig(), AckReaction: "👀"},
		Cron:     heartbeat.DefaultCronConfig(),
		Tools:    ToolsConfig{Exec: exectool.DefaultConfig()},
	}
}

// Validate checks what spans sections: the model references must name
// configured providers.
func (c Config) Validate() error {
	var errs []error
	if c.Agents.Defaults.Model.Primary == "" {
		errs = append(errs, core.FieldErrorf("agents.defaults.model.primary", `required: the model that answers, as "<provider>/<model>", for example "echo/echo"`))
	}
	for _, u := range c.modelUses() {
		r, err := core.ParseModelRef(u.ref)
		if err != nil {
			errs = append(errs, core.FieldErrorf(u.path, err.Error()))
			continue
		}
		if _, ok := c.Models.Providers[r.Provider]; !ok {
			errs = append(errs, core.FieldErrorf(u.path, fmt.Sprintf("provider %q is not configured under models.providers (%s)", r.Provider, describeKeys(c.Models.Providers))))
		}
	}
	c.checkTargets(func(path, msg string) { errs = append(errs, core.FieldErrorf(path, msg)) })
	if err := c.secretReuse(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func describeKeys[V any](m map[string]V) string {
	if len(m) == 0 {
		return "none are configured"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return "configured: " + strings.Join(keys, ", ")
}

// Parse reads a configuration from data to run it (ForRun). name labels
// positions in errors (usually the file path). lookup resolves ${VAR}
// references; nil means os.LookupEnv. On any problem it returns Errors
// listing all of them.
func Parse(name string, data []byte, lookup LookupEnv) (*Config, error) {
	return ParseFor(name, data, lookup, ForRun)
}

// ParseFor is Parse for use: ForRun checks the API keys of the models the
// configuration uses, ForManagement leaves them alone.
func ParseFor(name string, data []byte, lookup LookupEnv, use Use) (*Config, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	cfg := Default()
	env := envOptions{deferred: isModelKeyPath, seen: map[string]envValue{}}
	var more func(report func(path, msg string))
	if use == ForRun {
		more = func(report func(path, msg string)) { cfg.checkModelKeys(lookup, env.seen, report) }
	}
	if errs := decodeAndCheckWith(name, data, lookup, env, more, &cfg); len(errs) > 0 {
		return nil, errs
	}
	return &cfg, nil
}

// Load reads and parses the configuration file at path to run it (ForRun).
func Load(path string, lookup LookupEnv) (*Config, error) {
	return LoadFor(path, lookup, ForRun)
}

// LoadFor is Load for use (see ParseFor).
func LoadFor(path string, lookup LookupEnv, use Use) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: read %s: %w", path, errors.Unwrap(err))
	}
	return ParseFor(path, data, lookup, use)
}

// ErrNotFound is returned by Find when no configuration file exists in any
// of the places it looks.
var ErrNotFound = errors.New("no configuration file found")

// Find returns the configuration file to use: explicit (the --config flag)
// if set, else $SWITCHBOARD_CONFIG, else ./config.yaml, else
// ~/.switchboard/config.yaml. An explicit path is returned even if it does
// not exist, so the read error names it.
func Find(explicit string, lookup LookupEnv, home string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	if lookup == nil {
		lookup = os.LookupEnv
	}
	if p, ok := lookup("SWITCHBOARD_CONFIG"); ok && p != "" {
		return p, nil
	}
	candidates := []string{"config.yaml"}
	if home != "" {
		candidates = append(candidates, filepath.Join(home, ".switchboard", "config.yaml"))
	}
	for _, c := range candidates {
		if _, err := os.Stat(c); err == nil {
			return c, nil
		}
	}
	return "", fmt.Errorf("config: %w (looked for --config, $SWITCHBOARD_CONFIG, %s); run 'switchboard init' to write a starter configuration, or 'switchboard config example > config.yaml' for one that shows every key", ErrNotFound, strings.Join(candidates, ", "))
}

// ResolveStateDir returns the absolute state directory:
// $SWITCHBOARD_STATE_DIR if set, else stateDir, else ~/.switchboard. A
// leading "~/" is the home directory.
func (c *Config) ResolveStateDir(lookup LookupEnv, home string) (string, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	dir := c.StateDir
	if env, ok := lookup("SWITCHBOARD_STATE_DIR"); ok && env != "" {
		dir = env
	}
	if dir == "" {
		dir = "~/.switchboard"
	}
	return expandHome(dir, home)
}

// ResolveWorkspace returns the agent workspace directory: the configured one
// or "<stateDir>/workspace".
func (c *Config) ResolveWorkspace(stateDir, home string) (string, error) {
	if c.Agents.Defaults.Workspace == "" {
		return filepath.Join(stateDir, "workspace"), nil
	}
	return expandHome(c.Agents.Defaults.Workspace, home)
}

func expandHome(dir, home string) (string, error) {
	if dir == "~" || strings.HasPrefix(dir, "~/") {
		if home == "" {
			return "", fmt.Errorf("config: cannot expand %q: the home directory is unknown; use an absolute path", dir)
		}
		dir = filepath.Join(home, strings.TrimPrefix(dir, "~"))
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("config: %s: %w", dir, err)
	}
	return abs, nil
}

// ModulePath is the Go module path of Switchboard.
const ModulePath = "github.com/switchboardhq/switchboard"

// checkTargets reports heartbeat targets and cron announce channels that
// name no channel section: a typo there would send alerts nowhere.
func (c Config) checkTargets(report func(path, msg string)) {
	names := c.Channels.Names()
	known := append([]string{string(core.WebchatChannel)}, names...)
	check := func(path, channel string, also ...string) {
		if channel == "" || slices.Contains(known, channel) || slices.Contains(also, channel) {
			return
		}
		msg := fmt.Sprintf("%q is not a channel; write %s", channel, strings.Join(append(also, known...), ", "))
		if s := suggest(channel, append(also, known...)); s != "" {
			msg = fmt.Sprintf("%q is not a channel (did you mean %q?)", channel, s)
		}
		report(path, msg)
	}
	check("agents.defaults.heartbeat.target", c.Agents.Defaults.Heartbeat.Target, "none", "last")
	for i, a := range c.Agents.List {
		if a.Heartbeat != nil {
			check(fmt.Sprintf("agents.list[%d].heartbeat.target", i), a.Heartbeat.Target, "none", "last")
		}
	}
	for i, j := range c.Cron.Jobs {
		if j.Delivery != nil && j.Delivery.Mode == heartbeat.DeliveryAnnounce {
			check(fmt.Sprintf("cron.jobs[%d].delivery.channel", i), j.Delivery.Channel)
		}
	}
}
