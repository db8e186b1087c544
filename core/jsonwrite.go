package core

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// This file holds the appenders the message model's MarshalJSON methods are
// built from. Every type writes into one growing buffer instead of going
// through json.Marshal per nested value, which would re-scan and copy each
// level. Strings are escaped like encoding/json does with HTML escaping off
// (like JavaScript's JSON.stringify), so an embedding program can write
// transcripts through a json.Encoder with SetEscapeHTML(false) and get lines
// an OpenClaw reader would also write; json.Marshal still escapes <, > and &
// on top, as it always does.

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD,
// as in encoding/json, so the output is always valid JSON.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
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
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		// encoding/json escapes these two unconditionally because they end a
		// line in JavaScript source; doing the same keeps our output equal
		// to json.Marshal's apart from HTML escaping.
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendJSONFloat appends f the way encoding/json writes a float64 (the
// ECMAScript number-to-string rules), so costs read the same as in a
// transcript written by JavaScript.
func appendJSONFloat(b []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, fmt.Errorf("unsupported number %v", f)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// Clean up e-09 to e-9.
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

// appendJSONBool appends true or false.
func appendJSONBool(b []byte, v bool) []byte {
	if v {
		return append(b, "true"...)
	}
	return append(b, "false"...)
}

// errEmptyRaw is returned when a raw JSON value to be written is empty.
var errEmptyRaw = errors.New("empty raw JSON value")

// appendRawJSON appends a raw value after checking it, so one bad field set
// by a caller is reported here rather than as invalid output.
func appendRawJSON(b []byte, raw []byte) ([]byte, error) {
	if len(raw) == 0 {
		return b, errEmptyRaw
	}
	if !json.Valid(raw) {
		return b, errors.New("invalid raw JSON value")
	}
	return append(b, raw...), nil
}

// appendJSONAny appends v. The shapes encoding/json decodes into an any
// (maps, slices, strings, float64, bool, nil) are written directly, with
// map keys sorted as json.Marshal sorts them; anything else goes through a
// json.Encoder with HTML escaping off.
func appendJSONAny(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return appendJSONString(b, v), nil
	case float64:
		return appendJSONFloat(b, v)
	case bool:
		return appendJSONBool(b, v), nil
	case int:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case map[string]any:
		if v == nil {
			return append(b, "null"...), nil
		}
		return appendJSONObject(b, v)
	case []any:
		if v == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendJSONAny(b, e); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	case json.RawMessage:
		if v == nil {
			return append(b, "null"...), nil
		}
		return appendRawJSON(b, v)
	default:
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return b, err
		}
		return append(b, bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})...), nil
	}
}

// appendJSONObject appends m with its keys in sorted order, so equal maps
// always encode to equal bytes.
func appendJSONObject(b []byte, m map[string]any) ([]byte, error) {
	var small [16]string
	keys := small[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		var err error
		if b, err = appendJSONAny(b, m[k]); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}
