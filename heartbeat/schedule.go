package heartbeat

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/switchboardhq/switchboard/core"
)

// ScheduleKind says how a cron job's run times are given: once at a time
// ("at"), at a fixed interval ("every"), or by a cron expression ("cron").
type ScheduleKind string

// The schedule kinds.
const (
	// ScheduleAt runs the job once, at Schedule.At.
	ScheduleAt ScheduleKind = "at"
	// ScheduleEvery runs the job every Schedule.EveryMs milliseconds,
	// counted from Schedule.AnchorMs.
	ScheduleEvery ScheduleKind = "every"
	// ScheduleCron runs the job when Schedule.Expr matches, in Schedule.TZ.
	ScheduleCron ScheduleKind = "cron"
)

// EnumValues lists the accepted schedule kinds.
func (ScheduleKind) EnumValues() []string {
	return []string{string(ScheduleAt), string(ScheduleEvery), string(ScheduleCron)}
}

// UnmarshalText accepts one of EnumValues, ignoring case and surrounding
// space as OpenClaw does.
func (k *ScheduleKind) UnmarshalText(b []byte) error {
	s := ScheduleKind(strings.ToLower(strings.TrimSpace(string(b))))
	for _, v := range k.EnumValues() {
		if string(s) == v {
			*k = s
			return nil
		}
	}
	return fmt.Errorf("unknown schedule kind %q; use one of %s", s, strings.Join(k.EnumValues(), ", "))
}

// Schedule is when a cron job runs: OpenClaw's CronSchedule, with the same
// JSON shape ({kind:"at", at}, {kind:"every", everyMs, anchorMs?},
// {kind:"cron", expr, tz?, staggerMs?}), so jobs.json files move between
// the two unchanged.
//
// A Schedule is a value; its methods do no IO apart from reading the time
// zone database, and are safe for concurrent use.
type Schedule struct {
	// Kind selects which of the other fields apply.
	Kind ScheduleKind `json:"kind"`
	// At is the run time of an "at" job: an RFC 3339 time (stored by
	// Resolve as UTC with milliseconds, "2026-11-21T09:00:00.000Z"). Before
	// Resolve it may also be a duration from now such as "20m"; see ParseAt.
	At string `json:"at,omitempty"`
	// EveryMs is the interval of an "every" job in milliseconds, at least 1.
	EveryMs int64 `json:"everyMs,omitempty"`
	// AnchorMs is the Unix time in milliseconds the "every" runs count from:
	// runs are at AnchorMs + k*EveryMs. Resolve sets it to the creation time
	// when it is 0, as OpenClaw does; a 0 left in place means the Unix epoch.
	AnchorMs int64 `json:"anchorMs,omitempty"`
	// Expr is the cron expression of a "cron" job: 5 fields (minute hour
	// day-of-month month day-of-week) or 6 with seconds first.
	Expr string `json:"expr,omitempty"`
	// TZ is the IANA time zone Expr is read in, such as "Europe/Berlin".
	// Empty means the host's zone, as in OpenClaw.
	TZ string `json:"tz,omitempty"`
	// StaggerMs is the width of the window, in milliseconds, within which a
	// "cron" job's runs are delayed by a fixed per-job offset so that many
	// jobs on the same expression do not all start at once. nil is
	// automatic: 5 minutes for expressions that fire at the top of every
	// hour (or every few hours), else none. 0 runs exactly on schedule.
	StaggerMs *int64 `json:"staggerMs,omitempty"`
}

// topOfHourStagger is the automatic stagger window of top-of-hour cron
// expressions (OpenClaw's DEFAULT_TOP_OF_HOUR_STAGGER_MS).
const topOfHourStagger = 5 * time.Minute

// atGrace is the missed-run window of "at" jobs and the cap for the others.
const atGrace = time.Hour

// atLayout is how Resolve stores At: JavaScript's toISOString format.
const atLayout = "2006-01-02T15:04:05.000Z"

// atHint lists the accepted forms of an at value, for error messages.
const atHint = `use an RFC 3339 time such as "2026-11-21T09:00:00Z" or "2026-11-21T10:00:00+01:00", ` +
	`a UTC time such as "2026-11-21 09:00" or "2026-11-21", ` +
	`or a duration from now such as "20m", "2h", "1h30m" or "1d"`

