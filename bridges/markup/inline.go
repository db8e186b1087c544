package markup

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxScan bounds how far a link destination, title or autolink is looked
// for, so that inputs full of unmatched brackets stay linear in practice.
const maxScan = 4096

// nodeKind is the kind of an inline parser node.
type nodeKind uint8

const (
	nodeText      nodeKind = iota // literal text
	nodeCode                      // a code span's content
	nodeDelim                     // a run of *, _, ~~ or ||, maybe emphasis
	nodeBracket                   // "[" or "![", a link opener until matched
	nodeLinkOpen                  // start of a link's label
	nodeLinkClose                 // end of a link's label
)

// node is one element of the inline parser's list. Delimiter runs follow
// CommonMark's "process emphasis": a matched run keeps the styles it closes
// (on its left) and opens (on its right) and the count of characters left
// over as literal text.
type node struct {
	kind nodeKind
	text string

	ch                byte
	n, orig           int
	canOpen, canClose bool
	opens, closes     []Style

	image, active bool
	url           string

	// skipBack (on a closer) and skipFwd (on an opener) are 1 + the index
	// of the furthest node matched with it: every delimiter in between is
	// spent, so searches jump over the span instead of walking it.
	skipBack, skipFwd int
}

// inlineParser turns a block's text into runs.
type inlineParser struct {
	src      string
	nodes    []node
	brackets []int         // indexes of open nodeBracket nodes, innermost last
	ticks    map[int][]int // backtick run length -> run starts, built on first use
}

// parseInlines parses inline markdown into runs.
func parseInlines(s string) []Inline {
	if s == "" {
		return nil
	}
	p := inlineParser{src: s}
	p.scan()
	p.emphasis(0)
	return p.flatten()
}

// scan tokenizes src into nodes, resolving code spans, autolinks, bare URLs,
// escapes and links as it goes.
func (p *inlineParser) scan() {
	s := p.src
	start := 0
	flush := func(end int) {
		if end > start {
			p.text(s[start:end])
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && (isASCIIPunct(s[i+1]) || s[i+1] == '\n'):
			flush(i)
			p.text(s[i+1 : i+2])
			i += 2
			start = i
		case c == '\n':
			end := i
			for end > start && (s[end-1] == ' ' || s[end-1] == '\t') {
				end--
			}
			flush(end)
			p.text("\n")
			i++
			start = i
		case c == '`':
			n := runLen(s, i, '`')
			if end := p.closingTicks(i+n, n); end >= 0 {
				flush(i)
				p.nodes = append(p.nodes, node{kind: nodeCode, text: codeSpanText(s[i+n : end])})
				i = end + n
				start = i
			} else {
				i += n
			}
		case c == '*' || c == '_' || c == '~' || c == '|':
			n := runLen(s, i, c)
			if (c == '~' || c == '|') && n != 2 {
				i += n
				continue
			}
			flush(i)
			p.delim(c, i, n)
			i += n
			start = i
		case c == '!' && i+1 < len(s) && s[i+1] == '[':
			flush(i)
			p.bracket(true)
			i += 2
			start = i
		case c == '[':
			flush(i)
			p.bracket(false)
			i++
			start = i
		case c == ']':
			flush(i)
			i = p.closeBracket(i)
			start = i
		case c == '<':
			if end, ok := chatToken(s, i); ok {
				flush(i)
				p.text(s[i:end])
				i, start = end, end
			} else if end, url, label, ok := autolink(s, i); ok {
				flush(i)
				p.link(url, label)
				i, start = end, end
			} else {
				i++
			}
		case (c == 'h' || c == 'H') && urlBoundary(s, i):
			if end, ok := bareURL(s, i); ok {
				flush(i)
				p.link(s[i:end], s[i:end])
				i, start = end, end
			} else {
				i++
			}
		default:
			i++
		}
	}
	flush(len(s))
}

