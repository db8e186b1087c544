package markup

import (
	"strings"
)

// discordDialect writes Discord markdown, which is close to the input:
// **bold**, _italic_, ~~strike~~, ||spoiler||, `code`, ```lang blocks,
// [label](url) masked links, "#"/"##"/"###" headings (deeper levels are
// bold), "- " and "1. " lists, "> " quotes (not nested: Discord shows one
// level). Tables become a code block with aligned columns. Literal text is
// escaped only where Discord would otherwise format it.
type discordDialect struct{}

func (discordDialect) styles() Style        { return Bold | Italic | Strike | Spoiler }
func (discordDialect) markersPerLine() bool { return true }
func (discordDialect) codeAlone() bool      { return false }
func (discordDialect) bullet() string       { return "- " }

func (discordDialect) text(b *strings.Builder, s string) {
	lineStart := b.Len() == 0 || strings.HasSuffix(b.String(), "\n")
	escapeDiscord(b, s, lineStart)
}

func (discordDialect) marker(b *strings.Builder, st Style, _ bool) {
	switch st {
	case Bold:
		b.WriteString("**")
	case Italic:
		b.WriteString("_")
	case Strike:
		b.WriteString("~~")
	case Spoiler:
		b.WriteString("||")
	}
}

// code writes a code span fenced with one backtick more than the longest
// run inside it.
func (discordDialect) code(b *strings.Builder, s string) {
	n, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			n = max(n, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", n+1)
	b.WriteString(fence)
	if n > 0 && (s[0] == '`' || s[len(s)-1] == '`') {
		s = " " + s + " "
	}
	b.WriteString(s)
	b.WriteString(fence)
}

func (discordDialect) linkable(url string) bool { return safeURL(url, "http", "https", "mailto") }

// link writes [label](url), or the URL alone when it is the label.
func (discordDialect) link(b *strings.Builder, url, label, _ string, bare bool) {
	if bare {
		b.WriteString(strings.TrimPrefix(url, "mailto:"))
		return
	}
	u := strings.NewReplacer("(", "%28", ")", "%29").Replace(url)
	b.WriteByte('[')
	b.WriteString(strings.NewReplacer("[", `\[`, "]", `\]`).Replace(label))
	b.WriteString("](")
	b.WriteString(u)
	b.WriteByte(')')
}

func (discordDialect) heading(r *renderer, level int, runs []Inline) string {
	if level > 3 {
		return r.inlines(withStyle(runs, Bold))
	}
	one := make([]Inline, len(runs))
	for k, in := range runs {
		in.Text = strings.ReplaceAll(in.Text, "\n", " ")
		one[k] = in
	}
	return strings.Repeat("#", level) + " " + r.inlines(one)
}

func (discordDialect) codeBlock(lang, code string) string {
	return "```" + codeLanguage(lang) + "\n" + guardFences(code) + "\n```"
}

func (discordDialect) quote(inner string, nested bool) string {
	if nested {
		return inner
	}
	return prefixLines(inner, "> ")
}

func (discordDialect) table(_ *renderer, b *Block) string {
	return "```\n" + guardFences(tableGrid(b)) + "\n```"
}

// escapeDiscord writes literal text with a backslash before what Discord
// would read as markup: "*" (unless between spaces), "`", "_" (unless
// inside a word), "~~", "||", a backslash before punctuation, and at the
// start of a line "#", ">" and "-#" when followed by a space.
func escapeDiscord(b *strings.Builder, s string, lineStart bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		var prev, next byte = ' ', ' '
		if i > 0 {
			prev = s[i-1]
		}
		if i+1 < len(s) {
			next = s[i+1]
		}
		atLineStart := i == 0 && lineStart || i > 0 && prev == '\n'
		esc := false
		switch c {
		case '\\':
			esc = i+1 == len(s) || isASCIIPunct(next)
		case '*':
			esc = !(prev == ' ' && next == ' ')
		case '`':
			esc = true
		case '_':
			esc = !(isAlnum(prev) && isAlnum(next))
		case '~', '|':
			esc = prev == c || next == c
		case '#', '>':
			esc = atLineStart && (next == ' ' || next == c || i+1 == len(s))
		case '-':
			esc = atLineStart && next == '#'
		}
		if esc {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
}
