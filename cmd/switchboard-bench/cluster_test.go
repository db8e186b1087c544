package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/internal/pgtest"
)

// A short cluster run against a real binary and PostgreSQL: two instances,
// two SIGKILLs under load on Telegram, Slack (Events API through the
// round-robin proxy) and Discord, every message answered once, in order,
// no platform connection held twice, every transcript loaded.
func TestClusterKillsAndLosesNothing(t *testing.T) {
	// The run starts its own PostgreSQL; this one only says whether the
	// binaries are there.
	pg, err := pgtest.Start()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	pg.Stop()
	bin := testBinary(t)
	jsonPath := filepath.Join(t.TempDir(), "cluster.json")
	var out, errb bytes.Buffer
	code := run([]string{"-mode", "cluster", "-bin", bin, "-instances", "2", "-kills", "2", "-kill-within", "1500ms", "-down", "500ms",
		"-lease-ttl", "2s", "-sessions", "6", "-latency", "50ms", "-tokens", "5", "-json", jsonPath}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errb.String())
	}
	var res clusterResult
	b, err := os.ReadFile(jsonPath)
	if err != nil || json.Unmarshal(b, &res) != nil {
		t.Fatalf("json: %v %s", err, b)
	}
	if res.Kills != 2 || res.Instances != 2 || res.Sent == 0 || res.Replied != res.Sent || res.SingletonSamples == 0 || res.Transcripts < 6 || !res.ok() {
		t.Fatalf("result: %+v", res)
	}
	if !strings.Contains(out.String(), "lost / duplicated / order 0 / ") {
		t.Fatalf("table:\n%s", out.String())
	}
}

// The verdict: a lost message, a reordered one, a duplicate beyond one per
// kill, a connection held twice, a transcript that did not load or a
// Slack event given up fails the run.
func TestClusterVerdict(t *testing.T) {
	good := clusterResult{Kills: 3, DuplicatesAllowed: 3, delivery: delivery{Sent: 10, Replied: 10, Duplicated: 3}, Transcripts: 4, SingletonSamples: 10}
	if !good.ok() {
		t.Fatalf("a run within bounds failed: %+v", good)
	}
	for name, bad := range map[string]func(*clusterResult){
		"lost":              func(r *clusterResult) { r.Lost = 1 },
		"too many dups":     func(r *clusterResult) { r.Duplicated = 4 },
		"out of order":      func(r *clusterResult) { r.OutOfOrder = 1 },
		"held twice":        func(r *clusterResult) { r.SingletonViolations = []string{"x"} },
		"transcript failed": func(r *clusterResult) { r.TranscriptErrors = []string{"x"} },
		"line skipped":      func(r *clusterResult) { r.SkippedLines = 1 },
		"platform error":    func(r *clusterResult) { r.PlatformErrors = 1 },
		"slack gave up":     func(r *clusterResult) { r.SlackGaveUp = 1 },
		"nothing sent":      func(r *clusterResult) { r.Sent = 0 },
	} {
		r := good
		bad(&r)
		if r.ok() {
			t.Errorf("%s: passed", name)
		}
	}
}
