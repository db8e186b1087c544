package config

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// MergePatch applies patch, a JSON merge patch (RFC 7396), to the
// configuration file text data and returns the new text. A key set to null
// in the patch is removed; an object merges into an object; anything else
// replaces what was there. name labels positions in errors about data, which
// are Errors; a patch that is not a JSON object is a plain error. The patch
// is read as YAML, of which JSON is a part, so the JSON5 that OpenClaw's
// clients send (unquoted keys, single quotes) is read too, and a string
// "${VAR}" is a reference to the environment, as in the file.
//
// The result is YAML written afresh from the merged document, so comments
// and blank lines are not kept, and anchors, aliases and merge keys are
// replaced by copies of the values they stood for. Key order is kept, and
// values keep their text: ${VAR} references stay unexpanded, and 0123 or
// 1.10 stay as written, so every key the patch leaves alone reads as
// before. The result is not validated; Parse does that.
func MergePatch(name string, data, patch []byte) ([]byte, error) {
	p, err := decodePatch(patch)
	if err != nil {
		return nil, fmt.Errorf("config: merge patch: %w", err)
	}
	d, body, errs := parseDocument(name, data)
	if errs != nil {
		return nil, errs
	}
	var target any = &docMap{}
	if body != nil {
		target = d.doc(body, "")
		if len(d.errs) > 0 {
			return nil, d.errs.sorted()
		}
		if _, ok := target.(*docMap); !ok && target != nil {
			at := posOf(body)
			return nil, Errors{{File: name, Line: at.line, Column: at.col, Message: "the file is not a mapping of keys to values, so a patch cannot apply; replace the whole file instead"}}
		}
	}
	merged := mergePatch(target, p)
	return emitYAML(merged), nil
}

// decodePatch reads a merge patch, which must be an object.
func decodePatch(patch []byte) (*docMap, error) {
	d, body, errs := parseDocument("patch", patch)
	if errs == nil && body != nil {
		body, _ = d.follow(body)
	}
	if errs == nil {
		if _, isMapping := body.(*ast.MappingNode); !isMapping {
			if _, isValue := body.(*ast.MappingValueNode); !isValue {
				return nil, fmt.Errorf("the patch must be a JSON object (RFC 7396), got %s", describePatch(body))
			}
		}
	}
	if errs != nil {
		return nil, fmt.Errorf("the patch is not valid JSON: %v", errs)
	}
	p := d.doc(body, "")
	if len(d.errs) > 0 {
		return nil, fmt.Errorf("the patch is not valid JSON: %v", d.errs.sorted())
	}
	return p.(*docMap), nil
}

func describePatch(n ast.Node) string {
	switch n.(type) {
	case nil, *ast.NullNode:
		return "null"
	case *ast.SequenceNode:
		return "an array"
	case *ast.StringNode, *ast.LiteralNode:
		return "a string"
	case *ast.BoolNode:
		return "a boolean"
	}
	return "a number"
}

// docMap is a YAML or JSON mapping that keeps its key order.
type docMap struct {
	entries []docEntry
}

type docEntry struct {
	key string
	val any
}

func (m *docMap) index(key string) int {
	for i, e := range m.entries {
		if e.key == key {
			return i
		}
	}
	return -1
}

func (m *docMap) get(key string) any {
	if i := m.index(key); i >= 0 {
		return m.entries[i].val
	}
	return nil
}

func (m *docMap) set(key string, v any) {
	if i := m.index(key); i >= 0 {
		m.entries[i].val = v
		return
	}
	m.entries = append(m.entries, docEntry{key, v})
}

func (m *docMap) remove(key string) {
	if i := m.index(key); i >= 0 {
		m.entries = append(m.entries[:i], m.entries[i+1:]...)
	}
}

// plainScalar is a scalar written without quotes whose text is its value
// and decides its type (a number, a boolean); it is written back as is.
type plainScalar string

// The values of a document: *docMap, []any, string (a string however it
// was quoted), plainScalar, or nil (null).

