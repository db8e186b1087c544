package prompt

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Channel text that is not inside a JSON block (the message itself, thread
// context, untrusted context lines, untrusted system events) is written raw,
// so it is neutralised line by line before it goes in:
//
//   - NUL bytes are removed and invalid UTF-8 becomes U+FFFD;
//   - every line break the model may honour (CR, CRLF, VT, FF, NEL, U+2028,
//     U+2029) becomes "\n", so the line checks below see every line;
//   - bracketed role tags anywhere ("[System Message]", "[System]",
//     "[Assistant]", "[Internal]") become parenthesised, as OpenClaw's
//     sanitizeInboundSystemTags does;
//   - a line that starts like a system event ("System:", "System
//     (untrusted):"), a heading ("#"), an untrusted block label, one of
//     this package's notes ("[media attached", "[Thread history",
//     "Untrusted context (", "Note: The previous agent run"), an internal
//     context marker ("<<<"), "[System…" or "Assistant:" gets a leading
//     backslash, the Markdown escape, so it no longer reads as one.
//
// OpenClaw rewrites a "System:" line as "System (untrusted):" instead. That
// still reads as a system event, one Switchboard could have written (an
// untrusted event); the backslash makes channel text unmistakable, so it is
// used for every marker.
//
// The line checks compare a skeleton of the line's start: white space
// collapsed, invisible characters dropped, full-width forms, Cyrillic and
// Greek look-alikes, small capitals, circled and mathematical letters folded
// to ASCII, lower-cased. "Ѕystem:" with a Cyrillic Ѕ, "Ｓｙｓｔｅｍ:" and
// "Sys\u200btem:" are all caught.

// neutralizeRaw returns s made safe for a raw slot (see above).
func neutralizeRaw(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\ufffd")
	}
	s = stripNUL(s)
	s = normalizeNewlines(s)
	s = neutralizeBracketTags(s)
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

// neutralizeLines rewrites the lines of s that start like a marker.
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
		if classifyLine(s[start:end]) == lineEscape {
			b = append(b, s[last:start]...)
			b = append(b, '\\')
			last = start
		}
		start = end + 1
	}
	if b == nil {
		return s
	}
	return string(append(b, s[last:]...))
}

// lineKind says how a raw line must be rewritten.
type lineKind uint8

const (
	lineOK lineKind = iota
	lineEscape
)

// skeletonLen bounds how much of a line's start is examined, in bytes.
const skeletonLen = 96

// escapedPrefixes are skeleton starts that get a backslash.
var escapedPrefixes = []string{
	"#",
	"<<<",
	"[thread history",
	"[thread starter",
	"[media attached",
	"[user sent media",
	"[system",
	"[assistant",
	"[queued",
	"queued #",
	"[chat messages since",
	"[current message",
	"[replying to",
	"untrusted context",
	"note: the previous agent run",
	"to send an image back",
	"assistant:",
	"assistant :",
}

// classifyLine decides whether a raw line must be escaped, from the
// skeleton of its first skeletonLen bytes.
func classifyLine(line string) lineKind {
	if plainLine(line) {
		return lineOK
	}
	var sk [skeletonLen]byte
	n := 0
	lead := false
	space := false
	for i := 0; i < len(line) && n < skeletonLen-utf8.UTFMax; {
		r, size := utf8.DecodeRuneInString(line[i:])
		i += size
		f, ok := foldRune(r)
		if !ok {
			continue
		}
		if f == ' ' {
			space = lead
			continue
		}
		lead = true
		if space {
			sk[n] = ' '
			n++
			space = false
		}
		n += utf8.EncodeRune(sk[n:], f)
	}
	if !lead {
		return lineOK
	}
	k := sk[:n]
	if rest, ok := bytes.CutPrefix(k, []byte("system")); ok {
		rest = bytes.TrimLeft(rest, " ")
		if len(rest) == 0 || bytes.IndexByte([]byte(":([]"), rest[0]) >= 0 {
			return lineEscape
		}
	}
	for _, p := range escapedPrefixes {
		if len(k) >= len(p) && string(k[:len(p)]) == p {
			return lineEscape
		}
	}
	if isLabelSkeleton(k) {
		return lineEscape
	}
	return lineOK
}

// wordMarkers are the markers that start with a letter, up to where an
// ASCII line can be told apart from them.
var wordMarkers = []string{"system", "assistant", "untrusted", "note:", "to send", "queued"}

