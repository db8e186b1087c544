package config

import (
	"strings"
	"testing"
)

// A secret shared by two surfaces (matrix row 11: hook token = gateway
// token) is refused at load, naming both keys; the same API key on two
// model providers is fine.
func TestSecretReuseIsRefused(t *testing.T) {
	env := func(k string) (string, bool) {
		return map[string]string{"SHARED": "s3cret-value-0123456789", "KEY": "sk-shared-key-0123456789"}[k], true
	}
	es := parseErrors(t, `gateway:
  auth: {token: "${SHARED}"}
models:
  providers:
    a: {api: openai-completions, baseUrl: "https://a.example/v1", apiKey: "${KEY}", models: [{id: m}]}
    b: {api: openai-completions, baseUrl: "https://b.example/v1", apiKey: "${KEY}", models: [{id: m}]}
agents:
  defaults: {model: {primary: a/m}}
channels:
  telegram:
    enabled: true
    botToken: "123:abc"
    webhook: {url: "https://bot.example/tg", secret: "${SHARED}"}
`, env)
	got := strings.Join(errorLines(es), "\n")
	if !strings.Contains(got, "channels.telegram.webhook.secret and gateway.auth.token hold the same secret") {
		t.Fatalf("errors:\n%s", got)
	}
	if strings.Contains(got, "models.providers") {
		t.Fatalf("one key on two providers was refused:\n%s", got)
	}
	if strings.Contains(got, "s3cret-value") {
		t.Fatalf("the error shows the secret:\n%s", got)
	}
}
