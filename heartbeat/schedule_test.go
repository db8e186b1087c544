package heartbeat_test

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the DST tests need America/New_York wherever they run

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/heartbeat"
)

// schedNow is the fixed "current time" of these tests: Sunday 1 March 2026,
// 12:00 UTC.
var schedNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func schedUTC(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func schedMs(v int64) *int64 { return &v }

// schedExact is a cron schedule without stagger, so tests see the expression's
// own times.
func schedExact(expr, tz string) heartbeat.Schedule {
	return heartbeat.Schedule{Kind: heartbeat.ScheduleCron, Expr: expr, TZ: tz, StaggerMs: schedMs(0)}
}

func TestScheduleKindUnmarshalText(t *testing.T) {
	if got, want := heartbeat.ScheduleKind("").EnumValues(), []string{"at", "every", "cron"}; !slices.Equal(got, want) {
		t.Fatalf("EnumValues = %v, want %v", got, want)
	}
	for in, want := range map[string]heartbeat.ScheduleKind{
		"at": heartbeat.ScheduleAt, "EVERY": heartbeat.ScheduleEvery, " cron ": heartbeat.ScheduleCron,
	} {
		var k heartbeat.ScheduleKind
		if err := k.UnmarshalText([]byte(in)); err != nil || k != want {
			t.Errorf("UnmarshalText(%q) = %q, %v; want %q", in, k, err, want)
		}
	}
	for _, in := range []string{"", "weekly", "on-exit"} {
		var k heartbeat.ScheduleKind
		err := k.UnmarshalText([]byte(in))
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", in)) || !strings.Contains(err.Error(), "at, every, cron") {
			t.Errorf("UnmarshalText(%q) error = %v; want it to name the value and at, every, cron", in, err)
		}
	}
}

func TestParseAt(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Time
		wantErr string
	}{
		// Absolute, with a zone.
		{in: "2026-11-21T09:00:00Z", want: schedUTC("2026-11-21T09:00:00Z")},
		{in: "2026-11-21T10:00:00+01:00", want: schedUTC("2026-11-21T09:00:00Z")},
		{in: "2026-11-21T10:00:00.250+01:00", want: schedUTC("2026-11-21T09:00:00.25Z")},
		{in: "2026-11-21T04:00:00-0500", want: schedUTC("2026-11-21T09:00:00Z")},
		{in: "2026-11-21T10:00+01:00", want: schedUTC("2026-11-21T09:00:00Z")},
		{in: "2026-11-21t09:00:00z", want: schedUTC("2026-11-21T09:00:00Z")},
		{in: "2026-11-21 10:00:00+01:00", want: schedUTC("2026-11-21T09:00:00Z")},
		// Absolute, without a zone: UTC.
		{in: "2026-11-21T09:00:00", want: schedUTC("2026-11-21T09:00:00Z")},
		{in: "2026-11-21T09:00:00.5", want: schedUTC("2026-11-21T09:00:00.5Z")},
		{in: "2026-11-21T09:00", want: schedUTC("2026-11-21T09:00:00Z")},
		{in: "2026-11-21 09:00", want: schedUTC("2026-11-21T09:00:00Z")},
		{in: "2026-11-21 09:00:30", want: schedUTC("2026-11-21T09:00:30Z")},
		{in: "2026-11-21", want: schedUTC("2026-11-21T00:00:00Z")},
		{in: "  2026-11-21T09:00:00Z\n", want: schedUTC("2026-11-21T09:00:00Z")},
		// Digits are Unix milliseconds, as in OpenClaw's parseAbsoluteTimeMs.
		{in: "1795251600000", want: schedUTC("2026-11-21T09:00:00Z")},
		{in: "20", want: time.UnixMilli(20).UTC()},
		// Relative to now.
		{in: "20m", want: schedNow.Add(20 * time.Minute)},
		{in: "+20m", want: schedNow.Add(20 * time.Minute)},
		{in: "2h", want: schedNow.Add(2 * time.Hour)},
		{in: "1h30m", want: schedNow.Add(90 * time.Minute)},
		{in: "1d", want: schedNow.Add(24 * time.Hour)},
		{in: "1.5h", want: schedNow.Add(90 * time.Minute)},
		{in: "90S", want: schedNow.Add(90 * time.Second)},
		// Rejected.
		{in: "", wantErr: "no time given; use an RFC 3339 time"},
		{in: "   ", wantErr: "no time given"},
		{in: "tomorrow", wantErr: `"tomorrow" is neither a time nor a duration; use an RFC 3339 time such as "2026-11-21T09:00:00Z"`},
		{in: "0", wantErr: `"0": a duration from now must be more than 0`},
		{in: "-20m", wantErr: `"-20m" is neither`},
		{in: "0m", wantErr: `"0m": a duration from now must be more than 0`},
		{in: "20 minutes", wantErr: `"20m", "2h", "1h30m" or "1d"`},
		{in: "2026-13-01", wantErr: `"2026-13-01" is neither`},
		{in: "2026-11-21T25:00", wantErr: `"2026-11-21T25:00" is neither`},
		{in: "2026-11-21T09:00:00+01", wantErr: `is neither`},
		{in: "21/11/2026", wantErr: `a UTC time such as "2026-11-21 09:00" or "2026-11-21"`},
		{in: "99999999999d", wantErr: `is neither`},
		{in: "9223372036854775807", wantErr: `"9223372036854775807" is out of range`},
		{in: "0000-01-01", wantErr: `is out of range`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := heartbeat.ParseAt(tt.in, schedNow)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseAt(%q) = %v, %v; want error containing %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || !got.Equal(tt.want) {
				t.Fatalf("ParseAt(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
			if got.Location() != time.UTC {
				t.Errorf("ParseAt(%q) location = %v, want UTC", tt.in, got.Location())
			}
		})
	}
}

