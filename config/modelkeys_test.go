package config

import (
	"strings"
	"testing"
)

// Issue 26, finding 5: which model keys a run needs, and that reading for
// management needs none.
func TestFinding5ModelKeyRules(t *testing.T) {
	providers := `models:
  providers:
    echo: {api: echo}
    cloud: {api: openai-completions, apiKey: "${SB_CLOUD_KEY:-}"}
    own: {api: openai-completions, baseUrl: "http://127.0.0.1:8000/v1", apiKey: "${SB_OWN_KEY}"}
    spare: {api: anthropic-messages, apiKey: "${SB_SPARE_KEY}"}
`
	for _, tt := range []struct {
		name, rest string
		want       []string // substrings of the problems, one a line; none: valid
	}{
		{"nothing uses them, but own's and spare's variables have no default",
			"agents: {defaults: {model: {primary: echo/echo}}}\n",
			[]string{"models.providers.own.apiKey: environment variable SB_OWN_KEY is not set; export it or write ${SB_OWN_KEY:-default}",
				"models.providers.spare.apiKey: environment variable SB_SPARE_KEY is not set; export it or write ${SB_SPARE_KEY:-default}"}},
		{"a cron job uses cloud",
			"agents: {defaults: {model: {primary: echo/echo}}}\ncron: {jobs: [{id: j, schedule: {kind: every, everyMs: 60000}, payload: {kind: agentTurn, message: hi, model: cloud/gpt-5}}]}\n",
			[]string{"models.providers.cloud.apiKey: SB_CLOUD_KEY is not set, and api.openai.com refuses requests without one; cron.jobs[0].payload.model uses this provider (cloud/gpt-5): export SB_CLOUD_KEY=<your key>",
				"models.providers.own.apiKey: environment variable SB_OWN_KEY is not set",
				"models.providers.spare.apiKey: environment variable SB_SPARE_KEY is not set"}},
		{"a fallback uses own, whose variable has no default",
			"agents: {defaults: {model: {primary: echo/echo, fallbacks: [own/llama]}}}\n",
			[]string{"models.providers.own.apiKey: SB_OWN_KEY is not set; agents.defaults.model.fallbacks[0] uses this provider (own/llama): export SB_OWN_KEY=<your key> before starting Switchboard (or write ${SB_OWN_KEY:-} if the server needs no key)",
				"models.providers.spare.apiKey: environment variable SB_SPARE_KEY is not set"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := providers + tt.rest
			_, err := Parse("test.yaml", []byte(src), env())
			var got []string
			if err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			if len(got) != len(tt.want) {
				t.Fatalf("problems:\n%s\nwant %d", strings.Join(got, "\n"), len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], w)
				}
			}
			// Managing the daemon needs none of the keys.
			if _, err := ParseFor("test.yaml", []byte(src), env(), ForManagement); err != nil {
				t.Errorf("ForManagement: %v", err)
			}
		})
	}
}

// A malformed reference in a model key is one problem, reported once.
func TestModelKeyMalformedReferenceOnce(t *testing.T) {
	src := "models:\n  providers:\n    a: {api: anthropic-messages, apiKey: \"${SB_KEY\"}\nagents: {defaults: {model: {primary: a/m}}}\n"
	for _, use := range []Use{ForRun, ForManagement} {
		_, err := ParseFor("test.yaml", []byte(src), env(), use)
		if err == nil || strings.Count(err.Error(), "unterminated") != 1 || strings.Count(err.Error(), "\n") != 0 {
			t.Errorf("use %d: %v; want the malformed reference once, alone", use, err)
		}
	}
}

func TestIsModelKeyPath(t *testing.T) {
	for path, want := range map[string]bool{
		"models.providers.anthropic.apiKey":        true,
		"models.providers.a.headers.apiKey":        false,
		"models.providers..apiKey":                 false,
		"channels.telegram.botToken":               false,
		"models.providers.anthropic.models[0].id":  false,
		"models.providers.anthropic.apiKeyBackup":  false,
		"models.providers.anthropic.models.apiKey": false,
	} {
		if got := isModelKeyPath(path); got != want {
			t.Errorf("isModelKeyPath(%q) = %v", path, got)
		}
	}
}
