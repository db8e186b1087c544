package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/token"
)

// syntaxError explains a YAML parser error in the words of the file: it
// finds the line the mistake is on (the parser often stops a line or more
// later, or at the start of a value that ran on), says in a sentence what is
// wrong there and what to write instead. A parser message it does not know
// is kept, with a hint where to look.
//
// The messages name keys but never quote a value: the file is not valid
// YAML, so its secrets cannot be told apart and scrubbed (SecretValues),
// and the gateway shows these messages to clients that see the file only
// redacted.
func syntaxError(file string, data []byte, err error) *Error {
	var ye yaml.Error
	if !errors.As(err, &ye) || ye.GetToken() == nil || ye.GetToken().Position == nil {
		return &Error{File: file, Message: "this is not valid YAML: " + err.Error()}
	}
	src := fileLines(splitLines(data))
	tk := ye.GetToken()
	at := pos{tk.Position.Line, tk.Position.Column}
	p, msg := src.explain(ye.GetMessage(), tk, at)
	if msg == "" {
		p, msg = at, fmt.Sprintf("this is not valid YAML (the parser says: %s); check the indentation, colons and quotes on this line and the one above", ye.GetMessage())
	}
	// A position outside the file would come from the parser's own
	// numbering disagreeing with ours; the parser's is then the safer one.
	if p.line < 1 || p.line > len(src) || p.col < 1 {
		p = at
	}
	return &Error{File: file, Line: p.line, Column: p.col, Message: msg}
}

// fileLines is a file's lines without their line ends, for reading the text
// around a syntax error.
type fileLines []string

// splitLines breaks data at \n, \r\n and a lone \r, as YAML does.
func splitLines(data []byte) []string {
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	return strings.Split(strings.ReplaceAll(s, "\r", "\n"), "\n")
}

// line returns line n (1-based), or "" outside the file.
func (s fileLines) line(n int) string {
	if n < 1 || n > len(s) {
		return ""
	}
	return s[n-1]
}

// explain dispatches on the parser's message. It returns "" when the
// message is not one it knows or the text around does not fit it.
func (s fileLines) explain(msg string, tk *token.Token, at pos) (pos, string) {
	switch {
	case strings.Contains(msg, "'\t'") || strings.Contains(msg, "tab character"):
		return s.tab(at)
	case strings.HasPrefix(msg, "could not find end character of double-quoted text"):
		return s.unclosedQuote(at, '"')
	case strings.HasPrefix(msg, "could not find end character of single-quoted text"):
		return s.unclosedQuote(at, '\'')
	case strings.Contains(msg, "escape"):
		return s.badEscape(at)
	case strings.HasSuffix(msg, "is a reserved character"):
		return s.reserved(at)
	case msg == "non-map value is specified":
		return s.notAKey(tk, at)
	case msg == "mapping value is not allowed in this context":
		return s.extraColon(tk, at)
	case strings.HasPrefix(msg, "value is not allowed in this context"):
		if p, m := s.afterQuote(tk, at); m != "" {
			return p, m
		}
		return s.misplaced(at.line)
	case strings.HasPrefix(msg, "invalid header option"):
		return s.startsWith(at, "|>", "begins a block of text on the lines below")
	case strings.HasPrefix(msg, "undefined anchor"):
		return s.startsWith(at, "&", "names an anchor (a value to reuse elsewhere as *name)")
	case strings.HasPrefix(msg, "undefined alias"):
		return s.startsWith(at, "*", "refers to an anchor (&name)")
	case msg == "could not find flow map content":
		return s.unclosedFlow(tk, at, token.MappingStartType)
	case msg == "',' or ']' must be specified", msg == "sequence end token ']' not found":
		return s.unclosedFlow(tk, at, token.SequenceStartType)
	case msg == "',' or '}' must be specified", msg == "could not find flow mapping end token '}'":
		return s.unclosedFlow(tk, at, token.MappingStartType)
	case strings.HasPrefix(msg, "could not find '[' character"):
		return at, `a "]" with no "[" before it; remove it, or start the list with "["`
	case strings.HasPrefix(msg, "could not find '{' character"):
		return at, `a "}" with no "{" before it; remove it, or start the mapping with "{"`
	case msg == "unexpected key name":
		return s.keyWithoutColon(tk, at)
	}
	return at, ""
}