func TestParseEveryMs(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr string
	}{
		{in: "90s", want: 90_000},
		{in: "15m", want: 900_000},
		{in: "2h", want: 7_200_000},
		{in: "1d", want: 86_400_000},
		{in: "1h30m", want: 5_400_000},
		{in: "1.5s", want: 1500},
		{in: "1ms", want: 1},
		{in: " 10M ", want: 600_000},
		{in: "", wantErr: "empty"},
		{in: "0s", wantErr: `invalid interval "0s": must be at least 1ms`},
		{in: "500us", wantErr: "must be at least 1ms"},
		{in: "15", wantErr: "a number needs a unit"},
		{in: "abc", wantErr: `"abc"`},
		{in: "-1m", wantErr: "negative"},
	}
	for _, tt := range tests {
		got, err := heartbeat.ParseEveryMs(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseEveryMs(%q) = %d, %v; want error containing %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseEveryMs(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestScheduleValidate(t *testing.T) {
	valid := []heartbeat.Schedule{
		{Kind: heartbeat.ScheduleAt, At: "2026-11-21T09:00:00.000Z"},
		{Kind: heartbeat.ScheduleAt, At: "20m"},
		{Kind: heartbeat.ScheduleEvery, EveryMs: 60_000},
		{Kind: heartbeat.ScheduleEvery, EveryMs: 1, AnchorMs: 1_700_000_000_000},
		{Kind: heartbeat.ScheduleCron, Expr: "0 9 * * 1"},
		{Kind: heartbeat.ScheduleCron, Expr: "*/10 0 9 * * *"},
		{Kind: heartbeat.ScheduleCron, Expr: "0 9 * * MON-FRI", TZ: "Europe/Berlin"},
		{Kind: heartbeat.ScheduleCron, Expr: "0 * * * *", StaggerMs: schedMs(0)},
		{Kind: heartbeat.ScheduleCron, Expr: "0 9 * * 7"},
		{Kind: heartbeat.ScheduleCron, Expr: "0 9 * * 5-7"},
		{Kind: heartbeat.ScheduleCron, Expr: "0 9 13 * 5"},
		{Kind: heartbeat.ScheduleCron, Expr: "0 9 ? * 1"},
	}
	for _, s := range valid {
		if err := s.Validate(); err != nil {
			t.Errorf("%+v: Validate() = %v, want nil", s, err)
		}
	}

	invalid := []struct {
		s    heartbeat.Schedule
		path string
		want string
	}{
		{heartbeat.Schedule{}, "kind", "kind: required; one of at, every, cron"},
		{heartbeat.Schedule{Kind: "weekly"}, "kind", `kind: unknown kind "weekly"; use one of at, every, cron`},
		{heartbeat.Schedule{Kind: heartbeat.ScheduleAt}, "at", `at: required for kind at; use an RFC 3339 time`},
		{heartbeat.Schedule{Kind: heartbeat.ScheduleAt, At: "soon"}, "at", `at: "soon" is neither a time nor a duration; use`},
		{heartbeat.Schedule{Kind: heartbeat.ScheduleEvery}, "everyMs", "everyMs: must be at least 1 (milliseconds)"},
		{heartbeat.Schedule{Kind: heartbeat.ScheduleEvery, EveryMs: -5}, "everyMs", "everyMs: must be at least 1"},
		{heartbeat.Schedule{Kind: heartbeat.ScheduleEvery, EveryMs: 1000, AnchorMs: -1}, "anchorMs", "anchorMs: must be 0 or more"},
		{heartbeat.Schedule{Kind: heartbeat.ScheduleCron}, "expr", `expr: required for kind cron; for example "0 9 * * *"`},
		{heartbeat.Schedule{Kind: heartbeat.ScheduleCron, Expr: "0 9 * *"}, "expr", `expr: "0 9 * *" has 4 fields; use 5 (minute hour day-of-month month day-of-week) or 6 with seconds first`},
		{heartbeat.Schedule{Kind: heartbeat.ScheduleCron, Expr: "0 0 9 * * * 2027"}, "expr", `has 7 fields`},
		{heartbeat.Schedule{Kind: heartbeat.ScheduleCron, Expr: "@hourly"}, "expr", `descriptors are not supported; write the fields, such as "0 * * * *" for @hourly`},
		{heartbeat.Schedule{Kind: heartbeat.ScheduleCron, Expr: "TZ=UTC 0 9 * * *"}, "expr", "put the time zone in tz"},
		{heartbeat.Schedule{Kind: heartbeat.ScheduleCron, Expr: "TZ=UTC"}, "expr", "put the time zone in tz"},
		{heartbeat.Schedule{Kind: heartbeat.ScheduleCron, Expr: "61 * * * *"}, "expr", `"61 * * * *" is invalid: end of range (61) above maximum (59)`},
		{heartbeat.Schedule{Kind: heartbeat.ScheduleCron, Expr: "*/0 * * * *"}, "expr", "step of range should be a positive number"},
		{heartbeat.Schedule{Kind: heartbeat.ScheduleCron, Expr: "0 9 L * *"}, "expr", `"0 9 L * *" is invalid`},
		{heartbeat.Schedule{Kind: heartbeat.ScheduleCron, Expr: "0 9 * * 1", TZ: "Mars/Olympus"}, "tz", `tz: unknown time zone "Mars/Olympus"; use an IANA name such as "Europe/Berlin"`},
		{heartbeat.Schedule{Kind: heartbeat.ScheduleCron, Expr: "0 9 * * 1", StaggerMs: schedMs(-1)}, "staggerMs", "staggerMs: must be 0 (run exactly on schedule) or more"},
		{heartbeat.Schedule{Kind: heartbeat.ScheduleEvery, EveryMs: 1000, Expr: "0 9 * * 1"}, "expr", "expr: does not apply to kind every; remove it"},
		{heartbeat.Schedule{Kind: heartbeat.ScheduleAt, At: "20m", StaggerMs: schedMs(0)}, "staggerMs", "staggerMs: does not apply to kind at"},
		{heartbeat.Schedule{Kind: heartbeat.ScheduleCron, Expr: "0 9 * * 1", EveryMs: 5}, "everyMs", "everyMs: does not apply to kind cron"},
	}
	for _, tt := range invalid {
		err := tt.s.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: Validate() = %v; want error containing %q", tt.s, err, tt.want)
			continue
		}
		var fe *core.FieldError
		if !errors.As(err, &fe) || fe.Path != tt.path {
			t.Errorf("%+v: Validate() = %#v; want a *core.FieldError for %q", tt.s, err, tt.path)
		}
	}

	// Every problem is reported, not only the first.
	err := heartbeat.Schedule{Kind: heartbeat.ScheduleCron, Expr: "bad", TZ: "Nowhere/Else", StaggerMs: schedMs(-1)}.Validate()
	for _, want := range []string{"expr:", "tz:", "staggerMs:"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v; want it to contain %q", err, want)
		}
	}
}

func TestScheduleResolve(t *testing.T) {
	tests := []struct {
		name string
		in   heartbeat.Schedule
		want heartbeat.Schedule
	}{
		{"relative at", heartbeat.Schedule{Kind: heartbeat.ScheduleAt, At: "20m"},
			heartbeat.Schedule{Kind: heartbeat.ScheduleAt, At: "2026-03-01T12:20:00.000Z"}},
		{"at with offset", heartbeat.Schedule{Kind: heartbeat.ScheduleAt, At: "2026-11-21T10:00:00.1234+01:00"},
			heartbeat.Schedule{Kind: heartbeat.ScheduleAt, At: "2026-11-21T09:00:00.123Z"}},
		{"at without zone", heartbeat.Schedule{Kind: heartbeat.ScheduleAt, At: "2026-11-21 09:00"},
			heartbeat.Schedule{Kind: heartbeat.ScheduleAt, At: "2026-11-21T09:00:00.000Z"}},
		{"every anchors at creation", heartbeat.Schedule{Kind: heartbeat.ScheduleEvery, EveryMs: 60_000},
			heartbeat.Schedule{Kind: heartbeat.ScheduleEvery, EveryMs: 60_000, AnchorMs: schedNow.UnixMilli()}},
		{"every keeps its anchor", heartbeat.Schedule{Kind: heartbeat.ScheduleEvery, EveryMs: 60_000, AnchorMs: 5},
			heartbeat.Schedule{Kind: heartbeat.ScheduleEvery, EveryMs: 60_000, AnchorMs: 5}},
		{"top-of-hour cron gets the default stagger", heartbeat.Schedule{Kind: heartbeat.ScheduleCron, Expr: "0 * * * *"},
			heartbeat.Schedule{Kind: heartbeat.ScheduleCron, Expr: "0 * * * *", StaggerMs: schedMs(300_000)}},
		{"fixed-hour cron stays unstaggered", heartbeat.Schedule{Kind: heartbeat.ScheduleCron, Expr: "0 9 * * *"},
			heartbeat.Schedule{Kind: heartbeat.ScheduleCron, Expr: "0 9 * * *"}},
		{"explicit stagger kept", heartbeat.Schedule{Kind: heartbeat.ScheduleCron, Expr: "0 * * * *", StaggerMs: schedMs(0)},
			heartbeat.Schedule{Kind: heartbeat.ScheduleCron, Expr: "0 * * * *", StaggerMs: schedMs(0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.in.Resolve(schedNow)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := schedJSON(t, got), schedJSON(t, tt.want); g != w {
				t.Fatalf("Resolve = %s, want %s", g, w)
			}
			// Resolving again, later (a restart), changes nothing.
			again, err := got.Resolve(schedNow.Add(36 * time.Hour))
			if err != nil || schedJSON(t, again) != schedJSON(t, got) {
				t.Fatalf("second Resolve = %s, %v; want %s", schedJSON(t, again), err, schedJSON(t, got))
			}
		})
	}

	in := heartbeat.Schedule{Kind: heartbeat.ScheduleAt, At: "whenever"}
	if _, err := in.Resolve(schedNow); err == nil || !strings.Contains(err.Error(), `"whenever"`) {
		t.Errorf("Resolve(%q) error = %v; want one naming the value", in.At, err)
	}
	cronIn := heartbeat.Schedule{Kind: heartbeat.ScheduleCron, Expr: "0 * * * *"}
	if _, err := cronIn.Resolve(schedNow); err != nil || cronIn.StaggerMs != nil {
		t.Errorf("Resolve modified its receiver: %+v, %v", cronIn, err)
	}
}

func schedJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// schedNextTest is one Next call: after, and the run wanted (zero for none).
type schedNextTest struct {
	name  string
	s     heartbeat.Schedule
	job   string
	after time.Time
	want  time.Time
}

func runSchedNextTests(t *testing.T, tests []schedNextTest) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.s.Next(tt.after, tt.job)
			if tt.want.IsZero() {
				if ok {
					t.Fatalf("Next(%v) = %v; want none", tt.after, got)
				}
				return
			}
			if !ok || !got.Equal(tt.want) {
				t.Fatalf("Next(%v) = %v, %v; want %v", tt.after, got.UTC(), ok, tt.want.UTC())
			}
			if got.Location() != tt.after.Location() {
				t.Errorf("Next location = %v, want after's %v", got.Location(), tt.after.Location())
			}
		})
	}
}

