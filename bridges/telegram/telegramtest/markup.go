package telegramtest

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// htmlTags are the start tags the Bot API accepts with parse_mode HTML.
var htmlTags = map[string]bool{
	"b": true, "strong": true, "i": true, "em": true, "u": true, "ins": true,
	"s": true, "strike": true, "del": true, "span": true, "tg-spoiler": true,
	"a": true, "code": true, "pre": true, "blockquote": true, "tg-emoji": true,
}

// openTag is a start tag waiting for its end tag.
type openTag struct {
	name    string
	arg     string // href, code language, span class suffix, emoji id, "expandable"
	offset  int    // UTF-16 offset of the entity in the plain text
	byteOff int    // byte offset of the entity in the plain text
	at      int    // byte offset of the tag in the source, for error messages
}

// parseHTML turns Bot API HTML into the plain text a user sees and its
// entities, rejecting what the server rejects with the server's wording. It
// follows TDLib's parser (the Bot API server's) in what it accepts and in its
// byte offsets, with one deliberate difference: TDLib passes an "&" that does
// not start &lt; &gt; &amp; &quot; or a numeric reference through literally,
// while this parser rejects it, so a converter that forgets to escape fails
// in tests instead of rendering stray entities in production.
func parseHTML(src string) (string, []MessageEntity, error) {
	var (
		out      strings.Builder
		offset   int // UTF-16 length of out
		entities []MessageEntity
		stack    []openTag
	)
	n := len(src)
	for i := 0; i < n; {
		c := src[i]
		if c == '&' {
			r, size, err := decodeHTMLEntity(src, i)
			if err != nil {
				return "", nil, err
			}
			out.WriteRune(r)
			offset += utf16.RuneLen(r)
			i += size
			continue
		}
		if c != '<' {
			out.WriteByte(c)
			if utf8.RuneStart(c) {
				offset++
				if c >= 0xf0 { // four-byte sequence: a surrogate pair in UTF-16
					offset++
				}
			}
			i++
			continue
		}

		begin := i
		i++
		if i < n && src[i] == '/' {
			if len(stack) == 0 {
				return "", nil, entityErrorf("Unexpected end tag at byte offset %d", begin)
			}
			i++
			nameBegin := i
			for i < n && !isHTMLSpace(src[i]) && src[i] != '>' {
				i++
			}
			endName := strings.ToLower(src[nameBegin:i])
			for i < n && isHTMLSpace(src[i]) {
				i++
			}
			if i >= n || src[i] != '>' {
				return "", nil, entityErrorf("Unclosed end tag at byte offset %d", begin)
			}
			i++
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if endName != "" && endName != top.name {
				return "", nil, entityErrorf("Unmatched end tag at byte offset %d, expected \"</%s>\", found \"</%s>\"", begin, top.name, endName)
			}
			if offset == top.offset {
				continue // empty entities are dropped
			}
			var err error
			entities, err = closeEntity(entities, stack, top, offset, out.String()[top.byteOff:])
			if err != nil {
				return "", nil, err
			}
			continue
		}

		for i < n && !isHTMLSpace(src[i]) && src[i] != '>' {
			i++
		}
		if i >= n {
			return "", nil, entityErrorf("Unclosed start tag at byte offset %d", begin)
		}
		name := strings.ToLower(src[begin+1 : i])
		if !htmlTags[name] {
			return "", nil, entityErrorf("Unsupported start tag \"%s\" at byte offset %d", name, begin)
		}
		tag := openTag{name: name, offset: offset, byteOff: out.Len(), at: begin}
		for {
			for i < n && isHTMLSpace(src[i]) {
				i++
			}
			if i >= n {
				return "", nil, entityErrorf("Unclosed start tag \"%s\" at byte offset %d", name, begin)
			}
			if src[i] == '>' {
				i++
				break
			}
			attrBegin := i
			for i < n && !isHTMLSpace(src[i]) && src[i] != '=' && src[i] != '>' {
				i++
			}
			attr := strings.ToLower(src[attrBegin:i])
			if attr == "" {
				return "", nil, entityErrorf("Empty attribute name in the tag \"%s\" at byte offset %d", name, begin)
			}
			for i < n && isHTMLSpace(src[i]) {
				i++
			}
			if i >= n || src[i] != '=' {
				if name == "blockquote" && attr == "expandable" {
					tag.arg = "expandable"
					continue
				}
				return "", nil, entityErrorf("Expected equal sign in declaration of an attribute of the tag \"%s\" at byte offset %d", name, begin)
			}
			i++
			for i < n && isHTMLSpace(src[i]) {
				i++
			}
			if i >= n {
				return "", nil, entityErrorf("Unclosed start tag \"%s\" at byte offset %d", name, begin)
			}
			var value string
			if q := src[i]; q == '"' || q == '\'' {
				valueBegin := i + 1
				end := strings.IndexByte(src[valueBegin:], q)
				if end < 0 {
					return "", nil, entityErrorf("Unclosed end of attribute value at byte offset %d", valueBegin)
				}
				var err error
				if value, err = decodeHTMLText(src, valueBegin, valueBegin+end); err != nil {
					return "", nil, err
				}
				i = valueBegin + end + 1
			} else {
				// An unquoted name token: letters, digits, periods and hyphens.
				tokenBegin := i
				for i < n && (isAlnum(src[i]) || src[i] == '.' || src[i] == '-') {
					i++
				}
				if i < n && !isHTMLSpace(src[i]) && src[i] != '>' {
					return "", nil, entityErrorf("Unexpected end of name token at byte offset %d", tokenBegin)
				}
				value = strings.ToLower(src[tokenBegin:i])
			}
			switch {
			case name == "a" && attr == "href":
				tag.arg = value
			case name == "code" && attr == "class" && strings.HasPrefix(value, "language-"):
				tag.arg = strings.TrimPrefix(value, "language-")
			case name == "span" && attr == "class" && strings.HasPrefix(value, "tg-"):
				tag.arg = strings.TrimPrefix(value, "tg-")
			case name == "tg-emoji" && attr == "emoji-id":
				tag.arg = value
			}
		}
		if name == "span" && tag.arg != "spoiler" {
			return "", nil, entityErrorf("Tag \"span\" must have class \"tg-spoiler\" at byte offset %d", begin)
		}
		stack = append(stack, tag)
	}
	if len(stack) > 0 {
		return "", nil, entityErrorf("Can't find end tag corresponding to start tag \"%s\"", stack[len(stack)-1].name)
	}
	slices.SortStableFunc(entities, func(a, b MessageEntity) int {
		return cmp.Or(cmp.Compare(a.Offset, b.Offset), cmp.Compare(b.Length, a.Length))
	})
	return out.String(), entities, nil
}

