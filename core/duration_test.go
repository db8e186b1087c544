package core_test

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

func TestParseDuration(t *testing.T) {
	rows := []struct {
		in   string
		unit time.Duration
		want time.Duration
	}{
		// OpenClaw's forms (parseDurationMs with defaultUnit "m").
		{"30m", time.Minute, 30 * time.Minute},
		{"2h", time.Minute, 2 * time.Hour},
		{"1d", time.Minute, 24 * time.Hour},
		{"45s", time.Minute, 45 * time.Second},
		{"500ms", time.Minute, 500 * time.Millisecond},
		{"30", time.Minute, 30 * time.Minute},
		{"1.5", time.Minute, 90 * time.Second},
		{"1h30m", time.Minute, 90 * time.Minute},
		{"2m500ms", time.Minute, 2*time.Minute + 500*time.Millisecond},
		{"30M", time.Minute, 30 * time.Minute},
		{" 1H ", time.Minute, time.Hour},
		{"0", time.Minute, 0},
		{"0m", time.Minute, 0},
		{"0d", time.Minute, 0},
		{"0.0", time.Minute, 0},
		{"0", 0, 0},
		{"0m", 0, 0},

		// Days combine and take fractions.
		{"1d12h", time.Minute, 36 * time.Hour},
		{"0.5d", time.Minute, 12 * time.Hour},
		{"7d", time.Minute, 7 * 24 * time.Hour},
		{"1.25d", time.Minute, 30 * time.Hour},

		// Go's own syntax.
		{"1.5h", time.Minute, 90 * time.Minute},
		{".5h", time.Minute, 30 * time.Minute},
		{"2.h", time.Minute, 2 * time.Hour},
		{"10us", time.Minute, 10 * time.Microsecond},
		{"10µs", time.Minute, 10 * time.Microsecond},
		{"10μs", time.Minute, 10 * time.Microsecond},
		{"7ns", time.Minute, 7},
		{"1h1m1s1ms1us1ns", time.Minute, time.Hour + time.Minute + time.Second + time.Millisecond + time.Microsecond + 1},

		// The default unit applies to bare numbers only.
		{"90", time.Second, 90 * time.Second},
		{"2", time.Hour, 2 * time.Hour},
		{"2m", time.Hour, 2 * time.Minute},
		{"0.1", time.Second, 100 * time.Millisecond},
		{"0.333333333333", time.Second, 333333333},

		// The largest Duration still fits.
		{"2562047h47m16.854775807s", time.Minute, time.Duration(1<<63 - 1)},
	}
	for _, r := range rows {
		got, err := core.ParseDuration(r.in, r.unit)
		if err != nil || got != r.want {
			t.Errorf("ParseDuration(%q, %v) = %v, %v; want %v", r.in, r.unit, got, err, r.want)
		}
	}
}

func TestParseEveryErrors(t *testing.T) {
	rows := []struct {
		in   string
		unit time.Duration
		want string // in the message
	}{
		{"", time.Minute, `invalid duration "": empty`},
		{"   ", time.Minute, `invalid duration "   ": empty`},
		{"-5m", time.Minute, `invalid duration "-5m": must not be negative`},
		{"-5", time.Minute, `must not be negative`},
		{"+5m", time.Minute, `expected a number at "+5m"`},
		{"abc", time.Minute, `expected a number at "abc"`},
		{"5x", time.Minute, `unknown unit "x"`},
		{"5 m", time.Minute, `unknown unit " m"`},
		{"1h30", time.Minute, `"30" has no unit`},
		{"1w", time.Minute, `unknown unit "w"`},
		{"1..5m", time.Minute, `"1." has no unit`},
		{".", time.Minute, `expected a number at "."`},
		{"30", 0, `a number needs a unit`},
		{"30", -time.Minute, `a number needs a unit`},
		{"300000d", time.Minute, `too long`},
		{"9223372036854775808ns", time.Minute, `too long`},
		{"99999999999999999999999", time.Minute, `too long`},
		{"2562047h47m16.854775808s", time.Minute, `too long`},
		{"106751d23h47m16.854775808s", time.Minute, `too long`},
	}
	for _, r := range rows {
		got, err := core.ParseDuration(r.in, r.unit)
		if err == nil {
			t.Errorf("ParseDuration(%q, %v) = %v, want an error containing %q", r.in, r.unit, got, r.want)
			continue
		}
		if !strings.Contains(err.Error(), r.want) {
			t.Errorf("ParseDuration(%q, %v) error = %q, want it to contain %q", r.in, r.unit, err, r.want)
		}
	}
}

// TestParseEveryAgreesWithGo checks that every string Go's ParseDuration
// accepts without a sign parses to the same value.
func TestParseEveryAgreesWithGo(t *testing.T) {
	for _, s := range []string{"1h", "1.5h", "1h30m45s", "250ms", "3us", "0.000000001s", "1.0000000005s", "15m0.5s", "0s", "2562047h"} {
		want, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("time.ParseDuration(%q): %v", s, err)
		}
		got, err := core.ParseDuration(s, time.Minute)
		if err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; time.ParseDuration gives %v", s, got, err, want)
		}
	}
}
