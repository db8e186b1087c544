package prompt

import (
	"strings"
	"unicode/utf8"
)

// The markers a line of channel text must not pass for, compared with the
// line's skeleton (skeleton.go). Two kinds:
//
// Line starts, checked after the line's decoration (white space, quote and
// list marks, emphasis, symbols and emoji, "1." numbers) is skipped; a line
// that starts with one gets a leading backslash:
//
//   - the word "system" in any form ("System:", "System (untrusted):",
//     "SYSTEM OVERRIDE:", "System message:", "**System:**", "Ꮪystem:"):
//     Switchboard's own event lines start with it, and no other line may;
//   - a heading ("#"), an internal context marker ("<<<"), "Assistant:";
//   - the labels and notes this package and the queue write (lineMarkers),
//     OpenClaw's "[message_id: …]" tag, and any line shaped like a
//     metadata label: words, then brackets that say "trusted" or
//     "untrusted", then a colon or the end of the line, which covers
//     "Inbound Context (trusted metadata)" and every block label;
//   - any line shaped like OpenClaw's envelope header, "[Telegram Alice
//     id:42 +2m 2025-05-01 14:30 UTC] …": a bracket that opens with a word
//     and holds an id, a time, a date or an elapsed time. The shape, not
//     a list of channel names, so that every channel's envelope is caught.
//
// Tags anywhere in a line, rewritten in place by turning their brackets
// into parentheses ("[System]" becomes "(System)", "<|im_start|>" becomes
// "(|im_start|)"), so the model still reads what was written:
//
//   - role tags "[System Message]", "[System]", "[Assistant]", "[Internal]"
//     (OpenClaw's sanitizeInboundSystemTags) and the "[message_id: …]" tag;
//   - chat-template tokens: "<|…|>" (ChatML, Llama 3, Phi, DeepSeek with
//     full-width bars), "<s>", "</s>", "[INST]", "[/INST]", "<<SYS>>",
//     "<</SYS>>", "[SYSTEM_PROMPT]", "<start_of_turn>", "<end_of_turn>";
//   - role elements: "<system>", "</untrusted>", "<trusted …>",
//     "<assistant>", "<developer>", "<im_start>" and their variants with a
//     suffix or attributes ("<system-reminder>", "<untrusted_input>").
//
// Markers match with a space allowed between any two characters, so "S y s
// t e m:" and "[ INST ]" are caught too.

// lineMarker is a line start, written as its skeleton without spaces.
type lineMarker struct {
	text string
	// word requires the marker to end a word: "System:" and "System is"
	// match "system", "Systems" and "systematic" do not.
	word bool
}

// lineMarkers are the line starts other than the label shape.
var lineMarkers = func() []lineMarker {
	ms := []lineMarker{
		{"system", true},
		{"#", false},
		{"<<<", false},
		{"assistant:", false},
		{"[system", false},
		{"[assistant", false},
		// This package's notes (labels.go, media.go).
		{"[thread history", false},
		{"[thread starter", false},
		{"[media attached", false},
		{"[user sent media", false},
		{"note: the previous agent run", false},
		{"to send an image back", false},
		{"untrusted context", false},
		{"conversation info", false},
		{"inbound context", false},
		{"inbound meta", false},
		{"read heartbeat.md", false},
		{"a new session was started", false},
		// The queue's collect and overflow prompts (queue/collect.go).
		{"[queue", false},
		{"queued #", false},
		// OpenClaw's other framing, which a model may know.
		{"[chat messages since", false},
		{"[current message", false},
		{"[replying to", false},
		{"[/replying", false},
		{"[message_id", true},
		{"[message id", true},
	}
	for i := range ms {
		ms[i].text = strings.ReplaceAll(ms[i].text, " ", "")
	}
	return ms
}()

// lineMarkersByFirst lists, for each skeleton byte, the line markers that
// can start with it.
var lineMarkersByFirst = func() (t [256][]lineMarker) {
	for b := range t {
		for _, m := range lineMarkers {
			if sameSkeletonByte(byte(b), m.text[0]) {
				t[b] = append(t[b], m)
			}
		}
	}
	return t
}()

