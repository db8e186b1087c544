package markup

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// ruleLine is how every target shows a thematic break: chat platforms have
// no horizontal rule.
const ruleLine = "──────────"

// dialect is what differs between targets. The renderer owns the structure
// (block order, list markers, indentation, link grouping, style nesting);
// a dialect only writes the pieces.
type dialect interface {
	// styles is the set of marker styles the target can show; others are
	// dropped. Code is always shown (by code).
	styles() Style
	// markersPerLine is true for targets whose style markers cannot span a
	// line break or sit next to whitespace inside them (Slack, WhatsApp,
	// Discord): markers are closed before each newline and reopened after,
	// and whitespace at a styled run's edges goes outside the markers.
	markersPerLine() bool
	// codeAlone is true when a code span cannot nest with other styles or
	// sit in a link (Telegram): other styles are dropped on code, and code
	// inside a link label is shown as plain text.
	codeAlone() bool
	// text writes literal text, escaped as the target needs.
	text(b *strings.Builder, s string)
	// marker writes the opening or closing marker of one style.
	marker(b *strings.Builder, st Style, open bool)
	// code writes an inline code span.
	code(b *strings.Builder, s string)
	// linkable reports whether the target may link to url; a label whose
	// link is not linkable is shown as plain text.
	linkable(url string) bool
	// link writes a link. label is the label rendered for the target (with
	// styles); plain is the label as plain text; bare is true when the
	// label is the URL itself.
	link(b *strings.Builder, url, label, plain string, bare bool)
	// heading renders a heading.
	heading(r *renderer, level int, runs []Inline) string
	// codeBlock renders a code block with non-empty code.
	codeBlock(lang, code string) string
	// quote wraps the rendered content of a quote; nested is true inside
	// another quote.
	quote(inner string, nested bool) string
	// table renders a table.
	table(r *renderer, b *Block) string
	// bullet is the marker of an unordered list item, with its space.
	bullet() string
}

// Render renders doc for the target. The result is one string; use Chunk
// (or RenderChunks) to split it for the platform's message limit.
func Render(doc Doc, t Target) string {
	r := renderer{d: t.dialect()}
	return r.blocks(doc.Blocks)
}

// renderer renders blocks with one dialect.
type renderer struct {
	d          dialect
	quoteDepth int
}

// blocks renders blocks separated by a blank line, skipping empty ones.
func (r *renderer) blocks(bs []Block) string {
	var b strings.Builder
	for k := range bs {
		s := r.block(&bs[k])
		if s == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(s)
	}
	return b.String()
}

// block renders one block.
func (r *renderer) block(b *Block) string {
	switch b.Kind {
	case Paragraph:
		return r.inlines(b.Inlines)
	case Heading:
		return r.d.heading(r, b.Level, b.Inlines)
	case List:
		return r.list(b)
	case Quote:
		r.quoteDepth++
		inner := r.blocks(b.Blocks)
		r.quoteDepth--
		if inner == "" {
			return ""
		}
		return r.d.quote(inner, r.quoteDepth > 0)
	case CodeBlock:
		if b.Code == "" {
			return ""
		}
		return r.d.codeBlock(b.Lang, b.Code)
	case Table:
		if len(b.Header) == 0 {
			return ""
		}
		return r.d.table(r, b)
	case Rule:
		return ruleLine
	}
	return ""
}

// list renders a list: one line per item with "• " (or the dialect's
// bullet) or "N. ", the item's further lines indented by the marker's
// width. Code blocks and tables are not indented (it would change their
// content) and start on their own line.
func (r *renderer) list(b *Block) string {
	var out strings.Builder
	for i := range b.Items {
		marker := r.d.bullet()
		if b.Ordered {
			marker = strconv.Itoa(b.Start+i) + ". "
		}
		pad := strings.Repeat(" ", utf8.RuneCountInString(marker))
		var body strings.Builder
		for k := range b.Items[i].Blocks {
			cb := &b.Items[i].Blocks[k]
			s := r.block(cb)
			if s == "" {
				continue
			}
			verbatim := cb.Kind == CodeBlock || cb.Kind == Table
			switch {
			case body.Len() == 0 && verbatim:
				body.WriteString("\n")
			case body.Len() > 0:
				body.WriteString("\n")
				if !verbatim {
					body.WriteString(pad)
				}
			}
			if !verbatim {
				s = strings.ReplaceAll(s, "\n", "\n"+pad)
			}
			body.WriteString(s)
		}
		if i > 0 {
			out.WriteString("\n")
		}
		if body.Len() == 0 {
			out.WriteString(strings.TrimRight(marker, " "))
			continue
		}
		out.WriteString(marker)
		out.WriteString(body.String())
	}
	return out.String()
}