func TestScheduleNextAt(t *testing.T) {
	at := heartbeat.Schedule{Kind: heartbeat.ScheduleAt, At: "2026-03-01T12:20:00.000Z"}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	runSchedNextTests(t, []schedNextTest{
		{"future", at, "j", schedNow, schedUTC("2026-03-01T12:20:00Z")},
		{"in after's zone", at, "j", schedNow.In(berlin), schedUTC("2026-03-01T12:20:00Z")},
		{"just before", at, "j", schedUTC("2026-03-01T12:19:59.999Z"), schedUTC("2026-03-01T12:20:00Z")},
		{"exactly at is not after", at, "j", schedUTC("2026-03-01T12:20:00Z"), time.Time{}},
		{"past", at, "j", schedNow.Add(time.Hour), time.Time{}},
		{"offset form", heartbeat.Schedule{Kind: heartbeat.ScheduleAt, At: "2026-03-01T13:20:00+01:00"}, "j", schedNow, schedUTC("2026-03-01T12:20:00Z")},
		{"unresolved relative has no instant", heartbeat.Schedule{Kind: heartbeat.ScheduleAt, At: "20m"}, "j", schedNow, time.Time{}},
		{"garbage", heartbeat.Schedule{Kind: heartbeat.ScheduleAt, At: "soon"}, "j", schedNow, time.Time{}},
	})
}

