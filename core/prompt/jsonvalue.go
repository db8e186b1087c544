package prompt

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// This file writes the JSON of the untrusted and trusted blocks the way
// OpenClaw's JSON.stringify(value, null, 2) does: members in insertion
// order, absent members left out, two-space indentation. Strings are
// escaped a little more than JSON.stringify escapes them (invisible and
// bidirectional control characters become \u escapes), so a name can
// neither hide text nor span lines; the decoded value is the same.

// jsonKind is the type of one member value.
type jsonKind uint8

const (
	jsonString jsonKind = iota
	jsonTrue
	jsonNumber
	jsonObjects // an array of objects
	jsonStrings // an array of strings
	jsonNested  // an object, in objects[0]
)

// jsonMember is one member of an object.
type jsonMember struct {
	key     string
	kind    jsonKind
	str     string
	num     int64
	objects []jsonObject
	strings []string
}

// jsonObject is an object under construction; the zero value is empty.
type jsonObject struct {
	members []jsonMember
}

// str adds a string member unless v is empty, as JSON.stringify drops an
// undefined member.
func (o *jsonObject) str(key, v string) {
	if v == "" {
		return
	}
	o.members = append(o.members, jsonMember{key: key, kind: jsonString, str: v})
}

// flag adds a member with value true when v is true; false is left out.
func (o *jsonObject) flag(key string, v bool) {
	if v {
		o.members = append(o.members, jsonMember{key: key, kind: jsonTrue})
	}
}

// nested adds an object member unless v is empty.
func (o *jsonObject) nested(key string, v jsonObject) {
	if !v.empty() {
		o.members = append(o.members, jsonMember{key: key, kind: jsonNested, objects: []jsonObject{v}})
	}
}

// num adds a number member when ok.
func (o *jsonObject) num(key string, v int64, ok bool) {
	if ok {
		o.members = append(o.members, jsonMember{key: key, kind: jsonNumber, num: v})
	}
}

// strs adds an array of strings unless it is empty.
func (o *jsonObject) strs(key string, v []string) {
	if len(v) > 0 {
		o.members = append(o.members, jsonMember{key: key, kind: jsonStrings, strings: v})
	}
}

func (o *jsonObject) empty() bool { return len(o.members) == 0 }

// appendIndent appends n spaces.
func appendIndent(b []byte, n int) []byte {
	for range n {
		b = append(b, ' ')
	}
	return b
}

// appendObject appends o at the given indentation depth (in spaces).
// Untrusted strings go through sanitizeJSONString when untrusted is set.
func appendObject(b []byte, o *jsonObject, indent int, untrusted bool) []byte {
	if o.empty() {
		return append(b, "{}"...)
	}
	b = append(b, "{\n"...)
	for i := range o.members {
		m := &o.members[i]
		b = appendIndent(b, indent+2)
		b = appendJSONString(b, m.key)
		b = append(b, ": "...)
		switch m.kind {
		case jsonString:
			b = appendValueString(b, m.str, untrusted)
		case jsonTrue:
			b = append(b, "true"...)
		case jsonNumber:
			b = strconv.AppendInt(b, m.num, 10)
		case jsonObjects:
			b = appendObjectArray(b, m.objects, indent+2, untrusted)
		case jsonNested:
			b = appendObject(b, &m.objects[0], indent+2, untrusted)
		case jsonStrings:
			b = append(b, "[\n"...)
			for j, s := range m.strings {
				b = appendIndent(b, indent+4)
				b = appendValueString(b, s, untrusted)
				if j < len(m.strings)-1 {
					b = append(b, ',')
				}
				b = append(b, '\n')
			}
			b = appendIndent(b, indent+2)
			b = append(b, ']')
		}
		if i < len(o.members)-1 {
			b = append(b, ',')
		}
		b = append(b, '\n')
	}
	b = appendIndent(b, indent)
	return append(b, '}')
}

// appendObjectArray appends an array of objects at the given depth.
func appendObjectArray(b []byte, objs []jsonObject, indent int, untrusted bool) []byte {
	if len(objs) == 0 {
		return append(b, "[]"...)
	}
	b = append(b, "[\n"...)
	for i := range objs {
		b = appendIndent(b, indent+2)
		b = appendObject(b, &objs[i], indent+2, untrusted)
		if i < len(objs)-1 {
			b = append(b, ',')
		}
		b = append(b, '\n')
	}
	b = appendIndent(b, indent)
	return append(b, ']')
}

func appendValueString(b []byte, s string, untrusted bool) []byte {
	if untrusted {
		s = sanitizeJSONString(s)
	}
	return appendJSONString(b, s)
}

// sanitizeJSONString prepares a channel-supplied string for an untrusted
// block as OpenClaw's sanitizeUntrustedJsonValue does: NUL bytes removed,
// capped at MaxJSONStringChars UTF-16 units, then every ``` broken with a
// zero-width space so no value can close the fence around it. OpenClaw
// replaces each ``` once, which leaves ``` where two replacements meet in
// a longer run of backticks; here the replacement repeats until none is
// left (for a run of exactly three the result is OpenClaw's).
func sanitizeJSONString(s string) string {
	s = stripNUL(s)
	s = truncateUTF16(s, MaxJSONStringChars)
	for strings.Contains(s, "```") {
		s = strings.ReplaceAll(s, "```", "`\u200b``")
	}
	return s
}

// truncateUTF16 cuts s when it is longer than limit UTF-16 units, keeping
// limit-14 units (never half a surrogate pair), trimming trailing white
// space and appending "…[truncated]" (OpenClaw truncateUntrustedJsonString).
func truncateUTF16(s string, limit int) string {
	if len(s) <= limit || utf16Len(s) <= limit {
		return s
	}
	keep := max(0, limit-14)
	units := 0
	cut := 0
	for i, r := range s {
		n := utf16.RuneLen(r)
		if n < 0 {
			n = 1
		}
		if units+n > keep {
			cut = i
			break
		}
		units += n
		cut = i + utf8.RuneLen(r)
	}
	return strings.TrimRightFunc(s[:cut], isJSSpace) + truncatedSuffix
}

// utf16Len returns the length of s in UTF-16 code units, JavaScript's
// String.length.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 && r <= utf8.MaxRune {
			n += 2
		} else {
			n++
		}
	}
	return n
}

func stripNUL(s string) string {
	if strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(s, "\x00", "")
}

// isJSSpace reports whether r is white space to JavaScript's trim() and \s.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029,
		0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// jsTrim trims as JavaScript's String.prototype.trim does.
func jsTrim(s string) string { return strings.TrimFunc(s, isJSSpace) }

// metaString normalizes a metadata string (an id, a name, a label) as
// OpenClaw's normalizePromptMetadataString: trimmed, NUL bytes removed.
func metaString(s string) string { return jsTrim(stripNUL(s)) }

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string. Beyond the escapes JSON
// requires it escapes DEL and the C1 controls, the line and paragraph
// separators, and invisible format characters that can hide or reorder
// text (zero-width space, word joiner, BOM, bidirectional controls, Unicode
// tag characters). Invalid UTF-8 becomes U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != 0x7F {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = appendUnicodeEscape(b, rune(c))
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, "\ufffd"...)
			i += size
			start = i
			continue
		}
		if escapeInJSON(r) {
			b = append(b, s[start:i]...)
			if r >= 0x10000 {
				r1, r2 := utf16.EncodeRune(r)
				b = appendUnicodeEscape(b, r1)
				b = appendUnicodeEscape(b, r2)
			} else {
				b = appendUnicodeEscape(b, r)
			}
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

func appendUnicodeEscape(b []byte, r rune) []byte {
	return append(b, '\\', 'u',
		hexDigits[r>>12&0xF], hexDigits[r>>8&0xF], hexDigits[r>>4&0xF], hexDigits[r&0xF])
}

// escapeInJSON reports whether a non-ASCII rune is written as a \u escape.
func escapeInJSON(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9F: // C1 controls, NEL among them
		return true
	case r == 0x2028 || r == 0x2029:
		return true
	}
	return isHiddenFormat(r)
}

// isHiddenFormat reports invisible characters that can hide text or
// reorder how it displays: zero-width space, word joiner and BOM, soft
// hyphen, the bidirectional marks, embeddings, overrides and isolates, the
// Mongolian vowel separator, and the Unicode tag block. Zero-width
// (non-)joiners and variation selectors are kept: emoji and several
// scripts need them.
func isHiddenFormat(r rune) bool {
	switch {
	case r == 0x00AD, r == 0x061C, r == 0x180E, r == 0x200B, r == 0x200E, r == 0x200F,
		r == 0x2060, r == 0xFEFF:
		return true
	case r >= 0x202A && r <= 0x202E, r >= 0x2061 && r <= 0x2069:
		return true
	case r >= 0xE0000 && r <= 0xE007F:
		return true
	}
	return false
}
