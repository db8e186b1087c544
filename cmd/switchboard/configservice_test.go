package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/config"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// The secrets of serviceConfig: two written in the file, one from the
// environment.
const (
	tokenSecret    = "tok-literal-secret-0123456789"
	apiKeySecret   = "sk-literal-provider-key-42"
	passwordSecret = "env-password-secret-777"
)

const serviceConfig = `# Switchboard test configuration
gateway:
  port: 1234 # the port
  auth:
    token: ` + tokenSecret + `
    password: ${SB_PASSWORD}
models:
  providers:
    echo:
      api: echo
      apiKey: "` + apiKeySecret + `"
    old:
      api: openai-completions
agents:
  defaults:
    model: {primary: echo/echo}
`

var serviceEnv = map[string]string{"SB_PASSWORD": passwordSecret}

func serviceLookup(k string) (string, bool) { v, ok := serviceEnv[k]; return v, ok }

// applyCall records one call of the apply callback.
type applyCall struct{ old, new *config.Config }

// newTestService writes content (unless empty) to config.yaml in a new
// directory and serves it; the returned slice collects apply calls.
func newTestService(t *testing.T, content string) (*configService, string, *[]applyCall) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if content != "" {
		writeFile(t, path, content)
	}
	var calls []applyCall
	var mu sync.Mutex
	svc := newConfigService(path, serviceLookup, func(old, new *config.Config) ([]string, []string) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, applyCall{old, new})
		return []string{"messages.queue"}, []string{"gateway.port"}
	})
	return svc, path, &calls
}

func toJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func assertNoSecrets(t *testing.T, what string, s string) {
	t.Helper()
	for _, secret := range []string{tokenSecret, apiKeySecret, passwordSecret} {
		if strings.Contains(s, secret) {
			t.Errorf("%s contains the secret %q:\n%s", what, secret, s)
		}
	}
}