// closeEntity appends the entity for a closed tag; parents is the stack of
// tags still open around it and text is the plain text the tag enclosed.
func closeEntity(entities []MessageEntity, parents []openTag, tag openTag, end int, text string) ([]MessageEntity, error) {
	e := MessageEntity{Offset: tag.offset, Length: end - tag.offset}
	switch tag.name {
	case "b", "strong":
		e.Type = "bold"
	case "i", "em":
		e.Type = "italic"
	case "u", "ins":
		e.Type = "underline"
	case "s", "strike", "del":
		e.Type = "strikethrough"
	case "span", "tg-spoiler":
		e.Type = "spoiler"
	case "blockquote":
		e.Type = "blockquote"
		if tag.arg == "expandable" {
			e.Type = "expandable_blockquote"
		}
	case "tg-emoji":
		id, err := strconv.ParseInt(tag.arg, 10, 64)
		if err != nil || id <= 0 {
			return nil, entityErrorf("Invalid custom emoji identifier specified")
		}
		e.Type, e.CustomEmojiID = "custom_emoji", tag.arg
	case "a":
		url := tag.arg
		if url == "" {
			url = text
		}
		if rest, ok := strings.CutPrefix(strings.ToLower(url), "tg://user?id="); ok {
			if id, err := strconv.ParseInt(rest, 10, 64); err == nil && id > 0 {
				e.Type, e.User = "text_mention", &User{ID: id}
				break
			}
		}
		e.Type, e.URL = "text_link", url
	case "code":
		e.Type = "code"
		// A language only means something on <pre><code class="language-x">.
		if len(parents) > 0 && parents[len(parents)-1].name == "pre" {
			e.Language = tag.arg
		}
	case "pre":
		e.Type = "pre"
		if k := len(entities) - 1; k >= 0 && entities[k].Type == "code" &&
			entities[k].Offset == e.Offset && entities[k].Length == e.Length {
			e.Language = entities[k].Language
			entities = entities[:k]
		}
	}
	return append(entities, e), nil
}

