package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStartProfileWritesACPUProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.prof")
	var stderr bytes.Buffer
	env := map[string]string{profileEnv: path}
	stop := startProfile(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, &stderr)
	stop()
	if st, err := os.Stat(path); err != nil || st.Size() == 0 || stderr.Len() != 0 {
		t.Fatalf("profile: %v, %v, stderr %q", st, err, stderr.String())
	}
	// A path that cannot be created is reported, and the daemon runs on.
	env[profileEnv] = filepath.Join(t.TempDir(), "missing", "cpu.prof")
	startProfile(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, &stderr)()
	if !strings.Contains(stderr.String(), "running without a profile") {
		t.Fatalf("stderr = %q", stderr.String())
	}
	// Without the variable nothing happens.
	startProfile(func(string) (string, bool) { return "", false }, &stderr)()
}