func TestScheduleNextEvery(t *testing.T) {
	minute := heartbeat.Schedule{Kind: heartbeat.ScheduleEvery, EveryMs: 60_000}
	anchored := heartbeat.Schedule{Kind: heartbeat.ScheduleEvery, EveryMs: 60_000, AnchorMs: schedNow.UnixMilli() + 15_000}
	runSchedNextTests(t, []schedNextTest{
		{"epoch anchor, on an instant", minute, "j", schedNow, schedNow.Add(time.Minute)},
		{"epoch anchor, between", minute, "j", schedNow.Add(500 * time.Millisecond), schedNow.Add(time.Minute)},
		{"epoch anchor, just before", minute, "j", schedNow.Add(-time.Nanosecond), schedNow},
		{"anchor in the future runs at the anchor", anchored, "j", schedNow, schedNow.Add(15 * time.Second)},
		{"just before the anchor", anchored, "j", schedNow.Add(15*time.Second - time.Nanosecond), schedNow.Add(15 * time.Second)},
		{"at the anchor", anchored, "j", schedNow.Add(15 * time.Second), schedNow.Add(75 * time.Second)},
		{"counts from the anchor", anchored, "j", schedNow.Add(10 * time.Minute), schedNow.Add(10*time.Minute + 15*time.Second)},
		{"odd interval", heartbeat.Schedule{Kind: heartbeat.ScheduleEvery, EveryMs: 7, AnchorMs: 3}, "j", time.UnixMilli(100), time.UnixMilli(101)},
		{"before the epoch", minute, "j", time.UnixMilli(-90_000), time.UnixMilli(0)},
		{"every 0 has none", heartbeat.Schedule{Kind: heartbeat.ScheduleEvery}, "j", schedNow, time.Time{}},
		{"overflow has none", heartbeat.Schedule{Kind: heartbeat.ScheduleEvery, EveryMs: math.MaxInt64, AnchorMs: 1}, "j", time.UnixMilli(2), time.Time{}},
		{"last representable", heartbeat.Schedule{Kind: heartbeat.ScheduleEvery, EveryMs: math.MaxInt64 - 1, AnchorMs: 1}, "j", time.UnixMilli(2), time.UnixMilli(math.MaxInt64)},
	})

	// Successive runs are one interval apart.
	s := heartbeat.Schedule{Kind: heartbeat.ScheduleEvery, EveryMs: 90_000, AnchorMs: 1_000}
	at := schedNow
	var runs []time.Time
	for range 3 {
		next, ok := s.Next(at, "j")
		if !ok {
			t.Fatal("no next run")
		}
		runs = append(runs, next)
		at = next
	}
	for i := 1; i < len(runs); i++ {
		if d := runs[i].Sub(runs[i-1]); d != 90*time.Second {
			t.Errorf("runs %v: gap %v, want 90s", runs, d)
		}
	}
}

