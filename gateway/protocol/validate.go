package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file is a small validator for the few JSON schemas the handshake
// needs (request frame, connect params). It reports errors the way
// OpenClaw's AJV validators do (allErrors, formatted by
// src/gateway/protocol/index.ts formatValidationErrors), so a client that
// shows or matches the message sees the same text:
//
//	invalid connect params: at /client/id: must be equal to one of the allowed values
//
// The error order follows AJV's keyword order for an object schema: the
// type check, then "required" (in schema order), then
// "additionalProperties" (in JavaScript key order), then each property in
// schema order.

// kind is the JSON type of a raw value.
type kind int

const (
	kindInvalid kind = iota
	kindObject
	kindArray
	kindString
	kindNumber
	kindBool
	kindNull
)

// kindOf reports the JSON type of a raw value that encoding/json already
// accepted as syntactically valid.
func kindOf(raw []byte) kind {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return kindInvalid
	}
	switch raw[0] {
	case '{':
		return kindObject
	case '[':
		return kindArray
	case '"':
		return kindString
	case 't', 'f':
		return kindBool
	case 'n':
		return kindNull
	default:
		return kindNumber
	}
}

// member is one key of a JSON object, in the order JavaScript would
// enumerate it.
type member struct {
	key string
	raw json.RawMessage
}

// errNotObject is returned by parseObject for a value that is valid JSON but
// not an object.
var errNotObject = errors.New("not an object")

// parseDocument checks that data is exactly one JSON value (what JSON.parse
// accepts) and returns it without surrounding white space.
func parseDocument(data []byte) (json.RawMessage, error) {
	if !json.Valid(data) {
		return nil, errors.New("invalid JSON")
	}
	return bytes.Trim(data, " \t\r\n"), nil
}

// parseObject splits a raw JSON object, already known to be valid JSON,
// into its members. Like JSON.parse, a repeated key keeps its first
// position and its last value; like a JavaScript for-in loop, integer-like
// keys come first in ascending order. The values alias raw.
func parseObject(raw json.RawMessage) ([]member, error) {
	raw = bytes.Trim(raw, " \t\r\n")
	if kindOf(raw) != kindObject {
		return nil, errNotObject
	}
	var members []member
	var index map[string]int // built once the object is large
	i := skipSpace(raw, 1)
	for i < len(raw) && raw[i] != '}' {
		keyEnd := skipValue(raw, i)
		key := decodeKey(raw[i:keyEnd])
		i = skipSpace(raw, keyEnd)
		if i >= len(raw) || raw[i] != ':' {
			return nil, errors.New("malformed object")
		}
		i = skipSpace(raw, i+1)
		valueEnd := skipValue(raw, i)
		value := json.RawMessage(raw[i:valueEnd])
		idx := -1
		if index != nil {
			if j, ok := index[key]; ok {
				idx = j
			}
		} else {
			idx = slices.IndexFunc(members, func(m member) bool { return m.key == key })
		}
		if idx >= 0 {
			members[idx].raw = value
		} else {
			members = append(members, member{key: key, raw: value})
			if index != nil {
				index[key] = len(members) - 1
			} else if len(members) > 16 {
				index = make(map[string]int, 2*len(members))
				for j, m := range members {
					index[m.key] = j
				}
			}
		}
		i = skipSpace(raw, valueEnd)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	// JavaScript enumerates array-index keys first, numerically.
	slices.SortStableFunc(members, func(a, b member) int {
		ai, aok := arrayIndex(a.key)
		bi, bok := arrayIndex(b.key)
		switch {
		case aok && bok:
			return cmpUint(ai, bi)
		case aok:
			return -1
		case bok:
			return 1
		default:
			return 0
		}
	})
	return members, nil
}

// skipSpace returns the index of the first non-space byte at or after i.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// skipValue returns the index just past the JSON value starting at i, in
// input already known to be valid JSON.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
		i++
	}
	return i
}

