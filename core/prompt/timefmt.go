package prompt

import (
	"strconv"
	"time"
)

// OpenClaw formats times with Intl.DateTimeFormat("en-US", {timeZoneName:
// "short"}). Go has no CLDR tables, so zoneLabel reproduces the common
// results: the US abbreviations and UTC/GMT where Intl prints them, and
// "GMT+5:30"-style offsets everywhere else (Intl's en-US fallback), never
// Go's ambiguous abbreviations such as CST for China.

// intlAbbreviations are the zone abbreviations en-US Intl prints, with the
// UTC offset (seconds) each must have to be used.
var intlAbbreviations = map[string]int{
	"UTC": 0, "GMT": 0,
	"EST": -5 * 3600, "EDT": -4 * 3600,
	"CST": -6 * 3600, "CDT": -5 * 3600,
	"MST": -7 * 3600, "MDT": -6 * 3600,
	"PST": -8 * 3600, "PDT": -7 * 3600,
	"AKST": -9 * 3600, "AKDT": -8 * 3600,
	"HST": -10 * 3600,
}

// zoneLabel returns the short zone name of t as en-US Intl prints it.
func zoneLabel(t time.Time) string {
	name, offset := t.Zone()
	if want, ok := intlAbbreviations[name]; ok && want == offset {
		return name
	}
	if offset == 0 {
		return "GMT"
	}
	b := make([]byte, 0, 10)
	b = append(b, "GMT"...)
	if offset < 0 {
		b = append(b, '-')
		offset = -offset
	} else {
		b = append(b, '+')
	}
	b = strconv.AppendInt(b, int64(offset/3600), 10)
	if m := offset % 3600 / 60; m != 0 {
		b = append(b, ':')
		if m < 10 {
			b = append(b, '0')
		}
		b = strconv.AppendInt(b, int64(m), 10)
	}
	return string(b)
}

func resolveLocation(loc *time.Location) *time.Location {
	if loc == nil {
		return time.Local
	}
	return loc
}

// formatMessageTime formats a message timestamp (Unix ms) for the
// conversation info block, as OpenClaw's formatConversationTimestamp:
// "Thu 2026-04-16 22:24 EDT".
func formatMessageTime(ms int64, loc *time.Location) string {
	t := time.UnixMilli(ms).In(resolveLocation(loc))
	return t.Format("Mon 2006-01-02 15:04 ") + zoneLabel(t)
}

// formatEventTime formats a system event time for its "System: [<ts>]"
// line, as OpenClaw's formatZonedTimestamp with seconds:
// "2026-02-26 13:48:13 EST".
func formatEventTime(t time.Time, loc *time.Location) string {
	t = t.In(resolveLocation(loc))
	return t.Format("2006-01-02 15:04:05 ") + zoneLabel(t)
}
