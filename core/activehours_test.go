package core_test

import (
	"errors"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the zone tests must not depend on the host's zoneinfo

	"github.com/switchboardhq/switchboard/core"
)

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("LoadLocation(%q): %v", name, err)
	}
	return loc
}

func utcAt(t *testing.T, s string) time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("parse %q: %v", s, err)
	}
	return ts
}

func TestActiveHoursActive(t *testing.T) {
	newYork := mustZone(t, "America/New_York")
	kolkata := mustZone(t, "Asia/Kolkata")

	type row struct {
		name string
		ah   core.ActiveHours
		at   string         // RFC 3339 instant
		user *time.Location // the user's zone passed to Active
		want bool
	}
	office := func(tz string) core.ActiveHours { return core.ActiveHours{Start: "09:00", End: "17:00", Timezone: tz} }
	rows := []row{
		{"zero value is always active", core.ActiveHours{}, "2026-01-01T03:00:00Z", time.UTC, true},
		{"zero window with a zone is always active", core.ActiveHours{Timezone: "Asia/Kolkata"}, "2026-01-01T03:00:00Z", time.UTC, true},

		// 2026-03-08 02:00 EST became 03:00 EDT. 13:30 UTC is 08:30 the day
		// before and 09:30 the day after.
		{"New York before DST: 13:30Z is 08:30 EST", office("America/New_York"), "2026-03-07T13:30:00Z", nil, false},
		{"New York after DST: 13:30Z is 09:30 EDT", office("America/New_York"), "2026-03-09T13:30:00Z", nil, true},
		{"New York before DST: 14:00Z is 09:00 EST", office("America/New_York"), "2026-03-07T14:00:00Z", nil, true},
		{"New York after DST: 21:30Z is 17:30 EDT", office("America/New_York"), "2026-03-09T21:30:00Z", nil, false},
		{"New York before DST: 21:30Z is 16:30 EST", office("America/New_York"), "2026-03-07T21:30:00Z", nil, true},
		{"UTC does not move with DST (before)", office("UTC"), "2026-03-07T13:30:00Z", newYork, true},
		{"UTC does not move with DST (after)", office("UTC"), "2026-03-09T08:59:00Z", newYork, false},

		// Asia/Kolkata is UTC+05:30.
		{"Kolkata 03:29Z is 08:59", office("Asia/Kolkata"), "2026-06-15T03:29:00Z", nil, false},
		{"Kolkata 03:30Z is 09:00, start inclusive", office("Asia/Kolkata"), "2026-06-15T03:30:00Z", nil, true},
		{"Kolkata 11:29Z is 16:59", office("Asia/Kolkata"), "2026-06-15T11:29:00Z", nil, true},
		{"Kolkata 11:30Z is 17:00, end exclusive", office("Asia/Kolkata"), "2026-06-15T11:30:00Z", nil, false},

		// Zone resolution.
		{"empty zone is the user's", office(""), "2026-06-15T03:30:00Z", kolkata, true},
		{"user zone is the user's", office("user"), "2026-06-15T03:30:00Z", kolkata, true},
		{"user zone in UTC", office("user"), "2026-06-15T03:30:00Z", time.UTC, false},
		{"IANA zone wins over the user's", office("UTC"), "2026-06-15T03:30:00Z", kolkata, false},
		{"unknown zone falls back to the user's", office("Mars/Olympus_Mons"), "2026-06-15T03:30:00Z", kolkata, true},
		{"unknown zone falls back to the user's (UTC)", office("Mars/Olympus_Mons"), "2026-06-15T03:30:00Z", time.UTC, false},

		// Boundaries in UTC.
		{"start minute is inside", office("UTC"), "2026-06-15T09:00:00Z", nil, true},
		{"minute before start is outside", office("UTC"), "2026-06-15T08:59:59.999Z", nil, false},
		{"last second before end is inside", office("UTC"), "2026-06-15T16:59:59.999Z", nil, true},
		{"end minute is outside", office("UTC"), "2026-06-15T17:00:00Z", nil, false},

		// "24:00" end.
		{"24:00 end: 23:59 inside", core.ActiveHours{Start: "22:00", End: "24:00", Timezone: "UTC"}, "2026-06-15T23:59:59Z", nil, true},
		{"24:00 end: 22:00 inside", core.ActiveHours{Start: "22:00", End: "24:00", Timezone: "UTC"}, "2026-06-15T22:00:00Z", nil, true},
		{"24:00 end: midnight outside", core.ActiveHours{Start: "22:00", End: "24:00", Timezone: "UTC"}, "2026-06-16T00:00:00Z", nil, false},
		{"24:00 end: 21:59 outside", core.ActiveHours{Start: "22:00", End: "24:00", Timezone: "UTC"}, "2026-06-15T21:59:00Z", nil, false},
		{"00:00 to 24:00 covers midnight", core.ActiveHours{Start: "00:00", End: "24:00", Timezone: "UTC"}, "2026-06-16T00:00:00Z", nil, true},
		{"00:00 to 24:00 covers 23:59", core.ActiveHours{Start: "00:00", End: "24:00", Timezone: "UTC"}, "2026-06-16T23:59:00Z", nil, true},

		// start == end is an empty window.
		{"start == end: at start", core.ActiveHours{Start: "08:00", End: "08:00", Timezone: "UTC"}, "2026-06-15T08:00:00Z", nil, false},
		{"start == end: midday", core.ActiveHours{Start: "08:00", End: "08:00", Timezone: "UTC"}, "2026-06-15T12:00:00Z", nil, false},
		{"00:00 to 00:00 is empty too", core.ActiveHours{Start: "00:00", End: "00:00", Timezone: "UTC"}, "2026-06-15T00:00:00Z", nil, false},

		// Windows that wrap past midnight.
		{"night: 22:00 inside", core.ActiveHours{Start: "22:00", End: "06:00", Timezone: "UTC"}, "2026-06-15T22:00:00Z", nil, true},
		{"night: 23:30 inside", core.ActiveHours{Start: "22:00", End: "06:00", Timezone: "UTC"}, "2026-06-15T23:30:00Z", nil, true},
		{"night: 00:00 inside", core.ActiveHours{Start: "22:00", End: "06:00", Timezone: "UTC"}, "2026-06-16T00:00:00Z", nil, true},
		{"night: 05:59 inside", core.ActiveHours{Start: "22:00", End: "06:00", Timezone: "UTC"}, "2026-06-16T05:59:00Z", nil, true},
		{"night: 06:00 outside", core.ActiveHours{Start: "22:00", End: "06:00", Timezone: "UTC"}, "2026-06-16T06:00:00Z", nil, false},
		{"night: noon outside", core.ActiveHours{Start: "22:00", End: "06:00", Timezone: "UTC"}, "2026-06-16T12:00:00Z", nil, false},
		{"night: 21:59 outside", core.ActiveHours{Start: "22:00", End: "06:00", Timezone: "UTC"}, "2026-06-15T21:59:00Z", nil, false},
		{"night in Kolkata: 18:00Z is 23:30 IST", core.ActiveHours{Start: "22:00", End: "06:00", Timezone: "Asia/Kolkata"}, "2026-06-15T18:00:00Z", nil, true},
		{"night in Kolkata: 01:00Z is 06:30 IST", core.ActiveHours{Start: "22:00", End: "06:00", Timezone: "Asia/Kolkata"}, "2026-06-16T01:00:00Z", nil, false},

		// Invalid windows do not limit heartbeats (OpenClaw fails open).
		{"start 24:00 is invalid: active", core.ActiveHours{Start: "24:00", End: "06:00", Timezone: "UTC"}, "2026-06-15T12:00:00Z", nil, true},
		{"end 25:00 is invalid: active", core.ActiveHours{Start: "09:00", End: "25:00", Timezone: "UTC"}, "2026-06-15T03:00:00Z", nil, true},
		{"one-digit hour is invalid: active", core.ActiveHours{Start: "9:00", End: "17:00", Timezone: "UTC"}, "2026-06-15T03:00:00Z", nil, true},
		{"missing end: active", core.ActiveHours{Start: "09:00", Timezone: "UTC"}, "2026-06-15T03:00:00Z", nil, true},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			at := utcAt(t, r.at)
			if got := r.ah.Active(at, r.user); got != r.want {
				t.Errorf("%+v.Active(%s, %v) = %v, want %v", r.ah, r.at, r.user, got, r.want)
			}
		})
	}
}