// tab reports a tab in a line's indentation, or elsewhere where YAML
// wants a space. The parser names the line the tab is on, or the one
// before it.
func (s fileLines) tab(at pos) (pos, string) {
	for l := at.line; l <= at.line+1 && l <= len(s); l++ {
		if i := strings.IndexByte(leadingSpace(s.line(l)), '\t'); i >= 0 {
			return pos{l, i + 1}, "this line is indented with a tab; YAML indents with spaces only: replace the tab with spaces"
		}
	}
	for l := at.line; l <= at.line+1 && l <= len(s); l++ {
		if i := strings.IndexByte(s.line(l), '\t'); i >= 0 {
			return pos{l, runeCol(s.line(l), i)}, "a tab where YAML needs a space: replace the tab with a space"
		}
	}
	return at, ""
}

// unclosedQuote reports a quoted value that never ends; in double quotes
// the usual cause is a backslash (a Windows path) starting an escape.
func (s fileLines) unclosedQuote(at pos, quote byte) (pos, string) {
	text := s.line(at.line)
	i := byteIndexAtCol(text, at.col)
	if i < 0 || i >= len(text) || text[i] != quote {
		i = strings.IndexByte(text, quote)
	}
	if i < 0 {
		return at, ""
	}
	if quote == '"' {
		if b := strings.IndexByte(text[i:], '\\'); b >= 0 {
			return pos{at.line, runeCol(text, i+b)}, `a backslash in double quotes starts an escape (\n, \t, \u…), so this value does not end where it seems to; write it in single quotes, where a backslash is plain text, or double each backslash (\\)`
		}
	}
	return pos{at.line, runeCol(text, i)}, fmt.Sprintf(`the quote (%c) that opens this value is never closed; add the closing %c at the end of the value`, quote, quote)
}

// badEscape reports an escape sequence double quotes do not know; the
// parser points at the character after the backslash.
func (s fileLines) badEscape(at pos) (pos, string) {
	text := s.line(at.line)
	i := byteIndexAtCol(text, at.col)
	if i < 0 || i > len(text) {
		return at, ""
	}
	b := strings.LastIndexByte(text[:min(i+1, len(text))], '\\')
	if b < 0 {
		return at, ""
	}
	return pos{at.line, runeCol(text, b)}, `this backslash starts an escape YAML does not know in double quotes (it knows \n, \t, \", \\, \u…); write the value in single quotes, where a backslash is plain text, or double the backslash (\\)`
}

// reserved reports a plain value starting with @ or `, which YAML keeps
// for future use.
func (s fileLines) reserved(at pos) (pos, string) {
	text := s.line(at.line)
	i := byteIndexAtCol(text, at.col)
	if i < 0 || i >= len(text) || (text[i] != '@' && text[i] != '`') {
		i = strings.IndexAny(text, "@`")
	}
	if i < 0 {
		return at, ""
	}
	return pos{at.line, runeCol(text, i)}, fmt.Sprintf("a value cannot start with %c in YAML; put the value in quotes: %s", text[i], quotedExample(text, text[i]))
}

// startsWith reports a plain value starting with one of the characters
// in chars, which YAML reads as syntax (what it does).
func (s fileLines) startsWith(at pos, chars, does string) (pos, string) {
	text := s.line(at.line)
	i := byteIndexAtCol(text, at.col)
	if i < 0 || i >= len(text) || !strings.ContainsRune(chars, rune(text[i])) {
		i = strings.IndexAny(text, chars)
	}
	if i < 0 {
		return at, ""
	}
	return pos{at.line, runeCol(text, i)}, fmt.Sprintf("a value starting with %c %s; if the %c is part of the value, put the value in quotes: %s", text[i], does, text[i], quotedExample(text, text[i]))
}

// afterQuote reports text after the closing quote of a quoted value on the
// same line, usually a quote inside the value that ended it early.
func (s fileLines) afterQuote(tk *token.Token, at pos) (pos, string) {
	prev := tk.Prev
	if prev == nil || prev.Position == nil || prev.Position.Line != at.line {
		return at, ""
	}
	switch prev.Type {
	case token.DoubleQuoteType:
		return at, `text after the closing quote of this value; to write a " inside double quotes, put a backslash before it (\"), or quote the value with single quotes instead`
	case token.SingleQuoteType:
		return at, `text after the closing quote of this value; to write a ' inside single quotes, double it (''), or quote the value with double quotes instead`
	}
	return at, ""
}