// inlines renders runs with the renderer's dialect.
func (r *renderer) inlines(runs []Inline) string {
	var b strings.Builder
	w := inlineWriter{b: &b, d: r.d}
	w.runs(runs)
	return b.String()
}

// plainText is the text of runs as the Plain target shows it.
func plainText(runs []Inline) string {
	r := renderer{d: plainDialect{}}
	return r.inlines(runs)
}

// withStyle returns runs with st added to every run.
func withStyle(runs []Inline, st Style) []Inline {
	out := make([]Inline, len(runs))
	for k, in := range runs {
		in.Style |= st
		out[k] = in
	}
	return out
}

// inlineWriter writes runs, keeping style markers properly nested: it keeps
// the stack of open markers and, for each run, closes the markers the run
// does not have (innermost first) and opens the ones it lacks, lazily, just
// before visible text.
type inlineWriter struct {
	b    *strings.Builder
	d    dialect
	open []Style
	ws   string // held-back whitespace (markersPerLine): written outside markers that close next
}

// runs writes runs and closes every marker.
func (w *inlineWriter) runs(runs []Inline) {
	for i := 0; i < len(runs); {
		r := runs[i]
		if r.Link == "" || !w.d.linkable(r.Link) {
			w.write(r.Style, r.Text)
			i++
			continue
		}
		j := i + 1
		for j < len(runs) && runs[j].Link == r.Link {
			j++
		}
		w.link(r.Link, runs[i:j])
		i = j
	}
	w.sync(0, "")
	w.b.WriteString(w.ws)
	w.ws = ""
}

// link writes one link whose label is label (runs sharing the link). The
// styles all label runs share go outside the link; the rest inside.
func (w *inlineWriter) link(url string, label []Inline) {
	common := w.d.styles()
	var plain strings.Builder
	for _, in := range label {
		common &= in.Style
		plain.WriteString(in.Text)
	}
	inner := make([]Inline, len(label))
	for k, in := range label {
		in.Style &^= common
		in.Link = ""
		if w.d.codeAlone() {
			in.Style &^= Code
		}
		inner[k] = in
	}
	var lb strings.Builder
	iw := inlineWriter{b: &lb, d: w.d}
	iw.runs(inner)
	p := plain.String()
	w.sync(common, "")
	w.d.link(w.b, url, lb.String(), p, p == url || "mailto:"+p == url)
}

// write writes one run of text.
func (w *inlineWriter) write(st Style, text string) {
	if st&Code != 0 {
		st &^= Code
		if w.d.codeAlone() {
			st = 0
		}
		w.sync(st&w.d.styles(), "")
		w.d.code(w.b, text)
		return
	}
	st &= w.d.styles()
	if !w.d.markersPerLine() {
		w.sync(st, "")
		w.d.text(w.b, text)
		return
	}
	for k, line := range strings.Split(text, "\n") {
		if k > 0 {
			w.sync(0, "")
			w.ws = ""
			w.b.WriteString("\n")
		}
		core := strings.TrimRight(line, " \t")
		trail := line[len(core):]
		trimmed := strings.TrimLeft(core, " \t")
		lead := core[:len(core)-len(trimmed)]
		if trimmed == "" {
			w.closeTo(st)
			w.ws += line
			continue
		}
		w.sync(st, lead)
		w.d.text(w.b, trimmed)
		w.ws = trail
	}
}

// sync makes the open markers exactly st: it closes the markers not in st
// (innermost first, down to the outermost one not in st), writes the
// held-back whitespace and lead, then opens the missing markers in
// styleOrder.
func (w *inlineWriter) sync(st Style, lead string) {
	w.closeTo(st)
	w.b.WriteString(w.ws)
	w.ws = ""
	w.b.WriteString(lead)
	for _, s := range styleOrder {
		if st&s == 0 || w.isOpen(s) {
			continue
		}
		w.d.marker(w.b, s, true)
		w.open = append(w.open, s)
	}
}

// closeTo closes the open markers not in st: the outermost one not in st
// and everything inside it, innermost first.
func (w *inlineWriter) closeTo(st Style) {
	keep := 0
	for keep < len(w.open) && st&w.open[keep] != 0 {
		keep++
	}
	for len(w.open) > keep {
		top := w.open[len(w.open)-1]
		w.open = w.open[:len(w.open)-1]
		w.d.marker(w.b, top, false)
	}
}

// isOpen reports whether the marker of s is open.
func (w *inlineWriter) isOpen(s Style) bool {
	for _, o := range w.open {
		if o == s {
			return true
		}
	}
	return false
}

