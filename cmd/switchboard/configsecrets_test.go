package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/config"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// secretURLConfig sends secrets to URLs: the Telegram token and webhook
// secret and an OpenAI key come from the environment, the Slack bot token
// is written in the file.
const secretURLConfig = `gateway:
  port: 1234
  auth:
    token: ${SB_GATEWAY_TOKEN}
channels:
  telegram:
    botToken: ${TG_TOKEN}
    webhook:
      url: https://bot.example.com/telegram
      secret: ${TG_WEBHOOK_SECRET}
  slack:
    botToken: xoxb-literal-slack-token
    appToken: ${SLACK_APP_TOKEN}
models:
  providers:
    echo:
      api: echo
    openai:
      api: openai-completions
      apiKey: ${OPENAI_KEY}
agents:
  defaults:
    model: {primary: echo/echo}
`

var secretURLEnv = map[string]string{
	"SB_GATEWAY_TOKEN":  "gw-env-token-0123456789abcdef",
	"TG_TOKEN":          "123456:tg-env-token",
	"TG_WEBHOOK_SECRET": "wh_env_secret",
	"SLACK_APP_TOKEN":   "xapp-env-app-token",
	"OPENAI_KEY":        "sk-env-openai-key",
	"OTHER_SECRET":      "other-env-secret",
}

func secretURLLookup(k string) (string, bool) { v, ok := secretURLEnv[k]; return v, ok }

