package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// Redacted stands in for a secret in what RedactSource and RedactedJSON
// return. RestoreSecrets turns it back into the secret the file holds, so a
// client can read a redacted configuration, edit it and write it back
// without knowing the secrets in it.
const Redacted = "__REDACTED__"

// A secret is the value of a field tagged `config:"secret"` (for example
// gateway.auth.token), or any value beneath such a field. A secret written
// only as references to the environment ("${NAME}", or "${NAME:-}" with an
// empty default) is not secret in the file: the file shows where the value
// comes from, not the value.

// minSecretLen is the shortest secret searched for in free text (comments,
// messages). Shorter values would match ordinary words and keys; no secret
// the gateway accepts is that short.
const minSecretLen = 4

// secretScalar is a scalar written in a file at a secret key.
type secretScalar struct {
	path  string
	node  ast.Node // the scalar itself, anchors, tags and aliases followed
	value string   // as written, before ${VAR} expansion
}

// secretScalars finds the scalars of data at secret keys, following anchors,
// aliases and merge keys as the decoder does. Problems other than invalid
// YAML (unknown keys, wrong types) are not reported here; Parse does that.
func secretScalars(name string, data []byte) ([]secretScalar, Errors) {
	return secretScalarsOf(name, data, reflect.TypeFor[Config]())
}

// secretScalarsOf is secretScalars for a file that holds a root, the type
// whose keys and secret tags say where the secrets are.
func secretScalarsOf(name string, data []byte, root reflect.Type) ([]secretScalar, Errors) {
	d, body, errs := parseDocument(name, data)
	if errs != nil {
		return nil, errs
	}
	if body == nil {
		return nil, nil
	}
	w := &secretWalker{d: d}
	w.walk(body, root, "", false)
	return w.found, nil
}

type secretWalker struct {
	d     *decoder
	found []secretScalar
}