// text appends literal text. Adjacent text nodes are merged by flatten.
func (p *inlineParser) text(t string) {
	p.nodes = append(p.nodes, node{kind: nodeText, text: t})
}

// link appends a complete link (an autolink or bare URL).
func (p *inlineParser) link(url, label string) {
	p.nodes = append(p.nodes,
		node{kind: nodeLinkOpen, url: url},
		node{kind: nodeText, text: label},
		node{kind: nodeLinkClose})
}

// runLen is the length of the run of c starting at s[i].
func runLen(s string, i int, c byte) int {
	n := 0
	for i+n < len(s) && s[i+n] == c {
		n++
	}
	return n
}

// closingTicks returns the start of the first run of exactly n backticks at
// or after from, or -1. Runs are indexed once, so many unmatched backticks
// cost no more than a few.
func (p *inlineParser) closingTicks(from, n int) int {
	if p.ticks == nil {
		p.ticks = map[int][]int{}
		s := p.src
		for i := 0; i < len(s); {
			if s[i] != '`' {
				i++
				continue
			}
			k := runLen(s, i, '`')
			p.ticks[k] = append(p.ticks[k], i)
			i += k
		}
	}
	starts := p.ticks[n]
	k, _ := slices.BinarySearch(starts, from)
	if k < len(starts) {
		return starts[k]
	}
	return -1
}

// codeSpanText normalizes a code span's content as CommonMark does: line
// endings become spaces, and one space is stripped from each side when both
// sides have one and the content is not all spaces.
func codeSpanText(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) >= 2 && s[0] == ' ' && s[len(s)-1] == ' ' && strings.Trim(s, " ") != "" {
		s = s[1 : len(s)-1]
	}
	return s
}

// delim appends a delimiter run of n c's at s[i], with CommonMark's
// flanking rules deciding whether it can open or close. An underscore only
// opens or closes at a word boundary, so snake_case stays literal.
func (p *inlineParser) delim(c byte, i, n int) {
	s := p.src
	before, after := '\n', '\n'
	if i > 0 {
		before, _ = utf8.DecodeLastRuneInString(s[:i])
	}
	if i+n < len(s) {
		after, _ = utf8.DecodeRuneInString(s[i+n:])
	}
	left := !unicode.IsSpace(after) && (!isPunct(after) || unicode.IsSpace(before) || isPunct(before))
	right := !unicode.IsSpace(before) && (!isPunct(before) || unicode.IsSpace(after) || isPunct(after))
	open, closing := left, right
	if c == '_' {
		open = left && (!right || isPunct(before))
		closing = right && (!left || isPunct(after))
	}
	p.nodes = append(p.nodes, node{kind: nodeDelim, ch: c, n: n, orig: n, canOpen: open, canClose: closing})
}

// isPunct is CommonMark's Unicode punctuation: punctuation and symbols.
func isPunct(r rune) bool {
	if r < utf8.RuneSelf {
		return isASCIIPunct(byte(r))
	}
	return unicode.IsPunct(r) || unicode.IsSymbol(r)
}

// isASCIIPunct reports whether c is ASCII punctuation, the characters a
// backslash escapes.
func isASCIIPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}

// bracket appends a link (or image) opener.
func (p *inlineParser) bracket(image bool) {
	t := "["
	if image {
		t = "!["
	}
	p.nodes = append(p.nodes, node{kind: nodeBracket, text: t, image: image, active: true})
	p.brackets = append(p.brackets, len(p.nodes)-1)
}

// closeBracket handles the "]" at src[i] and returns where scanning goes
// on: past the link destination when it completes an inline link, else
// past the "]".
func (p *inlineParser) closeBracket(i int) int {
	if len(p.brackets) == 0 {
		p.text("]")
		return i + 1
	}
	oi := p.brackets[len(p.brackets)-1]
	p.brackets = p.brackets[:len(p.brackets)-1]
	if !p.nodes[oi].active {
		p.text("]")
		return i + 1
	}
	url, end, ok := linkDestination(p.src, i+1)
	if !ok {
		p.text("]")
		return i + 1
	}
	p.emphasis(oi + 1)
	for k := oi + 1; k < len(p.nodes); k++ {
		if p.nodes[k].kind == nodeLinkOpen || p.nodes[k].kind == nodeLinkClose {
			p.nodes[k] = node{kind: nodeText} // links do not nest: an inner link is its label
		}
	}
	p.nodes[oi] = node{kind: nodeLinkOpen, url: url}
	p.nodes = append(p.nodes, node{kind: nodeLinkClose})
	// Links do not nest. Unlike CommonMark, images do not either: in chat an
	// image is a link, and nesting would make hostile input quadratic.
	for _, b := range p.brackets {
		p.nodes[b].active = false
	}
	return end
}

// linkDestination parses an inline link's "(destination "title")" at s[j]
// and returns the unescaped destination and the index after ")".
func linkDestination(s string, j int) (url string, end int, ok bool) {
	if j >= len(s) || s[j] != '(' {
		return "", 0, false
	}
	j = skipLinkSpace(s, j+1)
	if j >= len(s) {
		return "", 0, false
	}
	if s[j] == ')' {
		return "", j + 1, true
	}
	var dest string
	if s[j] == '<' {
		k := j + 1
		for k < len(s) && s[k] != '>' && s[k] != '<' && s[k] != '\n' && k-j < maxScan {
			if s[k] == '\\' && k+1 < len(s) {
				k++
			}
			k++
		}
		if k >= len(s) || s[k] != '>' {
			return "", 0, false
		}
		dest, j = s[j+1:k], k+1
	} else {
		depth, k := 0, j
	scan:
		for k < len(s) && k-j < maxScan {
			switch c := s[k]; {
			case c == '\\' && k+1 < len(s) && isASCIIPunct(s[k+1]):
				k++
			case c <= ' ' || c == 0x7f:
				break scan
			case c == '(':
				depth++
				if depth > 32 {
					return "", 0, false
				}
			case c == ')':
				if depth == 0 {
					break scan
				}
				depth--
			}
			k++
		}
		dest, j = s[j:k], k
	}
	j = skipLinkSpace(s, j)
	if j < len(s) && (s[j] == '"' || s[j] == '\'' || s[j] == '(') {
		closer := s[j]
		if closer == '(' {
			closer = ')'
		}
		k := j + 1
		for k < len(s) && s[k] != closer && k-j < maxScan {
			if s[k] == '\\' {
				k++
			}
			k++
		}
		if k >= len(s) || s[k] != closer {
			return "", 0, false
		}
		j = skipLinkSpace(s, k+1)
	}
	if j >= len(s) || s[j] != ')' {
		return "", 0, false
	}
	return unescape(dest), j + 1, true
}

// skipLinkSpace skips spaces, tabs and at most one line ending.
func skipLinkSpace(s string, j int) int {
	nl := false
	for j < len(s) {
		switch s[j] {
		case ' ', '\t':
		case '\n':
			if nl {
				return j
			}
			nl = true
		default:
			return j
		}
		j++
	}
	return j
}