// Finding 5 of issue 22, second half: an admin client (the attacker had
// reached one through DNS rebinding) patched channels.telegram.apiUrl to its
// own listener, and the bot token, which it could never read, went there
// with the next Bot API call. Over the gateway, a write that sends a secret
// to a URL it did not go to before must now carry the secret itself.
func TestFinding5_SecretURLChangeNeedsTheSecret(t *testing.T) {
	for _, tc := range []struct {
		name string
		// setup is a patch applied first, which must succeed.
		setup string
		// patch is sent with config.patch; set, when not empty, is a
		// replacement of "old" by "new" in the redacted file text sent
		// with config.set.
		patch    string
		set      [2]string
		refused  []string // the issues' paths; none means written
		mentions string   // the error names the URL too
	}{
		{name: "apiUrl alone", patch: `{"channels": {"telegram": {"apiUrl": "http://evil.example/"}}}`,
			refused: []string{"channels.telegram.botToken"}, mentions: "channels.telegram.apiUrl"},
		{name: "apiUrl with the placeholder", patch: `{"channels": {"telegram": {"apiUrl": "http://evil.example/", "botToken": "__REDACTED__"}}}`,
			refused: []string{"channels.telegram.botToken"}},
		{name: "apiUrl with the token's variable", patch: `{"channels": {"telegram": {"apiUrl": "http://evil.example/", "botToken": "${TG_TOKEN}"}}}`,
			refused: []string{"channels.telegram.botToken"}},
		{name: "apiUrl with another variable", patch: `{"channels": {"telegram": {"apiUrl": "http://evil.example/", "botToken": "${OTHER_SECRET}"}}}`,
			refused: []string{"channels.telegram.botToken"}},
		{name: "apiUrl with a default in a reference", patch: `{"channels": {"telegram": {"apiUrl": "http://evil.example/", "botToken": "${NOT_SET:-123456:tg-env-token}"}}}`,
			refused: []string{"channels.telegram.botToken"}},
		{name: "apiUrl with the token written out", patch: `{"channels": {"telegram": {"apiUrl": "http://127.0.0.1:8081/", "botToken": "123456:tg-typed-token"}}}`},
		{name: "apiUrl without a token", patch: `{"channels": {"telegram": {"apiUrl": "http://127.0.0.1:8081/", "botToken": null}}}`},
		{name: "then the token's variable",
			setup:   `{"channels": {"telegram": {"apiUrl": "http://evil.example/", "botToken": "999:the-attackers-own"}}}`,
			patch:   `{"channels": {"telegram": {"botToken": "${TG_TOKEN}"}}}`,
			refused: []string{"channels.telegram.botToken"}, mentions: "channels.telegram.apiUrl"},
		{name: "back to the default endpoint",
			setup: `{"channels": {"telegram": {"apiUrl": "http://127.0.0.1:8081/", "botToken": "123456:tg-typed-token"}}}`,
			patch: `{"channels": {"telegram": {"apiUrl": null, "botToken": "${TG_TOKEN}"}}}`},
		{name: "webhook url", patch: `{"channels": {"telegram": {"webhook": {"url": "https://evil.example/hook"}}}}`,
			refused: []string{"channels.telegram.webhook.secret"}, mentions: "channels.telegram.webhook.url"},
		{name: "webhook url with its secret", patch: `{"channels": {"telegram": {"webhook": {"url": "https://bot2.example.com/hook", "secret": "wh_typed_secret"}}}}`},
		{name: "slack apiUrl", patch: `{"channels": {"slack": {"apiUrl": "http://evil.example/api/"}}}`,
			refused: []string{"channels.slack.appToken", "channels.slack.botToken"}},
		{name: "slack apiUrl with one token", patch: `{"channels": {"slack": {"apiUrl": "http://evil.example/api/", "botToken": "xoxb-literal-slack-token"}}}`,
			refused: []string{"channels.slack.appToken"}},
		{name: "slack apiUrl with both tokens", patch: `{"channels": {"slack": {"apiUrl": "http://proxy.example/api/", "botToken": "xoxb-literal-slack-token", "appToken": "xapp-typed"}}}`},
		{name: "baseUrl", patch: `{"models": {"providers": {"openai": {"baseUrl": "http://evil.example/v1"}}}}`,
			refused: []string{"models.providers.openai.apiKey"}, mentions: "models.providers.openai.baseUrl"},
		{name: "a new provider with a variable", patch: `{"models": {"providers": {"evil": {"api": "openai-completions", "baseUrl": "http://evil.example/v1", "apiKey": "${OPENAI_KEY}"}}}}`,
			refused: []string{"models.providers.evil.apiKey"}},
		{name: "a new provider without a key", patch: `{"models": {"providers": {"local": {"api": "openai-completions", "baseUrl": "http://127.0.0.1:11434/v1"}}}}`},
		{name: "something else", patch: `{"gateway": {"port": 2345}, "channels": {"telegram": {"webhook": {"secret": "__REDACTED__"}}}}`},
		{name: "set with a new baseUrl",
			set:     [2]string{"api: openai-completions", "api: openai-completions\n      baseUrl: http://evil.example/v1"},
			refused: []string{"models.providers.openai.apiKey"}},
		{name: "set with a new baseUrl and its key",
			set: [2]string{"api: openai-completions\n      apiKey: ${OPENAI_KEY}", "api: openai-completions\n      baseUrl: http://127.0.0.1:11434/v1\n      apiKey: sk-typed-key"}},
		{name: "set unchanged", set: [2]string{"port: 1234", "port: 1235"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			writeFile(t, path, secretURLConfig)
			svc := newConfigService(path, secretURLLookup, nil)
			ctx := context.Background()
			if tc.setup != "" {
				if _, err := svc.Patch(ctx, json.RawMessage(tc.setup), ""); err != nil {
					t.Fatalf("setup: %v", err)
				}
			}
			before := readFile(t, path)
			var err error
			if tc.set[0] != "" {
				raw := *getSnapshot(t, svc).Raw
				if !strings.Contains(raw, tc.set[0]) {
					t.Fatalf("the redacted file has no %q:\n%s", tc.set[0], raw)
				}
				_, err = svc.Set(ctx, strings.Replace(raw, tc.set[0], tc.set[1], 1), "")
			} else {
				_, err = svc.Patch(ctx, json.RawMessage(tc.patch), "")
			}
			if len(tc.refused) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("written; want refused for %v:\n%s", tc.refused, readFile(t, path))
			}
			shape := errorShape(t, err)
			var details struct {
				Code   string        `json:"code"`
				Issues []configIssue `json:"issues"`
			}
			if err := json.Unmarshal([]byte(toJSON(t, shape.Details)), &details); err != nil {
				t.Fatal(err)
			}
			var paths []string
			for _, is := range details.Issues {
				paths = append(paths, is.Path)
			}
			slices.Sort(paths)
			if shape.Code != protocol.CodeInvalidRequest || details.Code != "CONFIG_SECRET_REQUIRED" || !slices.Equal(paths, tc.refused) {
				t.Errorf("error = %s %s %s, want CONFIG_SECRET_REQUIRED for %v", shape.Code, shape.Message, toJSON(t, shape.Details), tc.refused)
			}
			if !strings.Contains(shape.Message, tc.mentions) || !strings.Contains(shape.Message, "${VAR}") {
				t.Errorf("message %q does not say what to do", shape.Message)
			}
			for _, secret := range secretURLEnv {
				if strings.Contains(toJSON(t, shape), secret) {
					t.Errorf("the error shows the secret %q: %s", secret, toJSON(t, shape))
				}
			}
			if readFile(t, path) != before {
				t.Errorf("a refused write changed the file")
			}
		})
	}
}

