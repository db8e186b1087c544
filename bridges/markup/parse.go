package markup

import (
	"strconv"
	"strings"
)

// maxDepth bounds the nesting of quotes and list items. Deeper content is
// kept as paragraph text, so hostile input (thousands of ">") can neither
// exhaust the stack nor make parsing quadratic.
const maxDepth = 16

// Parse parses markdown as LLMs write it into a Doc. It accepts any input:
// invalid UTF-8 is replaced by U+FFFD, "\r\n" and "\r" end lines like "\n",
// and whatever is not recognised markup stays literal text. Parse never
// panics.
func Parse(md string) Doc {
	md = strings.ToValidUTF8(md, "\uFFFD")
	md = strings.ReplaceAll(md, "\r\n", "\n")
	md = strings.ReplaceAll(md, "\r", "\n")
	md = strings.ReplaceAll(md, "\x00", "\uFFFD")
	return Doc{Blocks: parseBlocks(strings.Split(md, "\n"), 0)}
}

// parseBlocks parses lines (of one container: the document, a quote or a
// list item, with the container's markers and indentation removed) into
// blocks.
func parseBlocks(lines []string, depth int) []Block {
	var out []Block
	for i := 0; i < len(lines); {
		line := lines[i]
		if isBlank(line) {
			i++
			continue
		}
		if depth >= maxDepth {
			b, n := parseParagraph(lines[i:], true)
			out = append(out, b)
			i += n
			continue
		}
		cols, idx := indentCols(line)
		if cols >= 4 {
			b, n := parseIndentedCode(lines[i:])
			out = append(out, b)
			i += n
			continue
		}
		rest := line[idx:]
		if f, ok := fenceOpen(rest); ok {
			b, n := parseFence(lines[i:], cols, f)
			out = append(out, b)
			i += n
			continue
		}
		if level, text, ok := atxHeading(rest); ok {
			out = append(out, Block{Kind: Heading, Level: level, Inlines: parseInlines(text)})
			i++
			continue
		}
		if isRule(rest) {
			out = append(out, Block{Kind: Rule})
			i++
			continue
		}
		if rest[0] == '>' {
			b, n := parseQuote(lines[i:], depth)
			out = append(out, b)
			i += n
			continue
		}
		if m, ok := parseListMarker(line); ok {
			b, n := parseList(lines[i:], m, depth)
			out = append(out, b)
			i += n
			continue
		}
		if tableStartsAt(lines, i) {
			b, n := parseTable(lines[i:])
			out = append(out, b)
			i += n
			continue
		}
		b, n := parseParagraph(lines[i:], false)
		out = append(out, b)
		i += n
	}
	return out
}

// isBlank reports whether line holds only spaces and tabs.
func isBlank(line string) bool {
	return strings.TrimLeft(line, " \t") == ""
}

// indentCols returns the width of line's leading whitespace in columns (a
// tab advances to the next multiple of 4) and the byte index after it.
func indentCols(line string) (cols, idx int) {
	for idx < len(line) {
		switch line[idx] {
		case ' ':
			cols++
		case '\t':
			cols += 4 - cols%4
		default:
			return cols, idx
		}
		idx++
	}
	return cols, idx
}

// stripCols removes n columns of leading whitespace from line, or all of it
// when there is less. A tab that straddles column n leaves the columns past
// n as spaces.
func stripCols(line string, n int) string {
	col := 0
	for i := 0; i < len(line); i++ {
		if col >= n {
			return line[i:]
		}
		switch line[i] {
		case ' ':
			col++
		case '\t':
			next := col + 4 - col%4
			if next > n {
				return strings.Repeat(" ", next-n) + line[i+1:]
			}
			col = next
		default:
			return line[i:]
		}
	}
	return ""
}

// startsBlock reports whether line begins a block that interrupts a
// paragraph: a fence, an ATX heading, a thematic break, a quote or a list
// item with content. Unlike CommonMark, any list item interrupts, because
// LLMs write "Steps:\n1. ..." without a blank line.
func startsBlock(line string) bool {
	cols, idx := indentCols(line)
	if cols >= 4 || idx == len(line) {
		return false
	}
	rest := line[idx:]
	if _, ok := fenceOpen(rest); ok {
		return true
	}
	if _, _, ok := atxHeading(rest); ok {
		return true
	}
	if isRule(rest) || rest[0] == '>' {
		return true
	}
	m, ok := parseListMarker(line)
	return ok && !m.empty
}

