package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A short chaos run against a real binary: two SIGKILLs under load with a
// model that calls a tool in every turn, every message answered, every
// transcript loaded.
func TestChaosKillsAndLosesNothing(t *testing.T) {
	bin := testBinary(t)
	jsonPath := filepath.Join(t.TempDir(), "chaos.json")
	var out, errb bytes.Buffer
	code := run([]string{"-mode", "chaos", "-bin", bin, "-kills", "2", "-kill-within", "1500ms", "-sessions", "3",
		"-latency", "50ms", "-tokens", "5", "-tool", "-json", jsonPath}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errb.String())
	}
	var res chaosResult
	b, err := os.ReadFile(jsonPath)
	if err != nil || json.Unmarshal(b, &res) != nil {
		t.Fatalf("json: %v %s", err, b)
	}
	if res.Kills != 2 || res.RestartReadyMs.N != 2 || res.Sent == 0 || res.Replied != res.Sent || res.Transcripts < 3 || !res.ok() {
		t.Fatalf("result: %+v", res)
	}
	if !strings.Contains(out.String(), "lost / duplicated / order 0 / ") {
		t.Fatalf("table:\n%s", out.String())
	}
}

// The verdict: a lost message, a reordered one, a duplicate beyond one per
// kill or a transcript that did not load fails the run.
func TestChaosVerdict(t *testing.T) {
	good := chaosResult{Kills: 3, DuplicatesAllowed: 3, delivery: delivery{Sent: 10, Replied: 10, Duplicated: 3}, Transcripts: 4}
	if !good.ok() {
		t.Fatalf("a run within bounds failed: %+v", good)
	}
	for name, bad := range map[string]func(*chaosResult){
		"lost":              func(r *chaosResult) { r.Lost = 1 },
		"too many dups":     func(r *chaosResult) { r.Duplicated = 4 },
		"out of order":      func(r *chaosResult) { r.OutOfOrder = 1 },
		"transcript failed": func(r *chaosResult) { r.TranscriptErrors = []string{"x"} },
		"line skipped":      func(r *chaosResult) { r.SkippedLines = 1 },
		"platform error":    func(r *chaosResult) { r.PlatformErrors = 1 },
		"nothing sent":      func(r *chaosResult) { r.Sent = 0 },
	} {
		r := good
		bad(&r)
		if r.ok() {
			t.Errorf("%s: passed", name)
		}
	}
}

// A short soak: messages at a steady rate, all answered, RSS sampled.
func TestSoakRunsAtARate(t *testing.T) {
	bin := testBinary(t)
	jsonPath := filepath.Join(t.TempDir(), "soak.json")
	var out, errb bytes.Buffer
	code := run([]string{"-mode", "soak", "-bin", bin, "-duration", "2s", "-rate", "10", "-sample", "500ms", "-sessions", "4", "-json", jsonPath}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errb.String())
	}
	var res soakResult
	b, err := os.ReadFile(jsonPath)
	if err != nil || json.Unmarshal(b, &res) != nil {
		t.Fatalf("json: %v %s", err, b)
	}
	// 10 a second for 2 s; the ticker may drop a tick on a busy machine.
	if res.Sent < 10 || res.Sent > 20 || res.Replied != res.Sent || len(res.Samples) < 3 || res.LastRSSKB <= 0 || !res.ok() {
		t.Fatalf("result: %+v", res)
	}
}

func TestRSSSlope(t *testing.T) {
	// 10 MB at the start, growing 2 MB an hour, sampled every minute for
	// two hours; the first 30 minutes are a warmup at 50 MB, left out.
	var s [][3]float64
	for m := 0; m <= 120; m++ {
		rss := 10*1024 + 2*1024*float64(m)/60
		if m < 30 {
			rss = 50 * 1024
		}
		s = append(s, [3]float64{float64(m * 60), rss, 10})
	}
	slope, first, last := rssSlope(s, 30*60)
	if math.Abs(slope-2) > 1e-9 || first != 11264 || last != 14336 {
		t.Fatalf("slope %v MB/h, first %d, last %d", slope, first, last)
	}
	if slope, _, _ := rssSlope(s[:1], 0); slope != 0 {
		t.Fatalf("one sample: slope %v", slope)
	}
}
