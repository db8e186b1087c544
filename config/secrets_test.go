package config

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

// secretFiles are configuration files that write secrets in every way YAML
// allows. Each has the secret "s3cret-token-0123456789" at
// gateway.auth.token, written literally.
var secretFiles = []struct {
	name string
	src  string
}{
	{"plain", minimal + "gateway:\n  auth:\n    token: s3cret-token-0123456789 # the token\n"},
	{"double quoted with escapes", minimal + "gateway:\n  auth:\n    token: \"s3cret-token-\\x30123456789\"\n"},
	{"single quoted", minimal + "gateway:\n  auth:\n    token: 's3cret-token-0123456789'\n"},
	{"block literal", minimal + "gateway:\n  auth:\n    token: |-\n      s3cret-token-0123456789\n    mode: token\n"},
	{"folded", minimal + "gateway:\n  auth:\n    token: >-\n      s3cret-token-0123456789\n"},
	{"flow mapping", minimal + "gateway: {auth: {token: s3cret-token-0123456789, mode: token}, port: 1234}\n"},
	{"json", `{"models": {"providers": {"echo": {"api": "echo"}}}, "agents": {"defaults": {"model": {"primary": "echo/echo"}}}, "gateway": {"auth": {"token": "s3cret-token-0123456789"}}}`},
	{"anchor and alias", "x-secrets:\n  tok: &tok s3cret-token-0123456789\n" + minimal + "gateway:\n  auth:\n    token: *tok\n"},
	{"merge key", "x-auth: &auth\n  token: s3cret-token-0123456789\n" + minimal + "gateway:\n  auth:\n    <<: *auth\n    mode: token\n"},
	{"tag", minimal + "gateway:\n  auth:\n    token: !!str s3cret-token-0123456789\n"},
	{"crlf", strings.ReplaceAll(minimal+"gateway:\n  auth:\n    token: \"s3cret-token-0123456789\"\n", "\n", "\r\n")},
	{"multibyte before", minimal + "gateway: {controlUi: {allowedOrigins: []}, auth: {mode: token, token: \"s3cret-token-0123456789\"}} # élan 日本\n"},
	{"comment repeats it", "# old token: s3cret-token-0123456789\n" + minimal + "gateway:\n  auth:\n    token: s3cret-token-0123456789\n"},
	{"env default", minimal + "gateway:\n  auth:\n    token: ${SB_UNSET:-s3cret-token-0123456789}\n"},
	{"provider key and password", strings.Replace(minimal, "api: echo", "api: echo\n      apiKey: sk-provider-key-987654", 1) +
		"gateway:\n  auth:\n    token: s3cret-token-0123456789\n    password: \"pass-word-5555\"\n"},
}

const fileSecret = "s3cret-token-0123456789"

func TestRedactSourceHidesEverySecret(t *testing.T) {
	for _, tt := range secretFiles {
		t.Run(tt.name, func(t *testing.T) {
			out, err := RedactSource([]byte(tt.src), env())
			if err != nil {
				t.Fatalf("RedactSource: %v", err)
			}
			for _, secret := range []string{fileSecret, "sk-provider-key-987654", "pass-word-5555"} {
				if strings.Contains(string(out), secret) {
					t.Fatalf("%q still in:\n%s", secret, out)
				}
			}
			cfg, err := Parse("redacted.yaml", out, env())
			if err != nil {
				t.Fatalf("redacted text does not parse: %v\n%s", err, out)
			}
			if cfg.Gateway.Auth.Token != Redacted {
				t.Errorf("token = %q, want %q", cfg.Gateway.Auth.Token, Redacted)
			}
		})
	}
}