func errorShape(t *testing.T, err error) *protocol.ErrorShape {
	t.Helper()
	var shape *protocol.ErrorShape
	if !errors.As(err, &shape) {
		t.Fatalf("err = %v (%T), want a *protocol.ErrorShape", err, err)
	}
	return shape
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func getSnapshot(t *testing.T, svc *configService) configSnapshot {
	t.Helper()
	v, err := svc.Get(context.Background())
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	return v.(configSnapshot)
}

func TestConfigGetRedactsSecrets(t *testing.T) {
	svc, path, _ := newTestService(t, serviceConfig)
	v, err := svc.Get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := toJSON(t, v)
	assertNoSecrets(t, "config.get", out)

	var got struct {
		Path   string  `json:"path"`
		Exists bool    `json:"exists"`
		Raw    *string `json:"raw"`
		Config struct {
			Gateway struct {
				Port int `json:"port"`
				Auth struct {
					Token    string `json:"token"`
					Password string `json:"password"`
				} `json:"auth"`
			} `json:"gateway"`
		} `json:"config"`
		Valid  bool              `json:"valid"`
		Issues []json.RawMessage `json:"issues"`
		Hash   string            `json:"hash"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Path != path || !got.Exists || !got.Valid || got.Issues == nil || len(got.Issues) != 0 || got.Hash != hashOf([]byte(serviceConfig)) {
		t.Errorf("snapshot: %s", out)
	}
	if got.Config.Gateway.Port != 1234 || got.Config.Gateway.Auth.Token != config.Redacted || got.Config.Gateway.Auth.Password != config.Redacted {
		t.Errorf("config: %s", out)
	}
	// The text keeps its comments and the reference to the environment.
	want := strings.NewReplacer(tokenSecret, `"__REDACTED__"`, `"`+apiKeySecret+`"`, `"__REDACTED__"`).Replace(serviceConfig)
	if got.Raw == nil || *got.Raw != want {
		t.Errorf("raw:\n%v\nwant:\n%s", got.Raw, want)
	}
}

func TestConfigGetOfInvalidAndMissingFiles(t *testing.T) {
	invalid := strings.Replace(serviceConfig, "  port: 1234 # the port\n", "  port: 99999\n  tokn: "+tokenSecret+"x\n", 1)
	svc, _, _ := newTestService(t, invalid)
	snap := getSnapshot(t, svc)
	out := toJSON(t, snap)
	assertNoSecrets(t, "config.get of an invalid file", out)
	if snap.Valid || snap.Raw != nil || string(snap.Config) != "null" || len(snap.Issues) != 2 || len(snap.Warnings) != 1 || snap.Hash != hashOf([]byte(invalid)) {
		t.Fatalf("snapshot: %s", out)
	}
	if is := snap.Issues[0]; is.Path != "gateway.port" || is.Line != 3 || !strings.Contains(is.Message, "must be at most 65535") {
		t.Errorf("first issue: %+v", is)
	}

	svc, _, _ = newTestService(t, "")
	snap = getSnapshot(t, svc)
	if snap.Exists || snap.Valid || snap.Raw != nil || snap.Hash != hashOf(nil) || len(snap.Warnings) != 0 {
		t.Errorf("missing file: %s", toJSON(t, snap))
	}
}

func TestConfigSchema(t *testing.T) {
	svc, _, _ := newTestService(t, serviceConfig)
	v, err := svc.Schema(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Schema  map[string]any `json:"schema"`
		Version string         `json:"version"`
	}
	if err := json.Unmarshal([]byte(toJSON(t, v)), &got); err != nil {
		t.Fatal(err)
	}
	if got.Schema["$schema"] != config.SchemaURI || got.Version != version {
		t.Errorf("schema %v, version %q", got.Schema["$schema"], got.Version)
	}
}

func TestConfigSetRejectsInvalidWithoutWriting(t *testing.T) {
	svc, path, calls := newTestService(t, serviceConfig)
	bad := strings.Replace(serviceConfig, "port: 1234", "port: nope", 1) + "channelz: {}\n"
	_, err := svc.Set(context.Background(), bad, "")
	shape := errorShape(t, err)
	if shape.Code != protocol.CodeInvalidRequest || !strings.HasPrefix(shape.Message, "invalid config: ") ||
		!strings.Contains(shape.Message, "gateway.port: line 3, column 9: expected a whole number") ||
		!strings.Contains(shape.Message, `channelz: line 17, column 1: unknown key "channelz"`) {
		t.Errorf("error: %+v", shape)
	}
	details := toJSON(t, shape.Details)
	if !strings.Contains(details, `"issues":[{"path":"gateway.port"`) {
		t.Errorf("details: %s", details)
	}
	assertNoSecrets(t, "the error", toJSON(t, shape))
	if got := readFile(t, path); got != serviceConfig {
		t.Errorf("the file changed:\n%s", got)
	}
	if len(*calls) != 0 {
		t.Errorf("apply was called")
	}
}

func TestConfigErrorsHideSecrets(t *testing.T) {
	svc, _, _ := newTestService(t, serviceConfig)
	// A secret from the environment, used where an error would quote it.
	bad := strings.Replace(serviceConfig, "  port: 1234 # the port\n", "  bind: ${SB_PASSWORD}\n", 1)
	_, err := svc.Set(context.Background(), bad, "")
	shape := errorShape(t, err)
	if !strings.Contains(shape.Message, "gateway.bind: line 3, column 9: must be one of loopback, lan, custom") {
		t.Errorf("error: %s", shape.Message)
	}
	assertNoSecrets(t, "the error", toJSON(t, shape))
}

func TestConfigSetChecksTheHash(t *testing.T) {
	svc, path, calls := newTestService(t, serviceConfig)
	hash := getSnapshot(t, svc).Hash
	edited := strings.Replace(serviceConfig, "port: 1234", "port: 2345", 1)

	// Someone else writes the file after it was read.
	writeFile(t, path, serviceConfig+"# changed\n")
	_, err := svc.Set(context.Background(), edited, hash)
	shape := errorShape(t, err)
	if shape.Code != protocol.CodeInvalidRequest || shape.Message != "config changed since it was read; reload and retry" ||
		toJSON(t, shape.Details) != `{"code":"CONFIG_HASH_MISMATCH"}` {
		t.Errorf("error: %+v", shape)
	}
	if readFile(t, path) != serviceConfig+"# changed\n" || len(*calls) != 0 {
		t.Fatalf("a mismatched write went through")
	}

	v, err := svc.Set(context.Background(), edited, getSnapshot(t, svc).Hash)
	if err != nil {
		t.Fatalf("Set with the current hash: %v", err)
	}
	res := v.(configWriteResult)
	if readFile(t, path) != edited || res.Hash != hashOf([]byte(edited)) || !res.OK || res.Path != path {
		t.Errorf("result %s, file:\n%s", toJSON(t, res), readFile(t, path))
	}
	// An empty baseHash skips the check.
	if _, err := svc.Set(context.Background(), serviceConfig, ""); err != nil {
		t.Errorf("Set without a hash: %v", err)
	}
}

func TestConfigSetCallsApply(t *testing.T) {
	svc, _, calls := newTestService(t, serviceConfig)
	v, err := svc.Set(context.Background(), strings.Replace(serviceConfig, "port: 1234", "port: 2345", 1), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(*calls) != 1 {
		t.Fatalf("apply called %d times", len(*calls))
	}
	c := (*calls)[0]
	if c.old == nil || c.old.Gateway.Port != 1234 || c.new.Gateway.Port != 2345 || c.new.Gateway.Auth.Token != tokenSecret {
		t.Errorf("apply got old %+v, new %+v", c.old, c.new)
	}
	out := toJSON(t, v)
	if !strings.Contains(out, `"applied":["messages.queue"],"restartRequired":["gateway.port"]`) {
		t.Errorf("result: %s", out)
	}
	assertNoSecrets(t, "config.set's result", out)
}

func TestConfigSetKeepsRedactedSecrets(t *testing.T) {
	svc, path, _ := newTestService(t, serviceConfig)
	snap := getSnapshot(t, svc)

	// Edit the redacted text and write it back.
	edited := strings.Replace(*snap.Raw, "port: 1234", "port: 2345", 1)
	if _, err := svc.Set(context.Background(), edited, snap.Hash); err != nil {
		t.Fatalf("Set: %v", err)
	}
	want := strings.Replace(serviceConfig, "port: 1234", "port: 2345", 1)
	want = strings.Replace(want, "token: "+tokenSecret, `token: "`+tokenSecret+`"`, 1)
	if got := readFile(t, path); got != want {
		t.Errorf("file:\n%s\nwant:\n%s", got, want)
	}

	// Write the redacted parsed configuration back, as JSON.
	snap = getSnapshot(t, svc)
	if _, err := svc.Set(context.Background(), string(snap.Config), snap.Hash); err != nil {
		t.Fatalf("Set of the parsed config: %v", err)
	}
	cfg, err := config.Load(path, serviceLookup)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Gateway.Auth.Token != tokenSecret || cfg.Models.Providers["echo"].APIKey != apiKeySecret || cfg.Gateway.Auth.Password != passwordSecret {
		t.Errorf("secrets lost: %+v %+v", cfg.Gateway.Auth, cfg.Models.Providers["echo"])
	}
	if !strings.Contains(readFile(t, path), `"password":"${SB_PASSWORD}"`) {
		t.Errorf("the reference to the environment was not kept:\n%s", readFile(t, path))
	}

	// The placeholder where there is no secret to keep is refused.
	_, err = svc.Set(context.Background(), strings.Replace(serviceConfig, "api: openai-completions", "api: openai-completions\n      apiKey: __REDACTED__", 1), "")
	if shape := errorShape(t, err); !strings.Contains(shape.Message, "models.providers.old.apiKey: line 14, column 15: __REDACTED__ stands for a secret, but the current file has no value here to keep") {
		t.Errorf("error: %s", shape.Message)
	}
}

func TestConfigPatch(t *testing.T) {
	svc, path, calls := newTestService(t, serviceConfig)
	hash := getSnapshot(t, svc).Hash
	v, err := svc.Patch(context.Background(), json.RawMessage(`{"gateway": {"port": 4321, "auth": {"token": "__REDACTED__"}}, "models": {"providers": {"old": null}}}`), hash)
	if err != nil {
		t.Fatalf("Patch: %v", err)
	}
	cfg, err := config.Load(path, serviceLookup)
	if err != nil {
		t.Fatalf("patched file: %v\n%s", err, readFile(t, path))
	}
	if cfg.Gateway.Port != 4321 || cfg.Gateway.Auth.Token != tokenSecret || cfg.Gateway.Auth.Password != passwordSecret {
		t.Errorf("patched gateway: %+v", cfg.Gateway)
	}
	if _, ok := cfg.Models.Providers["old"]; ok || cfg.Models.Providers["echo"].APIKey != apiKeySecret {
		t.Errorf("patched providers: %+v", cfg.Models.Providers)
	}
	if res := v.(configWriteResult); res.Hash != hashOf([]byte(readFile(t, path))) || len(*calls) != 1 {
		t.Errorf("result %s, %d apply calls", toJSON(t, res), len(*calls))
	}
	assertNoSecrets(t, "config.patch's result", toJSON(t, v))

	// The hash is checked.
	_, err = svc.Patch(context.Background(), json.RawMessage(`{"gateway": {"port": 1}}`), hash)
	if shape := errorShape(t, err); toJSON(t, shape.Details) != `{"code":"CONFIG_HASH_MISMATCH"}` {
		t.Errorf("stale patch: %+v", shape)
	}
	// The result is validated.
	before := readFile(t, path)
	_, err = svc.Patch(context.Background(), json.RawMessage(`{"gateway": {"port": "x"}}`), "")
	if shape := errorShape(t, err); !strings.Contains(shape.Message, "invalid config: gateway.port") {
		t.Errorf("invalid patch: %+v", shape)
	}
	if readFile(t, path) != before {
		t.Errorf("an invalid patch was written")
	}
}

func TestConfigPatchMustBeAnObject(t *testing.T) {
	svc, path, _ := newTestService(t, serviceConfig)
	for _, patch := range []string{`[{"gateway": null}]`, `"x"`, `null`, ``, `{"gateway":`} {
		_, err := svc.Patch(context.Background(), json.RawMessage(patch), "")
		if shape := errorShape(t, err); shape.Code != protocol.CodeInvalidRequest || !strings.Contains(shape.Message, "JSON") {
			t.Errorf("%q: %+v", patch, shape)
		}
	}
	if readFile(t, path) != serviceConfig {
		t.Errorf("the file changed")
	}
}

func TestConfigWriteIsAtomicAndKeepsTheMode(t *testing.T) {
	// A file with secrets written in it is made private instead
	// (TestFinding10_ConfigPatchWritesSecretsPrivately).
	svc, path, _ := newTestService(t, envOnlyConfig)
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Set(context.Background(), envOnlyConfig+"# again\n", ""); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "config.yaml" {
		t.Errorf("directory holds %v, want only config.yaml", entries)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, %v; want 0640 kept", fi.Mode(), err)
	}

	// A new file is private; a symbolic link is followed.
	svc, path, _ = newTestService(t, "")
	if _, err := svc.Set(context.Background(), serviceConfig, ""); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("new file mode %v, %v; want 0600", fi.Mode(), err)
	}
	link := filepath.Join(t.TempDir(), "link.yaml")
	if err := os.Symlink(path, link); err != nil {
		t.Skip("no symbolic links:", err)
	}
	svc = newConfigService(link, serviceLookup, nil)
	v, err := svc.Set(context.Background(), strings.Replace(serviceConfig, "port: 1234", "port: 2345", 1), "")
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 || !strings.Contains(readFile(t, path), "port: 2345") {
		t.Errorf("the link was replaced or its target not written")
	}
	// Without an apply callback every changed section needs a restart.
	if res := v.(configWriteResult); toJSON(t, res.RestartRequired) != `["gateway"]` || toJSON(t, res.Applied) != `[]` {
		t.Errorf("result: %s", toJSON(t, res))
	}
}

func TestConfigWritesAreSerialized(t *testing.T) {
	svc, path, calls := newTestService(t, serviceConfig)
	hash := getSnapshot(t, svc).Hash
	const writers = 8
	errs := make(chan error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := svc.Patch(context.Background(), json.RawMessage(`{"gateway": {"port": `+itoa(2000+i)+`}}`), hash)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	ok := 0
	for err := range errs {
		if err == nil {
			ok++
		} else if shape := errorShape(t, err); toJSON(t, shape.Details) != `{"code":"CONFIG_HASH_MISMATCH"}` {
			t.Errorf("error: %+v", shape)
		}
	}
	if ok != 1 || len(*calls) != 1 {
		t.Errorf("%d writes succeeded and apply ran %d times from one base hash; want 1", ok, len(*calls))
	}
	if _, err := config.Load(path, serviceLookup); err != nil {
		t.Errorf("file after concurrent writes: %v", err)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }
