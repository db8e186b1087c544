package reply

import (
	"strings"
	"unicode/utf8"
)

// OpenClaw's token handling is written against JavaScript strings: trim()
// and \s use JavaScript's white space, and lengths count UTF-16 units. The
// helpers below reproduce that, so thresholds such as ackMaxChars give the
// same answers.

// isJSSpace reports whether r is white space to JavaScript's trim() and \s.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029,
		0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

func jsTrim(s string) string      { return strings.TrimFunc(s, isJSSpace) }
func jsTrimStart(s string) string { return strings.TrimLeftFunc(s, isJSSpace) }
func jsTrimEnd(s string) string   { return strings.TrimRightFunc(s, isJSSpace) }

// utf16Len returns JavaScript's String.length of s.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 && r <= utf8.MaxRune {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// collapseJSSpace replaces each run of JavaScript white space with one
// space and trims, as .replace(/\s+/g, " ").trim() does.
func collapseJSSpace(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if isJSSpace(r) {
			space = true
			i += size
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteString(s[i : i+size]) // invalid UTF-8 is kept as it is
		i += size
	}
	return b.String()
}

// hasPrefixFold reports whether s starts with prefix, ignoring ASCII case
// (JavaScript's /i without the u flag never folds non-ASCII to ASCII).
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && asciiEqualFold(s[:len(prefix)], prefix)
}

// hasSuffixFold reports whether s ends with suffix, ignoring ASCII case.
func hasSuffixFold(s, suffix string) bool {
	return len(s) >= len(suffix) && asciiEqualFold(s[len(s)-len(suffix):], suffix)
}

// asciiEqualFold compares two strings of equal length ignoring ASCII case.
func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
