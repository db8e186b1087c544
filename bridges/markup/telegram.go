package markup

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// telegramDialect writes Bot API HTML. It uses only tags the Bot API
// accepts (b, i, s, tg-spoiler, code, pre, a, blockquote) and escapes
// exactly "&", "<" and ">" in text, plus '"' in attribute values. It keeps
// to the Bot API's nesting rules: code and pre contain nothing else (so a
// code span drops its other styles, and loses its code style inside a
// link), and blockquotes do not nest (an inner quote is flattened into the
// outer one).
type telegramDialect struct{}

func (telegramDialect) styles() Style        { return Bold | Italic | Strike | Spoiler }
func (telegramDialect) markersPerLine() bool { return false }
func (telegramDialect) codeAlone() bool      { return true }
func (telegramDialect) bullet() string       { return "• " }

func (telegramDialect) text(b *strings.Builder, s string) { escapeHTML(b, s, false) }

func (telegramDialect) marker(b *strings.Builder, st Style, open bool) {
	var tag string
	switch st {
	case Bold:
		tag = "b"
	case Italic:
		tag = "i"
	case Strike:
		tag = "s"
	case Spoiler:
		tag = "tg-spoiler"
	default:
		return
	}
	b.WriteByte('<')
	if !open {
		b.WriteByte('/')
	}
	b.WriteString(tag)
	b.WriteByte('>')
}

func (telegramDialect) code(b *strings.Builder, s string) {
	b.WriteString("<code>")
	escapeHTML(b, s, false)
	b.WriteString("</code>")
}

// linkable allows http(s), mailto and tg (tg://user?id= mentions,
// tg://resolve) links.
func (telegramDialect) linkable(url string) bool {
	return safeURL(url, "http", "https", "mailto", "tg")
}

func (telegramDialect) link(b *strings.Builder, url, label, _ string, _ bool) {
	b.WriteString(`<a href="`)
	escapeHTML(b, url, true)
	b.WriteString(`">`)
	b.WriteString(label)
	b.WriteString("</a>")
}

// heading is a bold line: Telegram has no headings.
func (telegramDialect) heading(r *renderer, _ int, runs []Inline) string {
	return r.inlines(withStyle(runs, Bold))
}

func (telegramDialect) codeBlock(lang, code string) string {
	var b strings.Builder
	b.WriteString("<pre>")
	if lang = codeLanguage(lang); lang != "" {
		b.WriteString(`<code class="language-`)
		b.WriteString(lang)
		b.WriteString(`">`)
	}
	escapeHTML(&b, code, false)
	if lang != "" {
		b.WriteString("</code>")
	}
	b.WriteString("</pre>")
	return b.String()
}

func (telegramDialect) quote(inner string, nested bool) string {
	if nested {
		return inner
	}
	return "<blockquote>" + inner + "</blockquote>"
}

// table is a <pre> block with aligned columns.
func (telegramDialect) table(_ *renderer, b *Block) string {
	var out strings.Builder
	out.WriteString("<pre>")
	escapeHTML(&out, tableGrid(b), false)
	out.WriteString("</pre>")
	return out.String()
}

// codeLanguage keeps the characters of a fence's language that are safe in
// a class name (letters, digits, "+", "#", "-", "_", "."), at most 32.
func codeLanguage(lang string) string {
	var b strings.Builder
	for i := 0; i < len(lang) && b.Len() < 32; i++ {
		c := lang[i]
		if isAlnum(c) || strings.IndexByte("+#-_.", c) >= 0 {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// escapeHTML writes s with "&", "<" and ">" escaped, and '"' too when attr.
func escapeHTML(b *strings.Builder, s string, attr bool) {
	last := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch s[i] {
		case '&':
			esc = "&amp;"
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '"':
			if !attr {
				continue
			}
			esc = "&quot;"
		default:
			continue
		}
		b.WriteString(s[last:i])
		b.WriteString(esc)
		last = i + 1
	}
	b.WriteString(s[last:])
}

// HTMLToPlain turns Telegram HTML (as TelegramHTML and Chunk produce it)
// into plain text, for resending a chunk Telegram refused to parse: tags
// are dropped, a link becomes "label (url)" unless the label is the URL,
// and entities are decoded. The result is never longer than html in runes
// or UTF-16 code units, so a chunk stays within its limit.
func HTMLToPlain(html string) string {
	var b strings.Builder
	href, labelAt := "", -1
	for i := 0; i < len(html); {
		switch html[i] {
		case '<':
			end, kind := htmlTag(html, i)
			if end == 0 {
				b.WriteByte('<')
				i++
				continue
			}
			tag := html[i:end]
			switch name := tagName(tag); {
			case name == "a" && kind == atomOpen:
				href, labelAt = decodeEntities(tagAttr(tag, "href")), b.Len()
			case name == "a" && kind == atomClose && labelAt >= 0:
				label := b.String()[labelAt:]
				if href != "" && href != label && href != "mailto:"+label {
					b.WriteString(" (" + href + ")")
				}
				href, labelAt = "", -1
			}
			i = end
		case '&':
			if end := entityEnd(html, i); end > 0 {
				b.WriteString(decodeEntities(html[i:end]))
				i = end
				continue
			}
			b.WriteByte('&')
			i++
		default:
			b.WriteByte(html[i])
			i++
		}
	}
	return b.String()
}

// tagAttr returns the value of attribute name in an HTML start tag, still
// entity-encoded, or "".
func tagAttr(tag, name string) string {
	k := strings.Index(tag, " "+name+"=")
	if k < 0 {
		return ""
	}
	v := tag[k+len(name)+2:]
	if v == "" {
		return ""
	}
	if q := v[0]; q == '"' || q == '\'' {
		if end := strings.IndexByte(v[1:], q); end >= 0 {
			return v[1 : end+1]
		}
		return ""
	}
	end := strings.IndexAny(v, " />")
	if end < 0 {
		return v
	}
	return v[:end]
}

// decodeEntities decodes &lt; &gt; &amp; &quot; &apos; and numeric
// character references; others stay as written.
func decodeEntities(s string) string {
	if strings.IndexByte(s, '&') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		end := 0
		if s[i] == '&' {
			end = entityEnd(s, i)
		}
		if end == 0 {
			b.WriteByte(s[i])
			i++
			continue
		}
		name := s[i+1 : end-1]
		switch name {
		case "lt":
			b.WriteByte('<')
		case "gt":
			b.WriteByte('>')
		case "amp":
			b.WriteByte('&')
		case "quot":
			b.WriteByte('"')
		case "apos":
			b.WriteByte('\'')
		default:
			r := rune(-1)
			if digits, ok := strings.CutPrefix(name, "#"); ok {
				base := 10
				if hex, ok := strings.CutPrefix(strings.ToLower(digits), "x"); ok {
					digits, base = hex, 16
				}
				if v, err := strconv.ParseUint(digits, base, 32); err == nil && v > 0 && utf8.ValidRune(rune(v)) {
					r = rune(v)
				}
			}
			if r < 0 {
				b.WriteString(s[i:end])
			} else {
				b.WriteRune(r)
			}
		}
		i = end
	}
	return b.String()
}
