package heartbeat_test

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/heartbeat"
)

// TestPhaseGolden pins values computed outside Go (Python's hashlib:
// int.from_bytes(sha256(b"device-a:main").digest()[:4], "big") is
// 2571222485, digest prefix 9941bdd5).
func TestPhaseGolden(t *testing.T) {
	rows := []struct {
		seed, agent string
		interval    time.Duration
		want        time.Duration
	}{
		{"device-a", "main", time.Hour, 822485 * time.Millisecond},
		{"device-a", "ops", time.Hour, 2770793 * time.Millisecond},
		{"seed", "main", 30 * time.Minute, 744620 * time.Millisecond},
		{"device-a", "main", 24 * time.Hour, 65622485 * time.Millisecond},
		{"device-a", "main", time.Minute, 42485 * time.Millisecond},
	}
	for _, r := range rows {
		if got := heartbeat.Phase(r.seed, r.agent, r.interval); got != r.want {
			t.Errorf("Phase(%q, %q, %v) = %v, want %v", r.seed, r.agent, r.interval, got, r.want)
		}
	}
}

// TestPhaseMatchesDefinition recomputes the phase by hand for many agents.
func TestPhaseMatchesDefinition(t *testing.T) {
	for _, interval := range []time.Duration{time.Millisecond, time.Second, time.Minute, 30 * time.Minute, time.Hour, 24 * time.Hour, 7 * 24 * time.Hour} {
		for i := range 50 {
			agent := fmt.Sprintf("agent-%d", i)
			sum := sha256.Sum256([]byte("device-b:" + agent))
			want := time.Duration(int64(binary.BigEndian.Uint32(sum[:4]))%interval.Milliseconds()) * time.Millisecond
			got := heartbeat.Phase("device-b", agent, interval)
			if got != want {
				t.Errorf("Phase(device-b, %s, %v) = %v, want %v", agent, interval, got, want)
			}
			if got < 0 || got >= interval {
				t.Errorf("Phase(device-b, %s, %v) = %v, outside [0, interval)", agent, interval, got)
			}
			if got%time.Millisecond != 0 {
				t.Errorf("Phase(device-b, %s, %v) = %v, not whole milliseconds", agent, interval, got)
			}
		}
	}
}

func TestPhaseSpreadsAgents(t *testing.T) {
	if a, b := heartbeat.Phase("device-a", "main", time.Hour), heartbeat.Phase("device-a", "ops", time.Hour); a == b {
		t.Errorf("main and ops share phase %v", a)
	}
	if a, b := heartbeat.Phase("device-a", "main", time.Hour), heartbeat.Phase("device-b", "main", time.Hour); a == b {
		t.Errorf("device-a and device-b share phase %v for main", a)
	}
	// 100 agents over an hour: the chance that a correct hash puts them all
	// within five minutes of each other is negligible.
	lo, hi := time.Hour, time.Duration(0)
	for i := range 100 {
		p := heartbeat.Phase("device-a", fmt.Sprintf("agent-%d", i), time.Hour)
		lo, hi = min(lo, p), max(hi, p)
	}
	if hi-lo < 5*time.Minute {
		t.Errorf("100 agents' phases span only %v", hi-lo)
	}
	// The hash input is exactly "<seed>:<agentID>", so moving the colon
	// between the two arguments does not change it.
	if a, b := heartbeat.Phase("a:b", "c", time.Hour), heartbeat.Phase("a", "b:c", time.Hour); a != b {
		t.Errorf("Phase(a:b, c) = %v but Phase(a, b:c) = %v; both hash \"a:b:c\"", a, b)
	}
}

func TestPhaseTinyInterval(t *testing.T) {
	for _, iv := range []time.Duration{0, -time.Hour, time.Microsecond, 999 * time.Microsecond} {
		if got := heartbeat.Phase("device-a", "main", iv); got != 0 {
			t.Errorf("Phase(interval %v) = %v, want 0", iv, got)
		}
	}
}

