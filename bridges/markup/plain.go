package markup

import "strings"

// plainDialect writes text without markup. Structure stays: headings are
// their own line, lists keep "• " and "1. ", quotes get "> ", code blocks
// are their content, tables are aligned columns, and a link is
// "label (url)" (just the URL when it is its own label).
type plainDialect struct{}

func (plainDialect) styles() Style                                    { return 0 }
func (plainDialect) markersPerLine() bool                             { return false }
func (plainDialect) codeAlone() bool                                  { return false }
func (plainDialect) bullet() string                                   { return "• " }
func (plainDialect) text(b *strings.Builder, s string)                { b.WriteString(s) }
func (plainDialect) marker(*strings.Builder, Style, bool)             {}
func (plainDialect) code(b *strings.Builder, s string)                { b.WriteString(s) }
func (plainDialect) codeBlock(_, code string) string                  { return code }
func (plainDialect) table(_ *renderer, b *Block) string               { return tableGrid(b) }
func (plainDialect) quote(inner string, nested bool) string           { return prefixLines(inner, "> ") }
func (plainDialect) heading(r *renderer, _ int, runs []Inline) string { return r.inlines(runs) }

// linkable allows the schemes Telegram links; the others show the label.
func (plainDialect) linkable(url string) bool {
	return safeURL(url, "http", "https", "mailto", "tg")
}

func (plainDialect) link(b *strings.Builder, url, label, _ string, bare bool) {
	writeLabelURL(b, url, label, bare)
}

// writeLabelURL writes "label (url)", or the URL alone when bare.
func writeLabelURL(b *strings.Builder, url, label string, bare bool) {
	if bare {
		b.WriteString(strings.TrimPrefix(url, "mailto:"))
		return
	}
	b.WriteString(label)
	b.WriteString(" (")
	b.WriteString(url)
	b.WriteString(")")
}
