package core

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ActiveHours limits heartbeats to a daily window
// (agents.defaults.heartbeat.activeHours). The zero value sets no window:
// heartbeats may run at any time of day.
//
// The window is compared in minutes of the day in the resolved time zone;
// seconds are ignored, so with End "17:00" the instant 16:59:59 is still
// inside. When End is earlier than Start the window wraps past midnight
// ("22:00" to "06:00" is the night). Start equal to End is an empty window:
// heartbeats never run. "00:00" to "24:00" is the whole day.
type ActiveHours struct {
	// Start is the first minute of the window, "HH:MM" from "00:00" to
	// "23:59", inclusive.
	Start string `json:"start,omitempty"`
	// End is the minute the window closes, "HH:MM" from "00:00" to "24:00",
	// exclusive; "24:00" means midnight at the end of the day.
	End string `json:"end,omitempty"`
	// Timezone names the zone Start and End are read in: "user" (the
	// default) is the user's time zone (agents.defaults.userTimezone, passed
	// to Location and Active) or the host's when none is set; "local" is
	// the host's zone; anything else is an IANA name such as
	// "Europe/Berlin".
	Timezone string `json:"timezone,omitempty"`
}

// Time-zone keywords of ActiveHours.Timezone.
const (
	activeHoursZoneUser  = "user"
	activeHoursZoneLocal = "local"
)

// IsZero reports whether no window is configured (Start and End are both
// empty); such an ActiveHours is always active.
func (a ActiveHours) IsZero() bool {
	return a.Start == "" && a.End == ""
}

// Validate reports a Start or End that is not a time of day, a window with
// only one end, and an unknown time zone. The zero value is valid. Start
// equal to End is valid: it is an empty window that pauses heartbeats.
func (a ActiveHours) Validate() error {
	var errs []error
	switch {
	case a.IsZero() && strings.TrimSpace(a.Timezone) != "":
		errs = append(errs, FieldErrorf("start", `required when timezone is set; write a time of day "HH:MM" such as "08:00", and an end such as "22:00"`))
	case a.Start == "" && a.End != "":
		errs = append(errs, FieldErrorf("start", `required when end is set; write a time of day "HH:MM" such as "08:00"`))
	case a.Start != "" && a.End == "":
		errs = append(errs, FieldErrorf("end", `required when start is set; write a time of day "HH:MM" such as "22:00", or "24:00" for midnight`))
	}
	if a.Start != "" {
		if _, ok := parseActiveHoursTime(a.Start, false); !ok {
			errs = append(errs, FieldErrorf("start", fmt.Sprintf(`%q must be a time of day "HH:MM" from 00:00 to 23:59`, a.Start)))
		}
	}
	if a.End != "" {
		if _, ok := parseActiveHoursTime(a.End, true); !ok {
			errs = append(errs, FieldErrorf("end", fmt.Sprintf(`%q must be a time of day "HH:MM" from 00:00 to 24:00`, a.End)))
		}
	}
	if _, err := a.Location(nil); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Location resolves Timezone: empty or "user" is user (the host's zone,
// time.Local, when user is nil), "local" is time.Local, and anything else
// is loaded as an IANA zone name. The error for an unknown name is a
// *FieldError for "timezone".
func (a ActiveHours) Location(user *time.Location) (*time.Location, error) {
	name := strings.TrimSpace(a.Timezone)
	switch name {
	case "", activeHoursZoneUser:
		if user == nil {
			return time.Local, nil
		}
		return user, nil
	case activeHoursZoneLocal:
		return time.Local, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, FieldErrorf("timezone", fmt.Sprintf(`%q is not a known time zone; use "user", "local" or an IANA name such as "America/New_York"`, a.Timezone))
	}
	return loc, nil
}

// Active reports whether t falls inside the window, read in the zone
// Location resolves (user is the user's time zone; nil means the host's).
//
// Invalid values follow OpenClaw (isWithinActiveHours in
// src/infra/heartbeat-active-hours.ts) rather than failing closed: a Start
// or End that is missing or not a time of day leaves heartbeats unlimited
// (active), and an unknown time zone falls back to the user's zone.
// Validate rejects all of these when the configuration loads, so only
// values that skipped validation take this path; failing open there keeps
// a typo from silently stopping every heartbeat.
func (a ActiveHours) Active(t time.Time, user *time.Location) bool {
	if a.IsZero() {
		return true
	}
	start, okStart := parseActiveHoursTime(a.Start, false)
	end, okEnd := parseActiveHoursTime(a.End, true)
	if !okStart || !okEnd {
		return true
	}
	if start == end {
		return false
	}
	loc, err := a.Location(user)
	if err != nil {
		loc = user
		if loc == nil {
			loc = time.Local
		}
	}
	local := t.In(loc)
	now := local.Hour()*60 + local.Minute()
	if end > start {
		return now >= start && now < end
	}
	return now >= start || now < end
}

// parseActiveHoursTime returns the minute of the day of an "HH:MM" string:
// exactly two digits each, hours 00–23 and minutes 00–59, plus "24:00"
// (1440) when allow24 is set. Surrounding spaces are not accepted, as in
// OpenClaw.
func parseActiveHoursTime(s string, allow24 bool) (int, bool) {
	if len(s) != 5 || s[2] != ':' {
		return 0, false
	}
	for _, i := range []int{0, 1, 3, 4} {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	hour := int(s[0]-'0')*10 + int(s[1]-'0')
	minute := int(s[3]-'0')*10 + int(s[4]-'0')
	if hour == 24 && minute == 0 && allow24 {
		return 24 * 60, true
	}
	if hour > 23 || minute > 59 {
		return 0, false
	}
	return hour*60 + minute, true
}
