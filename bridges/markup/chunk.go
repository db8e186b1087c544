package markup

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Mode is how text is split into chunks (channels.<ch>.chunkMode).
type Mode uint8

// The chunk modes.
const (
	// ModeLength (the default) splits only where a chunk would exceed the
	// limit, at the best boundary within it: a paragraph break, else a line
	// break, else the end of a sentence, else a space, else between any two
	// characters.
	ModeLength Mode = iota
	// ModeNewline splits at every paragraph break (blank line) outside code
	// and markup first, so each paragraph is its own message; a paragraph
	// over the limit is split at line breaks, then as in ModeLength.
	ModeNewline
)

// String returns the mode's configuration name.
func (m Mode) String() string {
	if m == ModeNewline {
		return "newline"
	}
	return "length"
}

// ParseMode parses a configuration value: "length", "newline", or "" for
// ModeLength.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "", "length":
		return ModeLength, nil
	case "newline":
		return ModeNewline, nil
	}
	return ModeLength, fmt.Errorf("markup: unknown chunk mode %q: use \"length\" or \"newline\"", s)
}

// Unit is what a chunk limit counts.
type Unit uint8

// The units.
const (
	// Runes counts Unicode code points (the default).
	Runes Unit = iota
	// UTF16 counts UTF-16 code units, as Telegram's limits do: a character
	// outside the Basic Multilingual Plane (most emoji) counts 2.
	UTF16
	// Bytes counts UTF-8 bytes.
	Bytes
)

// Len returns the length of s in the unit. An invalid UTF-8 byte counts 1.
func (u Unit) Len(s string) int {
	switch u {
	case Bytes:
		return len(s)
	case UTF16:
		n := 0
		for _, r := range s {
			if r >= 0x10000 {
				n++ // a surrogate pair
			}
			n++
		}
		return n
	}
	return utf8.RuneCountInString(s)
}

// Syntax is the markup of the text being chunked: what must not be split
// and what must be closed and reopened across chunks.
type Syntax uint8

// The syntaxes.
const (
	// SyntaxMarkdown is markdown-like text (Discord, WhatsApp, plain):
	// code fences (``` or ~~~ lines) are closed at the end of a chunk and
	// reopened, with their info string, at the start of the next.
	SyntaxMarkdown Syntax = iota
	// SyntaxSlack is Slack mrkdwn: fences as in SyntaxMarkdown, and
	// <...> tokens (links, mentions) and &...; entities are never split.
	SyntaxSlack
	// SyntaxHTML is Telegram HTML: tags and entities are never split, and
	// the tags open at a split are closed at the end of the chunk and
	// reopened (with their attributes) at the start of the next, so each
	// chunk is valid HTML on its own.
	SyntaxHTML
)

// MinLimit is the smallest limit honoured; smaller limits are raised to
// it. It leaves room for the longest entity (&#x10FFFF;) and any character
// in any unit, so that every chunk can stay within the limit.
const MinLimit = 16

// ChunkOptions are the rules for splitting text. The zero value splits
// markdown at DefaultLimit runes in ModeLength.
type ChunkOptions struct {
	// Limit is the largest chunk, in Unit; <= 0 means DefaultLimit, and
	// values under MinLimit are raised to MinLimit. Reopened fences and
	// tags count. For SyntaxHTML the markup counts too, which is
	// conservative: Telegram counts the text after parsing the tags.
	Limit int
	// Mode is the split strategy.
	Mode Mode
	// Unit is what Limit counts.
	Unit Unit
	// Syntax is the markup of the text.
	Syntax Syntax
	// MaxLines, when > 0, also caps the lines per chunk (Discord's 17). It
	// yields to the length limit: when a chunk cannot be made short enough
	// in lines (say a reopened fence leaves no room), it is ignored for
	// that chunk.
	MaxLines int
}

// Chunk splits already-rendered markdown-like text into chunks of at most
// limit runes (DefaultLimit when limit <= 0) with the given mode, keeping
// code fences valid in every chunk. See ChunkText for the rules.
func Chunk(text string, limit int, mode Mode) []string {
	return ChunkText(text, ChunkOptions{Limit: limit, Mode: mode})
}

