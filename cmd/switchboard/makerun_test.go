package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 26, finding 7: `make run` always used config.yaml.example, and how
// to change the port was not written down. Now it runs ./config.yaml when
// there is one, CONFIG= names any file, and the README says both and how to
// get a file to edit.
func TestFinding7MakeRunTakesTheUsersConfig(t *testing.T) {
	mk, err := exec.LookPath("make")
	if err != nil {
		t.Fatalf("make is needed to check the Makefile (and to run make test): %v", err)
	}
	makefile, err := filepath.Abs("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	dryRun := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command(mk, append([]string{"-n", "-f", makefile, "run"}, args...)...)
		cmd.Dir = dir
		// Neither the test's environment nor an outer make (make test
		// passes its variables down in MAKEFLAGS) may choose.
		for _, kv := range os.Environ() {
			name, _, _ := strings.Cut(kv, "=")
			if name != "CONFIG" && name != "MAKEFLAGS" && name != "MFLAGS" && name != "MAKELEVEL" {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("make -n run %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	dir := t.TempDir()
	if out := dryRun(dir); !strings.Contains(out, "run --config config.yaml.example") {
		t.Errorf("without config.yaml, make run does not use the example:\n%s", out)
	}
	writeFile(t, filepath.Join(dir, "config.yaml"), "gateway: {port: 18800}\n")
	if out := dryRun(dir); !strings.Contains(out, "run --config config.yaml\n") {
		t.Errorf("with ./config.yaml, make run does not use it:\n%s", out)
	}
	if out := dryRun(dir, "CONFIG=my.yaml"); !strings.Contains(out, "run --config my.yaml\n") {
		t.Errorf("make run CONFIG=my.yaml does not use my.yaml:\n%s", out)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"make run CONFIG=", "gateway.port", "config example > config.yaml"} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("the README does not say %q", want)
		}
	}
}