// decodeHTMLText decodes the entities in src[from:to], an attribute value.
func decodeHTMLText(src string, from, to int) (string, error) {
	var b strings.Builder
	for i := from; i < to; {
		if src[i] != '&' {
			b.WriteByte(src[i])
			i++
			continue
		}
		r, size, err := decodeHTMLEntity(src[:to], i)
		if err != nil {
			return "", err
		}
		b.WriteRune(r)
		i += size
	}
	return b.String(), nil
}

// decodeHTMLEntity decodes the character reference starting at src[at] ("&")
// and reports how many bytes it spans.
func decodeHTMLEntity(src string, at int) (rune, int, error) {
	semi := strings.IndexByte(src[at:], ';')
	if semi < 2 || semi > 10 {
		return 0, 0, entityErrorf("Character \"&\" at byte offset %d is not part of an HTML entity; escape it as \"&amp;\"", at)
	}
	name := src[at+1 : at+semi]
	switch name {
	case "lt":
		return '<', semi + 1, nil
	case "gt":
		return '>', semi + 1, nil
	case "amp":
		return '&', semi + 1, nil
	case "quot":
		return '"', semi + 1, nil
	}
	if digits, ok := strings.CutPrefix(name, "#"); ok {
		base := 10
		if hex, ok := strings.CutPrefix(strings.ToLower(digits), "x"); ok {
			digits, base = hex, 16
		}
		v, err := strconv.ParseUint(digits, base, 32)
		if err == nil && v > 0 && v <= utf8.MaxRune && (v < 0xd800 || v > 0xdfff) {
			return rune(v), semi + 1, nil
		}
	}
	return 0, 0, entityErrorf("Unsupported HTML entity \"&%s;\" at byte offset %d; only &lt; &gt; &amp; &quot; and numeric entities are allowed", name, at)
}

// entityError is a parse failure worded as the server words it (capitalized,
// which is why it is not built with fmt.Errorf); the caller prefixes it with
// "Bad Request: can't parse entities: ".
type entityError string

func (e entityError) Error() string { return string(e) }

func entityErrorf(format string, args ...any) error {
	return entityError(fmt.Sprintf(format, args...))
}

func isHTMLSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// utf16Len is the length of s in UTF-16 code units, the unit of the Bot API's
// length limits and entity offsets.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// detectEntities finds the entities a Telegram client would attach to text a
// user typed: @mentions and /bot_commands.
func detectEntities(text string) []MessageEntity {
	var out []MessageEntity
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c != '@' && c != '/' {
			continue
		}
		if i > 0 {
			prev, _ := utf8.DecodeLastRuneInString(text[:i])
			if c == '@' && (isWordRune(prev) || prev == '@') || c == '/' && !isSpaceRune(prev) {
				continue
			}
		}
		end := scanWord(text, i+1)
		typ := "mention"
		if c == '@' {
			if n := end - i - 1; n < 4 || n > 32 {
				continue
			}
		} else {
			if n := end - i - 1; n < 1 || n > 64 {
				continue
			}
			typ = "bot_command"
			if end < len(text) && text[end] == '@' {
				if atEnd := scanWord(text, end+1); atEnd-end-1 >= 3 {
					end = atEnd
				}
			}
			if end < len(text) && text[end] == '/' {
				continue
			}
		}
		out = append(out, MessageEntity{Type: typ, Offset: utf16Len(text[:i]), Length: utf16Len(text[i:end])})
		i = end - 1
	}
	return out
}

// scanWord returns the end of the run of [A-Za-z0-9_] starting at from.
func scanWord(s string, from int) int {
	for from < len(s) && (isAlnum(s[from]) || s[from] == '_') {
		from++
	}
	return from
}

func isWordRune(r rune) bool {
	return r < utf8.RuneSelf && (isAlnum(byte(r)) || r == '_')
}

func isSpaceRune(r rune) bool {
	return r < utf8.RuneSelf && isHTMLSpace(byte(r))
}