// TestActiveHoursActiveIgnoresInputZone checks that the instant, not the
// zone t happens to carry, decides.
func TestActiveHoursActiveIgnoresInputZone(t *testing.T) {
	ah := core.ActiveHours{Start: "09:00", End: "17:00", Timezone: "Asia/Kolkata"}
	at := utcAt(t, "2026-06-15T03:30:00Z")
	for _, loc := range []*time.Location{time.UTC, mustZone(t, "America/New_York"), mustZone(t, "Pacific/Chatham")} {
		if !ah.Active(at.In(loc), nil) {
			t.Errorf("Active(%v) = false, want true", at.In(loc))
		}
	}
}

func TestActiveHoursLocation(t *testing.T) {
	kolkata := mustZone(t, "Asia/Kolkata")
	rows := []struct {
		tz   string
		user *time.Location
		want *time.Location
	}{
		{"", kolkata, kolkata},
		{"user", kolkata, kolkata},
		{"", nil, time.Local},
		{"user", nil, time.Local},
		{"local", kolkata, time.Local},
		{" user ", kolkata, kolkata},
	}
	for _, r := range rows {
		got, err := core.ActiveHours{Timezone: r.tz}.Location(r.user)
		if err != nil || got != r.want {
			t.Errorf("Location(%q, %v) = %v, %v; want %v", r.tz, r.user, got, err, r.want)
		}
	}

	got, err := core.ActiveHours{Timezone: "Europe/Berlin"}.Location(kolkata)
	if err != nil || got.String() != "Europe/Berlin" {
		t.Errorf("Location(Europe/Berlin) = %v, %v", got, err)
	}

	_, err = core.ActiveHours{Timezone: "Mars/Olympus_Mons"}.Location(kolkata)
	var fe *core.FieldError
	if !errors.As(err, &fe) || fe.Path != "timezone" || !strings.Contains(fe.Message, `"Mars/Olympus_Mons"`) {
		t.Errorf("Location(Mars/Olympus_Mons) error = %v, want a timezone FieldError naming it", err)
	}
}

