package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/gateway"
)

// env returns a LookupEnv over a fixed map, so tests never read the
// machine's environment.
func env(kv ...string) LookupEnv {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

const minimal = `
models:
  providers:
    echo:
      api: echo
agents:
  defaults:
    model:
      primary: echo/echo
`

// echoProvider configures the echo provider only, for tests that write
// their own agents section.
const echoProvider = `
models:
  providers:
    echo:
      api: echo
`

func mustParse(t *testing.T, src string, lookup LookupEnv) *Config {
	t.Helper()
	cfg, err := Parse("test.yaml", []byte(src), lookup)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return cfg
}

func parseErrors(t *testing.T, src string, lookup LookupEnv) Errors {
	t.Helper()
	_, err := Parse("test.yaml", []byte(src), lookup)
	if err == nil {
		t.Fatalf("Parse succeeded; want errors")
	}
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("error %T %v is not config.Errors", err, err)
	}
	return es
}

func errorLines(es Errors) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Error()
	}
	return out
}

func TestExampleConfigPassesWithEmptyEnvironment(t *testing.T) {
	cfg, err := Load("../config.yaml.example", env())
	if err != nil {
		t.Fatalf("config.yaml.example must pass unchanged with no environment variables:\n%v", err)
	}
	if got := cfg.Agents.Defaults.Model.Primary; got != "echo/echo" {
		t.Errorf("example primary model = %q, want echo/echo (make run must work without a model account)", got)
	}
	if cfg.Gateway.Bind != gateway.BindLoopback || cfg.Gateway.Port != 18789 {
		t.Errorf("example gateway = %+v, want loopback:18789", cfg.Gateway)
	}
}