func TestNextDue(t *testing.T) {
	at := func(s string) time.Time {
		t.Helper()
		ts, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	rows := []struct {
		name     string
		now      string
		interval time.Duration
		phase    time.Duration
		want     string
	}{
		// OpenClaw's heartbeat-schedule.test.ts cases.
		{"before the slot", "2026-01-01T10:10:00Z", time.Hour, 15 * time.Minute, "2026-01-01T10:15:00Z"},
		{"exactly at the slot", "2026-01-01T10:15:00Z", time.Hour, 15 * time.Minute, "2026-01-01T11:15:00Z"},

		{"one millisecond before the slot", "2026-01-01T10:14:59.999Z", time.Hour, 15 * time.Minute, "2026-01-01T10:15:00Z"},
		{"one millisecond after the slot", "2026-01-01T10:15:00.001Z", time.Hour, 15 * time.Minute, "2026-01-01T11:15:00Z"},
		{"sub-millisecond after the slot", "2026-01-01T10:15:00.0005Z", time.Hour, 15 * time.Minute, "2026-01-01T11:15:00Z"},
		{"sub-millisecond before the slot", "2026-01-01T10:14:59.9995Z", time.Hour, 15 * time.Minute, "2026-01-01T10:15:00Z"},

		{"1m, phase 0, at the minute", "2026-01-01T10:00:00Z", time.Minute, 0, "2026-01-01T10:01:00Z"},
		{"1m, phase 42.485s", "2026-01-01T10:00:50Z", time.Minute, 42485 * time.Millisecond, "2026-01-01T10:01:42.485Z"},
		{"1m, phase 42.485s, just before", "2026-01-01T10:00:42.484Z", time.Minute, 42485 * time.Millisecond, "2026-01-01T10:00:42.485Z"},

		{"30m, phase 12m24.62s", "2026-01-01T10:00:00Z", 30 * time.Minute, 744620 * time.Millisecond, "2026-01-01T10:12:24.62Z"},
		{"30m, past the first slot of the hour", "2026-01-01T10:20:00Z", 30 * time.Minute, 744620 * time.Millisecond, "2026-01-01T10:42:24.62Z"},

		// 24h slots are aligned to Unix time, i.e. UTC midnight plus phase.
		{"24h, later today", "2026-01-01T10:00:00Z", 24 * time.Hour, 18*time.Hour + 13*time.Minute, "2026-01-01T18:13:00Z"},
		{"24h, tomorrow", "2026-01-01T19:00:00Z", 24 * time.Hour, 18*time.Hour + 13*time.Minute, "2026-01-02T18:13:00Z"},
		{"24h, exactly at it", "2026-01-01T18:13:00Z", 24 * time.Hour, 18*time.Hour + 13*time.Minute, "2026-01-02T18:13:00Z"},

		// A phase outside [0, interval) names the same slot as its residue.
		{"phase equal to interval is 0", "2026-01-01T10:10:00Z", time.Hour, time.Hour, "2026-01-01T11:00:00Z"},
		{"negative phase", "2026-01-01T10:10:00Z", time.Hour, -15 * time.Minute, "2026-01-01T10:45:00Z"},
		{"before 1970", "1969-12-31T23:50:00Z", time.Hour, 15 * time.Minute, "1970-01-01T00:15:00Z"},

		// Intervals under a millisecond count as one.
		{"zero interval", "2026-01-01T10:00:00Z", 0, 0, "2026-01-01T10:00:00.001Z"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			now, want := at(r.now), at(r.want)
			got := heartbeat.NextDue(now, r.interval, r.phase)
			if !got.Equal(want) {
				t.Errorf("NextDue(%s, %v, %v) = %s, want %s", r.now, r.interval, r.phase, got.Format(time.RFC3339Nano), r.want)
			}
		})
	}
}

// TestNextDueProperties checks, for many instants, that the result is the
// first slot strictly after now.
func TestNextDueProperties(t *testing.T) {
	base := time.Date(2026, 3, 8, 6, 59, 59, 123456789, time.UTC)
	for _, interval := range []time.Duration{time.Minute, 30 * time.Minute, time.Hour, 24 * time.Hour} {
		phase := heartbeat.Phase("device-a", "main", interval)
		for i := range 500 {
			now := base.Add(time.Duration(i) * 7919 * time.Second / 3)
			got := heartbeat.NextDue(now, interval, phase)
			if !got.After(now) || got.After(now.Add(interval)) {
				t.Fatalf("NextDue(%s, %v) = %s, outside (now, now+interval]", now, interval, got)
			}
			if m := got.UnixMilli() % interval.Milliseconds(); m != phase.Milliseconds() {
				t.Fatalf("NextDue(%s, %v) = %s: Unix ms mod interval = %d, want phase %d", now, interval, got, m, phase.Milliseconds())
			}
			if prev := got.Add(-interval); prev.After(now) {
				t.Fatalf("NextDue(%s, %v) = %s skips the earlier slot %s", now, interval, got, prev)
			}
			// From a due instant the next slot is a whole interval away.
			if next := heartbeat.NextDue(got, interval, phase); !next.Equal(got.Add(interval)) {
				t.Fatalf("NextDue(due %s, %v) = %s, want %s", got, interval, next, got.Add(interval))
			}
		}
	}
}

func TestNextDueKeepsLocation(t *testing.T) {
	loc := time.FixedZone("IST", 5*3600+1800)
	now := time.Date(2026, 1, 1, 15, 40, 0, 0, loc) // 10:10 UTC
	got := heartbeat.NextDue(now, time.Hour, 15*time.Minute)
	if got.Location() != loc {
		t.Errorf("NextDue location = %v, want %v", got.Location(), loc)
	}
	if want := time.Date(2026, 1, 1, 15, 45, 0, 0, loc); !got.Equal(want) {
		t.Errorf("NextDue = %s, want %s", got, want)
	}
}