// notAKey reports a line among a mapping's keys that is no "key: value":
// a list item, a stray bracket, or text without a colon.
func (s fileLines) notAKey(tk *token.Token, at pos) (pos, string) {
	text := s.line(at.line)
	content := stripComment(strings.TrimSpace(text))
	switch tk.Type {
	case token.SequenceEntryType:
		return at, fmt.Sprintf(`a list item ("- …") among the keys of %s; remove the "-" to make it a key, or put the list under a key of its own`, s.parentName(at.line))
	case token.SequenceEndType:
		return at, `a "]" with no "[" before it; remove it, or start the list with "["`
	case token.MappingEndType:
		return at, `a "}" with no "{" before it; remove it, or start the mapping with "{"`
	}
	if content == "" {
		return at, ""
	}
	if k, v, ok := strings.Cut(content, ":"); ok && k != "" && v != "" && !strings.HasPrefix(v, " ") {
		if quotable(k) {
			return at, fmt.Sprintf(`a key needs a space after its colon: write "%s: " and then the value`, k)
		}
		return at, "a key needs a space after its colon: write a space between the colon and the value"
	}
	if fields := strings.Fields(content); len(fields) > 1 && quotable(fields[0]) {
		return at, fmt.Sprintf(`this line is not a "key: value" pair; if %q is a key, write "%s: " and then the value, or remove the line`, fields[0], fields[0])
	}
	return at, `this line is not a "key: value" pair; write a key, a colon and a space before the value, or remove the line`
}

// extraColon reports a ":" the parser found inside a value: a second
// "key: value" on one line, or a line indented under a key that already
// has a value (the parser reads that line as more of the value and stops
// only at its colon).
func (s fileLines) extraColon(tk *token.Token, at pos) (pos, string) {
	colon := tk.Next
	if colon == nil || colon.Type != token.MappingValueType || colon.Position == nil {
		return at, ""
	}
	start := at.line
	if tk.Prev != nil && tk.Prev.Position != nil && tk.Prev.Type == token.MappingValueType {
		start = tk.Prev.Position.Line
	}
	if colon.Position.Line == start {
		text := s.line(start)
		key, value, ok := splitKey(strings.TrimSpace(text))
		if !ok || value == "" {
			return pos{colon.Position.Line, colon.Position.Column}, `a second ":" on this line; a line holds one "key: value", so quote a value that contains ": "`
		}
		return pos{colon.Position.Line, colon.Position.Column}, fmt.Sprintf(`the value of %q contains ": ", which YAML reads as another key; put the whole value in quotes (%s: "…"), or, if it starts a key of its own, put that on a line of its own, indented under %q`, key, key, key)
	}
	// The first line after the key's that has text is the one indented
	// too far.
	for l := start + 1; l <= colon.Position.Line && l <= len(s); l++ {
		if strings.TrimSpace(s.line(l)) != "" {
			if strings.HasPrefix(strings.TrimSpace(s.line(l)), ":") {
				return pos{l, len(leadingSpace(s.line(l))) + 1}, `a ":" with no key before it; write the key's name before the colon`
			}
			return s.misplaced(l)
		}
	}
	return at, ""
}

// misplaced explains why line l does not fit where it is: indented under a
// key that already has a value, indented to a depth no key above it has,
// or a key beside list items.
func (s fileLines) misplaced(l int) (pos, string) {
	text := s.line(l)
	lead := leadingSpace(text)
	here := pos{l, len(lead) + 1}
	if i := strings.IndexByte(lead, '\t'); i >= 0 {
		return pos{l, i + 1}, "this line is indented with a tab; YAML indents with spaces only: replace the tab with spaces"
	}
	prev := s.previousContent(l)
	if prev == 0 {
		return here, ""
	}
	c, p := len(lead), indentOf(s.line(prev))
	name := describeLine(text)
	prevText := stripComment(strings.TrimSpace(s.line(prev)))
	switch {
	case c > p:
		key, value, ok := splitKey(strings.TrimPrefix(prevText, "- "))
		if !ok || value == "" {
			return here, ""
		}
		indent := p
		if strings.HasPrefix(prevText, "- ") {
			indent = p + 2
		}
		return here, fmt.Sprintf("%s is indented more than %q on line %d, which already has a value; indent it like %q (%s)",
			name, key, prev, key, spaces(indent))
	case c < p:
		levels := s.enclosing(prev)
		for _, lv := range levels {
			if lv.indent == c {
				return s.mixed(l, lv.line)
			}
		}
		var deeper, shallower *level
		for i := range levels {
			lv := &levels[i]
			if lv.indent > c && (deeper == nil || lv.indent < deeper.indent) {
				deeper = lv
			}
			if lv.indent < c && (shallower == nil || lv.indent > shallower.indent) {
				shallower = lv
			}
		}
		if deeper == nil {
			return here, ""
		}
		msg := fmt.Sprintf("%s is indented %s, which lines up with nothing above it; indent it %s to put it beside %s (line %d)",
			name, spaces(c), spaces(deeper.indent), deeper.name, deeper.line)
		if shallower != nil {
			msg += fmt.Sprintf(", or %d to put it beside %s (line %d)", shallower.indent, shallower.name, shallower.line)
		}
		return here, msg
	default:
		return s.mixed(l, prev)
	}
}