// doc converts n to a document value, following anchors, aliases and merge
// keys; problems go to d.errs.
func (d *decoder) doc(n ast.Node, path string) any {
	if d.depth >= maxDepth {
		d.errorf(n, path, "nested too deeply; does an alias refer to its own parent?")
		return nil
	}
	d.depth++
	defer func() { d.depth-- }()
	n = d.resolve(n, path)
	switch v := n.(type) {
	case nil, *ast.NullNode:
		return nil
	case *ast.MappingNode, *ast.MappingValueNode:
		entries, _ := d.mappingEntries(v, path)
		m := &docMap{}
		for _, mv := range entries {
			k := keyString(mv.Key)
			m.set(k, d.doc(mv.Value, joinPath(path, k)))
		}
		return m
	case *ast.SequenceNode:
		out := make([]any, 0, len(v.Values))
		for i, e := range v.Values {
			out = append(out, d.doc(e, fmt.Sprintf("%s[%d]", path, i)))
		}
		return out
	case *ast.StringNode:
		return v.Value
	case *ast.LiteralNode:
		return v.Value.Value
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		return plainScalar(n.GetToken().Value)
	}
	d.errorf(n, path, "unsupported YAML value %s", describe(n))
	return nil
}

// mergePatch is RFC 7396's MergePatch(target, patch). It may reuse parts of
// both.
func mergePatch(target, patch any) any {
	p, ok := patch.(*docMap)
	if !ok {
		return patch
	}
	t, ok := target.(*docMap)
	if !ok {
		t = &docMap{}
	}
	for _, e := range p.entries {
		if e.val == nil {
			t.remove(e.key)
			continue
		}
		t.set(e.key, mergePatch(t.get(e.key), e.val))
	}
	return t
}

// emitYAML writes a document as block-style YAML with two-space indents.
func emitYAML(v any) []byte {
	var b bytes.Buffer
	switch x := v.(type) {
	case *docMap:
		if len(x.entries) == 0 {
			b.WriteString("{}\n")
		} else {
			writeMap(&b, x, 0, false)
		}
	case []any:
		if len(x) == 0 {
			b.WriteString("[]\n")
		} else {
			writeList(&b, x, 0)
		}
	default:
		b.WriteString(formatScalar(v))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// writeMap writes each entry on its own line at indent; with inline the
// first continues the current line (a list item's "- ").
func writeMap(b *bytes.Buffer, m *docMap, indent int, inline bool) {
	for i, e := range m.entries {
		if !inline || i > 0 {
			b.WriteString(strings.Repeat(" ", indent))
		}
		b.WriteString(formatString(e.key))
		b.WriteByte(':')
		writeChild(b, e.val, indent)
	}
}

// writeChild writes the value of a key whose line is open.
func writeChild(b *bytes.Buffer, v any, indent int) {
	switch x := v.(type) {
	case *docMap:
		if len(x.entries) == 0 {
			b.WriteString(" {}\n")
			return
		}
		b.WriteByte('\n')
		writeMap(b, x, indent+2, false)
	case []any:
		if len(x) == 0 {
			b.WriteString(" []\n")
			return
		}
		b.WriteByte('\n')
		writeList(b, x, indent+2)
	default:
		b.WriteByte(' ')
		b.WriteString(formatScalar(v))
		b.WriteByte('\n')
	}
}

func writeList(b *bytes.Buffer, l []any, indent int) {
	for _, item := range l {
		b.WriteString(strings.Repeat(" ", indent))
		b.WriteByte('-')
		switch x := item.(type) {
		case *docMap:
			if len(x.entries) == 0 {
				b.WriteString(" {}\n")
				continue
			}
			b.WriteByte(' ')
			writeMap(b, x, indent+2, true)
		case []any:
			if len(x) == 0 {
				b.WriteString(" []\n")
				continue
			}
			b.WriteByte('\n')
			writeList(b, x, indent+2)
		default:
			b.WriteByte(' ')
			b.WriteString(formatScalar(item))
			b.WriteByte('\n')
		}
	}
}

func formatScalar(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case plainScalar:
		return string(x)
	case string:
		return formatString(x)
	}
	return formatString(fmt.Sprint(v))
}

// plainString matches the strings written without quotes: ones no YAML
// reader takes for anything but that string. Everything else is quoted.
var plainString = regexp.MustCompile(`^[A-Za-z_/][A-Za-z0-9_./-]*$`)

// formatString writes s plain when that reads back as the same string, else
// double-quoted.
func formatString(s string) string {
	if plainString.MatchString(s) {
		switch strings.ToLower(s) {
		case "true", "false", "yes", "no", "on", "off", "y", "n", "null", "nan", "inf", "infinity":
		default:
			return s
		}
	}
	return quoteYAML(s)
}