// walk visits n, which holds a value of type t (nil: untyped, as in an
// `any` field); secret says whether n is at or beneath a secret key.
func (w *secretWalker) walk(n ast.Node, t reflect.Type, path string, secret bool) {
	d := w.d
	if d.depth >= maxDepth {
		return
	}
	d.depth++
	defer func() { d.depth-- }()
	n, _ = d.follow(n)
	if n == nil {
		return
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && reflect.PointerTo(t).Implements(textUnmarshalerType) {
		t = nil // a scalar
	}
	switch v := n.(type) {
	case *ast.NullNode:
		return
	case *ast.MappingNode, *ast.MappingValueNode:
		entries, _ := d.mappingEntries(v, path)
		var fields structFields
		if t != nil && t.Kind() == reflect.Struct {
			fields = fieldsOf(t)
		}
		for _, mv := range entries {
			key := keyString(mv.Key)
			p := joinPath(path, key)
			switch {
			case t == nil:
				w.walk(mv.Value, nil, p, secret)
			case t.Kind() == reflect.Struct:
				if f, ok := fields.byName[key]; ok {
					w.walk(mv.Value, f.sf.Type, p, secret || f.sf.Tag.Get("config") == "secret")
				}
			case t.Kind() == reflect.Map:
				w.walk(mv.Value, t.Elem(), p, secret)
			default:
				w.walk(mv.Value, nil, p, secret)
			}
		}
	case *ast.SequenceNode:
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i, e := range v.Values {
			w.walk(e, elem, fmt.Sprintf("%s[%d]", path, i), secret)
		}
	default:
		if !secret {
			return
		}
		if s, ok := scalarValue(n); ok {
			w.found = append(w.found, secretScalar{path: path, node: n, value: s})
		}
	}
}

// scalarValue returns the text of a scalar node as the decoder reads it,
// before ${VAR} expansion.
func scalarValue(n ast.Node) (string, bool) {
	switch v := n.(type) {
	case *ast.StringNode:
		return v.Value, true
	case *ast.LiteralNode:
		return v.Value.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		return n.GetToken().Value, true
	}
	return "", false
}

// envOnly reports whether s consists only of environment references without
// a default ("${A}", "${A}${B}"), or with an empty one ("${A:-}"): text that
// names where a secret comes from and holds none of it.
func envOnly(s string) bool {
	if s == "" {
		return false
	}
	for rest := s; rest != ""; {
		if !strings.HasPrefix(rest, "${") || strings.HasPrefix(rest, "$${") {
			return false
		}
		end := strings.IndexByte(rest, '}')
		if end < 0 {
			return false
		}
		ref := rest[2:end]
		name, def, _ := strings.Cut(ref, ":-")
		if !validEnvName(name) || def != "" {
			return false
		}
		rest = rest[end+1:]
	}
	return true
}

// SecretValues returns the secrets in data: the value at every secret key,
// as written (unless it only references the environment) and after ${VAR}
// expansion with lookup (nil means os.LookupEnv). Use it to keep secrets out
// of text derived from the file, such as error messages. Invalid YAML gives
// none.
func SecretValues(data []byte, lookup LookupEnv) []string {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	found, _ := secretScalars("", data)
	var out []string
	for _, s := range found {
		if !envOnly(s.value) && s.value != "" {
			out = append(out, s.value)
		}
		if v, _, err := expandEnv(s.value, lookup); err == nil && v != "" && v != s.value {
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return compactStrings(out)
}

func compactStrings(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// Scrub replaces every occurrence in s of each of secrets (as SecretValues
// returns them) with Redacted, longest first. Values shorter than four bytes
// are left alone: they would match ordinary words.
func Scrub(s string, secrets []string) string {
	for _, v := range bySizeDesc(secrets) {
		if len(v) >= minSecretLen {
			s = strings.ReplaceAll(s, v, Redacted)
		}
	}
	return s
}

func bySizeDesc(s []string) []string {
	out := append([]string(nil), s...)
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// RedactSource returns the configuration file text data with every secret
// replaced by "__REDACTED__" (a double-quoted Redacted), keeping everything
// else (comments, layout, ${VAR} references) as written. A secret that also
// appears elsewhere in the text, in a comment say, is replaced there too, as
// is the value a secret reference expands to with lookup (nil means
// os.LookupEnv). It fails when data is not valid YAML, or when a secret
// cannot be located exactly; the text must then not be shown.
func RedactSource(data []byte, lookup LookupEnv) ([]byte, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	found, errs := secretScalars("", data)
	if errs != nil {
		return nil, errs
	}
	src := newSource(data)
	var reps []replacement
	var values []string
	for _, s := range found {
		if v, _, err := expandEnv(s.value, lookup); err == nil && v != "" {
			values = append(values, v)
		}
		if envOnly(s.value) {
			continue
		}
		values = append(values, s.value)
		start, end, err := src.span(s.node)
		if err != nil {
			return nil, fmt.Errorf("config: redact %s: %w", s.path, err)
		}
		reps = append(reps, replacement{start: start, end: end, text: quoteYAML(Redacted)})
	}
	out, err := src.replace(reps)
	if err != nil {
		return nil, fmt.Errorf("config: redact: %w", err)
	}
	for _, v := range bySizeDesc(values) {
		if len(v) >= minSecretLen {
			out = bytes.ReplaceAll(out, []byte(v), []byte(Redacted))
		}
	}
	return out, nil
}

// RestoreSecrets returns data, a new configuration file text, with each
// secret written as Redacted replaced by the value old (the file's current
// text) has at the same key, as written there (a ${VAR} reference stays
// one). name labels positions in errors. It returns Errors when a Redacted
// secret has no value in old to keep, or when Redacted appears anywhere else
// (inside a longer value, say): writing the placeholder would lose a secret.
func RestoreSecrets(name string, data, old []byte) ([]byte, error) {
	if !bytes.Contains(data, []byte(Redacted)) {
		return data, nil
	}
	found, errs := secretScalars(name, data)
	if errs != nil {
		return nil, errs
	}
	oldFound, oldErrs := secretScalars("", old)
	previous := map[string]string{}
	for _, s := range oldFound {
		previous[s.path] = s.value
	}
	src := newSource(data)
	var reps []replacement
	var problems Errors
	for _, s := range found {
		if strings.TrimSpace(s.value) != Redacted {
			continue
		}
		p := posOf(s.node)
		v, ok := previous[s.path]
		if !ok {
			msg := fmt.Sprintf("%s stands for a secret, but the current file has no value here to keep; write the value itself", Redacted)
			if oldErrs != nil {
				msg = fmt.Sprintf("%s stands for a secret, but the current file is not valid YAML, so its value cannot be kept; write the value itself", Redacted)
			}
			problems = append(problems, &Error{File: name, Line: p.line, Column: p.col, Path: s.path, Message: msg})
			continue
		}
		start, end, err := src.span(s.node)
		if err != nil {
			problems = append(problems, &Error{File: name, Line: p.line, Column: p.col, Path: s.path, Message: fmt.Sprintf("cannot locate %s to put the secret back (%v); write the value itself", Redacted, err)})
			continue
		}
		reps = append(reps, replacement{start: start, end: end, text: quoteYAML(v)})
	}
	if len(problems) > 0 {
		return nil, problems.sorted()
	}
	out, err := src.replace(reps)
	if err != nil {
		// Two keys share one anchored placeholder but had different secrets.
		return nil, Errors{{File: name, Message: fmt.Sprintf("cannot put the secrets back in place of %s: %v; write the values themselves", Redacted, err)}}
	}
	if problems := leftoverPlaceholders(name, out); len(problems) > 0 {
		return nil, problems
	}
	return out, nil
}

// leftoverPlaceholders reports every value of data that still contains
// Redacted.
func leftoverPlaceholders(name string, data []byte) Errors {
	d, body, errs := parseDocument(name, data)
	if errs != nil {
		return errs
	}
	var problems Errors
	var visit func(n ast.Node, path string)
	visit = func(n ast.Node, path string) {
		if d.depth >= maxDepth {
			return
		}
		d.depth++
		defer func() { d.depth-- }()
		switch v := n.(type) {
		case nil, *ast.AliasNode:
			// An alias shows its anchor's value, which is visited where
			// it is written.
		case *ast.AnchorNode:
			visit(v.Value, path)
		case *ast.TagNode:
			visit(v.Value, path)
		case *ast.MappingNode:
			for _, mv := range v.Values {
				visit(mv, path)
			}
		case *ast.MappingValueNode:
			p := path
			if _, merge := v.Key.(*ast.MergeKeyNode); !merge {
				p = joinPath(path, keyString(v.Key))
			}
			visit(v.Value, p)
		case *ast.SequenceNode:
			for i, e := range v.Values {
				visit(e, fmt.Sprintf("%s[%d]", path, i))
			}
		default:
			if s, ok := scalarValue(n); ok && strings.Contains(s, Redacted) {
				p := posOf(n)
				problems = append(problems, &Error{File: name, Line: p.line, Column: p.col, Path: path,
					Message: fmt.Sprintf("contains the placeholder %s, which only a secret's whole value may be; write the real value", Redacted)})
			}
		}
	}
	visit(body, "")
	return problems
}

// quoteYAML writes s as a double-quoted scalar. A JSON string is one, and
// fits wherever a value does: a block mapping, a flow mapping or JSON.
func quoteYAML(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// RedactedJSON returns the configuration as JSON with every secret that is
// set replaced by Redacted, whatever its source: after ${VAR} expansion a
// value from the environment is as secret as one written in the file.
func (c *Config) RedactedJSON() (json.RawMessage, error) {
	return redactedJSON(c)
}

// redactedJSON is RedactedJSON for v, a pointer to any configuration
// struct: the JSON encoding of *v with its secrets redacted.
func redactedJSON(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("config: encode: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, fmt.Errorf("config: encode: %w", err)
	}
	out, err := json.Marshal(redactTree(tree, reflect.TypeOf(v), false))
	if err != nil {
		return nil, fmt.Errorf("config: encode: %w", err)
	}
	return out, nil
}

// redactTree redacts the JSON form v of a value of type t. encoding/json
// promotes an embedded struct's keys as fieldsOf does, so a secret there is
// found under its promoted key.
func redactTree(v any, t reflect.Type, secret bool) any {
	if secret {
		return redactAll(v)
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(textUnmarshalerType) {
		return v
	}
	switch t.Kind() {
	case reflect.Struct:
		if m, ok := v.(map[string]any); ok {
			for _, f := range fieldsOf(t).list {
				if fv, ok := m[f.name]; ok {
					m[f.name] = redactTree(fv, f.sf.Type, f.sf.Tag.Get("config") == "secret")
				}
			}
		}
	case reflect.Map:
		if m, ok := v.(map[string]any); ok {
			for k, e := range m {
				m[k] = redactTree(e, t.Elem(), false)
			}
		}
	case reflect.Slice, reflect.Array:
		if l, ok := v.([]any); ok {
			for i, e := range l {
				l[i] = redactTree(e, t.Elem(), false)
			}
		}
	}
	return v
}

// redactAll replaces every value set beneath a secret key.
func redactAll(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		if x == "" {
			return x
		}
		return Redacted
	case map[string]any:
		for k, e := range x {
			x[k] = redactAll(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = redactAll(e)
		}
		return x
	}
	return Redacted
}

// source is file text indexed by line, to turn the parser's line:column
// positions (columns count characters) into byte offsets.
type source struct {
	data  []byte
	lines []int // byte offset of each line's start
}

func newSource(data []byte) *source {
	s := &source{data: data, lines: []int{0}}
	for i, c := range data {
		if c == '\n' {
			s.lines = append(s.lines, i+1)
		}
	}
	return s
}

// offset converts a 1-based line and column into a byte offset.
func (s *source) offset(p *token.Position) (int, bool) {
	if p == nil || p.Line < 1 || p.Line > len(s.lines) || p.Column < 1 {
		return 0, false
	}
	off := s.lines[p.Line-1]
	for range p.Column - 1 {
		if off >= len(s.data) || s.data[off] == '\n' {
			return 0, false
		}
		_, size := utf8.DecodeRune(s.data[off:])
		off += size
	}
	return off, true
}

// span returns the bytes that hold the scalar n: from its first character
// to the last one before the next token, trailing space left out. It checks
// the result looks like the scalar (quotes, block indicator, first
// character), so a position the parser got wrong fails instead of cutting
// the wrong text.
func (s *source) span(n ast.Node) (int, int, error) {
	first, last := n.GetToken(), n.GetToken()
	if l, ok := n.(*ast.LiteralNode); ok && l.Value != nil {
		first, last = l.Start, l.Value.GetToken()
	}
	if first == nil || last == nil {
		return 0, 0, fmt.Errorf("value has no position")
	}
	start, ok := s.offset(first.Position)
	if !ok {
		return 0, 0, fmt.Errorf("value position %s is outside the file", first.Position)
	}
	// After a tag (!!str) the parser's column is one short. No scalar
	// starts with a space.
	for start < len(s.data) && (s.data[start] == ' ' || s.data[start] == '\t') {
		start++
	}
	end := len(s.data)
	if next := last.Next; next != nil {
		e, ok := s.offset(next.Position)
		if !ok || e < start {
			return 0, 0, fmt.Errorf("value end at %s is not after its start", next.Position)
		}
		end = e
	}
	for end > start && strings.ContainsRune(" \t\r\n", rune(s.data[end-1])) {
		end--
	}
	text := string(s.data[start:end])
	var good bool
	switch first.Type {
	case token.DoubleQuoteType:
		good = len(text) >= 2 && text[0] == '"' && text[len(text)-1] == '"'
	case token.SingleQuoteType:
		good = len(text) >= 2 && text[0] == '\'' && text[len(text)-1] == '\''
	case token.LiteralType:
		good = strings.HasPrefix(text, "|")
	case token.FoldedType:
		good = strings.HasPrefix(text, ">")
	default:
		r, _ := utf8.DecodeRuneInString(first.Value)
		good = text != "" && strings.HasPrefix(text, string(r))
	}
	if !good {
		return 0, 0, fmt.Errorf("value at line %d column %d could not be located exactly", first.Position.Line, first.Position.Column)
	}
	return start, end, nil
}

// replacement puts text in place of data[start:end].
type replacement struct {
	start, end int
	text       string
}

// replace applies reps, which may list one span several times (a secret
// reached through several aliases) but only with the same text.
func (s *source) replace(reps []replacement) ([]byte, error) {
	sort.Slice(reps, func(i, j int) bool { return reps[i].start < reps[j].start })
	var b bytes.Buffer
	at := 0
	for i, r := range reps {
		if i > 0 && r.start == reps[i-1].start && r.end == reps[i-1].end {
			if r.text != reps[i-1].text {
				return nil, fmt.Errorf("one anchored value stands for different secrets")
			}
			continue
		}
		if r.start < at {
			return nil, fmt.Errorf("overlapping values")
		}
		b.Write(s.data[at:r.start])
		b.WriteString(r.text)
		at = r.end
	}
	b.Write(s.data[at:])
	return b.Bytes(), nil
}