// fenceInfo describes a code fence opener.
type fenceInfo struct {
	ch   byte // '`' or '~'
	n    int  // length of the fence run, at least 3
	lang string
}

// fenceOpen recognises a fence opener (indentation already removed).
func fenceOpen(rest string) (fenceInfo, bool) {
	if len(rest) < 3 || rest[0] != '`' && rest[0] != '~' {
		return fenceInfo{}, false
	}
	ch := rest[0]
	n := 0
	for n < len(rest) && rest[n] == ch {
		n++
	}
	if n < 3 {
		return fenceInfo{}, false
	}
	info := strings.TrimSpace(rest[n:])
	if ch == '`' && strings.IndexByte(info, '`') >= 0 {
		return fenceInfo{}, false // "```js x```" on one line is a code span
	}
	lang, _, _ := strings.Cut(info, " ")
	lang, _, _ = strings.Cut(lang, "\t")
	return fenceInfo{ch: ch, n: n, lang: lang}, true
}

// isFenceClose reports whether line closes the fence f.
func isFenceClose(line string, f fenceInfo) bool {
	cols, idx := indentCols(line)
	if cols >= 4 {
		return false
	}
	rest := strings.TrimRight(line[idx:], " \t")
	if len(rest) < f.n {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if rest[i] != f.ch {
			return false
		}
	}
	return true
}

// parseFence parses a fenced code block whose opener, indented by indent
// columns, is lines[0]. An unclosed fence runs to the end of its container.
func parseFence(lines []string, indent int, f fenceInfo) (Block, int) {
	var code []string
	i := 1
	for ; i < len(lines); i++ {
		if isFenceClose(lines[i], f) {
			i++
			break
		}
		code = append(code, stripCols(lines[i], indent))
	}
	return Block{Kind: CodeBlock, Lang: f.lang, Code: strings.Join(code, "\n")}, i
}

// parseIndentedCode parses a code block indented by four columns or more.
func parseIndentedCode(lines []string) (Block, int) {
	var code []string
	i := 0
	for ; i < len(lines); i++ {
		l := lines[i]
		if isBlank(l) {
			code = append(code, stripCols(l, 4))
			continue
		}
		if cols, _ := indentCols(l); cols < 4 {
			break
		}
		code = append(code, stripCols(l, 4))
	}
	for len(code) > 0 && isBlank(code[len(code)-1]) {
		code = code[:len(code)-1]
	}
	return Block{Kind: CodeBlock, Code: strings.Join(code, "\n")}, i
}

// atxHeading recognises "# Title" (indentation already removed) and returns
// the level and the text without the optional closing "#"s.
func atxHeading(rest string) (level int, text string, ok bool) {
	for level < len(rest) && rest[level] == '#' {
		level++
	}
	if level == 0 || level > 6 {
		return 0, "", false
	}
	if level < len(rest) && rest[level] != ' ' && rest[level] != '\t' {
		return 0, "", false
	}
	text = strings.TrimSpace(rest[level:])
	if t := strings.TrimRight(text, "#"); t == "" {
		text = ""
	} else if len(t) < len(text) && (t[len(t)-1] == ' ' || t[len(t)-1] == '\t') {
		text = strings.TrimSpace(t)
	}
	return level, text, true
}

// isRule recognises a thematic break: three or more of the same "-", "*"
// or "_", with optional spaces between (indentation already removed).
func isRule(rest string) bool {
	if rest == "" || rest[0] != '-' && rest[0] != '*' && rest[0] != '_' {
		return false
	}
	ch, n := rest[0], 0
	for i := 0; i < len(rest); i++ {
		switch rest[i] {
		case ch:
			n++
		case ' ', '\t':
		default:
			return false
		}
	}
	return n >= 3
}

// setextLevel recognises a setext underline ("===" or "---") and returns
// the heading level it makes of the paragraph above, or 0.
func setextLevel(line string) int {
	cols, idx := indentCols(line)
	if cols >= 4 || idx == len(line) {
		return 0
	}
	rest := strings.TrimRight(line[idx:], " \t")
	ch := rest[0]
	if ch != '=' && ch != '-' {
		return 0
	}
	for i := 0; i < len(rest); i++ {
		if rest[i] != ch {
			return 0
		}
	}
	if ch == '=' {
		return 1
	}
	return 2
}

