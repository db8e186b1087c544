package markup

import "strings"

// slackDialect writes Slack mrkdwn: *bold*, _italic_, ~strike~, `code`,
// ``` blocks, <url|label> links, "> " quotes. Text escapes "&", "<" and
// ">" as Slack requires, except the special tokens already in the text
// (<@U…>, <#C…|name>, <!here>, <!channel>, <!everyone>, <!subteam^…>,
// <!date^…>), which pass through so mentions keep working. mrkdwn has no
// headings (a bold line), spoilers (plain text) or tables (a code block).
type slackDialect struct{}

func (slackDialect) styles() Style                     { return Bold | Italic | Strike }
func (slackDialect) markersPerLine() bool              { return true }
func (slackDialect) codeAlone() bool                   { return false }
func (slackDialect) bullet() string                    { return "• " }
func (slackDialect) text(b *strings.Builder, s string) { escapeSlack(b, s, true) }

func (slackDialect) marker(b *strings.Builder, st Style, _ bool) {
	switch st {
	case Bold:
		b.WriteByte('*')
	case Italic:
		b.WriteByte('_')
	case Strike:
		b.WriteByte('~')
	}
}

func (slackDialect) code(b *strings.Builder, s string) {
	b.WriteByte('`')
	escapeSlack(b, s, false)
	b.WriteByte('`')
}

func (slackDialect) linkable(url string) bool { return safeURL(url, "http", "https", "mailto") }

// link writes <url|label>; the label is plain text (Slack does not format
// inside it) and the URL has "|" and ">" percent-encoded.
func (slackDialect) link(b *strings.Builder, url, _, plain string, bare bool) {
	u := strings.NewReplacer("&", "&amp;", "<", "%3C", ">", "%3E", "|", "%7C").Replace(url)
	b.WriteByte('<')
	b.WriteString(u)
	if !bare || strings.HasPrefix(url, "mailto:") {
		b.WriteByte('|')
		escapeSlack(b, strings.ReplaceAll(plain, "\n", " "), false)
	}
	b.WriteByte('>')
}

func (slackDialect) heading(r *renderer, _ int, runs []Inline) string {
	return r.inlines(withStyle(runs, Bold))
}

func (slackDialect) codeBlock(_, code string) string {
	var b strings.Builder
	b.WriteString("```\n")
	escapeSlack(&b, guardFences(code), false)
	b.WriteString("\n```")
	return b.String()
}

func (slackDialect) quote(inner string, _ bool) string { return prefixLines(inner, "> ") }

func (slackDialect) table(_ *renderer, b *Block) string {
	var out strings.Builder
	out.WriteString("```\n")
	escapeSlack(&out, tableGrid(b), false)
	out.WriteString("\n```")
	return out.String()
}

// escapeSlack writes s with "&", "<" and ">" escaped; with keepTokens,
// Slack's special tokens pass through unchanged.
func escapeSlack(b *strings.Builder, s string, keepTokens bool) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '&':
			b.WriteString("&amp;")
		case '>':
			b.WriteString("&gt;")
		case '<':
			if n := slackTokenLen(s[i:]); keepTokens && n > 0 {
				b.WriteString(s[i : i+n])
				i += n - 1
				continue
			}
			b.WriteString("&lt;")
		default:
			b.WriteByte(c)
		}
	}
}

// slackTokenLen returns the length of the Slack special token at the start
// of s, or 0: <@U…>/<@W…>/<@B…>, <#C…>/<#G…>, <!here>, <!channel>,
// <!everyone>, <!subteam^…>, <!date^…>, each with an optional "|label".
func slackTokenLen(s string) int {
	if len(s) < 4 || s[0] != '<' {
		return 0
	}
	end := strings.IndexAny(s[1:], "<>\n") + 1
	if end <= 0 || s[end] != '>' {
		return 0
	}
	body, _, _ := strings.Cut(s[1:end], "|")
	ok := false
	switch {
	case len(body) >= 3 && body[0] == '@' && strings.IndexByte("UWB", body[1]) >= 0:
		ok = upperAlnum(body[2:])
	case len(body) >= 3 && body[0] == '#' && strings.IndexByte("CG", body[1]) >= 0:
		ok = upperAlnum(body[2:])
	case body == "!here" || body == "!channel" || body == "!everyone":
		ok = true
	case strings.HasPrefix(body, "!subteam^"):
		ok = upperAlnum(body[len("!subteam^"):])
	case strings.HasPrefix(body, "!date^"):
		ok = len(body) > len("!date^")
	}
	if !ok {
		return 0
	}
	return end + 1
}

// upperAlnum reports whether s is non-empty and only A-Z and 0-9 (a Slack
// id).
func upperAlnum(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= 'A' && s[i] <= 'Z' || isDigit(s[i])) {
			return false
		}
	}
	return true
}

// guardFences breaks "```" inside code with a zero-width space, so the
// code cannot close the block it is in.
func guardFences(code string) string {
	return strings.ReplaceAll(code, "```", "``\u200b`")
}