// mixed explains line l, which is indented like line other, when one of
// them is a list item and the other a key.
func (s fileLines) mixed(l, other int) (pos, string) {
	text := stripComment(strings.TrimSpace(s.line(l)))
	here := pos{l, indentOf(s.line(l)) + 1}
	otherText := stripComment(strings.TrimSpace(s.line(other)))
	itemHere, itemThere := strings.HasPrefix(text, "-"), strings.HasPrefix(otherText, "-")
	switch {
	case itemHere && !itemThere:
		return here, fmt.Sprintf(`a list item ("- …") among the keys of %s; remove the "-" to make it a key, or put the list under a key of its own`, s.parentName(l))
	case !itemHere && itemThere:
		key, _, ok := splitKey(text)
		if !ok {
			return here, ""
		}
		msg := fmt.Sprintf("%q is a key, but line %d at the same indentation is a list item, and a section holds keys or list items, not both", key, other)
		if itemKey, _, ok := splitKey(strings.TrimSpace(strings.TrimPrefix(otherText, "-"))); ok {
			msg += fmt.Sprintf("; to add %q to that item, indent it 2 more spaces, like %q", key, itemKey)
		}
		return here, msg
	}
	return here, ""
}

// level is a line that opens an indentation depth: a key, or a list item.
type level struct {
	indent, line int
	name         string
}

// enclosing lists the depths open at line l: l's own, then each shallower
// one above it, nearest first.
func (s fileLines) enclosing(l int) []level {
	out := []level{{indentOf(s.line(l)), l, describeLine(s.line(l))}}
	for i := l - 1; i >= 1; i-- {
		text := s.line(i)
		if isBlankOrComment(text) {
			continue
		}
		if c := indentOf(text); c < out[len(out)-1].indent {
			out = append(out, level{c, i, describeLine(text)})
			if c == 0 {
				break
			}
		}
	}
	return out
}

// parentName names the key whose value holds line l, for messages:
// `"gateway"`, or "the top level".
func (s fileLines) parentName(l int) string {
	c := indentOf(s.line(l))
	for i := l - 1; i >= 1; i-- {
		text := s.line(i)
		if isBlankOrComment(text) || indentOf(text) >= c {
			continue
		}
		if key, _, ok := splitKey(strings.TrimPrefix(stripComment(strings.TrimSpace(text)), "- ")); ok {
			return strconv.Quote(key)
		}
		break
	}
	return "the top level"
}

// unclosedFlow reports a "[" or "{" without its closing bracket, or, when
// the parser stopped on the line of the previous item, a missing comma.
func (s fileLines) unclosedFlow(tk *token.Token, at pos, open token.Type) (pos, string) {
	opener := tk
	if tk.Type != token.SequenceStartType && tk.Type != token.MappingStartType {
		if prev := tk.Prev; prev != nil && prev.Position != nil && prev.Position.Line == at.line &&
			prev.Type != token.SequenceStartType && prev.Type != token.MappingStartType && prev.Type != token.CollectEntryType {
			kind, closer := "list", "]"
			if open == token.MappingStartType {
				kind, closer = "mapping", "}"
			}
			return at, fmt.Sprintf("expected \",\" or %q before this item; separate the items of a %s with commas and end it with %q", closer, kind, closer)
		}
		opener = innermostOpen(tk)
	}
	if opener == nil || opener.Position == nil {
		return at, ""
	}
	kind, openCh, closer := "list", "[", "]"
	if opener.Type == token.MappingStartType {
		kind, openCh, closer = "mapping", "{", "}"
	}
	return pos{opener.Position.Line, opener.Position.Column}, fmt.Sprintf("the %s opened with %q here is never closed; add %q after its last item (or, for a value that starts with %q, put the value in quotes)", kind, openCh, closer, openCh)
}

// innermostOpen returns the "[" or "{" before tk that is not closed
// before it, or nil.
func innermostOpen(tk *token.Token) *token.Token {
	depth := 0
	for t := tk.Prev; t != nil; t = t.Prev {
		switch t.Type {
		case token.SequenceEndType, token.MappingEndType:
			depth++
		case token.SequenceStartType, token.MappingStartType:
			if depth == 0 {
				return t
			}
			depth--
		}
	}
	return nil
}