// parseParagraph collects the lines of a paragraph (or a setext heading).
// verbatim (past maxDepth) takes every line up to a blank one.
func parseParagraph(lines []string, verbatim bool) (Block, int) {
	text := []string{strings.TrimLeft(lines[0], " \t")}
	i := 1
	for ; i < len(lines); i++ {
		l := lines[i]
		if isBlank(l) {
			break
		}
		if !verbatim {
			if level := setextLevel(l); level > 0 {
				return Block{Kind: Heading, Level: level, Inlines: parseInlines(strings.Join(text, "\n"))}, i + 1
			}
			if startsBlock(l) || tableStartsAt(lines, i) {
				break
			}
		}
		text = append(text, strings.TrimLeft(l, " \t"))
	}
	return Block{Kind: Paragraph, Inlines: parseInlines(strings.Join(text, "\n"))}, i
}

// parseQuote collects a blockquote starting at lines[0] and parses its
// content. A non-blank line without ">" that follows quoted paragraph text
// continues it (CommonMark's lazy continuation).
func parseQuote(lines []string, depth int) (Block, int) {
	var inner []string
	var fence fenceInfo
	inFence := false
	i := 0
	for ; i < len(lines); i++ {
		l := lines[i]
		cols, idx := indentCols(l)
		if cols < 4 && idx < len(l) && l[idx] == '>' {
			c := l[idx+1:]
			if c != "" && (c[0] == ' ' || c[0] == '\t') {
				c = c[1:]
			}
			inner = append(inner, c)
			inFence, fence = trackFence(c, inFence, fence)
			continue
		}
		if i > 0 && !inFence && !isBlank(l) && !isBlank(inner[len(inner)-1]) && !startsBlock(l) {
			inner = append(inner, l)
			continue
		}
		break
	}
	return Block{Kind: Quote, Blocks: parseBlocks(inner, depth+1)}, i
}

// trackFence follows whether a container's lines are inside a code fence,
// so that lazy continuation never pulls a line into (or out of) one.
func trackFence(line string, in bool, f fenceInfo) (bool, fenceInfo) {
	if in {
		return !isFenceClose(line, f), f
	}
	cols, idx := indentCols(line)
	if cols >= 4 {
		return false, f
	}
	if g, ok := fenceOpen(line[idx:]); ok {
		return true, g
	}
	return false, f
}

// listMarker is the start of a list item.
type listMarker struct {
	indent  int  // columns before the marker
	content int  // column where the item's content starts
	ordered bool // "1." or "1)" rather than "-", "+" or "*"
	num     int  // the number of an ordered item
	text    string
	empty   bool // nothing after the marker
}

// parseListMarker recognises a list item's first line.
func parseListMarker(line string) (listMarker, bool) {
	cols, idx := indentCols(line)
	rest := line[idx:]
	if rest == "" {
		return listMarker{}, false
	}
	m := listMarker{indent: cols}
	w := 0
	switch c := rest[0]; {
	case c == '-' || c == '+' || c == '*':
		w = 1
	case c >= '0' && c <= '9':
		d := 0
		for d < len(rest) && d < 9 && rest[d] >= '0' && rest[d] <= '9' {
			d++
		}
		if d == len(rest) || rest[d] != '.' && rest[d] != ')' {
			return listMarker{}, false
		}
		m.ordered = true
		m.num, _ = strconv.Atoi(rest[:d])
		w = d + 1
	default:
		return listMarker{}, false
	}
	after := rest[w:]
	if after != "" && after[0] != ' ' && after[0] != '\t' {
		return listMarker{}, false
	}
	sp, sidx := indentCols(after)
	switch {
	case sidx == len(after):
		m.content, m.empty = cols+w+1, true
	case sp > 4:
		m.content, m.text = cols+w+1, stripCols(after, 1)
	default:
		m.content, m.text = cols+w+sp, after[sidx:]
	}
	return m, true
}