// skipString returns the index just past the JSON string starting at i.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// decodeKey decodes an object key; plain ASCII keys, the common case, are
// used as they are.
func decodeKey(raw []byte) string {
	if len(raw) < 2 {
		return ""
	}
	plain := true
	for _, c := range raw[1 : len(raw)-1] {
		if c == '\\' || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain {
		return string(raw[1 : len(raw)-1])
	}
	return decodeString(raw)
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// arrayIndex reports whether key is a canonical JavaScript array index
// (0 … 2^32-2 without leading zeros).
func arrayIndex(key string) (uint64, bool) {
	if key == "" || (len(key) > 1 && key[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(key); i++ {
		if key[i] < '0' || key[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(key, 10, 64)
	if err != nil || n > math.MaxUint32-1 {
		return 0, false
	}
	return n, true
}

// lookup returns the member named key.
func lookup(members []member, key string) (json.RawMessage, bool) {
	for _, m := range members {
		if m.key == key {
			return m.raw, true
		}
	}
	return nil, false
}

// schemaKind selects what a schema node checks.
type schemaKind int

const (
	schemaAny schemaKind = iota
	schemaObject
	schemaString
	schemaInteger
	schemaBool
	schemaArray
	schemaEnum   // a string from a closed list (TypeBox Type.Enum)
	schemaConst  // a fixed string (TypeBox Type.Literal)
	schemaRecord // an object whose values all match items (TypeBox Type.Record)
)

// schema is one node of a TypeBox-like schema. Objects are closed
// (additionalProperties:false), as every OpenClaw frame schema is.
type schema struct {
	kind       schemaKind
	minLength  int        // string: minimum length in code points
	maxLength  int        // string: maximum length in code points; 0 means none
	minimum    int64      // integer: inclusive minimum
	values     []string   // enum: allowed values; const: values[0]
	props      []property // object: properties in schema order
	items      *schema    // array and record: element schema
	openObject bool       // object: unknown members allowed
}

// property is one named member of an object schema.
type property struct {
	name     string
	required bool
	schema   *schema
}

var (
	schemaNonEmpty = &schema{kind: schemaString, minLength: 1}
	schemaText     = &schema{kind: schemaString}
)

// validator collects formatted errors, de-duplicated in first-seen order,
// like formatValidationErrors.
type validator struct {
	parts []string
}

func (v *validator) add(path, message string) {
	part := message
	if path != "" {
		part = "at " + path + ": " + message
	}
	if !slices.Contains(v.parts, part) {
		v.parts = append(v.parts, part)
	}
}

func (v *validator) addUnexpected(path, key string) {
	if strings.TrimFunc(key, isJSSpace) == "" {
		// AJV's fallback message when the key is blank.
		v.add(path, "must NOT have additional properties")
		return
	}
	where := "at root"
	if path != "" {
		where = "at " + path
	}
	part := where + ": unexpected property '" + key + "'"
	if !slices.Contains(v.parts, part) {
		v.parts = append(v.parts, part)
	}
}

func (v *validator) ok() bool { return len(v.parts) == 0 }

// String joins the collected errors with "; ", like formatValidationErrors.
func (v *validator) String() string {
	if len(v.parts) == 0 {
		return "unknown validation error"
	}
	return strings.Join(v.parts, "; ")
}

// pointer appends a JSON Pointer segment (RFC 6901 escaping, as AJV's
// instancePath does).
func pointer(path, key string) string {
	key = strings.ReplaceAll(key, "~", "~0")
	key = strings.ReplaceAll(key, "/", "~1")
	return path + "/" + key
}

// validate checks raw against s, reporting errors at path.
func (v *validator) validate(raw json.RawMessage, path string, s *schema) {
	k := kindOf(raw)
	switch s.kind {
	case schemaAny:
	case schemaObject, schemaRecord:
		if k != kindObject {
			v.add(path, "must be object")
			return
		}
		members, err := parseObject(raw)
		if err != nil {
			v.add(path, "must be object")
			return
		}
		if s.kind == schemaRecord {
			for _, m := range members {
				v.validate(m.raw, pointer(path, m.key), s.items)
			}
			return
		}
		for _, p := range s.props {
			if _, present := lookup(members, p.name); p.required && !present {
				v.add(path, "must have required property '"+p.name+"'")
			}
		}
		if !s.openObject {
			for _, m := range members {
				if !slices.ContainsFunc(s.props, func(p property) bool { return p.name == m.key }) {
					v.addUnexpected(path, m.key)
				}
			}
		}
		for _, p := range s.props {
			if value, present := lookup(members, p.name); present {
				v.validate(value, pointer(path, p.name), p.schema)
			}
		}
	case schemaString:
		if k != kindString {
			v.add(path, "must be string")
			return
		}
		n := utf8.RuneCountInString(decodeString(raw))
		if n < s.minLength {
			v.add(path, "must NOT have fewer than "+strconv.Itoa(s.minLength)+" characters")
		}
		if s.maxLength > 0 && n > s.maxLength {
			v.add(path, "must NOT have more than "+strconv.Itoa(s.maxLength)+" characters")
		}
	case schemaInteger:
		f, finite := numberValue(raw)
		if !finite || f != math.Trunc(f) {
			v.add(path, "must be integer")
		}
		// AJV checks "minimum" for any finite number, even a non-integer.
		if finite && f < float64(s.minimum) {
			v.add(path, "must be >= "+strconv.FormatInt(s.minimum, 10))
		}
	case schemaBool:
		if k != kindBool {
			v.add(path, "must be boolean")
		}
	case schemaArray:
		if k != kindArray {
			v.add(path, "must be array")
			return
		}
		var elems []json.RawMessage
		if err := json.Unmarshal(raw, &elems); err != nil {
			v.add(path, "must be array")
			return
		}
		for i, e := range elems {
			v.validate(e, path+"/"+strconv.Itoa(i), s.items)
		}
	case schemaEnum:
		if k != kindString || !slices.Contains(s.values, decodeString(raw)) {
			v.add(path, "must be equal to one of the allowed values")
		}
	case schemaConst:
		if k != kindString {
			v.add(path, "must be string")
		}
		if k != kindString || decodeString(raw) != s.values[0] {
			v.add(path, "must be equal to constant")
		}
	}
}

// decodeString decodes a raw JSON string; invalid UTF-8 becomes U+FFFD as
// in JavaScript's text decoding.
func decodeString(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// numberValue returns a raw JSON number as a float64 and whether it is a
// finite number (JSON.parse turns 1e400 into Infinity, which AJV's
// strictNumbers rejects).
func numberValue(raw json.RawMessage) (float64, bool) {
	if kindOf(raw) != kindNumber {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(raw)), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// intValue converts a validated integer to int64, clamping values beyond
// the int64 range (JavaScript keeps them as doubles; no protocol field can
// meaningfully exceed it).
func intValue(raw json.RawMessage) int64 {
	f, _ := numberValue(raw)
	switch {
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// isJSSpace reports whether r is white space for JavaScript's
// String.prototype.trim (WhiteSpace and LineTerminator); this differs from
// unicode.IsSpace on U+0085 and U+FEFF.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', 0xFEFF, 0x2028, 0x2029:
		return true
	}
	return unicode.Is(unicode.Zs, r)
}