// The store section is not the gateway's to change: a client pointing
// store.url at a database of its own would get every message, session and
// token from the next start on. config.patch and config.set of it are
// refused, and the file is left as it was; other changes still go through.
func TestStoreSectionCannotBeChangedOverTheGateway(t *testing.T) {
	for name, patch := range map[string]string{
		"driver and url":           `{"store": {"driver": "postgres", "url": "postgres://evil:pw@evil.example/db"}}`,
		"a key=value url, in caps": `{"store": {"driver": "POSTGRES", "url": "host=evil.example password=evil:pw dbname=x"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			writeFile(t, path, secretURLConfig)
			svc := newConfigService(path, secretURLLookup, nil)
			before := readFile(t, path)
			_, err := svc.Patch(context.Background(), json.RawMessage(patch), "")
			if err == nil {
				t.Fatalf("written:\n%s", readFile(t, path))
			}
			shape := errorShape(t, err)
			if shape.Code != protocol.CodeInvalidRequest || !strings.Contains(toJSON(t, shape.Details), "CONFIG_STORE_LOCKED") ||
				!strings.Contains(shape.Message, "edit the configuration file") {
				t.Errorf("error = %s %s %s", shape.Code, shape.Message, toJSON(t, shape.Details))
			}
			if strings.Contains(toJSON(t, shape), "evil:pw") {
				t.Errorf("the error repeats the URL's password: %s", toJSON(t, shape))
			}
			if readFile(t, path) != before {
				t.Error("a refused write changed the file")
			}
		})
	}
	path := filepath.Join(t.TempDir(), "config.yaml")
	writeFile(t, path, secretURLConfig)
	svc := newConfigService(path, secretURLLookup, nil)
	raw := *getSnapshot(t, svc).Raw
	if _, err := svc.Set(context.Background(), raw+"\nstore:\n  driver: postgres\n  url: postgres://x@db/y\n", ""); err == nil || !strings.Contains(err.Error(), "store section") {
		t.Errorf("config.set of a store section: %v", err)
	}
	for _, patch := range []string{`{"gateway": {"port": 2345}}`, `{"store": {"driver": "sqlite"}}`} {
		if _, err := svc.Patch(context.Background(), json.RawMessage(patch), ""); err != nil {
			t.Errorf("a patch leaving where state is kept alone (%s): %v", patch, err)
		}
	}
}

// Every string key whose name ends in "url" in a struct that holds a secret
// is tagged secretURL, and every tag names secrets beside it: a URL added
// next to a token is covered, or the author says here why not.
func TestEveryURLBesideASecretIsTagged(t *testing.T) {
	var tagged []string
	seen := map[reflect.Type]bool{}
	var walk func(typ reflect.Type, path string, inList bool)
	walk = func(typ reflect.Type, path string, inList bool) {
		switch typ.Kind() {
		case reflect.Pointer:
			walk(typ.Elem(), path, inList)
		case reflect.Map:
			walk(typ.Elem(), path+".*", inList)
		case reflect.Slice, reflect.Array:
			walk(typ.Elem(), path+"[]", true)
		case reflect.Struct:
			if seen[typ] {
				return
			}
			seen[typ] = true
			// The struct's keys, those of embedded structs beside its own.
			type keyed struct {
				name string
				f    reflect.StructField
			}
			var fields []keyed
			var flatten func(t reflect.Type)
			flatten = func(t reflect.Type) {
				for i := range t.NumField() {
					f := t.Field(i)
					if name, ok := jsonKey(f); ok && name == "" {
						flatten(f.Type)
					} else if ok {
						fields = append(fields, keyed{name, f})
					}
				}
			}
			flatten(typ)
			holdsSecret := slices.ContainsFunc(fields, func(k keyed) bool { return k.f.Tag.Get("config") == "secret" })
			for _, k := range fields {
				p := strings.TrimPrefix(path+"."+k.name, ".")
				list, isTagged := k.f.Tag.Lookup(secretURLTag)
				switch {
				case isTagged:
					tagged = append(tagged, p)
					if k.f.Type.Kind() != reflect.String || inList {
						t.Errorf("%s is tagged %s but is not a string outside any list, which secretURLs reads", p, secretURLTag)
					}
					for _, name := range strings.Split(list, ",") {
						sf, ok := fieldByKey(typ, name)
						if !ok || sf.Tag.Get("config") != "secret" {
							t.Errorf("%s: %s %q names %q, which is not a field tagged config:\"secret\" of %s", p, secretURLTag, list, name, typ)
						}
					}
				case holdsSecret && strings.HasSuffix(strings.ToLower(k.name), "url") && k.f.Tag.Get("config") != "secret":
					// A URL that is a secret itself (store.url, credentials
					// inline) is redacted whole; see checkStoreUnchanged.
					t.Errorf("%s is a URL beside a secret in %s: tag it %s:\"<the secrets sent there>\", so a client cannot send them elsewhere unseen", p, typ, secretURLTag)
				}
				walk(k.f.Type, p, inList)
			}
		}
	}
	walk(reflect.TypeFor[config.Config](), "", false)
	slices.Sort(tagged)
	want := []string{"channels.discord.apiUrl", "channels.slack.apiUrl", "channels.telegram.apiUrl", "channels.telegram.webhook.url", "models.providers.*.baseUrl"}
	if !slices.Equal(tagged, want) {
		t.Errorf("tagged %v, want %v", tagged, want)
	}
}

func TestSecretURLsOfAConfiguration(t *testing.T) {
	cfg, err := config.Parse("config.yaml", []byte(secretURLConfig), secretURLLookup)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, u := range secretURLs(cfg) {
		var secrets []string
		for _, s := range u.secrets {
			secrets = append(secrets, dotted(s.keys)+"="+s.value)
		}
		got[dotted(u.keys)+"="+u.url] = secrets
	}
	want := map[string][]string{
		"channels.telegram.apiUrl=":                                      {"channels.telegram.botToken=123456:tg-env-token"},
		"channels.telegram.webhook.url=https://bot.example.com/telegram": {"channels.telegram.webhook.secret=wh_env_secret"},
		"channels.slack.apiUrl=":                                         {"channels.slack.botToken=xoxb-literal-slack-token", "channels.slack.appToken=xapp-env-app-token"},
		"channels.discord.apiUrl=":                                       {"channels.discord.token="},
		"models.providers.echo.baseUrl=":                                 {"models.providers.echo.apiKey="},
		"models.providers.openai.baseUrl=":                               {"models.providers.openai.apiKey=sk-env-openai-key"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("secretURLs =\n%v\nwant\n%v", got, want)
	}
	if secretURLs(nil) != nil {
		t.Errorf("secretURLs(nil) is not empty")
	}
}

func TestWrittenOut(t *testing.T) {
	doc := map[string]any{"a": map[string]any{
		"plain": "s3cret", "placeholder": config.Redacted, "spaced": " " + config.Redacted + " ",
		"ref": "${X}", "escaped": "$${X}", "number": uint64(12345), "null": nil, "map": map[string]any{},
	}}
	for _, tc := range []struct {
		key, want string
		ok        bool
	}{
		{"plain", "s3cret", true},
		{"plain", "other", false},
		{"placeholder", config.Redacted, false},
		{"spaced", " " + config.Redacted + " ", false},
		{"ref", "${X}", false},
		{"escaped", "$${X}", false},
		{"number", "12345", true},
		{"null", "", false},
		{"map", "", false},
		{"missing", "", false},
	} {
		if got := writtenOut(doc, []string{"a", tc.key}, tc.want); got != tc.ok {
			t.Errorf("writtenOut(a.%s, %q) = %v, want %v", tc.key, tc.want, got, tc.ok)
		}
	}
	if writtenOut("text", []string{"a"}, "text") || writtenOut(nil, []string{"a"}, "") {
		t.Errorf("writtenOut found a key in a scalar document")
	}
}

// envOnlyConfig holds no secret in its text: the token is a reference.
const envOnlyConfig = `gateway:
  port: 1234
  auth:
    token: ${SB_PASSWORD}
models:
  providers:
    echo:
      api: echo
agents:
  defaults:
    model: {primary: echo/echo}
`

// Finding 10 of issue 22, the config.patch/config.set half: a file holding
// a secret written in it at mode 0644 kept 0644 when config.patch wrote a
// rotated token into it. Such a file is now written for its owner only, and
// the result says so; a file whose secrets are all ${VAR} references keeps
// its mode.
func TestFinding10_ConfigPatchWritesSecretsPrivately(t *testing.T) {
	rotate := `{"gateway": {"auth": {"token": "rotated-literal-token-0123456789"}}}`
	port := `{"gateway": {"port": 2345}}`
	for _, tc := range []struct {
		name     string
		content  string
		mode     fs.FileMode
		patch    string // else config.set of the content with a comment
		wantMode fs.FileMode
		warned   bool
	}{
		{"patch rotates a token into a 0644 file", envOnlyConfig, 0o644, rotate, 0o600, true},
		{"patch of a 0644 file with a secret in it", serviceConfig, 0o644, port, 0o600, true},
		{"set of a 0644 file with a secret in it", serviceConfig, 0o644, "", 0o600, true},
		{"patch of a 0640 file with a secret in it", serviceConfig, 0o640, port, 0o600, true},
		{"a 0600 file stays 0600", serviceConfig, 0o600, rotate, 0o600, false},
		{"a 0400 file stays owner-only", serviceConfig, 0o400, port, 0o400, false},
		{"a file with references keeps 0644", envOnlyConfig, 0o644, port, 0o644, false},
		{"set of a file with references keeps 0640", envOnlyConfig, 0o640, "", 0o640, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc, path, _ := newTestService(t, tc.content)
			if err := os.Chmod(path, tc.mode); err != nil {
				t.Fatal(err)
			}
			var v any
			var err error
			if tc.patch != "" {
				v, err = svc.Patch(context.Background(), json.RawMessage(tc.patch), "")
			} else {
				v, err = svc.Set(context.Background(), tc.content+"# again\n", "")
			}
			if err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != tc.wantMode {
				t.Errorf("mode %04o, want %04o", fi.Mode().Perm(), tc.wantMode)
			}
			warnings := toJSON(t, v.(configWriteResult).Warnings)
			if warned := strings.Contains(warnings, "owner only (mode 0600"); warned != tc.warned {
				t.Errorf("warnings %s, want a warning: %v", warnings, tc.warned)
			}
			if tc.warned {
				assertNoSecrets(t, "the warning", warnings)
			}
		})
	}
}

// Issue 22, finding 10: a configuration file holding a secret written in
// it at mode 0644 got no warning; every local user could read the token.
// Loading it now warns, naming the file and what to do; a private file, or
// one whose secrets all come from the environment, does not.
func TestFinding10_ReadableConfigWithSecretsIsWarnedAbout(t *testing.T) {
	const base = `models:
  providers:
    echo: {api: echo}
agents:
  defaults:
    model: {primary: echo/echo}
gateway:
  auth: {mode: token, token: "%s"}
`
	for _, tt := range []struct {
		name  string
		token string
		mode  os.FileMode
		warn  bool
	}{
		{"inline secret readable by others", "s3cret-token-value", 0o644, true},
		{"inline secret readable by the group", "s3cret-token-value", 0o640, true},
		{"inline secret, private file", "s3cret-token-value", 0o600, false},
		{"secret from the environment", "${GW_TOKEN}", 0o644, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			writeFile(t, path, fmt.Sprintf(base, tt.token))
			if err := os.Chmod(path, tt.mode); err != nil {
				t.Fatal(err)
			}
			tc := newTestCLI(map[string]string{"GW_TOKEN": "from-the-environment"})
			if code := tc.run("config", "check", "--config", path); code != exitOK {
				t.Fatalf("config check: exit %d: %s", code, tc.err.String())
			}
			warned := strings.Contains(tc.err.String(), "holds a secret written in it and other users may read it") &&
				strings.Contains(tc.err.String(), "chmod 600 "+path)
			if warned != tt.warn {
				t.Errorf("warned %v, want %v: %s", warned, tt.warn, tc.err.String())
			}
			if strings.Contains(tc.err.String(), "s3cret-token-value") {
				t.Error("the warning shows the secret")
			}
		})
	}
}