// plainLine is classifyLine's fast path: a line whose first character is
// an ASCII letter or digit that starts no marker, and whose first
// skeletonLen bytes are ASCII without "(", cannot be a marker.
func plainLine(line string) bool {
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	if i == len(line) {
		return true
	}
	if c := line[i] | 0x20; !(c >= 'a' && c <= 'z' || line[i] >= '0' && line[i] <= '9') {
		return false
	}
	for _, w := range wordMarkers {
		if len(line)-i >= len(w) && strings.EqualFold(line[i:i+len(w)], w) {
			return false
		}
	}
	end := min(len(line), i+skeletonLen)
	for j := i; j < end; j++ {
		if c := line[j]; c >= 0x80 || c == '(' || c < 0x20 {
			return false
		}
	}
	return true
}

// isLabelSkeleton reports a line shaped like an untrusted block label:
// words, then "(untrusted…)", then a colon.
func isLabelSkeleton(k []byte) bool {
	i := bytes.Index(k, []byte("(untrusted"))
	if i <= 0 {
		return false
	}
	for j := 0; j < i; j++ {
		if c := k[j]; !(c >= 'a' && c <= 'z' || c == ' ' || c == ',' || c == '-') {
			return false
		}
	}
	closing := bytes.IndexByte(k[i:], ')')
	if closing < 0 {
		return false
	}
	return bytes.HasPrefix(bytes.TrimLeft(k[i+closing+1:], " "), []byte(":"))
}

// neutralizeBracketTags turns "[System Message]", "[System]",
// "[Assistant]" and "[Internal]" (any case, any spacing, look-alikes
// included) into their parenthesised forms.
func neutralizeBracketTags(s string) string {
	fullWidth := strings.Contains(s, "［")
	if !fullWidth && strings.IndexByte(s, '[') < 0 {
		return s
	}
	var b []byte
	last := 0
	for i := 0; i < len(s); {
		j := indexOpenBracket(s[i:], fullWidth)
		if j < 0 {
			break
		}
		open := i + j
		_, osz := utf8.DecodeRuneInString(s[open:])
		closeAt, csz := -1, 0
		for k, n := open+osz, 0; k < len(s) && n < 48; n++ {
			r, sz := utf8.DecodeRuneInString(s[k:])
			if r == ']' || r == '］' {
				closeAt, csz = k, sz
				break
			}
			if r == '[' || r == '［' || r == '\n' {
				break
			}
			k += sz
		}
		if closeAt >= 0 && isRoleTag(s[open+osz:closeAt]) {
			b = append(b, s[last:open]...)
			b = append(b, '(')
			b = append(b, jsTrim(s[open+osz:closeAt])...)
			b = append(b, ')')
			last = closeAt + csz
			i = last
			continue
		}
		i = open + osz
	}
	if b == nil {
		return s
	}
	return string(append(b, s[last:]...))
}

// indexOpenBracket finds the next "[", or full-width "［" when s may
// hold one.
func indexOpenBracket(s string, fullWidth bool) int {
	j := strings.IndexByte(s, '[')
	if !fullWidth {
		return j
	}
	end := len(s)
	if j >= 0 {
		end = j
	}
	if k := strings.Index(s[:end], "［"); k >= 0 {
		return k
	}
	return j
}

// isRoleTag reports whether the inside of a bracket pair is a role tag.
func isRoleTag(inner string) bool {
	var sk [32]byte
	n := 0
	for _, r := range inner {
		f, ok := foldRune(r)
		if !ok || f == ' ' {
			continue
		}
		if f >= utf8.RuneSelf || n == len(sk) {
			return false
		}
		sk[n] = byte(f)
		n++
	}
	switch string(sk[:n]) {
	case "systemmessage", "system", "assistant", "internal":
		return true
	}
	return false
}