// ChunkText splits already-rendered text into chunks following o.
//
// Every chunk is at most o.Limit long. A split prefers, within the last
// half of what fits, a paragraph break, then a line break, then the end of
// a sentence, then a space; failing those, the latest of any of them, and
// failing that it splits between two characters, never inside a UTF-8
// sequence (so never inside a UTF-16 surrogate pair) and, where it can,
// not before a combining mark, variation selector or zero-width joiner.
// The whitespace at a split is dropped, except the indentation of the line
// after it. A split inside a code fence closes the fence and reopens it in
// the next chunk; for SyntaxHTML a split never falls inside a tag or an
// entity, and the open tags are closed and reopened. Leading blank lines
// and trailing whitespace are dropped, and blank text gives no chunks.
//
// When the reopened markup itself leaves no room (a huge link tag, a tiny
// limit), the chunk degrades rather than exceeding the limit: for HTML its
// tags are dropped, for fences it is sent without them.
func ChunkText(text string, o ChunkOptions) []string {
	c := newChunker(text, o)
	pieces := c.run()
	out := make([]string, 0, len(pieces))
	for _, p := range pieces {
		out = append(out, p.String(text))
	}
	return out
}

// piece is one chunk: prefix + text[start:end] + suffix, or body for a
// degraded chunk.
type piece struct {
	prefix, suffix string
	start, end     int
	degraded       bool
	body           string
}

// String returns the chunk's text.
func (p piece) String(text string) string {
	if p.degraded {
		return p.body
	}
	return p.prefix + text[p.start:p.end] + p.suffix
}

// fence is a fenced code block in the text being chunked.
type fence struct {
	openStart    int    // start of the opener line
	contentStart int    // after the opener line's newline
	closeStart   int    // start of the closer line (len(text) when unclosed)
	closeEnd     int    // end of the closer line, before its newline
	open         string // the opener line, reopened verbatim
	close        string // the opener's indentation and fence run
}

// tagRef is an open HTML tag.
type tagRef struct {
	name string
	open string // the start tag as written, for reopening
}

// atomKind classifies the indivisible pieces of the text.
type atomKind uint8

const (
	atomText    atomKind = iota // a character
	atomSpace                   // a whitespace character other than "\n"
	atomNewline                 // "\n"
	atomOpen                    // an HTML start tag
	atomClose                   // an HTML end tag
	atomVoid                    // a self-closing HTML tag
	atomEntity                  // an entity, or a Slack <...> token
)

// Break classes, best first.
const (
	clsParagraph = iota
	clsLine
	clsSentence
	clsSpace
	clsHard
	numClasses
)

// chunker splits one text.
type chunker struct {
	s      string
	o      ChunkOptions
	limit  int
	fences []fence
	html   bool
	slack  bool
	// lastVisible is the start of the last character that is neither
	// whitespace nor markup, or -1.
	lastVisible int
}

func newChunker(s string, o ChunkOptions) *chunker {
	c := &chunker{s: s, o: o, limit: o.Limit}
	if c.limit <= 0 {
		c.limit = DefaultLimit
	}
	c.limit = max(c.limit, MinLimit)
	c.html = o.Syntax == SyntaxHTML
	c.slack = o.Syntax == SyntaxSlack
	if !c.html {
		c.fences = findFences(s)
	}
	c.lastVisible = -1
	for i := 0; i < len(s); {
		k, e := c.atom(i)
		if c.visible(k, i) {
			c.lastVisible = i
		}
		i = e
	}
	return c
}

// run splits the whole text.
func (c *chunker) run() []piece {
	var out []piece
	var stack []tagRef
	p := c.skipBlankLines(0)
	for p < len(c.s) && c.hasVisible(p) {
		pc, next, st := c.next(p, stack)
		if !pc.degraded || strings.IndexFunc(pc.body, func(r rune) bool { return !invisible(r) }) >= 0 {
			out = append(out, pc)
		}
		p, stack = next, st
	}
	return out
}

// skipBlankLines skips whitespace at p up to and including its last
// newline, keeping the indentation of the line that follows.
func (c *chunker) skipBlankLines(p int) int {
	b := p
	for i := p; i < len(c.s); {
		k, e := c.atom(i)
		if k == atomNewline {
			b = e
		} else if k != atomSpace {
			break
		}
		i = e
	}
	return b
}

// hasVisible reports whether text[p:] has a character that is neither
// whitespace nor markup.
func (c *chunker) hasVisible(p int) bool {
	return p <= c.lastVisible
}