func TestScheduleNextCron(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	runSchedNextTests(t, []schedNextTest{
		{"5 fields", schedExact("0 9 * * *", "UTC"), "j", schedUTC("2026-03-01T08:59:59.999Z"), schedUTC("2026-03-01T09:00:00Z")},
		{"strictly after", schedExact("0 9 * * *", "UTC"), "j", schedUTC("2026-03-01T09:00:00Z"), schedUTC("2026-03-02T09:00:00Z")},
		{"6 fields, seconds first", schedExact("30 0 9 * * *", "UTC"), "j", schedUTC("2026-03-01T08:00:00Z"), schedUTC("2026-03-01T09:00:30Z")},
		{"6 fields, every 10 seconds", schedExact("*/10 * * * * *", "UTC"), "j", schedUTC("2026-03-01T12:00:05Z"), schedUTC("2026-03-01T12:00:10Z")},
		{"sub-second after", schedExact("*/10 * * * * *", "UTC"), "j", schedUTC("2026-03-01T12:00:09.999Z"), schedUTC("2026-03-01T12:00:10Z")},
		{"tz", schedExact("0 9 * * 1", "Europe/Berlin"), "j", schedNow, schedUTC("2026-03-02T08:00:00Z")},
		{"tz in summer", schedExact("0 9 * * 1", "Europe/Berlin"), "j", schedUTC("2026-06-01T00:00:00Z"), schedUTC("2026-06-01T07:00:00Z")},
		{"result in after's zone", schedExact("0 9 * * 1", "UTC"), "j", schedNow.In(berlin), schedUTC("2026-03-02T09:00:00Z")},
		{"names", schedExact("0 9 * JAN,MAR sun", "UTC"), "j", schedUTC("2026-02-01T10:00:00Z"), schedUTC("2026-03-01T09:00:00Z")},
		// Day of month and day of week both restricted: either matches
		// (Vixie cron, croner). 13 April 2026 is a Monday.
		{"dom OR dow: the 13th", schedExact("0 9 13 * 5", "UTC"), "j", schedUTC("2026-04-11T00:00:00Z"), schedUTC("2026-04-13T09:00:00Z")},
		{"dom OR dow: a Friday", schedExact("0 9 13 * 5", "UTC"), "j", schedUTC("2026-04-13T09:00:00Z"), schedUTC("2026-04-17T09:00:00Z")},
		{"dom alone", schedExact("0 9 13 * *", "UTC"), "j", schedUTC("2026-04-13T09:00:00Z"), schedUTC("2026-05-13T09:00:00Z")},
		{"dow alone", schedExact("0 9 * * 5", "UTC"), "j", schedUTC("2026-04-11T00:00:00Z"), schedUTC("2026-04-17T09:00:00Z")},
		{"dom ? with dow", schedExact("0 9 ? * 5", "UTC"), "j", schedUTC("2026-04-11T00:00:00Z"), schedUTC("2026-04-17T09:00:00Z")},
		{"stepped dom OR dow", schedExact("0 9 */10 * 5", "UTC"), "j", schedUTC("2026-04-01T10:00:00Z"), schedUTC("2026-04-03T09:00:00Z")},
		// 7 is Sunday too, as in croner.
		{"7 is Sunday", schedExact("0 9 * * 7", "UTC"), "j", schedUTC("2026-03-05T10:00:00Z"), schedUTC("2026-03-08T09:00:00Z")},
		{"5-7 ends on Sunday", schedExact("0 9 * * 5-7", "UTC"), "j", schedUTC("2026-03-07T10:00:00Z"), schedUTC("2026-03-08T09:00:00Z")},
		{"5-7 skips Monday", schedExact("0 9 * * 5-7", "UTC"), "j", schedUTC("2026-03-08T10:00:00Z"), schedUTC("2026-03-13T09:00:00Z")},
		{"never (30 February)", schedExact("0 0 30 2 *", "UTC"), "j", schedNow, time.Time{}},
		{"invalid expression", schedExact("0 9 * *", "UTC"), "j", schedNow, time.Time{}},
		{"unknown zone", schedExact("0 9 * * *", "Mars/Olympus"), "j", schedNow, time.Time{}},
	})
}

// TestScheduleNextCronHostZone: without tz the expression is read in the
// host's zone, as in OpenClaw.
func TestScheduleNextCronHostZone(t *testing.T) {
	after := time.Date(2026, 6, 15, 10, 0, 0, 0, time.Local)
	got, ok := schedExact("0 9 * * *", "").Next(after, "j")
	if want := time.Date(2026, 6, 16, 9, 0, 0, 0, time.Local); !ok || !got.Equal(want) {
		t.Fatalf("Next = %v, %v; want %v (09:00 host time)", got, ok, want)
	}
}