// foldRune maps r to its skeleton form: ' ' for white space, an ASCII
// look-alike where one is known, lower-cased. ok is false for invisible
// runes, which the skeleton drops.
func foldRune(r rune) (f rune, ok bool) {
	if r < utf8.RuneSelf {
		switch {
		case r == ' ' || r == '\t':
			return ' ', true
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A', true
		case r < 0x20 || r == 0x7F:
			return 0, false
		}
		return r, true
	}
	if isInvisible(r) {
		return 0, false
	}
	if unicode.IsSpace(r) || isJSSpace(r) {
		return ' ', true
	}
	switch {
	case r >= 0xFF01 && r <= 0xFF5E: // full-width ASCII
		r -= 0xFEE0
	case r >= 0x1D400 && r <= 0x1D6A3: // mathematical alphanumeric letters
		idx := (r - 0x1D400) % 52
		if idx < 26 {
			r = 'a' + idx
		} else {
			r = 'a' + idx - 26
		}
	case r >= 0x1D7CE && r <= 0x1D7FF: // mathematical digits
		r = '0' + (r-0x1D7CE)%10
	case r >= 0x24B6 && r <= 0x24CF: // circled capitals
		r = 'a' + r - 0x24B6
	case r >= 0x24D0 && r <= 0x24E9: // circled small letters
		r = 'a' + r - 0x24D0
	case r >= 0x1F130 && r <= 0x1F149: // squared capitals
		r = 'a' + r - 0x1F130
	case r >= 0x1F150 && r <= 0x1F169: // negative circled capitals
		r = 'a' + r - 0x1F150
	case r >= 0x1F170 && r <= 0x1F189: // negative squared capitals
		r = 'a' + r - 0x1F170
	case r >= 0x1F1E6 && r <= 0x1F1FF: // regional indicators
		r = 'a' + r - 0x1F1E6
	default:
		if m, found := confusables[r]; found {
			r = m
		}
	}
	return unicode.ToLower(r), true
}

// isInvisible reports runes that render as nothing: format characters,
// combining marks and the Hangul fillers.
func isInvisible(r rune) bool {
	switch r {
	case 0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0:
		return true
	}
	if r >= 0x80 && r <= 0x9F && r != 0x85 {
		return true
	}
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r)
}

// confusables maps look-alike letters and symbols to ASCII.
var confusables = map[rune]rune{
	// Cyrillic
	'а': 'a', 'в': 'b', 'е': 'e', 'к': 'k', 'м': 'm', 'н': 'h', 'о': 'o', 'п': 'n',
	'р': 'p', 'с': 'c', 'т': 't', 'у': 'y', 'х': 'x', 'ѕ': 's', 'і': 'i', 'ј': 'j',
	'һ': 'h', 'ԁ': 'd', 'ԛ': 'q', 'ԝ': 'w', 'ӏ': 'l', 'ү': 'y',
	'А': 'a', 'В': 'b', 'Е': 'e', 'К': 'k', 'М': 'm', 'Н': 'h', 'О': 'o', 'Р': 'p',
	'С': 'c', 'Т': 't', 'У': 'y', 'Х': 'x', 'Ѕ': 's', 'І': 'i', 'Ј': 'j', 'Ԁ': 'd',
	'Ү': 'y', 'Ԛ': 'q', 'Ԝ': 'w',
	// Greek
	'Α': 'a', 'Β': 'b', 'Ε': 'e', 'Ζ': 'z', 'Η': 'h', 'Ι': 'i', 'Κ': 'k', 'Μ': 'm',
	'Ν': 'n', 'Ο': 'o', 'Ρ': 'p', 'Τ': 't', 'Υ': 'y', 'Χ': 'x',
	'α': 'a', 'ε': 'e', 'ι': 'i', 'κ': 'k', 'ν': 'v', 'ο': 'o', 'ρ': 'p', 'τ': 't',
	'υ': 'u',
	// Latin small capitals and other letter forms
	'ᴀ': 'a', 'ʙ': 'b', 'ᴄ': 'c', 'ᴅ': 'd', 'ᴇ': 'e', 'ꜰ': 'f', 'ɢ': 'g', 'ʜ': 'h',
	'ɪ': 'i', 'ᴊ': 'j', 'ᴋ': 'k', 'ʟ': 'l', 'ᴍ': 'm', 'ɴ': 'n', 'ᴏ': 'o', 'ᴘ': 'p',
	'ǫ': 'q', 'ʀ': 'r', 'ꜱ': 's', 'ᴛ': 't', 'ᴜ': 'u', 'ᴠ': 'v', 'ᴡ': 'w', 'ʏ': 'y',
	'ᴢ': 'z', 'ı': 'i', 'ſ': 's', 'ɡ': 'g', 'ℯ': 'e', 'ℊ': 'g', 'ℎ': 'h', 'ℓ': 'l',
	'ℴ': 'o',
	// symbols
	'﹟': '#', '♯': '#', '⋕': '#',
	'꞉': ':', '∶': ':', '˸': ':', 'ː': ':', '׃': ':', '︓': ':', '﹕': ':',
	'﹤': '<', '‹': '<', '«': '<', '〈': '<', '⟨': '<',
	'⟦': '[', '【': '[', '〔': '[', '⟧': ']', '】': ']', '〕': ']',
}