// next makes the chunk starting at p with the tags in stack open, and
// returns it with where the next chunk starts and the tags open there.
func (c *chunker) next(p int, stack []tagRef) (piece, int, []tagRef) {
	a, b, ok := c.scan(p, stack, c.o.MaxLines)
	if !ok && c.o.MaxLines > 0 {
		a, b, ok = c.scan(p, stack, 0)
	}
	if !ok {
		return c.degrade(p, stack)
	}
	pc := piece{prefix: c.prefix(p, stack), start: p, end: a}
	if a == len(c.s) {
		pc.end = p + len(strings.TrimRightFunc(c.s[p:], unicode.IsSpace))
		return pc, len(c.s), nil
	}
	st := c.advance(stack, p, a)
	pc.suffix = c.suffix(a, st)
	return pc, b, st
}

// cand is a possible split: the chunk ends at a, the next starts at b.
type cand struct {
	a, b int
	ok   bool
}

// scan looks for the split of the chunk starting at p. It returns a ==
// len(text) when the rest fits, and ok false when nothing fits.
func (c *chunker) scan(p int, stack []tagRef, maxLines int) (a, b int, ok bool) {
	prefix := c.prefix(p, stack)
	used := c.o.Unit.Len(prefix)
	lines := strings.Count(prefix, "\n")
	stk := append([]tagRef(nil), stack...)
	closeLen := 0
	for _, t := range stk {
		closeLen += len(t.name) + 3
	}
	fits := func(at int) bool {
		sufLen, sufLines := closeLen, 0
		if !c.html {
			if f := c.fenceAt(at); f >= 0 {
				sufLen, sufLines = len(c.fences[f].close)+1, 1
			} else {
				sufLen = 0
			}
		}
		return used+sufLen <= c.limit && (maxLines == 0 || lines+sufLines+1 <= maxLines)
	}
	hasText := false
	prev := atomSpace
	var best [numClasses]cand
	stopped := used > c.limit || maxLines > 0 && lines+1 > maxLines
	i := p
	for !stopped && i < len(c.s) {
		k, e := c.atom(i)
		if k == atomSpace || k == atomNewline {
			j, nl, bb := c.spaceRun(i)
			if hasText && prev != atomOpen && c.boundaryOK(i, bb) && !c.closesAt(j) && fits(i) {
				cls := c.classify(i, nl, stk)
				if c.o.Mode == ModeNewline && nl >= 2 && c.topLevel(i, stk) {
					return i, bb, true
				}
				best[cls] = cand{i, bb, true}
			}
			used += c.o.Unit.Len(c.s[i:j])
			lines += nl
			prev, i = atomSpace, j
		} else {
			if hasText && hardOK(prev, k) && c.boundaryOK(i, i) && graphemeBoundary(c.s, i) && fits(i) {
				best[clsHard] = cand{i, i, true}
			}
			if e == i+1 && c.s[i] < utf8.RuneSelf {
				used++
			} else {
				used += c.o.Unit.Len(c.s[i:e])
			}
			switch k {
			case atomOpen:
				stk = append(stk, tagRef{name: tagName(c.s[i:e]), open: c.s[i:e]})
				closeLen += len(stk[len(stk)-1].name) + 3
			case atomClose:
				stk, closeLen = popTag(stk, tagName(c.s[i:e]), closeLen)
			default:
				hasText = hasText || c.visible(k, i)
			}
			prev, i = k, e
		}
		stopped = used > c.limit || maxLines > 0 && lines+1 > maxLines
	}
	if !stopped {
		return len(c.s), len(c.s), true
	}
	half := p + (i-p)/2
	if c.o.Mode == ModeNewline {
		for _, cls := range []int{clsParagraph, clsLine} {
			if best[cls].ok {
				return best[cls].a, best[cls].b, true
			}
		}
	}
	for cls := clsParagraph; cls < clsHard; cls++ {
		if best[cls].ok && best[cls].a >= half {
			return best[cls].a, best[cls].b, true
		}
	}
	var pick cand
	for cls := clsParagraph; cls < clsHard; cls++ {
		if best[cls].ok && (!pick.ok || best[cls].a > pick.a) {
			pick = best[cls]
		}
	}
	if !pick.ok {
		pick = best[clsHard]
	}
	return pick.a, pick.b, pick.ok
}

