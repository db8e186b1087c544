package prompt

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// The tags of markers.go are found by scanning a line for a "<" or "[" in
// any spelling and matching the skeleton from there.

// roleTags are the bracketed role tags, rewritten as "(<inner>)".
var roleTags = []string{"[systemmessage]", "[system]", "[assistant]", "[internal]"}

// fixedTokens are the chat-template tokens with no variable part.
var fixedTokens = []string{
	"<s>", "</s>",
	"[inst]", "[/inst]",
	"<<sys>>", "<</sys>>",
	"[system_prompt]", "[/system_prompt]",
	"<start_of_turn>", "</start_of_turn>", "<end_of_turn>",
}

// roleElements are the element names that read as a role or trust
// boundary: "<system>", "</untrusted>", "<trusted source=…>".
var roleElements = []string{"system", "assistant", "developer", "untrusted", "trusted", "im_start", "im_end"}

// tagOpeners are the non-ASCII runes whose skeleton holds "<" or "[", for
// defangInline's scan.
var tagOpeners = func() []rune {
	var rs []rune
	for _, e := range skeletonTable {
		if strings.ContainsAny(e.s, "<[") {
			rs = append(rs, e.r)
		}
	}
	return rs
}()

// tagKind says how a matched tag is rewritten.
type tagKind uint8

const (
	tagNone  tagKind = iota
	tagRole          // "(" + the trimmed inside + ")"
	tagToken         // each bracket becomes a parenthesis
)

// tagWin is the skeleton from a candidate "<" or "[" on, read only as far
// as a matcher looks, up to tagWindow bytes, with the line offsets of the
// rune behind each byte.
type tagWin struct {
	it    skelIter
	b     [tagWindow]byte
	spans [tagWindow][2]int
	n     int
	done  bool
}

// at returns skeleton byte i, or false past the end.
func (w *tagWin) at(i int) (byte, bool) {
	for i >= w.n && !w.done {
		b, ok := w.it.nextByte()
		if !ok || w.n == len(w.b) {
			w.done = true
			break
		}
		w.b[w.n], w.spans[w.n] = b, [2]int{w.it.start, w.it.end}
		w.n++
	}
	if i < w.n {
		return w.b[i], true
	}
	return 0, false
}

// is reports whether skeleton byte i is c.
func (w *tagWin) is(i int, c byte) bool {
	b, ok := w.at(i)
	return ok && b == c
}

// match is matchSpaced on the window.
func (w *tagWin) match(i int, m string) (int, bool) {
	for j := 0; j < len(m); j++ {
		if j > 0 && w.is(i, ' ') {
			i++
		}
		b, ok := w.at(i)
		if !ok || !sameSkeletonByte(b, m[j]) {
			return 0, false
		}
		i++
	}
	return i, true
}

// matchTag matches a tag at the start of the window, which starts with
// "<" or "[". It returns the tag's length in skeleton bytes.
func (w *tagWin) matchTag() (int, tagKind) {
	if !w.mayStartTag() {
		return 0, tagNone
	}
	for _, t := range roleTags {
		if end, ok := w.match(0, t); ok {
			return end, tagRole
		}
	}
	for _, t := range fixedTokens {
		if end, ok := w.match(0, t); ok {
			return end, tagToken
		}
	}
	for _, m := range []func() (int, bool){w.matchPipeToken, w.matchIDTag, w.matchRoleElement} {
		if end, ok := m(); ok {
			return end, tagToken
		}
	}
	return 0, tagNone
}

// matchPipeToken matches "<|name|>" with up to pipeInnerMax bytes of name.
func (w *tagWin) matchPipeToken() (int, bool) {
	i, ok := w.match(0, "<|")
	if !ok {
		return 0, false
	}
	j := 0
	for ; j < pipeInnerMax; i, j = i+1, j+1 {
		if b, ok := w.at(i); !ok || b == '<' || b == '>' || b == '|' {
			break
		}
	}
	if j == 0 {
		return 0, false
	}
	return w.match(i, "|>")
}

// matchIDTag matches "[message_id" or "[message id" ending a word, and
// takes in the rest of the tag up to its "]" when that is near.
func (w *tagWin) matchIDTag() (int, bool) {
	end, ok := w.match(0, "[message_id")
	if !ok {
		end, ok = w.match(0, "[messageid")
	}
	if b, more := w.at(end); !ok || more && isSkelWordByte(b) {
		return 0, false
	}
	for i := end; i-end <= idTagMax; i++ {
		b, ok := w.at(i)
		switch {
		case !ok || b == '[' || b == '<':
			return end, true
		case b == ']':
			return i + 1, true
		}
	}
	return end, true
}

// matchRoleElement matches "<name>", "</name>" or "<name…>" for a name of
// roleElements, where the name ends in a space, "_", "-" or ":" and up to
// elementAttMax bytes follow before the ">".
func (w *tagWin) matchRoleElement() (int, bool) {
	i := 1
	if w.is(i, ' ') {
		i++
	}
	if w.is(i, '/') {
		i++
		if w.is(i, ' ') {
			i++
		}
	}
	for _, name := range roleElements {
		end, ok := w.match(i, name)
		if !ok {
			continue
		}
		switch b, _ := w.at(end); b {
		case '>':
			return end + 1, true
		case ' ', '_', '-', ':':
		default:
			continue
		}
		for j, k := 0, end+1; j <= elementAttMax; j, k = j+1, k+1 {
			b, ok := w.at(k)
			if !ok || b == '<' {
				break
			}
			if b == '>' {
				return k + 1, true
			}
		}
	}
	return 0, false
}

