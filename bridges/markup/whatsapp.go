package markup

import "strings"

// whatsAppDialect writes WhatsApp formatting: *bold*, _italic_, ~strike~,
// `code` and ``` blocks kept as in markdown, "> " quotes, links as
// "label (url)" (the URL alone when it is the label), tables as bullet
// lines. WhatsApp has no escaping, headings (a bold line) or spoilers.
type whatsAppDialect struct{}

func (whatsAppDialect) styles() Style                     { return Bold | Italic | Strike }
func (whatsAppDialect) markersPerLine() bool              { return true }
func (whatsAppDialect) codeAlone() bool                   { return false }
func (whatsAppDialect) bullet() string                    { return "• " }
func (whatsAppDialect) text(b *strings.Builder, s string) { b.WriteString(s) }

func (whatsAppDialect) marker(b *strings.Builder, st Style, _ bool) {
	switch st {
	case Bold:
		b.WriteByte('*')
	case Italic:
		b.WriteByte('_')
	case Strike:
		b.WriteByte('~')
	}
}

func (whatsAppDialect) code(b *strings.Builder, s string) {
	b.WriteByte('`')
	b.WriteString(s)
	b.WriteByte('`')
}

func (whatsAppDialect) linkable(url string) bool { return safeURL(url, "http", "https", "mailto") }

func (whatsAppDialect) link(b *strings.Builder, url, _, plain string, bare bool) {
	writeLabelURL(b, url, plain, bare)
}

func (whatsAppDialect) heading(r *renderer, _ int, runs []Inline) string {
	return r.inlines(withStyle(runs, Bold))
}

func (whatsAppDialect) codeBlock(_, code string) string {
	return "```\n" + guardFences(code) + "\n```"
}

func (whatsAppDialect) quote(inner string, _ bool) string { return prefixLines(inner, "> ") }

func (whatsAppDialect) table(_ *renderer, b *Block) string {
	return tableBullets(b, func(s string) string { return "*" + s + "*" })
}