// degrade makes a chunk at p when no proper split fits: as much text as
// fits, split at a space when one is in the last half, with HTML tags
// dropped (they could not be closed within the limit), fences not reopened
// and leading whitespace dropped.
func (c *chunker) degrade(p int, stack []tagRef) (piece, int, []tagRef) {
	var body strings.Builder
	used := 0
	ws := cand{}
	wsLen := 0
	prevSpace := false
	i := p
	for i < len(c.s) {
		k, e := c.atom(i)
		if c.visible(k, i) {
			break
		}
		i = e
	}
	stack = c.advance(stack, p, i)
	p = i
	for i < len(c.s) {
		k, e := c.atom(i)
		if !c.html {
			_, size := utf8.DecodeRuneInString(c.s[i:])
			e = i + size
			if k != atomSpace && k != atomNewline {
				k = atomText
			}
		}
		if k == atomOpen || k == atomClose || k == atomVoid {
			i = e
			continue
		}
		n := c.o.Unit.Len(c.s[i:e])
		if used+n > c.limit && used > 0 {
			break
		}
		space := k == atomSpace || k == atomNewline
		if space && !prevSpace && body.Len() > 0 {
			_, _, bb := c.spaceRun(i)
			ws, wsLen = cand{i, bb, true}, body.Len()
		}
		prevSpace = space
		body.WriteString(c.s[i:e])
		used += n
		i = e
	}
	a, b := i, i
	text := body.String()
	if i < len(c.s) && ws.ok && ws.a >= p+(i-p)/2 {
		a, b, text = ws.a, ws.b, text[:wsLen]
	}
	if i >= len(c.s) {
		text = strings.TrimRightFunc(text, unicode.IsSpace)
	}
	return piece{degraded: true, body: text, start: p, end: a}, b, c.advance(stack, p, a)
}

// atom returns the kind and end of the indivisible piece at s[i].
func (c *chunker) atom(i int) (atomKind, int) {
	s := c.s
	switch b := s[i]; {
	case b == '\n':
		return atomNewline, i + 1
	case b == ' ' || b == '\t' || b == '\r' || b == '\f' || b == '\v':
		return atomSpace, i + 1
	case b == '<' && c.html:
		if end, k := htmlTag(s, i); end > 0 {
			return k, end
		}
	case b == '<' && c.slack:
		if end := strings.IndexAny(s[i+1:], "<>\n"); end >= 0 && s[i+1+end] == '>' {
			return atomEntity, i + end + 2
		}
	case b == '&' && (c.html || c.slack):
		if end := entityEnd(s, i); end > 0 {
			return atomEntity, end
		}
	case b < utf8.RuneSelf:
		return atomText, i + 1
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	if unicode.IsSpace(r) && r != 0xa0 && r != 0x2007 && r != 0x202f {
		return atomSpace, i + size
	}
	return atomText, i + size
}

// visible reports whether the atom of kind k at i is something a reader
// sees: an entity, or a character that is not whitespace, a control or a
// format character (such as a zero-width space). Telegram refuses a
// message without one.
func (c *chunker) visible(k atomKind, i int) bool {
	switch k {
	case atomEntity:
		return true
	case atomText:
		if b := c.s[i]; b < utf8.RuneSelf {
			return b > ' ' && b != 0x7f
		}
		r, _ := utf8.DecodeRuneInString(c.s[i:])
		return !invisible(r)
	}
	return false
}

// invisible reports whether r shows nothing by itself.
func invisible(r rune) bool {
	return unicode.IsSpace(r) || unicode.In(r, unicode.Cc, unicode.Cf)
}

// spaceRun measures the whitespace run at i: its end, the newlines in it,
// and where the next chunk would start after it (after its last newline,
// keeping the next line's indentation, or at its end).
func (c *chunker) spaceRun(i int) (end, newlines, next int) {
	end, lastNL := i, -1
	for end < len(c.s) {
		k, e := c.atom(end)
		if k == atomNewline {
			newlines++
			lastNL = end
		} else if k != atomSpace {
			break
		}
		end = e
	}
	if lastNL >= 0 {
		return end, newlines, lastNL + 1
	}
	return end, newlines, end
}

// closesAt reports whether an end tag is at j: a split before it would
// reopen a tag only to close it.
func (c *chunker) closesAt(j int) bool {
	if !c.html || j >= len(c.s) {
		return false
	}
	k, _ := c.atom(j)
	return k == atomClose
}

// hardOK reports whether a split between atoms prev and next is allowed: it
// must not leave an empty element at either side.
func hardOK(prev, next atomKind) bool {
	return (prev == atomText || prev == atomEntity || prev == atomClose) &&
		(next == atomText || next == atomEntity || next == atomOpen)
}

// graphemeBoundary reports whether s[:i] and s[i:] split between two
// user-perceived characters, as far as cheap checks tell: not before a
// combining mark, variation selector, emoji modifier or tag character, and
// not next to a zero-width joiner.
func graphemeBoundary(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	q, _ := utf8.DecodeLastRuneInString(s[:i])
	switch {
	case q == 0x200d || r == 0x200d:
		return false
	case r >= 0xfe00 && r <= 0xfe0f, r >= 0xe0100 && r <= 0xe01ef:
		return false
	case r >= 0x1f3fb && r <= 0x1f3ff, r >= 0xe0020 && r <= 0xe007f:
		return false
	}
	return !unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc)
}

