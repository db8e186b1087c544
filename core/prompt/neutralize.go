package prompt

import (
	"strings"
	"unicode/utf8"
)

// Channel text that is not inside a JSON block (the message itself, thread
// context, untrusted context lines, untrusted system events) is written raw,
// so it is neutralised line by line before it goes in:
//
//   - NUL bytes are removed and invalid UTF-8 becomes U+FFFD;
//   - every line break the model may honour (CR, CRLF, VT, FF, NEL, U+2028,
//     U+2029) becomes "\n", so the line checks below see every line;
//   - role tags, chat-template tokens and role elements anywhere in a line
//     ("[System Message]", "[message_id: 7]", "<|im_start|>", "[INST]",
//     "</untrusted>", "<system>") have their brackets turned into
//     parentheses, as OpenClaw's sanitizeInboundSystemTags does for role
//     tags;
//   - a line that starts like one of Switchboard's own lines (a "System"
//     line, a heading, a block label or any "(trusted …)" or
//     "(untrusted …)" label, one of the notes, the envelope) gets a leading
//     backslash, the Markdown escape, so it no longer reads as one.
//
// markers.go lists the markers. They are compared with the line's skeleton
// (skeleton.go): invisible runes dropped, white space collapsed, full-width,
// mathematical and other compatibility forms and look-alike letters of
// other scripts folded to ASCII, lower-cased, and a line's leading
// decoration ("> ", "- ", "**", "1. ", an emoji) skipped. "Ѕystem:" with a
// Cyrillic Ѕ, "Ꮪystem:" with a Cherokee one, "Ｓｙｓｔｅｍ:", "⠀System:" and
// "> **System:**" are all caught. The invariant, which
// TestFinding8_ForgedAuthorityCorpus and FuzzFinding8_NoLinePassesForOurMarkers
// check with an independent matcher, is that no line of the result passes
// for a marker; the rewrite is idempotent.
//
// OpenClaw rewrites a "System:" line as "System (untrusted):" instead. That
// still reads as a system event, one Switchboard could have written (an
// untrusted event); the backslash makes channel text unmistakable, so it is
// used for every marker. Only a line's first character is added, and only
// brackets are changed inside it, so the model still reads what the user
// wrote.

// neutralizeRaw returns s made safe for a raw slot (see above).
func neutralizeRaw(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\ufffd")
	}
	s = stripNUL(s)
	s = normalizeNewlines(s)
	return neutralizeLines(s)
}

// normalizeNewlines turns every line break into "\n".
func normalizeNewlines(s string) string {
	if !hasOddLineBreak(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '\r':
			b.WriteByte('\n')
			if i+1 < len(s) && s[i+1] == '\n' {
				size++
			}
		case '\v', '\f', 0x85, 0x2028, 0x2029:
			b.WriteByte('\n')
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// hasOddLineBreak reports a line break other than "\n": CR, VT, FF, NEL
// (C2 85), LS or PS (E2 80 A8/A9). It scans bytes, which is much faster
// than strings.ContainsAny with non-ASCII runes.
func hasOddLineBreak(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\r', '\v', '\f':
			return true
		case 0xC2:
			if i+1 < len(s) && s[i+1] == 0x85 {
				return true
			}
		case 0xE2:
			if i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xA8 || s[i+2] == 0xA9) {
				return true
			}
		}
	}
	return false
}

// neutralizeLines rewrites each line of s that holds a tag or starts like
// a marker. It returns s itself when no line needs a change.
func neutralizeLines(s string) string {
	var b []byte
	last := 0
	for start := 0; start <= len(s); {
		end := strings.IndexByte(s[start:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += start
		}
		line := s[start:end]
		if out := neutralizeLine(line); out != line {
			if b == nil {
				b = make([]byte, 0, len(s)+16)
			}
			b = append(b, s[last:start]...)
			b = append(b, out...)
			last = end
		}
		start = end + 1
	}
	if b == nil {
		return s
	}
	return string(append(b, s[last:]...))
}

// neutralizeLine rewrites the tags of one line, then escapes it if it
// starts like a marker.
func neutralizeLine(line string) string {
	line = defangInline(line)
	if classifyLine(line) == lineEscape {
		return `\` + line
	}
	return line
}

// lineKind says how a raw line must be rewritten.
type lineKind uint8

const (
	lineOK lineKind = iota
	lineEscape
)

// classifyLine decides whether a line must be escaped: whether its
// skeleton, after the decoration, starts like a marker.
func classifyLine(line string) lineKind {
	if plainStart(line) {
		return lineOK
	}
	var buf [startWindow]byte
	if k, complete := lineStart(line, &buf); startsLikeMarker(k, complete) {
		return lineEscape
	}
	return lineOK
}
