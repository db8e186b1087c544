package config

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestMergePatch(t *testing.T) {
	const base = `# comment
stateDir: /srv/sb
gateway:
  port: 1234
  auth:
    token: ${SB_TOKEN}
models:
  providers:
    echo: {api: echo}
    old:
      api: openai-completions
      baseUrl: http://127.0.0.1:1/v1
agents:
  defaults:
    model: {primary: echo/echo, fallbacks: [old/a]}
`
	tests := []struct {
		name, patch, want string
	}{
		{"empty patch rewrites the same document", `{}`, `stateDir: /srv/sb
gateway:
  port: 1234
  auth:
    token: "${SB_TOKEN}"
models:
  providers:
    echo:
      api: echo
    old:
      api: openai-completions
      baseUrl: "http://127.0.0.1:1/v1"
agents:
  defaults:
    model:
      primary: echo/echo
      fallbacks:
        - old/a
`},
		{"set, add, delete, replace a list", `{"gateway": {"port": 4321, "bind": "lan"}, "models": {"providers": {"old": null}}, "agents": {"defaults": {"model": {"fallbacks": []}}}}`, `stateDir: /srv/sb
gateway:
  port: 4321
  auth:
    token: "${SB_TOKEN}"
  bind: lan
models:
  providers:
    echo:
      api: echo
agents:
  defaults:
    model:
      primary: echo/echo
      fallbacks: []
`},
		{"object replaces a scalar, nulls inside are dropped", `{"stateDir": {"a": 1, "b": null}, "session": {"x": [{"k": null}, "true", 1.10]}}`, `stateDir:
  a: 1
gateway:
  port: 1234
  auth:
    token: "${SB_TOKEN}"
models:
  providers:
    echo:
      api: echo
    old:
      api: openai-completions
      baseUrl: "http://127.0.0.1:1/v1"
agents:
  defaults:
    model:
      primary: echo/echo
      fallbacks:
        - old/a
session:
  x:
    - k: null
    - "true"
    - 1.10
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MergePatch("c.yaml", []byte(base), []byte(tt.patch))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestMergePatchKeepsEveryValue(t *testing.T) {
	example, err := os.ReadFile("../config.yaml.example")
	if err != nil {
		t.Fatal(err)
	}
	const exotic = `x-base: &base
  api: openai-completions
  headers: {X-Id: "0123", X-Flag: "yes"}
models:
  providers:
    echo: {api: echo}
    a:
      <<: *base
      baseUrl: 'http://h:1/v1'
      models:
        - id: 1.10
          contextWindow: 0x10
          cost: {input: 1000.5, output: .5}
        - id: "multi\nline\ttab"
          maxTokens: ${SB_MAX:-12}
agents:
  defaults:
    model:
      primary: echo/echo
      fallbacks: [a/x, 'a/y']
session:
  dmScope: per-peer
`
	for name, src := range map[string]string{"example": string(example), "exotic": exotic} {
		t.Run(name, func(t *testing.T) {
			want := mustParse(t, src, env())
			out, err := MergePatch("c.yaml", []byte(src), []byte(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			got, err := Parse("c.yaml", out, env())
			if err != nil {
				t.Fatalf("patched file does not parse: %v\n%s", err, out)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("config changed by an empty patch:\n%s", out)
			}
		})
	}
}

func TestMergePatchErrors(t *testing.T) {
	tests := []struct {
		name, file, patch, want string
	}{
		{"array patch", minimal, `[1]`, "the patch must be a JSON object (RFC 7396), got an array"},
		{"null patch", minimal, `null`, "got null"},
		{"number patch", minimal, `12`, "got a number"},
		{"string patch", minimal, `"{}"`, "got a string"},
		{"bad JSON", minimal, `{"a":`, "the patch is not valid JSON"},
		{"two values", minimal, `{} {}`, "the patch is not valid JSON"},
		{"bad YAML", "gateway: [", `{}`, `c.yaml:1:10: the list opened with "[" here is never closed`},
		{"not a mapping", "- a\n- b\n", `{}`, "c.yaml:1:1: the file is not a mapping of keys to values"},
		{"dangling alias", "gateway: *nope\n", `{}`, "gateway: alias *nope refers to no anchor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := MergePatch("c.yaml", []byte(tt.file), []byte(tt.patch))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
	// Errors are the file's problems; the patch's are not.
	var errs Errors
	if _, err := MergePatch("c.yaml", []byte("gateway: ["), []byte(`{}`)); !errors.As(err, &errs) {
		t.Errorf("a problem of the file should be Errors, got %T", err)
	}
	if _, err := MergePatch("c.yaml", []byte(minimal), []byte(`{"a":`)); errors.As(err, &errs) {
		t.Errorf("a problem of the patch should not be Errors")
	}
}

func TestMergePatchReadsJSON5(t *testing.T) {
	// OpenClaw's clients write JSON5: unquoted keys, single quotes.
	got, err := MergePatch("c.yaml", []byte(minimal), []byte(`{gateway: {port: 4321, bind: 'lan'}, agents: {defaults: {model: {primary: "echo/echo"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	cfg := mustParse(t, string(got), env())
	if cfg.Gateway.Port != 4321 || cfg.Gateway.Bind != "lan" {
		t.Errorf("patched:\n%s", got)
	}
}

func TestMergePatchOfEmptyFile(t *testing.T) {
	got, err := MergePatch("c.yaml", nil, []byte(`{"agents": {"defaults": {"model": {"primary": "echo/echo"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := "agents:\n  defaults:\n    model:\n      primary: echo/echo\n"; string(got) != want {
		t.Errorf("got:\n%s", got)
	}
	got, err = MergePatch("c.yaml", []byte("a: 1\n"), []byte(`{"a": null}`))
	if err != nil || string(got) != "{}\n" {
		t.Errorf("got %q, %v", got, err)
	}
}

// TestFormatStringReadsBack checks that every string written plain or
// quoted reads back as itself.
func TestFormatStringReadsBack(t *testing.T) {
	for _, s := range []string{
		"", "a", "echo/echo", "claude-opus-4-6", "~/.switchboard", "123", "0x1F", "1e3", ".inf", "true", "True",
		"yes", "n", "null", "~", "a: b", "#x", "- x", "*a", "&a", "!x", "@x", "'q", `"q`, "x\ty", "a #b",
		"trailing ", " lead", "multi\nline\n", "<<", "${X}", "${X:-y}", "$${X}", "é日本", "\u2028", "a\\b", "%x", "`x", "{x}", "[x]",
	} {
		out := emitYAML(&docMap{entries: []docEntry{{key: s, val: s}}})
		d, body, errs := parseDocument("s.yaml", out)
		if errs != nil {
			t.Errorf("%q: %s does not parse: %v", s, out, errs)
			continue
		}
		m, ok := d.doc(body, "").(*docMap)
		if !ok || len(m.entries) != 1 || m.entries[0].key != s || m.entries[0].val != s {
			t.Errorf("%q: written as %q, read back as %#v", s, out, m)
		}
	}
}

// FuzzMergePatch checks, for any file Parse accepts, that an empty patch
// rewrites it into a file with the same configuration.
func FuzzMergePatch(f *testing.F) {
	for _, tt := range secretFiles {
		f.Add(tt.src)
	}
	if b, err := os.ReadFile("../config.yaml.example"); err == nil {
		f.Add(string(b))
	}
	lookup := env("SB_TOKEN", "fuzz-env-token-value")
	f.Fuzz(func(t *testing.T, src string) {
		want, err := Parse("f.yaml", []byte(src), lookup)
		if err != nil {
			return
		}
		out, err := MergePatch("f.yaml", []byte(src), []byte(`{}`))
		if err != nil {
			t.Fatalf("MergePatch of a valid file: %v\n%s", err, src)
		}
		got, err := Parse("f.yaml", out, lookup)
		if err != nil {
			t.Fatalf("rewritten file does not parse: %v\nsource:\n%s\nrewritten:\n%s", err, src, out)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("config changed\nsource:\n%s\nrewritten:\n%s", src, out)
		}
	})
}