// atLayouts are tried in order on an upper-cased at value whose date and
// time are separated by "T". A layout without a zone parses as UTC, and
// time.Parse accepts fractional seconds after the seconds field.
var atLayouts = []string{
	"2006-01-02T15:04:05Z07:00",
	"2006-01-02T15:04:05Z0700",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04Z0700",
	"2006-01-02T15:04:05",
	"2006-01-02T15:04",
	"2006-01-02",
}

// ParseAt resolves an at value to an instant, returned in UTC. It accepts:
//
//   - an RFC 3339 / ISO 8601 time with a zone: "2026-11-21T09:00:00Z",
//     "2026-11-21T10:00:00.5+01:00", "2026-11-21T10:00+0100";
//   - a time without a zone, which is UTC (as in OpenClaw):
//     "2026-11-21T09:00:00", "2026-11-21T09:00", "2026-11-21 09:00", and a
//     bare date "2026-11-21" for midnight UTC;
//   - a string of digits, read as Unix milliseconds (as in OpenClaw);
//   - a positive duration from now, optionally with a leading "+": "20m",
//     "+2h", "1h30m", "1d" (24 hours); see core.ParseDuration for the syntax.
//
// Case is ignored and surrounding space trimmed. Errors name the value and
// show accepted examples.
func ParseAt(s string, now time.Time) (time.Time, error) {
	v := strings.TrimSpace(s)
	if v == "" {
		return time.Time{}, errors.New("no time given; " + atHint)
	}
	t, ok := parseAbsoluteAt(v)
	if !ok {
		d, err := core.ParseDuration(strings.TrimPrefix(v, "+"), 0)
		if err != nil {
			return time.Time{}, fmt.Errorf("%q is neither a time nor a duration; %s", s, atHint)
		}
		if d <= 0 {
			return time.Time{}, fmt.Errorf("%q: a duration from now must be more than 0; %s", s, atHint)
		}
		t = now.Add(d).UTC()
	}
	// Resolve stores four-digit years, as JavaScript's toISOString does.
	if y := t.Year(); y < 1 || y > 9999 {
		return time.Time{}, fmt.Errorf("%q is out of range: %v is not between the years 1 and 9999", s, t)
	}
	return t, nil
}

