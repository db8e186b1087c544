package queue

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Directive is an inline /queue directive found in a message body
// (openclaw-facts §3.5; OpenClaw's extractQueueDirective).
type Directive struct {
	// Found reports that the body holds a /queue directive.
	Found bool
	// Reset reports "default", "reset" or "clear": the session's stored
	// override is removed. A reset ends the directive, and it wins over
	// settings written before it: Override is then empty.
	Reset bool
	// Override holds the settings the directive names, each field only when
	// given and valid.
	Override Override
	// Rest is the body with the directive removed and its white space
	// collapsed to single spaces, trimmed. Without a directive it is the body,
	// trimmed.
	Rest string
	// Standalone reports that the body is nothing but the directive (Rest is
	// empty): the settings are stored on the session instead of applying to
	// this message only, or, with no settings, the current ones are shown.
	Standalone bool
	// Invalid lists, for a helpful reply, the tokens the directive could not
	// use: an option with an unusable value ("debounce:soon", "cap:0",
	// "drop:maybe"), which is removed from the body, and an unknown word
	// right after "/queue", which ends the directive and stays in Rest
	// ("/queue backlog": most likely a misspelt mode). An unknown word after
	// valid settings is simply where the message resumes ("please /queue
	// interrupt now") and is not listed. OpenClaw answers a standalone
	// directive with invalid tokens with the explanation alone
	// (Describe) and stores none of its settings.
	Invalid []string
}

// ParseDirective finds the first /queue directive in body and parses it,
// as OpenClaw does:
//
//   - the directive is "/queue" (any case) at the start of the body or after
//     white space, followed by the end, white space or ":" ("/queuex" and
//     "a/queue" are not directives);
//   - then, after an optional ":", white-space separated tokens: default,
//     reset or clear (reset the session's override; this ends the
//     directive), a mode or alias (see ParseMode), debounce:<duration>
//     (also debounce=; a number with an optional unit ms, s, m, h or d,
//     default ms: 500, 2s, 1.5s, 2m), cap:<n> (also cap=; a whole number, at
//     least 1) and drop:<policy> (also drop=; see ParseDropPolicy);
//   - parsing stops at the first other token, which stays in the body;
//   - when a token repeats, the last one counts.
//
// OpenClaw rejects debounce:0 (a falsy-value check); Switchboard accepts it,
// as messages.queue.debounceMs does.
func ParseDirective(body string) Directive {
	start := findQueueDirective(body)
	if start < 0 {
		return Directive{Rest: trimJS(body)}
	}
	d := Directive{Found: true}
	args := body[start+len("/queue"):]
	first := skipArgPrefix(args)
	consumed := first
	var unknown, badDebounce, badCap, badDrop string
tokens:
	for i := first; i < len(args); {
		tok, next := nextToken(args, i)
		if tok == "" {
			break
		}
		lower := foldToken(tok)
		switch {
		case lower == "default" || lower == "reset" || lower == "clear":
			d.Reset, d.Override = true, Override{}
			badDebounce, badCap, badDrop = "", "", ""
			consumed = next
			break tokens
		case hasOptionPrefix(lower, "debounce"):
			if ms, ok := parseDebounceMs(optionValue(tok)); ok {
				d.Override.DebounceMs, badDebounce = &ms, ""
			} else {
				d.Override.DebounceMs, badDebounce = nil, tok
			}
		case hasOptionPrefix(lower, "cap"):
			if n, ok := parseCap(optionValue(tok)); ok {
				d.Override.Cap, badCap = &n, ""
			} else {
				d.Override.Cap, badCap = nil, tok
			}
		case hasOptionPrefix(lower, "drop"):
			if p, ok := ParseDropPolicy(optionValue(tok)); ok {
				d.Override.Drop, badDrop = &p, ""
			} else {
				d.Override.Drop, badDrop = nil, tok
			}
		default:
			m, ok := ParseMode(tok)
			if !ok {
				// An unknown first word is most likely a misspelt mode;
				// after settings, it is where the message resumes.
				if i == first {
					unknown = tok
				}
				break tokens
			}
			d.Override.Mode = &m
		}
		i, consumed = next, next
	}
	for _, s := range []string{unknown, badDebounce, badCap, badDrop} {
		if s != "" {
			d.Invalid = append(d.Invalid, s)
		}
	}
	d.Rest = collapseJS(body[:start] + " " + args[consumed:])
	d.Standalone = d.Rest == ""
	return d
}