// The bounds of the patterns, in skeleton bytes. The windows hold the
// longest possible match and one byte more.
const (
	labelWordsMax = 64  // before a label's opening bracket
	labelInnerMax = 64  // inside a label's brackets
	pipeInnerMax  = 48  // inside "<|…|>"
	elementAttMax = 64  // after a role element's name up to the ">"
	idTagMax      = 64  // after "[message_id" up to the "]"
	envelopeMax   = 96  // inside an envelope header's brackets
	startWindow   = 192 // of a line's start
	tagWindow     = 128 // of a tag
)

// skelIter walks the skeleton of a line one byte at a time, and knows the
// bytes of the line the current skeleton byte came from. Its only
// pointers are set when it starts, so stepping it costs no write barrier.
type skelIter struct {
	line    string
	next    int                   // offset of the next rune to fold
	start   int                   // offset of the current rune
	end     int                   // offset after the current rune
	fold    [maxSkeletonRune]byte // the current rune's skeleton
	fi, fn  uint8                 // next and end index in fold
	pending bool                  // a space is owed before the next byte
	emitted bool                  // a byte has been returned
	edits   runeEdits             // defangInline's edits so far, if any
}

// maxSkeletonRune bounds len(skeletonRune(r)); TestSkeletonTableBounds
// checks it.
const maxSkeletonRune = 8

// newSkelIter starts at offset at of line, which must be a rune boundary.
func newSkelIter(line string, at int) skelIter {
	return skelIter{line: line, next: at, start: at, end: at}
}

// nextByte returns the next skeleton byte, or false at the end of the
// line. A run of white space is returned as one space, and only between
// two other bytes.
func (it *skelIter) nextByte() (byte, bool) {
	for it.fi == it.fn {
		if it.next >= len(it.line) {
			return 0, false
		}
		start := it.next
		var f string
		if c := it.line[it.next]; c < utf8.RuneSelf {
			it.next++
			if c > ' ' && c < 0x7F && it.edits == nil {
				if c >= 'A' && c <= 'Z' {
					c += 'a' - 'A'
				}
				it.fold[0], it.fi, it.fn, it.start, it.end = c, 0, 1, start, it.next
				break
			}
			f = asciiSkeleton[c]
		} else {
			r, size := utf8.DecodeRuneInString(it.line[it.next:])
			f = skeletonRune(r)
			it.next += size
		}
		if it.edits != nil && it.edits[start] != 0 {
			f = ""
			if e := it.edits[start]; e != editDelete {
				f = skeletonRune(e)
			}
		}
		switch f {
		case "":
		case " ":
			it.pending = it.emitted
		default:
			it.fi, it.fn, it.start, it.end = 0, uint8(copy(it.fold[:], f)), start, it.next
		}
	}
	if it.pending {
		it.pending = false
		return ' ', true
	}
	b := it.fold[it.fi]
	it.fi++
	it.emitted = true
	return b, true
}

// matchSpaced matches marker m (no spaces) in skeleton k at i, allowing
// one space before each character but the first. It returns the offset
// after the match.
func matchSpaced(k []byte, i int, m string) (int, bool) {
	for j := 0; j < len(m); j++ {
		if j > 0 && i < len(k) && k[i] == ' ' {
			i++
		}
		if i >= len(k) || !sameSkeletonByte(k[i], m[j]) {
			return 0, false
		}
		i++
	}
	return i, true
}