// parseList parses a list starting with the item first at lines[0]. Items
// continue with lines indented to the item's content column, lazy paragraph
// continuation lines, and (forgivingly) nested items indented at least two
// columns past the marker, as LLMs indent sub-items under "1. " by two.
func parseList(lines []string, first listMarker, depth int) (Block, int) {
	b := Block{Kind: List, Ordered: first.ordered, Start: first.num}
	i := 0
	for i < len(lines) {
		m, ok := parseListMarker(lines[i])
		if !ok || m.ordered != first.ordered || (i > 0 && isRule(strings.TrimLeft(lines[i], " \t"))) {
			break
		}
		item := []string{m.text}
		inFence, fence := trackFence(m.text, false, fenceInfo{})
		j := i + 1
		for ; j < len(lines); j++ {
			l := lines[j]
			if isBlank(l) {
				item = append(item, "")
				continue
			}
			cols, _ := indentCols(l)
			var add string
			switch {
			case cols >= m.content:
				add = stripCols(l, m.content)
			case inFence:
			case cols >= m.indent+2 && isItemStart(l):
				add = stripCols(l, cols)
			case !isBlank(item[len(item)-1]) && !startsBlock(l) && !tableStartsAt(lines, j):
				add = strings.TrimLeft(l, " \t")
			}
			if add == "" {
				break
			}
			item = append(item, add)
			inFence, fence = trackFence(add, inFence, fence)
		}
		b.Items = append(b.Items, ListItem{Blocks: parseBlocks(item, depth+1)})
		i = j
	}
	return b, i
}

// isItemStart reports whether line starts a list item (not a thematic
// break).
func isItemStart(line string) bool {
	if isRule(strings.TrimLeft(line, " \t")) {
		return false
	}
	_, ok := parseListMarker(line)
	return ok
}

// tableStartsAt reports whether lines[i] is a table header: it has a pipe,
// and lines[i+1] is a delimiter row with as many cells.
func tableStartsAt(lines []string, i int) bool {
	if i+1 >= len(lines) {
		return false
	}
	h := lines[i]
	if cols, _ := indentCols(h); cols >= 4 || strings.IndexByte(h, '|') < 0 {
		return false
	}
	aligns, ok := parseDelimiterRow(lines[i+1])
	return ok && len(splitRow(h)) == len(aligns)
}

// parseDelimiterRow parses a table's delimiter row ("|:--|--:|").
func parseDelimiterRow(line string) ([]Align, bool) {
	if cols, _ := indentCols(line); cols >= 4 {
		return nil, false
	}
	cells := splitRow(line)
	aligns := make([]Align, len(cells))
	for k, c := range cells {
		left, right := strings.HasPrefix(c, ":"), strings.HasSuffix(c, ":")
		d := strings.Trim(c, ":")
		if d == "" || strings.Trim(d, "-") != "" {
			return nil, false
		}
		switch {
		case left && right:
			aligns[k] = AlignCenter
		case right:
			aligns[k] = AlignRight
		case left:
			aligns[k] = AlignLeft
		}
	}
	return aligns, true
}

// splitRow splits a table row into trimmed cells. Pipes escaped with a
// backslash or inside code spans do not split.
func splitRow(line string) []string {
	s := strings.TrimSpace(line)
	s = strings.TrimPrefix(s, "|")
	if strings.HasSuffix(s, "|") && !strings.HasSuffix(s, `\|`) {
		s = s[:len(s)-1]
	}
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && s[i+1] == '|':
			cur.WriteByte('|')
			i++
		case c == '`':
			n := 1
			for i+n < len(s) && s[i+n] == '`' {
				n++
			}
			if end := closingBackticks(s, i+n, n); end >= 0 {
				cur.WriteString(s[i : end+n])
				i = end + n - 1
			} else {
				cur.WriteString(s[i : i+n])
				i += n - 1
			}
		case c == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

// closingBackticks returns the index of the first run of exactly n
// backticks at or after from, or -1.
func closingBackticks(s string, from, n int) int {
	for i := from; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] == '`' {
			j++
		}
		if j-i == n {
			return i
		}
		i = j
	}
	return -1
}

// parseTable parses a table whose header is lines[0] and delimiter row
// lines[1]. Body rows continue while lines have a pipe; short rows are
// padded with empty cells and long ones cut to the header's width.
func parseTable(lines []string) (Block, int) {
	header := splitRow(lines[0])
	aligns, _ := parseDelimiterRow(lines[1])
	b := Block{Kind: Table, Align: aligns, Header: parseCells(header, len(header))}
	i := 2
	for ; i < len(lines); i++ {
		l := lines[i]
		if isBlank(l) || strings.IndexByte(l, '|') < 0 || startsBlock(l) {
			break
		}
		b.Rows = append(b.Rows, parseCells(splitRow(l), len(header)))
	}
	return b, i
}

// parseCells parses raw cells into n Cells.
func parseCells(raw []string, n int) []Cell {
	cells := make([]Cell, n)
	for k := 0; k < n && k < len(raw); k++ {
		cells[k] = parseInlines(raw[k])
	}
	return cells
}