// parseAbsoluteAt parses the absolute forms ParseAt accepts.
func parseAbsoluteAt(v string) (time.Time, bool) {
	if allASCIIDigits(v) {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms <= 0 {
			return time.Time{}, false
		}
		return time.UnixMilli(ms).UTC(), true
	}
	u := strings.ToUpper(v)
	if len(u) > 11 && u[10] == ' ' {
		u = u[:10] + "T" + u[11:]
	}
	for _, layout := range atLayouts {
		if t, err := time.Parse(layout, u); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

func allASCIIDigits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// ParseEveryMs parses an interval typed on the command line, such as "90s",
// "15m", "2h", "1d" or "1h30m" (see core.ParseDuration for the syntax; a bare number
// needs a unit), into milliseconds for Schedule.EveryMs. The interval must
// be at least 1 ms.
func ParseEveryMs(s string) (int64, error) {
	d, err := core.ParseDuration(s, 0)
	if err != nil {
		return 0, err
	}
	if d < time.Millisecond {
		return 0, fmt.Errorf("invalid interval %q: must be at least 1ms; use values like 90s, 15m, 2h or 1d", s)
	}
	return d.Milliseconds(), nil
}

// Resolve returns a copy of s with what OpenClaw fixes when it creates a
// job filled in, so the stored schedule means the same after a restart:
//
//   - "at": At made absolute (UTC, milliseconds), so "20m" means 20 minutes
//     after now, the creation time, not after every restart;
//   - "every": AnchorMs set to now when it is 0, so runs count from the
//     creation time;
//   - "cron": StaggerMs set to the automatic window (5 minutes for
//     top-of-hour expressions) when it is nil.
//
// Only an unparseable At is an error; call Validate for the rest.
func (s Schedule) Resolve(now time.Time) (Schedule, error) {
	switch s.Kind {
	case ScheduleAt:
		t, err := ParseAt(s.At, now)
		if err != nil {
			return s, err
		}
		s.At = t.UTC().Format(atLayout)
	case ScheduleEvery:
		if s.AnchorMs == 0 {
			s.AnchorMs = max(now.UnixMilli(), 0)
		}
	case ScheduleCron:
		if s.StaggerMs == nil && isTopOfHourExpr(s.Expr) {
			ms := topOfHourStagger.Milliseconds()
			s.StaggerMs = &ms
		}
	}
	return s, nil
}

// Validate checks s and returns nil, a *core.FieldError naming the field
// (kind, at, everyMs, anchorMs, expr, tz, staggerMs) and the fix, or several
// joined with errors.Join. A relative At such as "20m" is valid; Resolve
// makes it absolute.
func (s Schedule) Validate() error {
	var errs []error
	add := func(path string, parts ...string) { errs = append(errs, core.FieldErrorf(path, parts...)) }
	// onlyFor flags the fields set that kind does not use; OpenClaw's
	// schema rejects them too (additionalProperties: false).
	onlyFor := func(used ...string) {
		for _, f := range []struct {
			name string
			set  bool
		}{
			{"at", s.At != ""}, {"everyMs", s.EveryMs != 0}, {"anchorMs", s.AnchorMs != 0},
			{"expr", s.Expr != ""}, {"tz", s.TZ != ""}, {"staggerMs", s.StaggerMs != nil},
		} {
			if f.set && !slices.Contains(used, f.name) {
				add(f.name, "does not apply to kind ", string(s.Kind), "; remove it")
			}
		}
	}
	allowed := strings.Join(s.Kind.EnumValues(), ", ")
	switch s.Kind {
	case "":
		add("kind", "required; one of ", allowed)
	case ScheduleAt:
		if strings.TrimSpace(s.At) == "" {
			add("at", "required for kind at; ", atHint)
		} else if _, err := ParseAt(s.At, time.Unix(0, 0)); err != nil {
			add("at", err.Error())
		}
		onlyFor("at")
	case ScheduleEvery:
		if s.EveryMs < 1 {
			add("everyMs", "must be at least 1 (milliseconds); for example 60000 runs every minute")
		}
		if s.AnchorMs < 0 {
			add("anchorMs", "must be 0 or more (Unix milliseconds the intervals count from)")
		}
		onlyFor("everyMs", "anchorMs")
	case ScheduleCron:
		if _, err := parseCronExpr(s.Expr); err != nil {
			add("expr", err.Error())
		}
		if _, err := scheduleLocation(s.TZ); err != nil {
			add("tz", fmt.Sprintf("unknown time zone %q; use an IANA name such as \"Europe/Berlin\" or \"America/New_York\", or leave it empty for the host's zone", s.TZ))
		}
		if s.StaggerMs != nil && *s.StaggerMs < 0 {
			add("staggerMs", "must be 0 (run exactly on schedule) or more milliseconds; leave it unset for the automatic stagger")
		}
		onlyFor("expr", "tz", "staggerMs")
	default:
		add("kind", fmt.Sprintf("unknown kind %q; use one of %s", s.Kind, allowed))
	}
	return errors.Join(errs...)
}

// Next returns the first run instant strictly after after, in after's
// location, for the job jobID (which seeds the cron stagger), or ok=false
// when there is none.
//
//   - "at": At, when it is after after. A relative At ("20m") has no
//     instant until Resolve fixes it, so Next reports none.
//   - "every": the instants AnchorMs + k*EveryMs (k ≥ 0) in Unix
//     milliseconds; AnchorMs 0 is the Unix epoch, so resolve the schedule at
//     creation to count from then, as OpenClaw does. OpenClaw's scheduler
//     also runs a job EveryMs after its last run when that is later; that
//     is job state, not part of the schedule.
//   - "cron": the expression evaluated in TZ (the host's zone when empty),
//     at second resolution, each run shifted by Stagger(jobID). When both
//     day-of-month and day-of-week are restricted a day matching either
//     runs, as in Vixie cron and OpenClaw. Around daylight-saving changes
//     it does what croner does for OpenClaw: a wall-clock time the clocks
//     skip runs that much later (02:30 on the spring-forward day in New
//     York runs at 03:30 EDT), and one that happens twice runs once, at its
//     first occurrence.
//
// An invalid schedule has no next run.
func (s Schedule) Next(after time.Time, jobID string) (time.Time, bool) {
	switch s.Kind {
	case ScheduleAt:
		t, ok := parseAbsoluteAt(strings.TrimSpace(s.At))
		if !ok || !t.After(after) {
			return time.Time{}, false
		}
		return t.In(after.Location()), true
	case ScheduleEvery:
		return s.nextEvery(after)
	case ScheduleCron:
		return s.nextCron(after, jobID)
	}
	return time.Time{}, false
}

func (s Schedule) nextEvery(after time.Time) (time.Time, bool) {
	every := s.EveryMs
	if every < 1 {
		return time.Time{}, false
	}
	anchor := max(s.AnchorMs, 0)
	// floor(after) in milliseconds: every instant at or before it is at or
	// before after, and every instant after it is after after.
	a := after.UnixMilli()
	if after.Before(time.UnixMilli(a)) {
		a--
	}
	if a < anchor {
		return time.UnixMilli(anchor).In(after.Location()), true
	}
	steps := (a-anchor)/every + 1 // a-anchor cannot overflow: a ≥ anchor ≥ 0
	if steps > (math.MaxInt64-anchor)/every {
		return time.Time{}, false
	}
	return time.UnixMilli(anchor + steps*every).In(after.Location()), true
}

func (s Schedule) nextCron(after time.Time, jobID string) (time.Time, bool) {
	spec, err := parseCronExpr(s.Expr)
	if err != nil {
		return time.Time{}, false
	}
	loc, err := scheduleLocation(s.TZ)
	if err != nil {
		return time.Time{}, false
	}
	spec.Location = loc
	offset := s.Stagger(jobID)
	// A run at base+offset is after after exactly when base is after
	// after-offset, so search the unshifted schedule from there.
	from := after.Add(-offset).In(loc)
	base := nextWallClockOnce(spec, from)
	if gap, ok := nextInSkippedHour(spec, from, base); ok && (base.IsZero() || gap.Before(base)) {
		base = gap
	}
	if base.IsZero() {
		return time.Time{}, false
	}
	return base.Add(offset).In(after.Location()), true
}

// nextWallClockOnce returns spec.Next(t), skipping runs whose wall-clock
// time already happened earlier (the second pass through the hour repeated
// when daylight saving ends), or the zero time when there is none. robfig's
// Next returns both passes; croner runs such a time once, at its first
// occurrence.
func nextWallClockOnce(spec *cron.SpecSchedule, t time.Time) time.Time {
	next := spec.Next(t)
	for range 4 { // one skip clears a repeated period; a few cover odd zones
		if next.IsZero() {
			return next
		}
		end, repeated := repeatedWallClock(next)
		if !repeated {
			return next
		}
		// Next is strictly after its argument, at whole seconds.
		next = spec.Next(end.Add(-time.Second))
	}
	return time.Time{}
}

// nextInSkippedHour returns the first run after t, before limit (or within
// five years when limit is zero), of a wall-clock time that does not exist
// because the clocks went forward. robfig's Next never returns such a time,
// so a daily 02:30 job would silently miss the spring-forward day; croner
// (and so OpenClaw) reads the time with the offset in force before the
// change, which runs it that much later: 02:30 in New York on the
// spring-forward day runs at 03:30 EDT. This does the same.
func nextInSkippedHour(spec *cron.SpecSchedule, t, limit time.Time) (time.Time, bool) {
	horizon := limit
	if horizon.IsZero() {
		horizon = t.AddDate(5, 0, 0)
	}
	// Start with the change that began the zone t is in: t may be inside
	// the stretch that change skipped.
	change, end := t.ZoneBounds()
	if change.IsZero() {
		change = end
	}
	for range 16 { // changes between t and limit; limit is rarely a day away
		if change.IsZero() || change.After(horizon) {
			return time.Time{}, false
		}
		_, before := change.Add(-time.Nanosecond).Zone()
		_, since := change.Zone()
		if skipped := time.Duration(since-before) * time.Second; skipped > 0 && change.Add(skipped).After(t) {
			// In a fixed zone with the old offset the skipped wall-clock
			// times fall on the instants [change, change+skipped).
			old := *spec
			old.Location = time.FixedZone("", before)
			from := t
			if from.Before(change) {
				from = change.Add(-time.Nanosecond)
			}
			if next := old.Next(from); !next.IsZero() && next.Before(change.Add(skipped)) {
				return next.In(t.Location()), true
			}
		}
		_, change = change.ZoneBounds()
	}
	return time.Time{}, false
}

// repeatedWallClock reports whether t's wall-clock time was already shown
// earlier because the clocks went back, and if so when that repeated
// period ends.
func repeatedWallClock(t time.Time) (end time.Time, repeated bool) {
	start, _ := t.ZoneBounds()
	if start.IsZero() {
		return time.Time{}, false
	}
	_, offset := t.Zone()
	_, before := start.Add(-time.Nanosecond).Zone()
	if before <= offset {
		return time.Time{}, false
	}
	end = start.Add(time.Duration(before-offset) * time.Second)
	return end, t.Before(end)
}

// Stagger returns how long each run of the job jobID is delayed past the
// time its cron expression gives. As in OpenClaw the window is StaggerMs
// when set, else 5 minutes for an expression that fires at the top of every
// hour or every few hours (minute "0", seconds "0" or absent, and an hour
// field with a "*" such as "*" or "*/2"; not a fixed hour such as "0 9 * *
// *"), else none; the delay is the first 4 bytes of SHA-256(jobID), big
// endian, modulo the window in milliseconds, so it is stable across
// restarts and lies in [0, window). StaggerMs 0 (or a window of 1 ms) runs
// exactly on schedule. "at" and "every" schedules are never staggered.
func (s Schedule) Stagger(jobID string) time.Duration {
	if s.Kind != ScheduleCron {
		return 0
	}
	window := int64(0)
	switch {
	case s.StaggerMs != nil:
		window = *s.StaggerMs
	case isTopOfHourExpr(s.Expr):
		window = topOfHourStagger.Milliseconds()
	}
	if window <= 1 {
		return 0
	}
	sum := sha256.Sum256([]byte(jobID))
	return time.Duration(int64(binary.BigEndian.Uint32(sum[:4]))%window) * time.Millisecond
}

// Grace is the missed-run window: a run missed (the process was down) by at
// most Grace still runs once at startup; older misses are recorded as
// skipped. It is one interval, capped at 1 hour: EveryMs for "every"; for
// "cron" the gap between the two runs that follow missed (1 hour when there
// are not two). "at" jobs get 1 hour.
func (s Schedule) Grace(missed time.Time, jobID string) time.Duration {
	switch s.Kind {
	case ScheduleEvery:
		if s.EveryMs < 1 {
			return time.Millisecond
		}
		if s.EveryMs >= atGrace.Milliseconds() {
			return atGrace
		}
		return time.Duration(s.EveryMs) * time.Millisecond
	case ScheduleCron:
		first, ok := s.Next(missed, jobID)
		if !ok {
			return atGrace
		}
		second, ok := s.Next(first, jobID)
		if !ok {
			return atGrace
		}
		return min(second.Sub(first), atGrace)
	}
	return atGrace
}

// String renders a short description: "every 1h", "every 1m30s",
// "cron 0 9 * * 1 (Europe/Berlin)", "at 2026-11-21T09:00:00Z".
func (s Schedule) String() string {
	switch s.Kind {
	case ScheduleAt:
		if t, ok := parseAbsoluteAt(strings.TrimSpace(s.At)); ok {
			return "at " + t.UTC().Format(time.RFC3339Nano)
		}
		return "at " + s.At
	case ScheduleEvery:
		return "every " + formatEveryMs(s.EveryMs)
	case ScheduleCron:
		out := "cron " + strings.TrimSpace(s.Expr)
		if tz := strings.TrimSpace(s.TZ); tz != "" {
			out += " (" + tz + ")"
		}
		return out
	}
	return fmt.Sprintf("schedule of unknown kind %q", s.Kind)
}

// formatEveryMs writes ms as days, hours, minutes, seconds and
// milliseconds, largest first, leaving out zero parts: 5400000 is "1h30m".
func formatEveryMs(ms int64) string {
	if ms <= 0 {
		return strconv.FormatInt(ms, 10) + "ms"
	}
	var b strings.Builder
	for _, u := range []struct {
		name string
		ms   int64
	}{{"d", 86_400_000}, {"h", 3_600_000}, {"m", 60_000}, {"s", 1000}, {"ms", 1}} {
		if n := ms / u.ms; n > 0 {
			b.WriteString(strconv.FormatInt(n, 10))
			b.WriteString(u.name)
			ms -= n * u.ms
		}
	}
	return b.String()
}

// cronExprParser reads 5-field expressions and 6-field ones with seconds first.
// Descriptors (@hourly) are not accepted: OpenClaw's expressions are fields.
var cronExprParser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// parseCronExpr parses expr into a schedule with no location set, or
// returns an error that names expr and says what to write.
func parseCronExpr(expr string) (spec *cron.SpecSchedule, err error) {
	e := strings.TrimSpace(expr)
	if e == "" {
		return nil, errors.New(`required for kind cron; for example "0 9 * * *" for 09:00 every day`)
	}
	fields := strings.Fields(e)
	switch {
	case strings.HasPrefix(e, "@"):
		return nil, fmt.Errorf("%q: descriptors are not supported; write the fields, such as \"0 * * * *\" for @hourly or \"0 0 * * *\" for @daily", expr)
	case strings.Contains(fields[0], "="):
		return nil, fmt.Errorf("%q: put the time zone in tz, not in the expression", expr)
	case len(fields) != 5 && len(fields) != 6:
		return nil, fmt.Errorf("%q has %d fields; use 5 (minute hour day-of-month month day-of-week) or 6 with seconds first", expr, len(fields))
	}
	fields[len(fields)-1] = sundaySeven(fields[len(fields)-1])
	defer func() {
		// robfig/cron has panicked on malformed input before; a bad
		// expression must never take the scheduler down.
		if r := recover(); r != nil {
			spec, err = nil, fmt.Errorf("%q is invalid: %v", expr, r)
		}
	}()
	parsed, err := cronExprParser.Parse(strings.Join(fields, " "))
	if err != nil {
		return nil, fmt.Errorf("%q is invalid: %w", expr, err)
	}
	spec, ok := parsed.(*cron.SpecSchedule)
	if !ok {
		return nil, fmt.Errorf("%q is not a field expression", expr)
	}
	return spec, nil
}

// sundaySeven rewrites the day-of-week values croner (and so OpenClaw)
// accepts but robfig does not: 7 for Sunday, alone ("7" → "0") or ending a
// range without a step ("5-7" → "5-6,0"). Anything else is left for the
// parser to judge.
func sundaySeven(dow string) string {
	parts := strings.Split(dow, ",")
	for i, p := range parts {
		switch lo, hi, isRange := strings.Cut(p, "-"); {
		case p == "7":
			parts[i] = "0"
		case isRange && hi == "7" && lo == "7":
			parts[i] = "0"
		case isRange && hi == "7" && len(lo) == 1 && lo >= "0" && lo < "7":
			parts[i] = lo + "-6,0"
		}
	}
	return strings.Join(parts, ",")
}

// hourListPart is one comma-separated part of an hour field that OpenClaw
// counts when deciding whether an expression recurs every few hours.
var hourListPart = regexp.MustCompile(`^(?:\d+|\d+-\d+)(?:/\d+)?$|^\*(?:/\d+)?$`)

// isTopOfHourExpr reports whether expr fires at minute 0 (second 0) of
// every hour or every few hours: OpenClaw's isRecurringTopOfHourCronExpr,
// the expressions that get the automatic stagger.
func isTopOfHourExpr(expr string) bool {
	fields := strings.Fields(expr)
	var hour string
	switch len(fields) {
	case 5:
		if fields[0] != "0" {
			return false
		}
		hour = fields[1]
	case 6:
		if fields[0] != "0" || fields[1] != "0" {
			return false
		}
		hour = fields[2]
	default:
		return false
	}
	wildcard := false
	for p := range strings.SplitSeq(hour, ",") {
		if !hourListPart.MatchString(p) {
			return false
		}
		wildcard = wildcard || strings.HasPrefix(p, "*")
	}
	return wildcard
}

// scheduleLocations caches loaded time zones by name; only names that load are
// stored, so it holds at most the zone database.
var scheduleLocations sync.Map // string → *time.Location

// scheduleLocation returns the zone named tz, or the host's zone for "".
func scheduleLocation(tz string) (*time.Location, error) {
	name := strings.TrimSpace(tz)
	if name == "" {
		return time.Local, nil
	}
	if loc, ok := scheduleLocations.Load(name); ok {
		return loc.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, err
	}
	scheduleLocations.Store(name, loc)
	return loc, nil
}