func isSkelWordByte(b byte) bool { return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' }

// lineStart returns the skeleton of line after its decoration, up to
// startWindow bytes, and whether that is all of it.
func lineStart(line string, buf *[startWindow]byte) (k []byte, complete bool) {
	if k, complete, ok := lineStartPrintable(line, buf); ok {
		return k, complete
	}
	return lineStartIter(line, buf)
}

// lineStartIter is lineStart for any line.
func lineStartIter(line string, buf *[startWindow]byte) (k []byte, complete bool) {
	it := newSkelIter(line, 0)
	for {
		save := it
		b, ok := it.nextByte()
		if !ok {
			return buf[:0], true
		}
		if isSkeletonDecoration(b) || b >= '0' && b <= '9' && skipListNumber(&it) {
			continue
		}
		it = save
		break
	}
	n := 0
	for {
		b, ok := it.nextByte()
		if !ok {
			return buf[:n], true
		}
		if n == len(buf) {
			return buf[:n], false
		}
		buf[n] = b
		n++
	}
}

// lineStartPrintable is lineStart for the common line of printable ASCII,
// spaces and tabs, whose skeleton is the line lower-cased with its white
// space collapsed. ok is false for any other line.
func lineStartPrintable(line string, buf *[startWindow]byte) (k []byte, complete, ok bool) {
	i, ok := skipPrintableDecoration(line)
	if !ok {
		return nil, false, false
	}
	n, space := 0, false
	for ; i < len(line); i++ {
		c := line[i]
		switch {
		case !isPrintableOrTab(c):
			return nil, false, false
		case c == ' ' || c == '\t':
			space = n > 0
			continue
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		}
		if space {
			if n == len(buf) {
				return buf[:n], false, true
			}
			buf[n] = ' '
			n++
			space = false
		}
		if n == len(buf) {
			return buf[:n], false, true
		}
		buf[n] = c
		n++
	}
	return buf[:n], true, true
}

func isPrintableOrTab(c byte) bool { return c >= ' ' && c < 0x7F || c == '\t' }

// skipPrintableDecoration returns the offset of the first byte after the
// decoration of a line of printable ASCII, or false when it meets another
// byte first.
func skipPrintableDecoration(line string) (int, bool) {
	i := 0
	for i < len(line) {
		c := line[i]
		if !isPrintableOrTab(c) {
			return 0, false
		}
		if c == '\t' || isSkeletonDecoration(c) {
			i++
			continue
		}
		if c >= '0' && c <= '9' {
			j := i + 1
			for j < len(line) && j-i < 9 && line[j] >= '0' && line[j] <= '9' {
				j++
			}
			if j < len(line) && !isPrintableOrTab(line[j]) {
				return 0, false
			}
			if j < len(line) && (line[j] == '.' || line[j] == ')') {
				i = j + 1
				continue
			}
		}
		break
	}
	return i, true
}

// plainStart is classifyLine's fast path: a line of ASCII whose first
// byte after the decoration starts no marker, and in which a colon,
// backslash or closing bracket comes before any opening bracket (or
// neither does), cannot be a marker or a label.
func plainStart(line string) bool {
	i, ok := skipPrintableDecoration(line)
	if !ok || i == len(line) {
		return ok
	}
	c := line[i]
	if c >= 'A' && c <= 'Z' {
		c += 'a' - 'A'
	}
	if len(lineMarkersByFirst[c]) > 0 {
		return false
	}
	for ; i < len(line); i++ {
		switch c := line[i]; {
		case !isPrintableOrTab(c) || isOpenBracket(c):
			return false
		case c == ':' || c == '\\' || isCloseBracket(c):
			return true
		}
	}
	return true
}

// skipListNumber reads the rest of an ordered-list number ("12." or "3)",
// at most nine digits) whose first digit was just read, and reports
// whether there was one; it moves it only if so.
func skipListNumber(it *skelIter) bool {
	probe := *it
	for n := 1; ; n++ {
		b, ok := probe.nextByte()
		switch {
		case ok && b >= '0' && b <= '9' && n < 9:
			continue
		case ok && (b == '.' || b == ')'):
			*it = probe
			return true
		}
		return false
	}
}

// startsLikeMarker reports whether the skeleton k of a line's start (after
// its decoration) begins like one of Switchboard's lines.
func startsLikeMarker(k []byte, complete bool) bool {
	if len(k) == 0 {
		return false
	}
	for _, m := range lineMarkersByFirst[k[0]] {
		end, ok := matchSpaced(k, 0, m.text)
		if ok && (!m.word || end == len(k) || !isSkelWordByte(k[end])) {
			return true
		}
	}
	return isLabelShape(k, complete) || isEnvelopeShape(k)
}

// isEnvelopeShape reports a skeleton shaped like an envelope header: "[",
// a letter, then up to envelopeMax bytes before the next bracket that hold
// an envelope field: "id:" after a space, a time ("9:41"), a date
// ("2025-05-01") or an elapsed time ("+2m").
func isEnvelopeShape(k []byte) bool {
	i, ok := matchSpaced(k, 0, "[")
	if !ok {
		return false
	}
	if i < len(k) && k[i] == ' ' {
		i++
	}
	if i >= len(k) || k[i] < 'a' || k[i] > 'z' {
		return false
	}
	end := i
	for end < len(k) && end-i < envelopeMax && k[end] != '[' && k[end] != ']' {
		end++
	}
	in := k[i:end]
	digit := func(j int) bool { return j >= 0 && j < len(in) && in[j] >= '0' && in[j] <= '9' }
	for j := range in {
		switch in[j] {
		case ':':
			// "id:" or "id :" after a non-word byte; "9:41".
			d := j - 1
			if d >= 0 && in[d] == ' ' {
				d--
			}
			if d >= 1 && in[d] == 'd' && in[d-1] == 'i' && (d == 1 || !isSkelWordByte(in[d-2])) {
				return true
			}
			if digit(j-1) && digit(j+1) && digit(j+2) {
				return true
			}
		case '-':
			if digit(j-4) && digit(j-3) && digit(j-2) && digit(j-1) && digit(j+1) && digit(j+2) && j+3 < len(in) && in[j+3] == '-' && digit(j+4) && digit(j+5) {
				return true
			}
		case '+':
			n := 0
			for digit(j+1+n) && n < 6 {
				n++
			}
			if n > 0 && j+1+n < len(in) && strings.IndexByte("smhd", in[j+1+n]) >= 0 && (j+2+n == len(in) || in[j+2+n] < 'a' || in[j+2+n] > 'z') {
				return true
			}
		}
	}
	return false
}

// isLabelShape reports a skeleton shaped like a metadata label: up to
// labelWordsMax bytes without a bracket, colon or backslash (the escape),
// an opening bracket, up to labelInnerMax bytes that say "trusted" (or
// "untrusted"), the closing bracket, then a colon or the end of the line.
// "Sender (untrusted metadata):", "Inbound Context (trusted metadata)" and
// "Owner (verified, trusted):" are labels; "a (trusted) friend" is not.
func isLabelShape(k []byte, complete bool) bool {
	i := 0
	for ; ; i++ {
		if i >= len(k) || i > labelWordsMax || k[i] == ':' || k[i] == '\\' || isCloseBracket(k[i]) {
			return false
		}
		if isOpenBracket(k[i]) {
			break
		}
	}
	i++
	inner := i
	for j := 0; ; j, i = j+1, i+1 {
		if i >= len(k) {
			return false
		}
		if isCloseBracket(k[i]) {
			break
		}
		if j == labelInnerMax {
			return false
		}
	}
	if !containsSpaced(k[inner:i], "trusted") {
		return false
	}
	i++
	if i < len(k) && k[i] == ' ' {
		i++
	}
	if i == len(k) {
		return complete
	}
	return k[i] == ':'
}

// containsSpaced reports whether marker m matches anywhere in k.
func containsSpaced(k []byte, m string) bool {
	for p := range k {
		if _, ok := matchSpaced(k, p, m); ok {
			return true
		}
	}
	return false
}

func isOpenBracket(b byte) bool  { return b == '(' || b == '[' || b == '{' || b == '<' }
func isCloseBracket(b byte) bool { return b == ')' || b == ']' || b == '}' || b == '>' }
