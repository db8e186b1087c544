package exectool

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/switchboardhq/switchboard/core/tools"
)

// BenchmarkPlan measures planning one command (PATH lookup, cwd and
// operand checks, environment) and hashing it: done twice per approved
// call, before asking and again before running.
func BenchmarkPlan(b *testing.B) {
	ws, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, "src"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "src", "main.go"), []byte("package main\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	jail, err := tools.OpenJail(ws)
	if err != nil {
		b.Fatal(err)
	}
	defer jail.Close()
	pl := newPlanner(Config{}.withDefaults(), jail, os.LookupEnv)
	req := Request{Argv: []string{"grep", "-n", "--color=never", "package", "src/main.go"}, Cwd: ".", Env: map[string]string{"LC_ALL": "C"}}
	b.ReportAllocs()
	for b.Loop() {
		p, err := pl.plan(req)
		if err != nil {
			b.Fatal(err)
		}
		_ = p.Hash()
	}
}
