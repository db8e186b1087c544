package heartbeat_test

import (
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/heartbeat"
)

// FuzzSchedule feeds arbitrary schedules to every method: none may panic,
// and for a valid schedule a next run is strictly after the instant asked
// about, the stagger stays inside its window, and the grace is positive and
// at most an hour. The seeds run as a unit test.
func FuzzSchedule(f *testing.F) {
	type seed struct {
		kind, expr, at, tz                  string
		everyMs, anchorMs, staggerMs, after int64
		explicitStagger                     bool
		jobID                               string
	}
	noon := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).UnixMilli()
	for _, s := range []seed{
		{kind: "cron", expr: "0 * * * *", after: noon, jobID: "job-1"},
		{kind: "cron", expr: "0 9 * * 1", tz: "Europe/Berlin", after: noon},
		{kind: "cron", expr: "30 2 * * *", tz: "America/New_York", after: time.Date(2026, 3, 7, 7, 30, 0, 0, time.UTC).UnixMilli(), explicitStagger: true},
		{kind: "cron", expr: "*/30 * * * *", tz: "America/New_York", after: time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC).UnixMilli(), explicitStagger: true},
		{kind: "cron", expr: "*/5 * * * * *", tz: "Australia/Lord_Howe", after: time.Date(2026, 4, 4, 14, 59, 0, 0, time.UTC).UnixMilli()},
		{kind: "cron", expr: "0 0 * * *", tz: "America/Sao_Paulo", after: time.Date(2018, 11, 3, 12, 0, 0, 0, time.UTC).UnixMilli()},
		{kind: "cron", expr: "0 9 13 * 5-7", staggerMs: 60_000, explicitStagger: true, after: noon, jobID: "x"},
		{kind: "cron", expr: "0 0 30 2 *", after: noon},
		{kind: "cron", expr: "TZ=UTC", after: noon},
		{kind: "cron", expr: "CRON_TZ=Bad/Zone 0 * * * *", after: noon},
		{kind: "cron", expr: "@every 1h", after: noon},
		{kind: "cron", expr: "0-99999999999999999999 * * * *", after: noon},
		{kind: "cron", expr: "1-2-3/4/5 * * * * *", after: noon},
		{kind: "cron", expr: "0 * * * *", staggerMs: -1, explicitStagger: true, after: noon},
		{kind: "cron", expr: "0 * * * *", after: -62135596800000},
		{kind: "every", everyMs: 60_000, after: noon},
		{kind: "every", everyMs: 7, anchorMs: 3, after: 100},
		{kind: "every", everyMs: 9223372036854775807, anchorMs: 1, after: 2},
		{kind: "every", everyMs: 0, after: noon},
		{kind: "every", everyMs: 1000, anchorMs: -5, after: -9223372036854775808},
		{kind: "at", at: "2026-11-21T09:00:00Z", after: noon},
		{kind: "at", at: "20m", after: noon},
		{kind: "at", at: "2026-11-21 09:00", after: noon},
		{kind: "at", at: "9223372036854775807", after: noon},
		{kind: "at", at: "99999999999999999999d", after: noon},
		{kind: "AT", at: "+1d", after: noon},
		{kind: "", after: noon},
		{kind: "weekly", after: noon},
	} {
		f.Add(s.kind, s.expr, s.at, s.tz, s.everyMs, s.anchorMs, s.staggerMs, s.explicitStagger, s.after, s.jobID)
	}

	f.Fuzz(func(t *testing.T, kind, expr, at, tz string, everyMs, anchorMs, staggerMs int64, explicitStagger bool, afterMs int64, jobID string) {
		s := heartbeat.Schedule{Kind: heartbeat.ScheduleKind(kind), Expr: expr, At: at, TZ: tz, EveryMs: everyMs, AnchorMs: anchorMs}
		if explicitStagger {
			s.StaggerMs = &staggerMs
		}
		after := time.UnixMilli(afterMs)

		// None of these may panic, whatever the input.
		_ = s.String()
		_, _ = heartbeat.ParseAt(at, after)
		_, _ = heartbeat.ParseAt(expr, after)
		_, _ = heartbeat.ParseEveryMs(expr)
		var k heartbeat.ScheduleKind
		_ = k.UnmarshalText([]byte(kind))
		err := s.Validate()
		resolved, resolveErr := s.Resolve(after)
		next, ok := s.Next(after, jobID)
		stagger := s.Stagger(jobID)
		grace := s.Grace(after, jobID)

		if err != nil {
			return
		}
		if ok && !next.After(after) {
			t.Fatalf("%+v: Next(%v) = %v, not after", s, after, next)
		}
		window := 5 * time.Minute
		if s.StaggerMs != nil {
			window = time.Duration(min(*s.StaggerMs, 1<<40)) * time.Millisecond
		}
		if stagger < 0 || stagger > 0 && stagger >= window {
			t.Fatalf("%+v: Stagger = %v, outside [0, %v)", s, stagger, window)
		}
		if grace <= 0 || grace > time.Hour {
			t.Fatalf("%+v: Grace = %v, want (0, 1h]", s, grace)
		}
		if resolveErr != nil {
			// Only a relative at that lands outside the years 1-9999 may
			// fail to resolve.
			if y := after.Year(); y > 1 && y < 9000 {
				t.Fatalf("%+v: valid, but Resolve(%v): %v", s, after, resolveErr)
			}
			return
		}
		if err := resolved.Validate(); err != nil {
			t.Fatalf("%+v: valid, but resolved %+v is not: %v", s, resolved, err)
		}
		if next, ok := resolved.Next(after, jobID); ok && !next.After(after) {
			t.Fatalf("%+v: resolved Next(%v) = %v, not after", resolved, after, next)
		}
		// A run's successor is after it too.
		if ok {
			if second, ok := s.Next(next, jobID); ok && !second.After(next) {
				t.Fatalf("%+v: Next(%v) = %v, not after", s, next, second)
			}
		}
	})
}