func TestRedactSourceKeepsTheRest(t *testing.T) {
	src := "# Switchboard\n" + minimal + `gateway:
  port: 1234 # the port
  auth:
    token: ${SB_TOKEN}
    password: ${SB_PASSWORD:-}
`
	out, err := RedactSource([]byte(src), env("SB_TOKEN", "expanded-token-value-1234"))
	if err != nil {
		t.Fatal(err)
	}
	// A secret written as a reference is not in the file: it stays, as does
	// everything else.
	if string(out) != src {
		t.Errorf("RedactSource changed a file without literal secrets:\n%s", out)
	}

	src += "# expanded-token-value-1234 was the token\n"
	out, err = RedactSource([]byte(src), env("SB_TOKEN", "expanded-token-value-1234"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "expanded-token-value-1234") || !strings.Contains(string(out), "token: ${SB_TOKEN}") {
		t.Errorf("the expanded value must go, the reference stay:\n%s", out)
	}
}

func TestRedactSourceOfInvalidYAMLFails(t *testing.T) {
	var errs Errors
	if _, err := RedactSource([]byte("gateway: {auth: {token: \"abc"), env()); !errors.As(err, &errs) {
		t.Fatalf("err = %v, want Errors", err)
	}
}

func TestRestoreSecretsUndoesRedaction(t *testing.T) {
	for _, tt := range secretFiles {
		t.Run(tt.name, func(t *testing.T) {
			redacted, err := RedactSource([]byte(tt.src), env())
			if err != nil {
				t.Fatal(err)
			}
			restored, err := RestoreSecrets("new.yaml", redacted, []byte(tt.src))
			if tt.name == "comment repeats it" {
				// The comment keeps its placeholder, which is harmless.
				if err != nil {
					t.Fatalf("RestoreSecrets: %v", err)
				}
			} else if err != nil {
				t.Fatalf("RestoreSecrets: %v\n%s", err, redacted)
			}
			want := mustParse(t, tt.src, env())
			got, err := Parse("restored.yaml", restored, env())
			if err != nil {
				t.Fatalf("restored text does not parse: %v\n%s", err, restored)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("restored config differs:\n%s", restored)
			}
		})
	}
}

func TestRestoreSecretsKeepsReferences(t *testing.T) {
	old := minimal + "gateway:\n  auth:\n    token: ${SB_TOKEN}\n"
	// A client editing the parsed configuration sees the expanded token
	// redacted, and sends the placeholder back, as JSON.
	next := `{"models": {"providers": {"echo": {"api": "echo"}}}, "agents": {"defaults": {"model": {"primary": "echo/echo"}}}, "gateway": {"port": 4321, "auth": {"token": "__REDACTED__"}}}`
	out, err := RestoreSecrets("new.json", []byte(next), []byte(old))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"token": "${SB_TOKEN}"`) || !json.Valid(out) {
		t.Errorf("restored:\n%s", out)
	}
}

func TestRestoreSecretsRefusesPlaceholdersItCannotFill(t *testing.T) {
	old := minimal + "gateway:\n  auth:\n    token: " + fileSecret + "\n"
	tests := []struct {
		name, next, want string
	}{
		{"no old value", minimal + "gateway:\n  auth:\n    password: __REDACTED__\n",
			"new.yaml:12:15: gateway.auth.password: __REDACTED__ stands for a secret, but the current file has no value here to keep"},
		{"inside a value", strings.Replace(minimal, "api: echo", "api: echo\n      headers: {Authorization: \"Bearer __REDACTED__\"}", 1),
			"new.yaml:6:32: models.providers.echo.headers.Authorization: contains the placeholder __REDACTED__"},
		{"not a secret", minimal + "gateway:\n  customBindHost: __REDACTED__\n",
			"new.yaml:11:19: gateway.customBindHost: contains the placeholder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := RestoreSecrets("new.yaml", []byte(tt.next), []byte(old))
			var errs Errors
			if !errors.As(err, &errs) || len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), tt.want) {
				t.Fatalf("err = %v\nwant one starting %q", err, tt.want)
			}
			if strings.Contains(err.Error(), fileSecret) {
				t.Errorf("the error shows the secret: %v", err)
			}
		})
	}
}

func TestSecretValuesAndScrub(t *testing.T) {
	src := minimal + "gateway:\n  auth:\n    token: ${SB_TOKEN}\n    password: literal-password-1\n"
	got := SecretValues([]byte(src), env("SB_TOKEN", "from-the-environment"))
	want := []string{"from-the-environment", "literal-password-1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SecretValues = %q, want %q", got, want)
	}
	msg := Scrub("token from-the-environment, password literal-password-1, port 1234", append(got, "123"))
	if msg != "token __REDACTED__, password __REDACTED__, port 1234" {
		t.Errorf("Scrub = %q", msg)
	}
}

func TestRedactedJSON(t *testing.T) {
	src := strings.Replace(minimal, "api: echo", "api: echo\n      apiKey: ${SB_KEY}", 1) +
		"gateway:\n  port: 1234\n  auth:\n    token: literal-token-value-1\n"
	cfg := mustParse(t, src, env("SB_KEY", "sk-from-env-value"))
	b, err := cfg.RedactedJSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"literal-token-value-1", "sk-from-env-value"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("%q in %s", secret, b)
		}
	}
	var back Config
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Gateway.Auth.Token != Redacted || back.Models.Providers["echo"].APIKey != Redacted ||
		back.Gateway.Auth.Password != "" || back.Gateway.Port != 1234 {
		t.Errorf("redacted config: %s", b)
	}
}

func TestEnvOnly(t *testing.T) {
	for s, want := range map[string]bool{
		"${A}": true, "${A}${B_2}": true, "${A:-}": true,
		"": false, "x": false, "${A:-x}": false, "pre${A}": false, "$${A}": false, "${A": false, "${1A}": false,
	} {
		if got := envOnly(s); got != want {
			t.Errorf("envOnly(%q) = %v, want %v", s, got, want)
		}
	}
}

// FuzzRedactSource checks, for any file Parse accepts, that the redacted
// text holds no secret and that RestoreSecrets gives back the same
// configuration.
func FuzzRedactSource(f *testing.F) {
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
		out, err := RedactSource([]byte(src), lookup)
		if err != nil {
			return // withheld: safe
		}
		for _, s := range SecretValues([]byte(src), lookup) {
			if len(s) >= minSecretLen && strings.Contains(string(out), s) {
				t.Fatalf("secret %q left in:\n%s", s, out)
			}
		}
		restored, err := RestoreSecrets("f.yaml", out, []byte(src))
		if err != nil {
			return // a secret also written elsewhere; the write is refused
		}
		got, err := Parse("f.yaml", restored, lookup)
		if err != nil {
			t.Fatalf("restored text does not parse: %v\nsource:\n%s\nrestored:\n%s", err, src, restored)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("restored config differs\nsource:\n%s\nrestored:\n%s", src, restored)
		}
	})
}
