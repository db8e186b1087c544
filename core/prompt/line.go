package prompt

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// NeutralizeLine returns channel text as a single line that is safe to
// place inside a line Switchboard writes, such as a "- " bullet of a queue
// overflow summary:
//
//   - invalid UTF-8 becomes U+FFFD and NUL bytes are removed;
//   - every run of white space, line breaks (CR, LF, VT, FF, NEL, U+2028,
//     U+2029) and control characters becomes one space, and the ends are
//     trimmed, so no line break survives and the text can never start a
//     line of its own;
//   - role tags, chat-template tokens and role elements ("[System]",
//     "<|im_start|>", "</untrusted>") have their brackets turned into
//     parentheses, as in every raw slot;
//   - a line that would start like a marker ("System:", "Queued #", a
//     heading, a metadata label, look-alike spellings included) gets a
//     leading backslash, as neutralizeRaw does for each line of a raw slot.
//
// The marker escape is defence in depth: the caller places the result after
// text of its own, so it cannot begin a line. NeutralizeLine is idempotent,
// and it returns s itself, without allocating, when nothing needs changing.
func NeutralizeLine(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\ufffd")
	}
	return neutralizeLine(collapseLine(s))
}

// collapseLine removes NUL bytes, turns every run of white space and control
// characters into one space and trims both ends.
func collapseLine(s string) string {
	if cleanLine(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	pending := false
	for _, r := range s {
		switch {
		case r == 0:
			continue
		case lineSpace(r):
			pending = b.Len() > 0
			continue
		}
		if pending {
			b.WriteByte(' ')
			pending = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// cleanLine is collapseLine's fast path: printable ASCII with single inner
// spaces needs no change.
func cleanLine(s string) bool {
	if s == "" {
		return true
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7F {
			return false
		}
		if c == ' ' && s[i+1] == ' ' {
			return false
		}
	}
	return true
}

// lineSpace reports runes that collapseLine folds into a space: JavaScript
// white space (what OpenClaw's /\s+/ collapses), any other Unicode space,
// and the C0 and C1 controls, some of which tokenizers treat as line breaks.
func lineSpace(r rune) bool {
	return isJSSpace(r) || unicode.IsSpace(r) || unicode.IsControl(r)
}