func TestActiveHoursIsZero(t *testing.T) {
	if !(core.ActiveHours{}).IsZero() || !(core.ActiveHours{Timezone: "UTC"}).IsZero() {
		t.Error("a window without start and end must be zero")
	}
	if (core.ActiveHours{Start: "09:00"}).IsZero() || (core.ActiveHours{End: "17:00"}).IsZero() {
		t.Error("a window with start or end must not be zero")
	}
}

func TestActiveHoursValidate(t *testing.T) {
	valid := []core.ActiveHours{
		{},
		{Start: "09:00", End: "17:00"},
		{Start: "00:00", End: "24:00", Timezone: "user"},
		{Start: "22:00", End: "06:00", Timezone: "local"},
		{Start: "08:00", End: "08:00", Timezone: "UTC"},
		{Start: "23:59", End: "00:00", Timezone: "Asia/Kolkata"},
		{Start: "09:30", End: "17:45", Timezone: "America/New_York"},
	}
	for _, ah := range valid {
		if err := ah.Validate(); err != nil {
			t.Errorf("%+v.Validate() = %v, want nil", ah, err)
		}
	}

	type fieldMsg struct{ path, msg string }
	invalid := []struct {
		ah   core.ActiveHours
		want []fieldMsg
	}{
		{core.ActiveHours{Start: "25:00", End: "17:00"}, []fieldMsg{{"start", `"25:00" must be a time of day "HH:MM" from 00:00 to 23:59`}}},
		{core.ActiveHours{Start: "24:00", End: "06:00"}, []fieldMsg{{"start", `"24:00" must be a time of day "HH:MM" from 00:00 to 23:59`}}},
		{core.ActiveHours{Start: "09:60", End: "17:00"}, []fieldMsg{{"start", `"09:60" must be a time of day "HH:MM" from 00:00 to 23:59`}}},
		{core.ActiveHours{Start: "9:00", End: "17:00"}, []fieldMsg{{"start", `"9:00" must be a time of day "HH:MM" from 00:00 to 23:59`}}},
		{core.ActiveHours{Start: " 09:00", End: "17:00"}, []fieldMsg{{"start", `" 09:00" must be a time of day "HH:MM" from 00:00 to 23:59`}}},
		{core.ActiveHours{Start: "09:00", End: "24:01"}, []fieldMsg{{"end", `"24:01" must be a time of day "HH:MM" from 00:00 to 24:00`}}},
		{core.ActiveHours{Start: "09:00", End: "5pm"}, []fieldMsg{{"end", `"5pm" must be a time of day "HH:MM" from 00:00 to 24:00`}}},
		{core.ActiveHours{Start: "09:00"}, []fieldMsg{{"end", `required when start is set; write a time of day "HH:MM" such as "22:00", or "24:00" for midnight`}}},
		{core.ActiveHours{End: "17:00"}, []fieldMsg{{"start", `required when end is set; write a time of day "HH:MM" such as "08:00"`}}},
		{core.ActiveHours{Timezone: "UTC"}, []fieldMsg{{"start", `required when timezone is set; write a time of day "HH:MM" such as "08:00", and an end such as "22:00"`}}},
		{core.ActiveHours{Start: "09:00", End: "17:00", Timezone: "Mars/Olympus_Mons"}, []fieldMsg{{"timezone", `"Mars/Olympus_Mons" is not a known time zone; use "user", "local" or an IANA name such as "America/New_York"`}}},
		{core.ActiveHours{Start: "24:00", End: "99:99", Timezone: "Nowhere"}, []fieldMsg{
			{"start", `"24:00" must be a time of day "HH:MM" from 00:00 to 23:59`},
			{"end", `"99:99" must be a time of day "HH:MM" from 00:00 to 24:00`},
			{"timezone", `"Nowhere" is not a known time zone; use "user", "local" or an IANA name such as "America/New_York"`},
		}},
	}
	for _, r := range invalid {
		err := r.ah.Validate()
		if err == nil {
			t.Errorf("%+v.Validate() = nil, want errors", r.ah)
			continue
		}
		var got []fieldMsg
		for _, e := range unwrapJoined(err) {
			var fe *core.FieldError
			if !errors.As(e, &fe) {
				t.Errorf("%+v.Validate(): %v is not a *core.FieldError", r.ah, e)
				continue
			}
			got = append(got, fieldMsg{fe.Path, fe.Message})
		}
		if len(got) != len(r.want) {
			t.Errorf("%+v.Validate() = %q, want %q", r.ah, got, r.want)
			continue
		}
		for i := range got {
			if got[i] != r.want[i] {
				t.Errorf("%+v.Validate()[%d] = %q, want %q", r.ah, i, got[i], r.want[i])
			}
		}
	}
}

// unwrapJoined returns the errors an errors.Join holds, or err alone.
func unwrapJoined(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