// TestScheduleNextCronDST checks the daylight-saving changes in New York in
// 2026: clocks go from 02:00 EST to 03:00 EDT on 8 March and from 02:00 EDT
// back to 01:00 EST on 1 November. The expected times are croner 10's
// (OpenClaw's cron library).
func TestScheduleNextCronDST(t *testing.T) {
	const ny = "America/New_York"
	runSchedNextTests(t, []schedNextTest{
		// 02:30 does not exist on 8 March; the job runs an hour later, at
		// 03:30 EDT, then at 02:30 EDT as usual.
		{"02:30 the day before", schedExact("30 2 * * *", ny), "j", schedUTC("2026-03-06T07:30:00Z"), schedUTC("2026-03-07T07:30:00Z")},
		{"02:30 on the spring-forward day", schedExact("30 2 * * *", ny), "j", schedUTC("2026-03-07T07:30:00Z"), schedUTC("2026-03-08T07:30:00Z")},
		{"02:30 the day after", schedExact("30 2 * * *", ny), "j", schedUTC("2026-03-08T07:30:00Z"), schedUTC("2026-03-09T06:30:00Z")},
		// croner answers 9 March here: its result depends on where the search
		// starts. Here a run has one instant however late one asks.
		{"from inside the shifted hour", schedExact("30 2 * * *", ny), "j", schedUTC("2026-03-08T07:10:00Z"), schedUTC("2026-03-08T07:30:00Z")},
		{"03:30 on the spring-forward day", schedExact("30 3 * * *", ny), "j", schedUTC("2026-03-07T08:30:00Z"), schedUTC("2026-03-08T07:30:00Z")},
		{"01:30 on the spring-forward day", schedExact("30 1 * * *", ny), "j", schedUTC("2026-03-07T06:30:00Z"), schedUTC("2026-03-08T06:30:00Z")},
		{"half-hourly across the gap", schedExact("*/30 * * * *", ny), "j", schedUTC("2026-03-08T06:30:00Z"), schedUTC("2026-03-08T07:00:00Z")},
		{"half-hourly after the gap", schedExact("*/30 * * * *", ny), "j", schedUTC("2026-03-08T07:00:00Z"), schedUTC("2026-03-08T07:30:00Z")},
		// 01:30 happens twice on 1 November; the job runs at the first.
		{"01:30 on the fall-back day", schedExact("30 1 * * *", ny), "j", schedUTC("2026-10-31T05:30:00Z"), schedUTC("2026-11-01T05:30:00Z")},
		{"01:30 not again an hour later", schedExact("30 1 * * *", ny), "j", schedUTC("2026-11-01T05:30:00Z"), schedUTC("2026-11-02T06:30:00Z")},
		{"half-hourly skips the repeated hour", schedExact("*/30 * * * *", ny), "j", schedUTC("2026-11-01T05:30:00Z"), schedUTC("2026-11-01T07:00:00Z")},
		{"02:00 after the repeated hour", schedExact("0 2 * * *", ny), "j", schedUTC("2026-11-01T05:00:00Z"), schedUTC("2026-11-01T07:00:00Z")},
	})
}

// openClawStagger is OpenClaw's resolveStableCronOffsetMs, written out here to
// check the package against.
func openClawStagger(jobID string, window time.Duration) time.Duration {
	sum := sha256.Sum256([]byte(jobID))
	return time.Duration(int64(binary.BigEndian.Uint32(sum[:4]))%window.Milliseconds()) * time.Millisecond
}