// boundaryOK reports whether a split ending the chunk at a and starting
// the next at b respects the fences: both outside fences, or both inside
// the same one with content on each side.
func (c *chunker) boundaryOK(a, b int) bool {
	if c.html {
		return true
	}
	fa, fb := c.fenceAt(a), c.fenceAt(b)
	if fa != fb {
		return false
	}
	if fa < 0 {
		return true
	}
	f := c.fences[fa]
	return a > f.contentStart && b < f.closeStart
}

// classify returns the break class of the whitespace run at a.
func (c *chunker) classify(a, newlines int, stk []tagRef) int {
	inCode := false
	if c.html {
		for _, t := range stk {
			inCode = inCode || t.name == "pre" || t.name == "code"
		}
	} else {
		inCode = c.fenceAt(a) >= 0
	}
	switch {
	case newlines > 0 && (newlines == 1 || inCode):
		return clsLine
	case newlines > 1:
		return clsParagraph
	case !inCode && c.sentenceEnd(a):
		return clsSentence
	}
	return clsSpace
}

// topLevel reports whether a is outside every fence and tag.
func (c *chunker) topLevel(a int, stk []tagRef) bool {
	if c.html {
		return len(stk) == 0
	}
	return c.fenceAt(a) < 0
}

// sentenceEnd reports whether the text before a ends a sentence: ".", "!",
// "?" or "…" (or their CJK forms), maybe followed by a closing quote or
// parenthesis, and by end tags.
func (c *chunker) sentenceEnd(a int) bool {
	s := c.s[:a]
	for n := 0; c.html && n < 8 && strings.HasSuffix(s, ">"); n++ {
		k := strings.LastIndexByte(s, '<')
		if k < 0 || k+1 >= len(s) || s[k+1] != '/' {
			break
		}
		s = s[:k]
	}
	r, size := utf8.DecodeLastRuneInString(s)
	if strings.ContainsRune(")\"'”’»", r) {
		r, _ = utf8.DecodeLastRuneInString(s[:len(s)-size])
	}
	return strings.ContainsRune(".!?…。！？", r)
}

// prefix is what reopens the markup open at p: the fence's opener line, or
// the open tags.
func (c *chunker) prefix(p int, stack []tagRef) string {
	if c.html {
		var b strings.Builder
		for _, t := range stack {
			b.WriteString(t.open)
		}
		return b.String()
	}
	if f := c.fenceAt(p); f >= 0 {
		return c.fences[f].open + "\n"
	}
	return ""
}

// suffix is what closes the markup open at a: the fence, or the open tags.
func (c *chunker) suffix(a int, stack []tagRef) string {
	if c.html {
		var b strings.Builder
		for k := len(stack) - 1; k >= 0; k-- {
			b.WriteString("</" + stack[k].name + ">")
		}
		return b.String()
	}
	if f := c.fenceAt(a); f >= 0 {
		return "\n" + c.fences[f].close
	}
	return ""
}

// advance returns the tags open at to, given those open at from.
func (c *chunker) advance(stack []tagRef, from, to int) []tagRef {
	st := append([]tagRef(nil), stack...)
	if !c.html {
		return st
	}
	for i := from; i < to; {
		k, e := c.atom(i)
		switch k {
		case atomOpen:
			st = append(st, tagRef{name: tagName(c.s[i:e]), open: c.s[i:e]})
		case atomClose:
			st, _ = popTag(st, tagName(c.s[i:e]), 0)
		}
		i = e
	}
	return st
}

