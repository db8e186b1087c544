package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		if buildDir != "" {
			os.RemoveAll(buildDir)
		}
		os.Exit(code)
	}))
}

func TestUnknownModeIsAUsageError(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"-mode", "nope"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), `unknown -mode "nope"`) {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// testBinary builds the switchboard binary once for the package's tests.
// The build lives in a directory of its own that outlives the tests that
// share it; TestMain removes it.
func testBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the switchboard binary")
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("the bench reads /proc (Linux)")
	}
	buildOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if buildDir, buildErr = os.MkdirTemp("", "switchboard-bench-test-"); buildErr == nil {
			builtBin, buildErr = buildBinary(ctx, buildDir, "../..")
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

var buildDir string

// The footprint mode runs a real switchboard binary against the platform
// fakes and fills every field: ready time, idle memory, and memory with a
// few gateway connections.
func TestFootprintMeasuresARealChild(t *testing.T) {
	bin := testBinary(t)
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "fp.json")
	var out, errb bytes.Buffer
	if code := run([]string{"-mode", "footprint", "-bin", bin, "-idle", "100ms", "-conns", "20", "-json", jsonPath}, &out, &errb); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errb.String())
	}
	var res footprintResult
	b, err := os.ReadFile(jsonPath)
	if err != nil || json.Unmarshal(b, &res) != nil {
		t.Fatalf("json: %v %s", err, b)
	}
	if res.BinaryBytes <= 0 || res.ReadyMs <= 0 || res.WarmReadyMs <= 0 || res.Idle.RSSKB <= 0 || res.Idle.PeakRSSKB < res.Idle.RSSKB ||
		res.ConnsOpened != 20 || res.WithConns.RSSKB <= 0 || res.Settled.RSSKB <= 0 || res.PlatformErrors != 0 {
		t.Fatalf("result: %+v", res)
	}
	if !strings.Contains(out.String(), "exec → /readyz 200") || !strings.Contains(out.String(), "RSS with 20 idle gateway connections") {
		t.Fatalf("table:\n%s", out.String())
	}
}