// mayHoldTag is defangInline's fast path: ASCII text without "<" or "["
// holds no tag.
func mayHoldTag(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '<' || c == '[' || c >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

// defangInline rewrites the tags of line (see the top of this file). The
// line is scanned from its end, so a tag is matched only once everything
// after it is final; rewriting only ever removes brackets, so no tag is
// left when the scan reaches the start. The rewrites are kept as edits to
// single runes and made in one pass at the end, so a line full of tags
// costs linear time, not quadratic.
func defangInline(line string) string {
	if !mayHoldTag(line) {
		return line
	}
	var ed runeEdits
	var w tagWin // reused: it is large
	for pos := len(line); pos > 0; {
		r, size := utf8.DecodeLastRuneInString(line[:pos])
		pos -= size
		if r < utf8.RuneSelf {
			if r != '<' && r != '[' {
				continue
			}
		} else if _, found := slices.BinarySearch(tagOpeners, r); !found {
			continue
		}
		f := skeletonRune(r)
		for k := len(f) - 1; k >= 0; k-- {
			if (f[k] == '<' || f[k] == '[') && defangTagAt(line, &ed, &w, pos, k) {
				break
			}
		}
	}
	return ed.apply(line)
}

// runeEdits are pending rewrites of single runes of a line, indexed by
// the rune's offset: 0 for none, a replacement rune, or editDelete.
type runeEdits []rune

const editDelete rune = -1

func (ed *runeEdits) set(line string, at int, r rune) {
	if *ed == nil {
		*ed = make(runeEdits, len(line))
	}
	(*ed)[at] = r
}

// runeAt is the rune at offset i of line as edited so far.
func (ed runeEdits) runeAt(line string, i int) (r rune, size int) {
	r, size = utf8.DecodeRuneInString(line[i:])
	if ed != nil && ed[i] != 0 {
		r = ed[i]
	}
	return r, size
}

// apply returns line with the edits made.
func (ed runeEdits) apply(line string) string {
	if ed == nil {
		return line
	}
	var b strings.Builder
	b.Grow(len(line))
	for i, r := range line {
		switch e := ed[i]; e {
		case 0:
			b.WriteRune(r)
		case editDelete:
		default:
			b.WriteRune(e)
		}
	}
	return b.String()
}

// defangTagAt records the rewrite of the tag that starts at byte k of the
// skeleton of the rune at offset pos, if there is one, reading it through
// w.
func defangTagAt(line string, ed *runeEdits, w *tagWin, pos, k int) bool {
	w.it, w.n, w.done = newSkelIter(line, pos), 0, false
	w.it.edits = *ed
	for range k {
		w.it.nextByte()
	}
	m, kind := w.matchTag()
	if kind == tagNone {
		return false
	}
	end := w.spans[m-1][1]
	if kind == tagRole {
		// "(" + jsTrim(inside) + ")", as OpenClaw writes it.
		open, closing := w.spans[0][1], w.spans[m-1][0]
		ed.set(line, pos, '(')
		ed.set(line, closing, ')')
		for i := open; i < closing; {
			r, size := ed.runeAt(line, i)
			if r != editDelete && !isJSSpace(r) {
				break
			}
			ed.set(line, i, editDelete)
			i += size
		}
		for i := closing; i > open; {
			_, size := utf8.DecodeLastRuneInString(line[:i])
			if r, _ := ed.runeAt(line, i-size); r != editDelete && !isJSSpace(r) {
				break
			}
			i -= size
			ed.set(line, i, editDelete)
		}
		return true
	}
	for i := pos; i < end; {
		r, size := ed.runeAt(line, i)
		if r != editDelete {
			switch f := skeletonRune(r); {
			case strings.ContainsAny(f, "<["):
				ed.set(line, i, '(')
			case strings.ContainsAny(f, ">]"):
				ed.set(line, i, ')')
			}
		}
		i += size
	}
	return true
}

// mayStartTag reports whether some tag starts with the window's first
// three bytes other than spaces, so that most "<" and "[" are passed over
// after a glance.
func (w *tagWin) mayStartTag() bool {
	var key [3]byte
	for i, n := 0, 0; n < len(key); i++ {
		b, ok := w.at(i)
		if !ok {
			return false
		}
		if b != ' ' {
			key[n] = canonicalSkeletonByte(b)
			n++
		}
	}
	return tagStarts[key] || tagStarts[[3]byte{key[0], key[1], 0}]
}

// tagStarts are the first three characters of every tag, with the
// confusable letters made one (canonicalSkeletonByte); a zero third byte
// stands for any.
var tagStarts = func() map[[3]byte]bool {
	heads := []string{"<|", "[message_id", "[messageid"}
	for _, name := range roleElements {
		heads = append(heads, "<"+name, "</"+name)
	}
	heads = append(append(heads, roleTags...), fixedTokens...)
	t := map[[3]byte]bool{}
	for _, h := range heads {
		var key [3]byte
		for i := 0; i < len(key) && i < len(h); i++ {
			key[i] = canonicalSkeletonByte(h[i])
		}
		t[key] = true
	}
	return t
}()