// findQueueDirective returns the offset of the first "/queue" that starts
// the body or follows white space and is followed by the end, white space
// or ":" (OpenClaw's /(?:^|\s)\/queue(?=$|\s|:)/i), or -1.
func findQueueDirective(body string) int {
	const word = "/queue"
	for off := 0; ; {
		j := strings.IndexByte(body[off:], '/')
		if j < 0 {
			return -1
		}
		i := off + j
		off = i + 1
		if len(body)-i < len(word) || !strings.EqualFold(body[i:i+len(word)], word) {
			continue
		}
		if i > 0 {
			r, _ := utf8.DecodeLastRuneInString(body[:i])
			if !isJSSpace(r) {
				continue
			}
		}
		if end := i + len(word); end < len(body) {
			r, _ := utf8.DecodeRuneInString(body[end:])
			if r != ':' && !isJSSpace(r) {
				continue
			}
		}
		return i
	}
}

// skipArgPrefix skips white space, an optional ":" and white space after
// "/queue" (OpenClaw's skipDirectiveArgPrefix).
func skipArgPrefix(s string) int {
	i := skipSpace(s, 0)
	if i < len(s) && s[i] == ':' {
		i = skipSpace(s, i+1)
	}
	return i
}

// nextToken returns the white-space separated token at or after i and the
// offset after it and the white space that follows.
func nextToken(s string, i int) (tok string, next int) {
	i = skipSpace(s, i)
	start := i
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if isJSSpace(r) {
			break
		}
		i += size
	}
	return s[start:i], skipSpace(s, i)
}

func skipSpace(s string, i int) int {
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isJSSpace(r) {
			break
		}
		i += size
	}
	return i
}

// hasOptionPrefix reports "<name>:" or "<name>=" at the start of lower.
func hasOptionPrefix(lower, name string) bool {
	return len(lower) > len(name) && strings.HasPrefix(lower, name) &&
		(lower[len(name)] == ':' || lower[len(name)] == '=')
}

// optionValue returns what follows the option's first ":" or "=", up to the
// next one (OpenClaw's token.split(/[:=]/)[1]).
func optionValue(tok string) string {
	i := strings.IndexAny(tok, ":=")
	v := tok[i+1:]
	if j := strings.IndexAny(v, ":="); j >= 0 {
		v = v[:j]
	}
	return v
}

// parseDebounceMs reads a duration with OpenClaw's parseDurationMs grammar,
// /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/ after trimming and lower-casing, with
// milliseconds as the default unit, rounded to whole milliseconds.
func parseDebounceMs(raw string) (int, bool) {
	s := foldToken(raw)
	digits := 0
	for digits < len(s) && s[digits] >= '0' && s[digits] <= '9' {
		digits++
	}
	if digits == 0 {
		return 0, false
	}
	numEnd := digits
	if numEnd < len(s) && s[numEnd] == '.' {
		frac := numEnd + 1
		for frac < len(s) && s[frac] >= '0' && s[frac] <= '9' {
			frac++
		}
		if frac == numEnd+1 {
			return 0, false
		}
		numEnd = frac
	}
	var unit float64
	switch s[numEnd:] {
	case "", "ms":
		unit = 1
	case "s":
		unit = 1000
	case "m":
		unit = 60_000
	case "h":
		unit = 3_600_000
	case "d":
		unit = 86_400_000
	default:
		return 0, false
	}
	v, err := strconv.ParseFloat(s[:numEnd], 64)
	if err != nil {
		return 0, false
	}
	ms := math.Round(v * unit)
	if math.IsInf(ms, 0) || ms > float64(maxDebounceMs) || ms > float64(math.MaxInt) {
		return 0, false
	}
	return int(ms), true
}

// parseCap reads a whole decimal number of at least 1. OpenClaw's newer
// parser rejects "4.9", "1e3" and "0x10" too.
func parseCap(raw string) (int, bool) {
	s := trimJS(raw)
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, false
	}
	return n, true
}