// popTag pops the stack down to and including the innermost tag called
// name, adjusting closeLen; an end tag matching nothing open changes
// nothing.
func popTag(stk []tagRef, name string, closeLen int) ([]tagRef, int) {
	for k := len(stk) - 1; k >= 0; k-- {
		if stk[k].name != name {
			continue
		}
		for _, t := range stk[k:] {
			closeLen -= len(t.name) + 3
		}
		return stk[:k], closeLen
	}
	return stk, closeLen
}

// fenceAt returns the index of the fence strictly containing position x
// (after the start of its opener, before the end of its closer), or -1.
func (c *chunker) fenceAt(x int) int {
	lo, hi := 0, len(c.fences)
	for lo < hi {
		m := (lo + hi) / 2
		if c.fences[m].closeEnd <= x {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(c.fences) && c.fences[lo].openStart < x && x < c.fences[lo].closeEnd {
		return lo
	}
	return -1
}

// findFences finds the fenced code blocks of markdown-like text: a line of
// three or more backticks or tildes (any indentation; a backtick fence's
// info string has no backtick) up to a line of at least as many of the same
// character, or the end of the text.
func findFences(s string) []fence {
	var out []fence
	var cur fence
	var ch byte
	n := 0
	in := false
	for ls := 0; ls < len(s); {
		le := strings.IndexByte(s[ls:], '\n')
		if le < 0 {
			le = len(s)
		} else {
			le += ls
		}
		line := strings.TrimRight(s[ls:le], "\r")
		t := strings.TrimLeft(line, " \t")
		if !in {
			if f, ok := fenceOpen(t); ok {
				cur = fence{
					openStart:    ls,
					contentStart: min(le+1, len(s)),
					open:         strings.TrimRight(line, " \t"),
					close:        line[:len(line)-len(t)] + strings.Repeat(string(f.ch), f.n),
				}
				ch, n, in = f.ch, f.n, true
			}
		} else if tt := strings.TrimRight(t, " \t"); len(tt) >= n && strings.Trim(tt, string(ch)) == "" {
			cur.closeStart, cur.closeEnd = ls, le
			out = append(out, cur)
			in = false
		}
		ls = le + 1
	}
	if in {
		cur.closeStart, cur.closeEnd = len(s), len(s)
		out = append(out, cur)
	}
	return out
}

// htmlTag recognises an HTML tag at s[i] ("<name ...>", "</name>",
// "<name/>") and returns its end and kind, or 0. Quoted attribute values
// may hold any character but their quote.
func htmlTag(s string, i int) (int, atomKind) {
	j := i + 1
	kind := atomOpen
	if j < len(s) && s[j] == '/' {
		kind = atomClose
		j++
	}
	if j >= len(s) || !isAlpha(s[j]) {
		return 0, 0
	}
	for j < len(s) && (isAlnum(s[j]) || s[j] == '-') {
		j++
	}
	for j < len(s) {
		switch s[j] {
		case '>':
			if kind == atomOpen && s[j-1] == '/' {
				kind = atomVoid
			}
			return j + 1, kind
		case '<', '\n':
			return 0, 0
		case '"', '\'':
			q := strings.IndexByte(s[j+1:], s[j])
			if q < 0 {
				return 0, 0
			}
			j += q + 1
		}
		j++
	}
	return 0, 0
}

// tagName returns the lowercased name of a tag ("<a href=...>" → "a").
func tagName(tag string) string {
	j := 1
	if j < len(tag) && tag[j] == '/' {
		j++
	}
	k := j
	for k < len(tag) && (isAlnum(tag[k]) || tag[k] == '-') {
		k++
	}
	return strings.ToLower(tag[j:k])
}

// entityEnd returns the end of the character reference at s[i] ("&amp;",
// "&#39;", "&#x1F600;"), or 0. References are at most 12 bytes.
func entityEnd(s string, i int) int {
	j := i + 1
	if j < len(s) && s[j] == '#' {
		j++
		hex := j < len(s) && (s[j] == 'x' || s[j] == 'X')
		if hex {
			j++
		}
		start := j
		for j < len(s) && j-start < 8 && (isDigit(s[j]) || hex && strings.IndexByte("abcdefABCDEF", s[j]) >= 0) {
			j++
		}
		if j == start {
			return 0
		}
	} else {
		start := j
		for j < len(s) && j-start < 10 && isAlnum(s[j]) {
			j++
		}
		if j == start || !isAlpha(s[start]) {
			return 0
		}
	}
	if j < len(s) && s[j] == ';' {
		return j + 1
	}
	return 0
}