// unescape removes backslash escapes of ASCII punctuation.
func unescape(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && isASCIIPunct(s[i+1]) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// autolink recognises "<scheme:...>" and "<user@example.com>" at s[i].
func autolink(s string, i int) (end int, url, label string, ok bool) {
	j := i + 1
	k := j
	for k < len(s) && k-j < 33 && (isAlpha(s[k]) || k > j && (isDigit(s[k]) || s[k] == '+' || s[k] == '.' || s[k] == '-')) {
		k++
	}
	if k-j >= 2 && k < len(s) && s[k] == ':' {
		m := k + 1
		for m < len(s) && m-j < maxScan && s[m] > ' ' && s[m] != '<' && s[m] != '>' && s[m] != 0x7f {
			m++
		}
		if m < len(s) && s[m] == '>' {
			u := s[j:m]
			return m + 1, u, u, true
		}
		return 0, "", "", false
	}
	at := -1
	m := j
	for m < len(s) && m-j < 256 {
		c := s[m]
		if c == '@' && at < 0 && m > j {
			at = m
		} else if c == '>' {
			break
		} else if at < 0 && !isAlnum(c) && strings.IndexByte(".!#$%&'*+/=?^_`{|}~-", c) < 0 ||
			at >= 0 && !isAlnum(c) && c != '.' && c != '-' {
			return 0, "", "", false
		}
		m++
	}
	if at < 0 || m >= len(s) || s[m] != '>' || m == at+1 {
		return 0, "", "", false
	}
	addr := s[j:m]
	return m + 1, "mailto:" + addr, addr, true
}

// chatToken recognises a platform token written inline, such as Slack's
// <@U123>, <#C123|general> and <!here> or Discord's <@123>, and keeps it one
// literal piece so no emphasis forms inside it.
func chatToken(s string, i int) (end int, ok bool) {
	if i+2 >= len(s) || s[i+1] != '@' && s[i+1] != '#' && s[i+1] != '!' && s[i+1] != ':' {
		return 0, false
	}
	for k := i + 2; k < len(s) && k-i < 256; k++ {
		switch s[k] {
		case '>':
			return k + 1, k > i+2
		case '<', '\n':
			return 0, false
		}
	}
	return 0, false
}

// urlBoundary reports whether a bare URL may start at s[i]: at the start,
// or after whitespace or an opening punctuation mark.
func urlBoundary(s string, i int) bool {
	if i == 0 {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return unicode.IsSpace(r) || strings.ContainsRune("(*_~|\"'[", r)
}

// bareURL recognises an http(s) URL written without markup at s[i], with
// GFM's rules for trailing punctuation: ".", ",", "?" and the like at the
// end are sentence punctuation, and an unbalanced ")" closes a parenthesis.
func bareURL(s string, i int) (end int, ok bool) {
	var n int
	switch {
	case hasPrefixFold(s[i:], "https://"):
		n = len("https://")
	case hasPrefixFold(s[i:], "http://"):
		n = len("http://")
	default:
		return 0, false
	}
	k := i + n
	for k < len(s) {
		r, size := utf8.DecodeRuneInString(s[k:])
		if unicode.IsSpace(r) || r == '<' || unicode.IsControl(r) {
			break
		}
		k += size
	}
	opens, closes := strings.Count(s[i:k], "("), strings.Count(s[i:k], ")")
	for k > i+n {
		c := s[k-1]
		if strings.IndexByte("?!.,:;*_~'\"|", c) >= 0 {
			k--
			continue
		}
		if c == ')' && closes > opens {
			k--
			closes--
			continue
		}
		break
	}
	if k == i+n {
		return 0, false
	}
	return k, true
}

// hasPrefixFold is strings.HasPrefix ignoring ASCII case.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlnum(c byte) bool { return isAlpha(c) || isDigit(c) }

// delimIndex maps a delimiter character to a small index.
func delimIndex(c byte) int {
	switch c {
	case '*':
		return 0
	case '_':
		return 1
	case '~':
		return 2
	}
	return 3
}

// emphasis is CommonMark's "process emphasis" over the delimiter runs in
// nodes[bottom:], extended with ~~strike~~ and ||spoiler|| (runs of exactly
// two). Every run it leaves unmatched becomes literal text.
func (p *inlineParser) emphasis(bottom int) {
	var openersBottom [4][2][3]int
	for a := range openersBottom {
		for b := range openersBottom[a] {
			for c := range openersBottom[a][b] {
				openersBottom[a][b][c] = bottom
			}
		}
	}
	for c := bottom; c < len(p.nodes); c++ {
		cl := &p.nodes[c]
		if cl.kind != nodeDelim || !cl.canClose || cl.n == 0 {
			continue
		}
		canOpen := 0
		if cl.canOpen {
			canOpen = 1
		}
		ob := &openersBottom[delimIndex(cl.ch)][canOpen][cl.orig%3]
		found := -1
		for o := c - 1; o >= *ob; {
			op := &p.nodes[o]
			if op.kind == nodeDelim && op.ch == cl.ch && op.canOpen && op.n > 0 &&
				!((cl.ch == '*' || cl.ch == '_') && (op.canClose || cl.canOpen) &&
					(op.orig+cl.orig)%3 == 0 && (op.orig%3 != 0 || cl.orig%3 != 0)) {
				found = o
				break
			}
			if op.skipBack > 0 {
				o = op.skipBack - 1
			} else {
				o--
			}
		}
		if found < 0 {
			*ob = c
			if !cl.canOpen {
				cl.canClose = false
			}
			continue
		}
		op := &p.nodes[found]
		use, st := 2, Bold
		switch cl.ch {
		case '*', '_':
			if op.n < 2 || cl.n < 2 {
				use, st = 1, Italic
			}
		case '~':
			st = Strike
		case '|':
			st = Spoiler
		}
		op.n -= use
		cl.n -= use
		op.opens = append([]Style{st}, op.opens...)
		cl.closes = append(cl.closes, st)
		op.skipFwd = max(op.skipFwd, c+1)
		if cl.skipBack == 0 || found+1 < cl.skipBack {
			cl.skipBack = found + 1
		}
		for k := found + 1; k < c; {
			nd := &p.nodes[k]
			if nd.kind == nodeDelim {
				nd.canOpen, nd.canClose = false, false
			}
			if nd.skipFwd-1 > k {
				k = nd.skipFwd - 1
			} else {
				k++
			}
		}
		if cl.n > 0 {
			c-- // the rest of the closer may close another opener
		}
	}
	for k := bottom; k < len(p.nodes); k++ {
		if p.nodes[k].kind == nodeDelim {
			p.nodes[k].canOpen, p.nodes[k].canClose = false, false
		}
	}
}

// flatten turns the processed nodes into runs, merging neighbours with the
// same style and link.
func (p *inlineParser) flatten() []Inline {
	var out []Inline
	var depth [4]int // open counts of Spoiler, Bold, Italic, Strike (styleOrder)
	var buf strings.Builder
	cur := Inline{}
	url := ""
	linkEmpty := false
	flush := func() {
		if buf.Len() > 0 {
			cur.Text = buf.String()
			out = append(out, cur)
			buf.Reset()
		}
	}
	emit := func(text string, extra Style) {
		if text == "" {
			return
		}
		var st Style
		for k, s := range styleOrder {
			if depth[k] > 0 {
				st |= s
			}
		}
		st |= extra
		linkEmpty = false
		if buf.Len() > 0 && (cur.Style != st || cur.Link != url) {
			flush()
		}
		cur.Style, cur.Link = st, url
		buf.WriteString(text)
	}
	count := func(sts []Style, d int) {
		for _, st := range sts {
			for k, s := range styleOrder {
				if s == st {
					depth[k] += d
				}
			}
		}
	}
	for _, nd := range p.nodes {
		switch nd.kind {
		case nodeText, nodeBracket:
			emit(nd.text, 0)
		case nodeCode:
			emit(nd.text, Code)
		case nodeDelim:
			count(nd.closes, -1)
			emit(strings.Repeat(string(nd.ch), nd.n), 0)
			count(nd.opens, +1)
		case nodeLinkOpen:
			url, linkEmpty = nd.url, true
		case nodeLinkClose:
			if linkEmpty {
				emit(url, 0) // "[](url)" or "![](url)": the destination is the label
			}
			url = ""
		}
	}
	flush()
	return out
}