// queueOptionsHelp lists the directive's options, for the status reply.
const queueOptionsHelp = "Options: modes steer, followup, collect, steer-backlog, interrupt; debounce:<ms|s|m>, cap:<n>, drop:old|new|summarize; reset."

// Describe renders the reply to a standalone directive, given the settings
// in effect after it was applied (for a directive without settings, the
// current ones):
//
//	Queue mode set to collect (debounce 2s, cap 25, drop summarize).
//	Queue settings updated (mode collect, debounce 500ms, cap 20, drop old).
//	Queue settings reset to defaults.
//	Current queue settings: mode=collect, debounce=1000ms, cap=20, drop=summarize.
//	Options: modes steer, followup, collect, steer-backlog, interrupt; …
//
// When the directive has Invalid tokens it explains them instead, with
// OpenClaw's wording (maybeHandleQueueDirective), for example
// `Invalid cap "0". Use a positive integer (e.g. cap:10).` It returns "" for
// a body without a directive.
func (d Directive) Describe(s Settings) string {
	switch {
	case !d.Found:
		return ""
	case len(d.Invalid) > 0:
		msgs := make([]string, len(d.Invalid))
		for i, tok := range d.Invalid {
			msgs[i] = describeInvalid(tok)
		}
		return strings.Join(msgs, " ")
	case d.Reset:
		return "Queue settings reset to defaults."
	case d.Override.IsZero():
		return fmt.Sprintf("Current queue settings: mode=%s, debounce=%dms, cap=%d, drop=%s.\n%s",
			s.Mode, s.Debounce.Milliseconds(), s.Cap, s.Drop, queueOptionsHelp)
	case d.Override.Mode != nil:
		return fmt.Sprintf("Queue mode set to %s (debounce %s, cap %d, drop %s).",
			s.Mode, formatDebounce(s.Debounce), s.Cap, s.Drop)
	}
	return fmt.Sprintf("Queue settings updated (mode %s, debounce %s, cap %d, drop %s).",
		s.Mode, formatDebounce(s.Debounce), s.Cap, s.Drop)
}

// describeInvalid explains one Invalid token.
func describeInvalid(tok string) string {
	lower := foldToken(tok)
	switch {
	case hasOptionPrefix(lower, "debounce"):
		return fmt.Sprintf("Invalid debounce %q. Use ms/s/m (e.g. debounce:1500ms, debounce:2s).", optionValue(tok))
	case hasOptionPrefix(lower, "cap"):
		return fmt.Sprintf("Invalid cap %q. Use a positive integer (e.g. cap:10).", optionValue(tok))
	case hasOptionPrefix(lower, "drop"):
		return fmt.Sprintf("Invalid drop policy %q. Use drop:old, drop:new, or drop:summarize.", optionValue(tok))
	}
	return fmt.Sprintf("Unrecognized queue mode %q. Valid modes: steer, followup, collect, steer-backlog, interrupt.", tok)
}

// formatDebounce writes a debounce the way the directive accepts it back:
// "2m", "2s", "1.5s", "500ms".
func formatDebounce(d time.Duration) string {
	ms := d.Milliseconds()
	switch {
	case ms > 0 && ms%60_000 == 0:
		return strconv.FormatInt(ms/60_000, 10) + "m"
	case ms >= 1000:
		return strconv.FormatFloat(float64(ms)/1000, 'f', -1, 64) + "s"
	}
	return strconv.FormatInt(ms, 10) + "ms"
}

// isJSSpace reports whether r is white space to JavaScript's trim() and \s,
// which OpenClaw's parsers use.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029,
		0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// trimJS trims as JavaScript's String.prototype.trim does.
func trimJS(s string) string { return strings.TrimFunc(s, isJSSpace) }

// collapseJS turns every run of JavaScript white space into one space and
// trims the ends (OpenClaw's .replace(/\s+/g, " ").trim()).
func collapseJS(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	pending := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if isJSSpace(r) {
			pending = b.Len() > 0
		} else {
			if pending {
				b.WriteByte(' ')
				pending = false
			}
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
