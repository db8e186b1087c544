package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard"
)

// Issue 26, finding 2: `go install` users had no way in. `switchboard run`
// without a configuration said to copy config.yaml.example, a file the
// binary does not ship. Now run points at `switchboard init`, which writes a
// starter configuration and the state directory from nothing, and
// `switchboard config example` prints the example the binary carries.
func TestFinding2InitFromNothing(t *testing.T) {
	home := t.TempDir()
	withHome := func(tc *testCLI) *testCLI { tc.home = home; return tc }

	tc := withHome(newTestCLI(nil))
	if code := tc.run("run"); code != exitUsage || !strings.Contains(tc.err.String(), "switchboard init") || strings.Contains(tc.err.String(), "copy config.yaml.example") {
		t.Fatalf("run without a configuration: exit %d, stderr %q; want it to name switchboard init", code, tc.err.String())
	}

	// No key, no terminal: the echo model, and the user is told what to edit.
	tc = withHome(newTestCLI(nil))
	if code := tc.run("init"); code != exitOK {
		t.Fatalf("init: exit %d, stderr %s", code, tc.err.String())
	}
	path := filepath.Join(home, ".switchboard", "config.yaml")
	out := tc.out.String()
	for _, want := range []string{"Wrote " + path, "model echo/echo", "echo model", "export a key", "Next: switchboard run\n", "signs this machine's browser in once"} {
		if !strings.Contains(out, want) {
			t.Errorf("init's output lacks %q:\n%s", want, out)
		}
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("config file: %v, mode %v; want mode 0600", err, fi)
	}
	if fi, err := os.Stat(filepath.Join(home, ".switchboard")); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("state directory: %v %v; want a 0700 directory", err, fi)
	}
	tc = withHome(newTestCLI(nil))
	if code := tc.run("config", "check"); code != exitOK {
		t.Errorf("the written file does not pass config check: %s", tc.err.String())
	}

	// A second init keeps the file and says how to go on.
	before, _ := os.ReadFile(path)
	tc = withHome(newTestCLI(nil))
	if code := tc.run("init"); code != exitFailure || !strings.Contains(tc.err.String(), "already exists") || !strings.Contains(tc.err.String(), "--force") {
		t.Errorf("init over a file: exit %d, stderr %q", code, tc.err.String())
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("init without --force changed the existing file")
	}

	// A key in the environment: the file refers to it and never holds it.
	tc = withHome(newTestCLI(map[string]string{"ANTHROPIC_API_KEY": "sk-ant-secret-value"}))
	if code := tc.run("init", "--force"); code != exitOK {
		t.Fatalf("init --force with a key: exit %d, stderr %s", code, tc.err.String())
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), "apiKey: ${ANTHROPIC_API_KEY}") || strings.Contains(string(data), "sk-ant-secret-value") ||
		!strings.Contains(string(data), "primary: anthropic/") {
		t.Errorf("with ANTHROPIC_API_KEY set the file is:\n%s", data)
	}

	// On a terminal, a pasted key is kept in the private file.
	other := filepath.Join(t.TempDir(), "pasted.yaml")
	tc = withHome(newTestCLI(nil))
	var asked string
	tc.readSecret = func(prompt string) (string, error) { asked = prompt; return "sk-proj-pasted\n", nil }
	if code := tc.run("init", "--config", other, "--port", "18800"); code != exitOK {
		t.Fatalf("init with a pasted key: exit %d, stderr %s", code, tc.err.String())
	}
	data, _ = os.ReadFile(other)
	if !strings.Contains(asked, "press Enter for the echo demo model") || !strings.Contains(string(data), `apiKey: "sk-proj-pasted"`) ||
		!strings.Contains(string(data), "primary: openai/") || !strings.Contains(string(data), "port: 18800") {
		t.Errorf("prompt %q, file:\n%s", asked, data)
	}
	if !strings.Contains(tc.out.String(), "Next: switchboard run --config "+other) {
		t.Errorf("init for a file the search does not find must name it in the next step:\n%s", tc.out.String())
	}
	// --model anthropic before the key is exported: written, and the user
	// is told to export it (run refuses until then).
	tc = withHome(newTestCLI(nil))
	if code := tc.run("init", "--force", "--model", "anthropic"); code != exitOK || !strings.Contains(tc.out.String(), "Export ANTHROPIC_API_KEY before starting") {
		t.Errorf("init --model anthropic without the key: exit %d, stdout %q, stderr %q", code, tc.out.String(), tc.err.String())
	}
	tc = withHome(newTestCLI(nil))
	if code := tc.run("config", "check"); code != exitUsage || !strings.Contains(tc.err.String(), "ANTHROPIC_API_KEY") {
		t.Errorf("config check without the key: exit %d, stderr %q; want it to name the variable", code, tc.err.String())
	}

	tc = withHome(newTestCLI(nil))
	if code := tc.run("init", "--model", "antropic"); code != exitUsage || !strings.Contains(tc.err.String(), `did you mean "anthropic"?`) {
		t.Errorf("init --model antropic: exit %d, stderr %q", code, tc.err.String())
	}
}

// `switchboard config example` prints the example the repository holds,
// byte for byte, and it loads.
func TestConfigExamplePrintsTheExample(t *testing.T) {
	want, err := os.ReadFile("../../config.yaml.example")
	if err != nil {
		t.Fatal(err)
	}
	tc := newTestCLI(nil)
	if code := tc.run("config", "example"); code != exitOK || tc.out.String() != string(want) || switchboard.ExampleConfig != string(want) {
		t.Fatalf("config example: exit %d, %d bytes, want the %d of config.yaml.example", code, len(tc.out.String()), len(want))
	}
	path := filepath.Join(t.TempDir(), "config.yaml")
	writeFile(t, path, tc.out.String())
	if tc := newTestCLI(nil); tc.run("config", "check", path) != exitOK {
		t.Errorf("the printed example does not pass config check: %s", tc.err.String())
	}
}

// From init to a running daemon: `switchboard run` prints a link that
// signs a browser in once, its code in the URL fragment.
func TestRunPrintsASignInLink(t *testing.T) {
	home := t.TempDir()
	port := freePort(t)
	tc := newTestCLI(nil)
	tc.home = home
	if code := tc.run("init", "--port", strconv.Itoa(port)); code != exitOK {
		t.Fatalf("init: exit %d, stderr %s", code, tc.err.String())
	}
	cfg := filepath.Join(home, ".switchboard", "config.yaml")
	d := launchDaemon(t, cfg, nil, []func(*testCLI){func(tc *testCLI) { tc.home = home }})
	logs := d.readyLine(t)
	want := `"signInURL":"http://127.0.0.1:` + strconv.Itoa(port) + `/#login=`
	if !strings.Contains(logs, want) || !strings.Contains(logs, `"signInURLExpires":"15m0s"`) {
		t.Errorf("the ready line lacks %s:\n%s", want, logs)
	}
}