// keyWithoutColon reports a key the parser read together with the next
// line because it has no colon.
func (s fileLines) keyWithoutColon(tk *token.Token, at pos) (pos, string) {
	if !strings.Contains(strings.TrimSpace(tk.Origin), "\n") {
		return at, ""
	}
	text := stripComment(strings.TrimSpace(s.line(at.line)))
	if text == "" || strings.Contains(text, ":") {
		return at, ""
	}
	here := pos{at.line, indentOf(s.line(at.line)) + 1}
	if quotable(text) {
		return here, fmt.Sprintf("%q has no colon; write %q to give it the keys below", text, text+":")
	}
	return here, "this line has no colon; write the key with a colon after it to give it the keys below"
}

// previousContent returns the nearest line above l with something other
// than a comment, or 0.
func (s fileLines) previousContent(l int) int {
	for i := l - 1; i >= 1; i-- {
		if !isBlankOrComment(s.line(i)) {
			return i
		}
	}
	return 0
}

// describeLine names what a line holds without quoting a value: `"port"`
// for a key, "the list item" for a list item, else "this line".
func describeLine(text string) string {
	content := stripComment(strings.TrimSpace(text))
	if strings.HasPrefix(content, "-") {
		return "the list item"
	}
	if key, _, ok := splitKey(content); ok {
		return strconv.Quote(key)
	}
	return "the line"
}

// splitKey splits `key: value` (or `key:`) into its key, unquoted, and its
// value without a trailing comment.
func splitKey(content string) (key, value string, ok bool) {
	var k, v string
	if strings.HasSuffix(content, ":") {
		k = strings.TrimSuffix(content, ":")
	} else if k, v, ok = strings.Cut(content, ": "); !ok {
		return "", "", false
	}
	k = strings.TrimSpace(k)
	if u, err := strconv.Unquote(k); err == nil {
		k = u
	} else if len(k) >= 2 && k[0] == '\'' && k[len(k)-1] == '\'' {
		k = k[1 : len(k)-1]
	}
	if k == "" {
		return "", "", false
	}
	return k, stripComment(strings.TrimSpace(v)), true
}

// stripComment removes a trailing " # comment". A "#" inside quotes is
// rare enough in a key or short value that the approximation serves.
func stripComment(s string) string {
	if strings.HasPrefix(s, "#") {
		return ""
	}
	if i := strings.Index(s, " #"); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// quotedExample shows the line's value quoted without quoting it: `key:
// "@…"` for a value starting with c.
func quotedExample(line string, c byte) string {
	example := fmt.Sprintf(`"%c…"`, c)
	if key, _, ok := splitKey(strings.TrimSpace(line)); ok {
		example = key + ": " + example
	}
	return example
}

// quotable reports whether text from a line that is no "key: value" may
// be quoted in a message: a short word that looks like a key. A secret
// pasted on a line of its own (an API key, a bot token) is longer, or has
// characters a key does not.
func quotable(s string) bool {
	return len(s) <= 32 && isKeyName(s)
}

// isKeyName reports whether s looks like a configuration key: a letter
// followed by letters, digits, "_" or "-".
func isKeyName(s string) bool {
	for i, r := range s {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (i == 0 || !(r >= '0' && r <= '9' || r == '_' || r == '-')) {
			return false
		}
	}
	return s != ""
}

func isBlankOrComment(text string) bool {
	t := strings.TrimSpace(text)
	return t == "" || strings.HasPrefix(t, "#")
}

// leadingSpace returns the spaces and tabs a line starts with.
func leadingSpace(text string) string {
	return text[:len(text)-len(strings.TrimLeft(text, " \t"))]
}

func indentOf(text string) int { return len(leadingSpace(text)) }

func spaces(n int) string {
	if n == 1 {
		return "1 space"
	}
	return fmt.Sprintf("%d spaces", n)
}

// runeCol is the 1-based column of byte offset i in text, counted in
// characters as the parser counts them.
func runeCol(text string, i int) int {
	return utf8.RuneCountInString(text[:i]) + 1
}

// byteIndexAtCol is the byte offset of 1-based character column col in
// text: len(text) just past its end, -1 further out.
func byteIndexAtCol(text string, col int) int {
	n := 1
	for i := range text {
		if n == col {
			return i
		}
		n++
	}
	if n == col {
		return len(text)
	}
	return -1
}
