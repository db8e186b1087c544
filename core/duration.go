package core

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"
	"time"
)

// everyUnits are the units ParseDuration knows. "d" is 24 hours, not a
// calendar day.
var everyUnits = map[string]time.Duration{
	"d":  24 * time.Hour,
	"h":  time.Hour,
	"m":  time.Minute,
	"s":  time.Second,
	"ms": time.Millisecond,
	"us": time.Microsecond,
	"µs": time.Microsecond, // U+00B5 micro sign
	"μs": time.Microsecond, // U+03BC Greek mu
	"ns": time.Nanosecond,
}

// ParseDuration parses an interval the way OpenClaw's parseDurationMs does for
// heartbeat.every and the interval of a HEARTBEAT.md task, widened to all
// of Go's duration syntax:
//
//   - a Go duration: "90s", "30m", "1.5h", "1h30m", "500ms"; units ns, us
//     (µs), ms, s, m, h;
//   - the unit "d" for 24 hours, alone or combined: "1d", "1d12h", "0.5d";
//   - a bare number, read in defaultUnit: with time.Minute "30" is 30m and
//     "1.5" is 90s.
//
// Case and surrounding space are ignored ("30M" is 30 minutes, as in
// OpenClaw). "0", "0m" and the like are 0, which for heartbeat.every means
// disabled; a bare "0" needs no default unit. Negative values, signs,
// spaces inside the value, and any other bare number when defaultUnit is
// not positive are errors; so is a value that overflows time.Duration.
func ParseDuration(s string, defaultUnit time.Duration) (time.Duration, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	if v == "" {
		return 0, fmt.Errorf("invalid duration %q: empty; use values like 30m, 2h, 1d or 1h30m", s)
	}
	if strings.HasPrefix(v, "-") {
		return 0, fmt.Errorf("invalid duration %q: must not be negative", s)
	}
	if isEveryNumber(v) {
		if strings.Trim(v, "0.") == "" {
			return 0, nil // zero of any unit, even without a default one
		}
		if defaultUnit <= 0 {
			return 0, fmt.Errorf("invalid duration %q: a number needs a unit; use values like 30m, 2h, 1d or 1h30m", s)
		}
		d, err := scaleEveryNumber(v, defaultUnit)
		if err != nil {
			return 0, fmt.Errorf("invalid duration %q: %w", s, err)
		}
		return d, nil
	}

	var total time.Duration
	for rest := v; rest != ""; {
		num := leadingEveryNumber(rest)
		if num == "" {
			return 0, fmt.Errorf("invalid duration %q: expected a number at %q; use values like 30m, 2h, 1d or 1h30m", s, rest)
		}
		rest = rest[len(num):]
		unitLen := 0
		for unitLen < len(rest) && (rest[unitLen] < '0' || rest[unitLen] > '9') && rest[unitLen] != '.' {
			unitLen++
		}
		unit := rest[:unitLen]
		rest = rest[unitLen:]
		if unit == "" {
			return 0, fmt.Errorf("invalid duration %q: %q has no unit; use values like 30m, 2h, 1d or 1h30m", s, num)
		}
		scale, ok := everyUnits[unit]
		if !ok {
			return 0, fmt.Errorf("invalid duration %q: unknown unit %q; use d, h, m, s or ms", s, unit)
		}
		part, err := scaleEveryNumber(num, scale)
		if err != nil {
			return 0, fmt.Errorf("invalid duration %q: %w", s, err)
		}
		if total > math.MaxInt64-part {
			return 0, fmt.Errorf("invalid duration %q: %w", s, errEveryOverflow)
		}
		total += part
	}
	return total, nil
}

var errEveryOverflow = errors.New("too long; a duration holds at most about 292 years")

// isEveryNumber reports whether v is entirely one unsigned decimal
// number such as "30", "1.5", ".5" or "2.".
func isEveryNumber(v string) bool {
	return v != "" && leadingEveryNumber(v) == v
}

// leadingEveryNumber returns the unsigned decimal number v starts with
// (digits with at most one '.', and at least one digit), or "".
func leadingEveryNumber(v string) string {
	i, digits, dot := 0, 0, false
	for ; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !dot:
			dot = true
		default:
			return everyNumberOrEmpty(v[:i], digits)
		}
	}
	return everyNumberOrEmpty(v, digits)
}

func everyNumberOrEmpty(num string, digits int) string {
	if digits == 0 {
		return ""
	}
	return num
}

// scaleEveryNumber returns the decimal number num times unit, exact
// down to the nanosecond (the rest is truncated, as time.ParseDuration
// does), or errEveryOverflow.
func scaleEveryNumber(num string, unit time.Duration) (time.Duration, error) {
	intPart, frac, _ := strings.Cut(num, ".")
	var whole uint64
	for _, c := range intPart {
		d := uint64(c - '0')
		if whole > (math.MaxInt64-d)/10 {
			return 0, errEveryOverflow
		}
		whole = whole*10 + d
	}
	hi, total := bits.Mul64(whole, uint64(unit))
	if hi != 0 || total > math.MaxInt64 {
		return 0, errEveryOverflow
	}
	// The fraction f/10^k of unit: unit*f/10^k < unit, so the 128-bit
	// quotient fits. Digits past the 19th are worth less than a
	// nanosecond of any unit that fits in a Duration.
	frac = frac[:min(len(frac), 19)]
	var f, denom uint64 = 0, 1
	for _, c := range frac {
		f = f*10 + uint64(c-'0')
		denom *= 10
	}
	if f != 0 {
		hi, lo := bits.Mul64(f, uint64(unit))
		part, _ := bits.Div64(hi, lo, denom)
		if total > math.MaxInt64-part {
			return 0, errEveryOverflow
		}
		total += part
	}
	return time.Duration(total), nil
}