func TestCheckReportsEveryProblemWithPositionAndPath(t *testing.T) {
	src := `gateway:
  prot: 8080
session:
  dmScope: per-person
models:
  providers:
    echo:
      api: echo
      apiKey: ${SB_TEST_UNSET_KEY}
agents:
  defaults:
    model:
      primary: echo/echo
`
	es := parseErrors(t, src, env())
	want := []string{
		`test.yaml:2:3: gateway.prot: unknown key "prot" (did you mean "port"?)`,
		`test.yaml:4:12: session.dmScope: must be one of main, per-peer, per-channel-peer, per-account-channel-peer (got "per-person")`,
		`test.yaml:9:15: models.providers.echo.apiKey: environment variable SB_TEST_UNSET_KEY is not set; export it or write ${SB_TEST_UNSET_KEY:-default}`,
	}
	if got := errorLines(es); !reflect.DeepEqual(got, want) {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestUnknownKeySuggestions(t *testing.T) {
	tests := []struct{ src, want string }{
		{"gateway:\n  Port: 1\n", `did you mean "port"?`},
		{"gatway:\n  port: 1\n", `did you mean "gateway"?`},
		{"x-extension: {ignored: true}\n", ""},
		{"gateway:\n  zzzzzzzz: 1\n", `valid keys here: auth, bind, controlUi, customBindHost, handshakeTimeoutMs, limits, policy, port, trustedProxies`},
	}
	for _, tt := range tests {
		if tt.want == "" {
			mustParse(t, minimal+tt.src, env())
			continue
		}
		es := parseErrors(t, minimal+tt.src, env())
		if !strings.Contains(es.Error(), tt.want) {
			t.Errorf("%q: got %v, want it to contain %q", tt.src, es, tt.want)
		}
	}
	es := parseErrors(t, echoProvider+"agents:\n  defaults:\n    model: {primary: echo/echo}\n    maxConcurent: 2\n", env())
	if !strings.Contains(es.Error(), `did you mean "maxConcurrent"?`) {
		t.Errorf("got %v", es)
	}
}

func TestAbsentKeysKeepDefaults(t *testing.T) {
	cfg := mustParse(t, minimal+"gateway:\n  bind: lan\n", env())
	if cfg.Gateway.Port != gateway.DefaultPort {
		t.Errorf("port = %d, want default %d", cfg.Gateway.Port, gateway.DefaultPort)
	}
	if cfg.Gateway.Bind != gateway.BindLAN {
		t.Errorf("bind = %q, want lan", cfg.Gateway.Bind)
	}
	if cfg.Agents.Defaults.MaxConcurrent != 4 || cfg.Agents.Defaults.TimeoutSeconds != 172800 {
		t.Errorf("agent defaults lost: %+v", cfg.Agents.Defaults)
	}
	if cfg.Session.DMScope != core.DMScopeMain {
		t.Errorf("dmScope = %q, want main", cfg.Session.DMScope)
	}
	// A key written with no value (null) also keeps its default.
	cfg = mustParse(t, minimal+"gateway:\n  port:\n", env())
	if cfg.Gateway.Port != gateway.DefaultPort {
		t.Errorf("null port = %d, want default", cfg.Gateway.Port)
	}
}

func TestEnvironmentExpansion(t *testing.T) {
	lookup := env("PORT", "9000", "EMPTY", "", "KEY", "sk-123", "HOST", "10.0.0.5")
	cfg := mustParse(t, `
agents:
  defaults:
    model: {primary: echo/echo}
gateway:
  port: ${PORT}
  bind: custom
  customBindHost: ${HOST}
models:
  providers:
    echo:
      api: echo
    a:
      api: openai-completions
      apiKey: ${KEY}
      baseUrl: ${MISSING_URL:-http://localhost:1/v1}
      headers:
        X-Empty: ${EMPTY:-fallback}
        X-Literal: "$${NOT_A_VAR}"
        X-Joined: pre-${KEY}-post
`, lookup)
	p := cfg.Models.Providers["a"]
	checks := map[string][2]string{
		"port":      {itoa(cfg.Gateway.Port), "9000"},
		"host":      {cfg.Gateway.CustomBindHost, "10.0.0.5"},
		"apiKey":    {p.APIKey, "sk-123"},
		"baseUrl":   {p.BaseURL, "http://localhost:1/v1"},
		"X-Empty":   {p.Headers["X-Empty"], "fallback"},
		"X-Literal": {p.Headers["X-Literal"], "${NOT_A_VAR}"},
		"X-Joined":  {p.Headers["X-Joined"], "pre-sk-123-post"},
	}
	for name, c := range checks {
		if c[0] != c[1] {
			t.Errorf("%s = %q, want %q", name, c[0], c[1])
		}
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestEnvironmentExpansionErrors(t *testing.T) {
	tests := []struct{ value, want string }{
		{`"${UNSET_A}"`, "environment variable UNSET_A is not set"},
		{`"${UNSET_A}${UNSET_B}"`, "environment variables UNSET_A, UNSET_B are not set"},
		{`"${UNTERMINATED"`, `unterminated "${UNTERMINATED"`},
		{`"${1BAD}"`, "invalid environment reference ${1BAD}"},
		{`"${}"`, "invalid environment reference ${}"},
	}
	for _, tt := range tests {
		es := parseErrors(t, minimal+"stateDir: "+tt.value+"\n", env())
		if len(es) != 1 || !strings.Contains(es[0].Message, tt.want) || es[0].Path != "stateDir" || es[0].Line == 0 {
			t.Errorf("stateDir: %s: got %v, want one positioned error containing %q", tt.value, es, tt.want)
		}
	}
}

func TestTypeErrors(t *testing.T) {
	tests := []struct{ src, path, want string }{
		{"gateway:\n  port: eighty\n", "gateway.port", `expected a whole number, got "eighty"`},
		{"gateway:\n  port: \"8080\"\n", "gateway.port", `expected a whole number, got "8080"`},
		{"gateway:\n  port: 70000\n", "gateway.port", "must be at most 65535 (got 70000)"},
		{"gateway: [1, 2]\n", "gateway", "expected a mapping of keys to values, got a list"},
		{"agents:\n  defaults:\n    model:\n      primary: echo/echo\n      fallbacks: echo/echo\n", "agents.defaults.model.fallbacks", "expected a list"},
		{"agents:\n  defaults:\n    model: {primary: echo/echo}\n    maxConcurrent: 0\n", "agents.defaults.maxConcurrent", "must be at least 1 (got 0)"},
		{"gateway:\n  bind: everywhere\n", "gateway.bind", "must be one of loopback, lan, custom"},
	}
	for _, tt := range tests {
		src := minimal + tt.src
		if strings.HasPrefix(tt.src, "agents:") {
			src = echoProvider + tt.src
		}
		es := parseErrors(t, src, env())
		if len(es) != 1 || es[0].Path != tt.path || !strings.Contains(es[0].Message, tt.want) || es[0].Line == 0 {
			t.Errorf("%q: got %v, want one positioned error at %s containing %q", tt.src, es, tt.path, tt.want)
		}
	}
}

func TestPortFromEnvironmentMustBeNumeric(t *testing.T) {
	es := parseErrors(t, minimal+"gateway:\n  port: ${PORT}\n", env("PORT", "http"))
	if len(es) != 1 || !strings.Contains(es[0].Message, `expected a whole number, got "http"`) {
		t.Errorf("got %v", es)
	}
}

func TestCrossSectionValidation(t *testing.T) {
	es := parseErrors(t, `
models:
  providers:
    echo:
      api: echo
    bad:
      baseUrl: "ftp://x"
agents:
  defaults:
    model:
      primary: anthropic/claude
      fallbacks: [nomodel]
gateway:
  bind: custom
`, env())
	want := []string{
		`test.yaml:6:5: models.providers.bad.api: required; one of anthropic-messages, openai-completions, echo`,
		`test.yaml:7:16: models.providers.bad.baseUrl: must be an http or https URL such as https://api.example.com/v1`,
		`test.yaml:11:16: agents.defaults.model.primary: provider "anthropic" is not configured under models.providers (configured: bad, echo)`,
		`test.yaml:12:19: agents.defaults.model.fallbacks[0]: model reference "nomodel" must look like "<provider>/<model>", for example "echo/echo"`,
		`test.yaml:13:1: gateway.customBindHost: required when bind is custom`,
	}
	got := errorLines(es)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestMissingPrimaryModel(t *testing.T) {
	es := parseErrors(t, "gateway:\n  port: 1\n", env())
	if len(es) != 1 || es[0].Path != "agents.defaults.model.primary" || !strings.Contains(es[0].Message, "required") {
		t.Errorf("got %v", es)
	}
	if es[0].Line != 0 {
		t.Errorf("a key absent from the file has no position, got line %d", es[0].Line)
	}
}

func TestSyntaxErrorIsOnePositionedLine(t *testing.T) {
	es := parseErrors(t, "gateway:\n  port: [1,\nmodels: {}\n", env())
	if len(es) != 1 || es[0].Line != 2 || !strings.Contains(es[0].Message, `the list opened with "[" here is never closed`) || strings.Contains(es[0].Error(), "\n") {
		t.Errorf("got %q", es.Error())
	}
	es = parseErrors(t, "gateway:\n  port: 1\n  port: 2\n", env())
	if len(es) != 1 || es[0].Line != 3 || !strings.Contains(es[0].Message, `the key "port" appears twice in "gateway"`) {
		t.Errorf("duplicate key: got %q", es.Error())
	}
	es = parseErrors(t, minimal+"---\ngateway: {}\n", env())
	if len(es) != 1 || !strings.Contains(es[0].Message, "second YAML document") {
		t.Errorf("two documents: got %q", es.Error())
	}
}

func TestAnchorsAliasesAndMergeKeys(t *testing.T) {
	cfg := mustParse(t, `
x-common: &common
  api: openai-completions
  headers: {X-Team: core}
models:
  providers:
    echo: {api: echo}
    a:
      <<: *common
      baseUrl: http://a.local/v1
    b:
      <<: *common
      api: anthropic-messages
agents:
  defaults:
    model: {primary: echo/echo}
`, env())
	a, b := cfg.Models.Providers["a"], cfg.Models.Providers["b"]
	if a.API != "openai-completions" || a.Headers["X-Team"] != "core" || a.BaseURL != "http://a.local/v1" {
		t.Errorf("a = %+v: merged keys missing", a)
	}
	if b.API != "anthropic-messages" || b.Headers["X-Team"] != "core" {
		t.Errorf("b = %+v: an explicit key must override the merged one", b)
	}
	es := parseErrors(t, minimal+"gateway: *nowhere\n", env())
	if len(es) != 1 || !strings.Contains(es[0].Message, "refers to no anchor") {
		t.Errorf("dangling alias: %v", es)
	}
}

func TestEmptyFileNeedsAModel(t *testing.T) {
	es := parseErrors(t, "", env())
	if len(es) != 1 || es[0].Path != "agents.defaults.model.primary" {
		t.Errorf("got %v", es)
	}
}

func TestFindOrder(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	home := filepath.Join(dir, "home")
	if p, err := Find("given.yaml", env("SWITCHBOARD_CONFIG", "env.yaml"), home); err != nil || p != "given.yaml" {
		t.Errorf("explicit: %q %v", p, err)
	}
	if p, err := Find("", env("SWITCHBOARD_CONFIG", "env.yaml"), home); err != nil || p != "env.yaml" {
		t.Errorf("env: %q %v", p, err)
	}
	if _, err := Find("", env(), home); !errors.Is(err, ErrNotFound) {
		t.Errorf("nothing present: %v, want ErrNotFound", err)
	}
	homeCfg := filepath.Join(home, ".switchboard", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(homeCfg), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(homeCfg, []byte(minimal), 0o600); err != nil {
		t.Fatal(err)
	}
	if p, err := Find("", env(), home); err != nil || p != homeCfg {
		t.Errorf("home: %q %v", p, err)
	}
	if err := os.WriteFile("config.yaml", []byte(minimal), 0o600); err != nil {
		t.Fatal(err)
	}
	if p, err := Find("", env(), home); err != nil || p != "config.yaml" {
		t.Errorf("cwd wins over home: %q %v", p, err)
	}
}

func TestResolveStateDir(t *testing.T) {
	cfg := mustParse(t, minimal, env())
	if d, err := cfg.ResolveStateDir(env(), "/home/u"); err != nil || d != "/home/u/.switchboard" {
		t.Errorf("default: %q %v", d, err)
	}
	cfg.StateDir = "~/state"
	if d, _ := cfg.ResolveStateDir(env(), "/home/u"); d != "/home/u/state" {
		t.Errorf("config: %q", d)
	}
	if d, _ := cfg.ResolveStateDir(env("SWITCHBOARD_STATE_DIR", "/srv/sb"), "/home/u"); d != "/srv/sb" {
		t.Errorf("env wins: %q", d)
	}
	if _, err := cfg.ResolveStateDir(env(), ""); err == nil {
		t.Errorf("~ without a home directory must be an error")
	}
	if w, _ := cfg.ResolveWorkspace("/srv/sb", "/home/u"); w != "/srv/sb/workspace" {
		t.Errorf("workspace default: %q", w)
	}
}

func TestLoadMissingFileNamesIt(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"), env())
	if err == nil || !strings.Contains(err.Error(), "nope.yaml") || strings.Contains(err.Error(), "\n") {
		t.Errorf("got %v", err)
	}
}

func TestTelegramSection(t *testing.T) {
	cfg := mustParse(t, minimal+`channels:
  telegram:
    enabled: true
    botToken: ${TG}
    dmPolicy: Allowlist
    allowFrom: ["42", "@ada"]
    groups:
      "-100":
        requireMention: false
`, env("TG", "123:abc"))
	tg := cfg.Channels.Telegram
	if !tg.Enabled || tg.BotToken != "123:abc" || tg.DMPolicy != "allowlist" || len(tg.AllowFrom) != 2 {
		t.Fatalf("telegram = %+v", tg)
	}
	if rm := tg.Groups["-100"].RequireMention; rm == nil || *rm {
		t.Errorf("groups[-100].requireMention = %v", rm)
	}

	es := parseErrors(t, minimal+`channels:
  telegram:
    enabled: true
    dmPolicy: open
    replyToMode: sometimes
    chunkMode: paragraphs
`, nil)
	joined := strings.Join(errorLines(es), "\n")
	for _, want := range []string{"channels.telegram.botToken: required", `channels.telegram.dmPolicy: dmPolicy "open"`, `channels.telegram.replyToMode: must be one of off, first, all, batched`, `channels.telegram.chunkMode: markup: unknown chunk mode "paragraphs"`} {
		if !strings.Contains(joined, want) {
			t.Errorf("errors lack %q:\n%s", want, joined)
		}
	}
}

func TestWhatsAppSection(t *testing.T) {
	cfg := mustParse(t, minimal+`channels:
  whatsapp:
    enabled: true
    dmPolicy: allowlist
    allowFrom: ["15551234567", "+44 20 7946 0958"]
    groups:
      "120363012345678901@g.us":
        requireMention: false
        allowFrom: ["+1 (555) 765-4321"]
    replyToMode: first
    textChunkLimit: 3000
    mediaMaxMb: 5
`, nil)
	wa := cfg.Channels.WhatsApp
	if !wa.Enabled || wa.ReplyToMode != "first" {
		t.Fatalf("whatsapp = %+v", wa)
	}
	acc := wa.Policy()
	if strings.Join(acc.AllowFrom, ",") != "+15551234567,+442079460958" {
		t.Errorf("allowFrom = %q, want E.164", acc.AllowFrom)
	}
	if g := acc.Groups["120363012345678901@g.us"]; len(g.AllowFrom) != 1 || g.AllowFrom[0] != "+15557654321" || g.RequireMention == nil || *g.RequireMention {
		t.Errorf("group rule = %+v", g)
	}
	if o := wa.Options("main", cfg.Session); o.ChunkLimit != 3000 || o.MaxMediaBytes != 5<<20 {
		t.Errorf("options = %+v", o)
	}

	es := parseErrors(t, minimal+`channels:
  whatsapp:
    enabled: true
    dmPolicy: open
    replyToMode: sometimes
    textChunkLimit: 5000
`, nil)
	joined := strings.Join(errorLines(es), "\n")
	for _, want := range []string{`channels.whatsapp.dmPolicy: dmPolicy "open"`, `channels.whatsapp.replyToMode: must be one of off, first, all, batched`, `channels.whatsapp.textChunkLimit:`} {
		if !strings.Contains(joined, want) {
			t.Errorf("errors lack %q:\n%s", want, joined)
		}
	}
}

func TestSlackSection(t *testing.T) {
	cfg := mustParse(t, minimal+`channels:
  slack:
    enabled: true
    botToken: xoxb-1
    mode: http
    signingSecret: s3cret
`, nil)
	o := cfg.Channels.Slack.Options("main", cfg.Session)
	if o.HTTP == nil || o.HTTP.SigningSecret != "s3cret" || o.HTTP.Listen != "127.0.0.1:8788" {
		t.Errorf("http mode options = %+v", o.HTTP)
	}
	es := parseErrors(t, minimal+`channels:
  slack:
    enabled: true
    mode: webhooks
`, nil)
	joined := strings.Join(errorLines(es), "\n")
	for _, want := range []string{"channels.slack.botToken: required", `channels.slack.mode: must be "socket" or "http"`, "channels.slack.appToken: required"} {
		if !strings.Contains(joined, want) {
			t.Errorf("errors lack %q:\n%s", want, joined)
		}
	}
	es = parseErrors(t, minimal+`channels:
  slack:
    enabled: true
    botToken: xoxb-1
    mode: http
`, nil)
	if joined := strings.Join(errorLines(es), "\n"); !strings.Contains(joined, "channels.slack.signingSecret: required in http mode") {
		t.Errorf("errors = %s", joined)
	}
}

// A heartbeat target or a cron job's announce channel must name a channel
// section (or webchat): a typo would send alerts nowhere. The check knows
// the sections by their keys, not a list of platforms.
func TestTargetsNameAChannel(t *testing.T) {
	es := parseErrors(t, echoProvider+`
agents:
  defaults:
    model: {primary: echo/echo}
    heartbeat:
      target: telgram
      to: "123"
cron:
  jobs:
    - id: j1
      name: report
      schedule: {kind: every, everyMs: 60000}
      payload: {kind: agentTurn, message: hi}
      delivery: {mode: announce, channel: pager, to: "1"}
`, env())
	got := strings.Join(errorLines(es), "\n")
	for _, want := range []string{
		`agents.defaults.heartbeat.target: "telgram" is not a channel (did you mean "telegram"?)`,
		`cron.jobs[0].delivery.channel: "pager" is not a channel; write webchat, discord, slack, telegram, whatsapp`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("errors:\n%s\nwant a line with %s", got, want)
		}
	}
	cfg := mustParse(t, echoProvider+`
agents:
  defaults:
    model: {primary: echo/echo}
    heartbeat: {target: slack, to: "channel:C1"}
`, env())
	if cfg.Agents.Defaults.Heartbeat.Target != "slack" {
		t.Errorf("target = %q", cfg.Agents.Defaults.Heartbeat.Target)
	}
	if names := cfg.Channels.Names(); !slices.Equal(names, []string{"discord", "slack", "telegram", "whatsapp"}) {
		t.Errorf("channel sections = %q", names)
	}
	if sec, ok := cfg.Channels.Section("slack"); !ok || sec.IsEnabled() {
		t.Errorf("Section(slack) = %v, %v", sec, ok)
	}
	if _, ok := cfg.Channels.Section("pager"); ok {
		t.Error("Section found a channel that has no section")
	}
}

// Issue 26, finding 6d: the example's three cron jobs cluttered a new
// user's cron panel (and "Run now" on one deleted it). The example keeps
// one job, disabled and named as an example; it still shows every key
// (TestExampleDocumentsEveryKey).
func TestFinding6ExampleHasOneDisabledCronJob(t *testing.T) {
	cfg, err := Load("../config.yaml.example", env())
	if err != nil {
		t.Fatal(err)
	}
	jobs := cfg.Cron.Jobs
	if len(jobs) > 1 {
		t.Fatalf("config.yaml.example has %d cron jobs; want at most one, an example", len(jobs))
	}
	for _, j := range jobs {
		if j.IsEnabled() {
			t.Errorf("example cron job %s is enabled; a new user's daemon must not run it", j.ID)
		}
		if !strings.HasPrefix(j.ID, "example-") || !strings.HasPrefix(j.Name, "Example: ") {
			t.Errorf("example cron job id %q, name %q: want them to say it is an example", j.ID, j.Name)
		}
	}
}