func TestScheduleStagger(t *testing.T) {
	hourly := heartbeat.Schedule{Kind: heartbeat.ScheduleCron, Expr: "0 * * * *"}

	// Golden values from node: crypto.createHash("sha256").update(id)
	// .digest().readUInt32BE(0) % 300000, as OpenClaw computes them.
	for id, want := range map[string]time.Duration{
		"job-1":        47_897 * time.Millisecond,
		"daily-report": 122_429 * time.Millisecond,
		"a":            226_610 * time.Millisecond,
	} {
		if got := hourly.Stagger(id); got != want {
			t.Errorf("Stagger(%q) = %v, want %v", id, got, want)
		}
		if got := hourly.Stagger(id); got != want {
			t.Errorf("Stagger(%q) second call = %v, want %v", id, got, want)
		}
	}

	// Offsets lie in [0, 5m) and spread over the window.
	seen := map[time.Duration]bool{}
	for i := range 1000 {
		id := fmt.Sprintf("job-%d", i)
		got := hourly.Stagger(id)
		if got < 0 || got >= 5*time.Minute {
			t.Fatalf("Stagger(%q) = %v, outside [0, 5m)", id, got)
		}
		if got != openClawStagger(id, 5*time.Minute) {
			t.Fatalf("Stagger(%q) = %v, want %v", id, got, openClawStagger(id, 5*time.Minute))
		}
		seen[got/time.Minute] = true
	}
	if len(seen) != 5 {
		t.Errorf("1000 offsets fell in %d of the 5 minutes", len(seen))
	}

	// Which expressions get the automatic stagger: OpenClaw's
	// isRecurringTopOfHourCronExpr.
	for expr, staggered := range map[string]bool{
		"0 * * * *":        true,
		"0 */2 * * *":      true,
		"0 *,12 * * *":     true,
		"0 * * * 1-5":      true,
		"0 0 * * * *":      true,
		"  0  *  * * * ":   true,
		"0 9 * * *":        false,
		"0 9-17 * * *":     false,
		"0 0 * * *":        false,
		"5 * * * *":        false,
		"*/15 * * * *":     false,
		"30 0 * * * *":     false,
		"0 * * * * *":      false,
		"0 0 */2 * * *":    true,
		"0 0 9 * * *":      false,
		"0 * * *":          false,
		"0 *,x * * *":      false,
		"0 0 0 * * * *":    false,
		"0 */2,9-17 * * *": true,
	} {
		s := heartbeat.Schedule{Kind: heartbeat.ScheduleCron, Expr: expr}
		want := time.Duration(0)
		if staggered {
			want = 47_897 * time.Millisecond
		}
		if got := s.Stagger("job-1"); got != want {
			t.Errorf("%q: Stagger = %v, want %v", expr, got, want)
		}
	}

	// An explicit staggerMs is the window; 0 (--schedExact) turns it off.
	for _, tt := range []struct {
		s    heartbeat.Schedule
		want time.Duration
	}{
		{heartbeat.Schedule{Kind: heartbeat.ScheduleCron, Expr: "0 * * * *", StaggerMs: schedMs(0)}, 0},
		{heartbeat.Schedule{Kind: heartbeat.ScheduleCron, Expr: "0 * * * *", StaggerMs: schedMs(1)}, 0},
		{heartbeat.Schedule{Kind: heartbeat.ScheduleCron, Expr: "0 * * * *", StaggerMs: schedMs(-5)}, 0},
		{heartbeat.Schedule{Kind: heartbeat.ScheduleCron, Expr: "0 9 * * *", StaggerMs: schedMs(60_000)}, 2429 * time.Millisecond},
		{heartbeat.Schedule{Kind: heartbeat.ScheduleCron, Expr: "0 * * * *", StaggerMs: schedMs(300_000)}, 122_429 * time.Millisecond},
		{heartbeat.Schedule{Kind: heartbeat.ScheduleEvery, EveryMs: 3_600_000, StaggerMs: schedMs(60_000)}, 0},
		{heartbeat.Schedule{Kind: heartbeat.ScheduleAt, At: "2026-11-21T09:00:00Z", StaggerMs: schedMs(60_000)}, 0},
	} {
		if got := tt.s.Stagger("daily-report"); got != tt.want {
			t.Errorf("%+v: Stagger = %v, want %v", tt.s, got, tt.want)
		}
	}
}

func TestScheduleNextStaggered(t *testing.T) {
	const off = 47_897 * time.Millisecond // Stagger("job-1") of an hourly job
	hourly := heartbeat.Schedule{Kind: heartbeat.ScheduleCron, Expr: "0 * * * *", TZ: "UTC"}
	runSchedNextTests(t, []schedNextTest{
		// The slot of the current hour has not passed yet.
		{"on the hour", hourly, "job-1", schedNow, schedNow.Add(off)},
		{"just before the slot", hourly, "job-1", schedNow.Add(off - time.Millisecond), schedNow.Add(off)},
		{"at the slot", hourly, "job-1", schedNow.Add(off), schedNow.Add(time.Hour + off)},
		{"before the hour", hourly, "job-1", schedNow.Add(-time.Minute), schedNow.Add(off)},
		{"schedExact", schedExact("0 * * * *", "UTC"), "job-1", schedNow, schedNow.Add(time.Hour)},
		{"other job, other slot", hourly, "daily-report", schedNow, schedNow.Add(122_429 * time.Millisecond)},
		{"explicit window", heartbeat.Schedule{Kind: heartbeat.ScheduleCron, Expr: "0 9 * * *", TZ: "UTC", StaggerMs: schedMs(60_000)}, "daily-report", schedUTC("2026-03-01T09:00:02Z"), schedUTC("2026-03-01T09:00:02.429Z")},
	})
}

func TestScheduleGrace(t *testing.T) {
	tests := []struct {
		name string
		s    heartbeat.Schedule
		want time.Duration
	}{
		{"every minute", heartbeat.Schedule{Kind: heartbeat.ScheduleEvery, EveryMs: 60_000}, time.Minute},
		{"every 1ms", heartbeat.Schedule{Kind: heartbeat.ScheduleEvery, EveryMs: 1}, time.Millisecond},
		{"every hour", heartbeat.Schedule{Kind: heartbeat.ScheduleEvery, EveryMs: 3_600_000}, time.Hour},
		{"every 2h is capped", heartbeat.Schedule{Kind: heartbeat.ScheduleEvery, EveryMs: 7_200_000}, time.Hour},
		{"every day is capped", heartbeat.Schedule{Kind: heartbeat.ScheduleEvery, EveryMs: 86_400_000}, time.Hour},
		{"at", heartbeat.Schedule{Kind: heartbeat.ScheduleAt, At: "2026-03-01T12:00:00Z"}, time.Hour},
		{"cron every 15m", schedExact("*/15 * * * *", "UTC"), 15 * time.Minute},
		{"cron every 10s", schedExact("*/10 * * * * *", "UTC"), 10 * time.Second},
		{"cron hourly, staggered", heartbeat.Schedule{Kind: heartbeat.ScheduleCron, Expr: "0 * * * *", TZ: "UTC"}, time.Hour},
		{"cron daily is capped", schedExact("0 9 * * *", "UTC"), time.Hour},
		{"cron: the two runs after the miss", schedExact("0,20 12 * * *", "UTC"), time.Hour},
		{"cron never", schedExact("0 0 30 2 *", "UTC"), time.Hour},
	}
	for _, tt := range tests {
		if got := tt.s.Grace(schedNow, "job-1"); got != tt.want {
			t.Errorf("%s: Grace = %v, want %v", tt.name, got, tt.want)
		}
	}
	// After a 12:00 miss, "0,20,30 12 * * *" runs at 12:20 and 12:30.
	if got := schedExact("0,20,30 12 * * *", "UTC").Grace(schedNow, "j"); got != 10*time.Minute {
		t.Errorf("Grace = %v, want 10m", got)
	}
}