// linkScheme returns the lowercased scheme of url, or "" when it has none.
func linkScheme(url string) string {
	for i := 0; i < len(url) && i < 33; i++ {
		c := url[i]
		switch {
		case c == ':':
			if i == 0 {
				return ""
			}
			return strings.ToLower(url[:i])
		case isAlpha(c), i > 0 && (isDigit(c) || c == '+' || c == '.' || c == '-'):
		default:
			return ""
		}
	}
	return ""
}

// safeURL reports whether url uses one of schemes ("http", "https" need a
// host) and contains no whitespace or control characters.
func safeURL(url string, schemes ...string) bool {
	for i := 0; i < len(url); i++ {
		if url[i] <= ' ' || url[i] == 0x7f {
			return false
		}
	}
	scheme := linkScheme(url)
	for _, s := range schemes {
		if s != scheme {
			continue
		}
		rest := url[len(scheme)+1:]
		if scheme == "http" || scheme == "https" {
			host, ok := strings.CutPrefix(rest, "//")
			return ok && host != "" && host[0] != '/'
		}
		return rest != ""
	}
	return false
}

// tableGrid lays a table out as aligned text columns separated by " | ",
// with a "-|-" rule under the header. Cells are plain text; widths count
// runes, so wide (CJK, emoji) characters can misalign.
func tableGrid(b *Block) string {
	n := len(b.Header)
	rows := make([][]string, 0, len(b.Rows)+1)
	rows = append(rows, cellTexts(b.Header))
	for _, row := range b.Rows {
		rows = append(rows, cellTexts(row))
	}
	width := make([]int, n)
	for _, row := range rows {
		for k := 0; k < n && k < len(row); k++ {
			width[k] = max(width[k], utf8.RuneCountInString(row[k]))
		}
	}
	var out strings.Builder
	line := func(cells []string) {
		var l strings.Builder
		for k := 0; k < n; k++ {
			if k > 0 {
				l.WriteString(" | ")
			}
			c := ""
			if k < len(cells) {
				c = cells[k]
			}
			var a Align
			if k < len(b.Align) {
				a = b.Align[k]
			}
			l.WriteString(pad(c, width[k], a))
		}
		out.WriteString(strings.TrimRight(l.String(), " "))
	}
	for i, row := range rows {
		if i > 0 {
			out.WriteString("\n")
		}
		line(row)
		if i == 0 {
			out.WriteString("\n")
			for k := 0; k < n; k++ {
				if k > 0 {
					out.WriteString("-|-")
				}
				out.WriteString(strings.Repeat("-", max(width[k], 1)))
			}
		}
	}
	return out.String()
}

// cellTexts returns the plain text of cells, on one line each.
func cellTexts(cells []Cell) []string {
	out := make([]string, len(cells))
	for k, c := range cells {
		out[k] = strings.ReplaceAll(plainText(c), "\n", " ")
	}
	return out
}

// pad pads s with spaces to width runes, aligned as a says.
func pad(s string, width int, a Align) string {
	n := width - utf8.RuneCountInString(s)
	if n <= 0 {
		return s
	}
	switch a {
	case AlignRight:
		return strings.Repeat(" ", n) + s
	case AlignCenter:
		return strings.Repeat(" ", n/2) + s + strings.Repeat(" ", n-n/2)
	}
	return s + strings.Repeat(" ", n)
}

// tableBullets lays a table out as bullet lines, for targets without
// monospace blocks worth the name (WhatsApp): with one column, one bullet
// per row; otherwise per row a bold title (the first cell) and a
// "• Header: value" line for each other column.
func tableBullets(b *Block, bold func(string) string) string {
	header := cellTexts(b.Header)
	var out strings.Builder
	for i, row := range b.Rows {
		cells := cellTexts(row)
		if len(header) == 1 {
			if i > 0 {
				out.WriteString("\n")
			}
			out.WriteString("• " + cells[0])
			continue
		}
		if i > 0 {
			out.WriteString("\n\n")
		}
		if t := strings.TrimSpace(cells[0]); t != "" {
			out.WriteString(bold(t))
		} else {
			out.WriteString(bold(header[0]))
		}
		for k := 1; k < len(cells); k++ {
			if cells[k] == "" {
				continue
			}
			out.WriteString("\n• ")
			if header[k] != "" {
				out.WriteString(header[k] + ": ")
			}
			out.WriteString(cells[k])
		}
	}
	if len(b.Rows) == 0 {
		for k, h := range header {
			if k > 0 {
				out.WriteString("\n")
			}
			out.WriteString("• " + h)
		}
	}
	return out.String()
}

// prefixLines puts prefix before every line of s; blank lines get the
// prefix without its trailing space.
func prefixLines(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for k, l := range lines {
		if l == "" {
			lines[k] = strings.TrimRight(prefix, " ")
		} else {
			lines[k] = prefix + l
		}
	}
	return strings.Join(lines, "\n")
}
