package markup

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// telegramTags are the tags this package may emit: a subset of what the Bot
// API accepts.
var telegramTags = map[string]bool{
	"b": true, "i": true, "s": true, "u": true, "tg-spoiler": true,
	"code": true, "pre": true, "a": true, "blockquote": true,
}

// validateTelegramHTML checks s as Bot API HTML the way this package must
// write it: valid UTF-8; only telegramTags, with only href on <a> (a
// quoted, escaped, http(s)/mailto/tg URL) and class="language-x" on a
// <code> right inside <pre>; every tag closed in order; nothing inside code
// or pre but pre's code, no link in a link, no blockquote in a blockquote;
// "&" only in &amp; &lt; &gt; &quot; or a numeric reference; no bare ">".
func validateTelegramHTML(s string) error {
	if !utf8.ValidString(s) {
		return errors.New("invalid UTF-8")
	}
	var stack []string
	for i := 0; i < len(s); {
		switch s[i] {
		case '>':
			return fmt.Errorf("bare '>' at %d", i)
		case '&':
			n, err := checkEntity(s[i:])
			if err != nil {
				return fmt.Errorf("at %d: %w", i, err)
			}
			i += n
		case '<':
			end := strings.IndexByte(s[i:], '>')
			if end < 0 {
				return fmt.Errorf("unterminated tag at %d", i)
			}
			tag := s[i+1 : i+end]
			if strings.ContainsAny(tag, "<\n") {
				return fmt.Errorf("malformed tag %q at %d", tag, i)
			}
			if name, ok := strings.CutPrefix(tag, "/"); ok {
				if len(stack) == 0 || stack[len(stack)-1] != name {
					return fmt.Errorf("</%s> at %d does not close %v", name, i, stack)
				}
				stack = stack[:len(stack)-1]
			} else {
				if err := checkStartTag(tag, stack); err != nil {
					return fmt.Errorf("at %d: %w", i, err)
				}
				name, _, _ := strings.Cut(tag, " ")
				stack = append(stack, name)
			}
			i += end + 1
		default:
			i++
		}
	}
	if len(stack) > 0 {
		return fmt.Errorf("unclosed tags %v", stack)
	}
	return nil
}

// checkStartTag checks a start tag's name, attributes and nesting.
func checkStartTag(tag string, stack []string) error {
	name, attrs, _ := strings.Cut(tag, " ")
	if !telegramTags[name] {
		return fmt.Errorf("tag %q not allowed", name)
	}
	parent := ""
	if len(stack) > 0 {
		parent = stack[len(stack)-1]
	}
	switch {
	case parent == "code" || parent == "pre" && name != "code":
		return fmt.Errorf("<%s> inside <%s>", name, parent)
	case name == "blockquote" && slices.Contains(stack, "blockquote"):
		return errors.New("nested blockquote")
	case name == "a" && slices.Contains(stack, "a"):
		return errors.New("link inside a link")
	case name == "code" && slices.Contains(stack, "a"):
		return errors.New("code inside a link")
	}
	switch name {
	case "a":
		href, ok := strings.CutPrefix(attrs, `href="`)
		if !ok || !strings.HasSuffix(href, `"`) {
			return fmt.Errorf("bad <a> attributes %q", attrs)
		}
		href = href[:len(href)-1]
		if strings.ContainsAny(href, `"<>`) {
			return fmt.Errorf("unescaped href %q", href)
		}
		for k := strings.IndexByte(href, '&'); k >= 0; k = strings.IndexByte(href, '&') {
			n, err := checkEntity(href[k:])
			if err != nil {
				return err
			}
			href = href[k+n:]
		}
		if !safeURL(decodeEntities(strings.TrimSuffix(strings.TrimPrefix(attrs, `href="`), `"`)), "http", "https", "mailto", "tg") {
			return fmt.Errorf("unsafe href %q", attrs)
		}
	case "code":
		if attrs == "" {
			return nil
		}
		lang, ok := strings.CutPrefix(attrs, `class="language-`)
		if !ok || parent != "pre" || !strings.HasSuffix(lang, `"`) || codeLanguage(lang[:len(lang)-1]) != lang[:len(lang)-1] {
			return fmt.Errorf("bad <code> attributes %q", attrs)
		}
	default:
		if attrs != "" {
			return fmt.Errorf("<%s> has attributes %q", name, attrs)
		}
	}
	return nil
}

// checkEntity checks the character reference at the start of s and
// returns its length.
func checkEntity(s string) (int, error) {
	semi := strings.IndexByte(s, ';')
	if semi < 2 || semi > 10 {
		return 0, fmt.Errorf("bare '&' in %.12q", s)
	}
	name := s[1:semi]
	switch name {
	case "amp", "lt", "gt", "quot":
		return semi + 1, nil
	}
	if digits, ok := strings.CutPrefix(name, "#"); ok {
		base := 10
		if hex, ok := strings.CutPrefix(strings.ToLower(digits), "x"); ok {
			digits, base = hex, 16
		}
		if v, err := strconv.ParseUint(digits, base, 32); err == nil && v > 0 && utf8.ValidRune(rune(v)) {
			return semi + 1, nil
		}
	}
	return 0, fmt.Errorf("unsupported entity %q", s[:semi+1])
}

// stripTags removes the HTML tags from s.
func stripTags(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == '<' {
			if end, _ := htmlTag(s, i); end > 0 {
				i = end
				continue
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}
