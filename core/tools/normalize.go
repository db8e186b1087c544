package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// schemaInfo is what the executor needs from a tool's parameter schema:
// the property names, for renaming arguments, and the required list.
type schemaInfo struct {
	props    map[string]struct{}
	required []string
}

// parseSchema reads the parts of a JSON Schema the executor uses and checks
// that it describes an object.
func parseSchema(raw json.RawMessage) (*schemaInfo, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil || top == nil {
		return nil, errors.New(`not a JSON object; want a JSON Schema like {"type":"object","properties":{...}}`)
	}
	var typ string
	if err := json.Unmarshal(top["type"], &typ); err != nil || typ != "object" {
		return nil, fmt.Errorf(`"type" must be "object", got %s`, orMissing(top["type"]))
	}
	info := &schemaInfo{}
	if p, ok := top["properties"]; ok {
		var props map[string]json.RawMessage
		if err := json.Unmarshal(p, &props); err != nil {
			return nil, fmt.Errorf(`"properties" must be an object, got %s`, p)
		}
		info.props = make(map[string]struct{}, len(props))
		for k := range props {
			info.props[k] = struct{}{}
		}
	}
	if r, ok := top["required"]; ok {
		if err := json.Unmarshal(r, &info.required); err != nil {
			return nil, fmt.Errorf(`"required" must be an array of strings, got %s`, r)
		}
	}
	return info, nil
}

func orMissing(raw json.RawMessage) string {
	if raw == nil {
		return "nothing"
	}
	return string(raw)
}

// NormalizeArgs returns a copy of args with parameter names respelled the
// way schema spells them (seed 002 §6.1, §6.2): a key that is not one of
// the schema's properties is renamed to its snake_case or camelCase variant
// when that is a property ("filePath" → "file_path" and back), or else to
// the matching name of a Claude Code alias group (file_path ↔ path,
// old_string ↔ oldText/old_text, new_string ↔ newText/new_text) when the
// schema has one. When the schema's own spelling is also present, it wins
// and the variant is dropped. Other keys are kept as they are, and only
// top-level keys are renamed. args is never modified; the result is never
// nil. An invalid schema renames nothing.
func NormalizeArgs(args map[string]any, schema json.RawMessage) map[string]any {
	info, err := parseSchema(schema)
	if err != nil {
		info = &schemaInfo{}
	}
	return info.normalize(args, true)
}

// RequiredMissing returns the schema's required parameters that args lacks,
// in the schema's order: a key that is absent, null or the empty string
// counts as missing (seed 002 §6.3). args should be normalized first (see
// NormalizeArgs). It returns nil when nothing is missing or the schema is
// not valid.
func RequiredMissing(args map[string]any, schema json.RawMessage) []string {
	info, err := parseSchema(schema)
	if err != nil {
		return nil
	}
	var missing []string
	for _, k := range info.required {
		if isMissing(args, k) {
			missing = append(missing, k)
		}
	}
	return missing
}

// firstMissing returns the first required parameter args lacks, or "".
func (s *schemaInfo) firstMissing(args map[string]any) (string, bool) {
	for _, k := range s.required {
		if isMissing(args, k) {
			return k, true
		}
	}
	return "", false
}

func isMissing(args map[string]any, k string) bool {
	v, ok := args[k]
	if !ok || v == nil {
		return true
	}
	s, isString := v.(string)
	return isString && s == ""
}

// rename is one argument key to respell.
type rename struct {
	from, to string
	// alias marks a rename through an alias group; case variants win over
	// aliases when both aim at the same property.
	alias bool
}

// normalize respells the keys of args as the schema does. It returns a new
// map when a key changes or when alwaysCopy is set, and args itself
// otherwise, so the common case (the model used the schema's names) costs
// no allocation.
func (s *schemaInfo) normalize(args map[string]any, alwaysCopy bool) map[string]any {
	var renames []rename
	if len(s.props) > 0 {
		for k := range args {
			if _, ok := s.props[k]; ok {
				continue
			}
			if to, alias, ok := s.target(k); ok {
				renames = append(renames, rename{from: k, to: to, alias: alias})
			}
		}
	}
	if len(renames) == 0 {
		if !alwaysCopy && args != nil {
			return args
		}
		out := maps.Clone(args)
		if out == nil {
			out = map[string]any{}
		}
		return out
	}
	// Map order is random; sort so that two variants of one property
	// resolve the same way every time.
	slices.SortFunc(renames, func(a, b rename) int {
		if a.alias != b.alias {
			if a.alias {
				return 1
			}
			return -1
		}
		return strings.Compare(a.from, b.from)
	})
	out := maps.Clone(args)
	for _, rn := range renames {
		v := out[rn.from]
		delete(out, rn.from)
		if _, taken := out[rn.to]; !taken {
			out[rn.to] = v
		}
	}
	return out
}

// target returns the property k stands for, if any.
func (s *schemaInfo) target(k string) (to string, alias, ok bool) {
	snake := snakeCase(k)
	if _, ok := s.props[snake]; ok && snake != k {
		return snake, false, true
	}
	if camel := camelCase(k); camel != k {
		if _, ok := s.props[camel]; ok {
			return camel, false, true
		}
	}
	for _, a := range claudeAliases[snake] {
		if _, ok := s.props[a]; ok {
			return a, true, true
		}
		if camel := camelCase(a); camel != a {
			if _, ok := s.props[camel]; ok {
				return camel, true, true
			}
		}
	}
	return "", false, false
}

// claudeAliases maps a parameter name, in snake_case, to the names that
// mean the same in Claude Code's tools and OpenClaw's (seed 002 §6.2), so a
// model trained on either set of file tools finds its arguments.
var claudeAliases = map[string][]string{
	"file_path":  {"path"},
	"path":       {"file_path"},
	"old_string": {"old_text"},
	"old_text":   {"old_string"},
	"new_string": {"new_text"},
	"new_text":   {"new_string"},
}

// snakeCase spells k in snake_case: "filePath" → "file_path", "fileURL" →
// "file_url", "HTTPStatus" → "http_status", "file-path" → "file_path".
func snakeCase(k string) string {
	if isSnake(k) {
		return k
	}
	rs := []rune(k)
	var b strings.Builder
	b.Grow(len(k) + 4)
	for i, r := range rs {
		switch {
		case r == '-' || r == ' ':
			b.WriteByte('_')
		case unicode.IsUpper(r):
			if i > 0 && rs[i-1] != '_' && rs[i-1] != '-' && rs[i-1] != ' ' &&
				(!unicode.IsUpper(rs[i-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]))) {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isSnake reports that k has no upper-case letters or hyphens, so
// snakeCase would return it unchanged.
func isSnake(k string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c >= utf8.RuneSelf || ('A' <= c && c <= 'Z') || c == '-' || c == ' ' {
			return false
		}
	}
	return true
}

// camelCase spells k in lowerCamelCase: "file_path" → "filePath".
func camelCase(k string) string {
	if !strings.ContainsAny(k, "_-") {
		if k == "" {
			return k
		}
		r, size := utf8.DecodeRuneInString(k)
		if !unicode.IsUpper(r) {
			return k
		}
		return string(unicode.ToLower(r)) + k[size:]
	}
	var b strings.Builder
	b.Grow(len(k))
	first := true
	for _, part := range strings.FieldsFunc(k, func(r rune) bool { return r == '_' || r == '-' }) {
		r, size := utf8.DecodeRuneInString(part)
		if first {
			b.WriteRune(unicode.ToLower(r))
			first = false
		} else {
			b.WriteRune(unicode.ToUpper(r))
		}
		b.WriteString(part[size:])
	}
	return b.String()
}