func TestScheduleJSON(t *testing.T) {
	for _, in := range []string{
		`{"kind":"every","everyMs":60000}`,
		`{"kind":"every","everyMs":60000,"anchorMs":1772366400000}`,
		`{"kind":"at","at":"2026-11-21T09:00:00.000Z"}`,
		`{"kind":"cron","expr":"0 9 * * 1","tz":"Europe/Berlin"}`,
		`{"kind":"cron","expr":"0 * * * *","staggerMs":0}`,
		`{"kind":"cron","expr":"0 * * * *","tz":"UTC","staggerMs":300000}`,
	} {
		var s heartbeat.Schedule
		if err := json.Unmarshal([]byte(in), &s); err != nil {
			t.Fatalf("Unmarshal(%s): %v", in, err)
		}
		if err := s.Validate(); err != nil {
			t.Errorf("%s: Validate() = %v", in, err)
		}
		if out := schedJSON(t, s); out != in {
			t.Errorf("round trip of %s gave %s", in, out)
		}
	}

	var s heartbeat.Schedule
	if err := json.Unmarshal([]byte(`{"kind":"CRON","expr":"0 9 * * *"}`), &s); err != nil || s.Kind != heartbeat.ScheduleCron || s.StaggerMs != nil {
		t.Errorf("Unmarshal upper-case kind = %+v, %v", s, err)
	}
	err := json.Unmarshal([]byte(`{"kind":"weekly"}`), &s)
	if err == nil || !strings.Contains(err.Error(), `unknown schedule kind "weekly"; use one of at, every, cron`) {
		t.Errorf("Unmarshal unknown kind: %v", err)
	}
}

func TestScheduleString(t *testing.T) {
	for _, tt := range []struct {
		s    heartbeat.Schedule
		want string
	}{
		{heartbeat.Schedule{Kind: heartbeat.ScheduleEvery, EveryMs: 3_600_000}, "every 1h"},
		{heartbeat.Schedule{Kind: heartbeat.ScheduleEvery, EveryMs: 90_000}, "every 1m30s"},
		{heartbeat.Schedule{Kind: heartbeat.ScheduleEvery, EveryMs: 86_400_000 + 1500}, "every 1d1s500ms"},
		{heartbeat.Schedule{Kind: heartbeat.ScheduleEvery}, "every 0ms"},
		{heartbeat.Schedule{Kind: heartbeat.ScheduleCron, Expr: "0 9 * * 1", TZ: "Europe/Berlin"}, "cron 0 9 * * 1 (Europe/Berlin)"},
		{heartbeat.Schedule{Kind: heartbeat.ScheduleCron, Expr: "0 9 * * 1"}, "cron 0 9 * * 1"},
		{heartbeat.Schedule{Kind: heartbeat.ScheduleAt, At: "2026-11-21T09:00:00.000Z"}, "at 2026-11-21T09:00:00Z"},
		{heartbeat.Schedule{Kind: heartbeat.ScheduleAt, At: "2026-11-21T10:00:00.5+01:00"}, "at 2026-11-21T09:00:00.5Z"},
		{heartbeat.Schedule{Kind: heartbeat.ScheduleAt, At: "20m"}, "at 20m"},
		{heartbeat.Schedule{Kind: "weekly"}, `schedule of unknown kind "weekly"`},
	} {
		if got := tt.s.String(); got != tt.want {
			t.Errorf("%+v: String() = %q, want %q", tt.s, got, tt.want)
		}
	}
}

func BenchmarkScheduleNext(b *testing.B) {
	for _, s := range []heartbeat.Schedule{
		{Kind: heartbeat.ScheduleEvery, EveryMs: 60_000, AnchorMs: 1},
		{Kind: heartbeat.ScheduleCron, Expr: "0 * * * *", TZ: "UTC"},
		{Kind: heartbeat.ScheduleCron, Expr: "30 2 * * 1-5", TZ: "America/New_York"},
		{Kind: heartbeat.ScheduleCron, Expr: "0 0 30 2 *", TZ: "Europe/Berlin"},
	} {
		b.Run(s.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := s.Next(schedNow, "job-1"); !ok && s.Expr != "0 0 30 2 *" {
					b.Fatal("no next run")
				}
			}
		})
	}
}
