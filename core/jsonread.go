package core

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// This file holds the leaf readers of the fast decode path (see
// knownObject.decode). Each takes the bytes of one member value, handles
// the plain case itself (a string without escapes, an integer, a boolean)
// and hands anything else to encoding/json, so what is accepted, the
// values produced and the errors are encoding/json's. Like encoding/json,
// a null leaves the target unchanged.

// readString reads a JSON string into p.
func readString(value []byte, p *string) error {
	if n := len(value); n >= 2 && value[0] == '"' && value[n-1] == '"' {
		if inner := value[1 : n-1]; isPlainJSONString(inner) {
			*p = string(inner)
			return nil
		}
	}
	return json.Unmarshal(value, p)
}

// isPlainJSONString reports whether b, the bytes between a string's
// quotes, is the string itself: no escapes, no control characters (which
// JSON forbids), valid UTF-8 (encoding/json replaces invalid bytes).
func isPlainJSONString(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c == '"' || c == '\\' {
			return false
		}
	}
	return utf8.Valid(b)
}

// readInt reads a JSON integer into p.
func readInt(value []byte, p *int64) error {
	if isJSONInteger(value) {
		if n, err := strconv.ParseInt(string(value), 10, 64); err == nil {
			*p = n
			return nil
		}
	}
	return json.Unmarshal(value, p)
}

// readFloat reads a JSON number into p.
func readFloat(value []byte, p *float64) error {
	if isJSONNumber(value) {
		if f, err := strconv.ParseFloat(string(value), 64); err == nil {
			*p = f
			return nil
		}
	}
	return json.Unmarshal(value, p)
}

// readBool reads a JSON boolean into p.
func readBool(value []byte, p *bool) error {
	switch string(value) {
	case "true":
		*p = true
		return nil
	case "false":
		*p = false
		return nil
	}
	return json.Unmarshal(value, p)
}

// readRaw keeps a copy of any JSON value, null included, as
// json.RawMessage does.
func readRaw(value []byte, p *json.RawMessage) error {
	if !json.Valid(value) {
		return json.Unmarshal(value, p)
	}
	*p = bytes.Clone(value)
	return nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isJSONInteger reports whether b is a JSON number without fraction or
// exponent.
func isJSONInteger(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return false
	case b[i] == '0':
		i++
	case isDigit(b[i]):
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		return false
	}
	return i == len(b)
}

// isJSONNumber reports whether b is a number by the JSON grammar, which is
// stricter than strconv.ParseFloat (no "+1", "0x1p3", "Inf", "1_000").
func isJSONNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return false
	case b[i] == '0':
		i++
	case isDigit(b[i]):
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		start := i
		for i < len(b) && isDigit(b[i]) {
			i++
		}
		if i == start {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		start := i
		for i < len(b) && isDigit(b[i]) {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(b)
}

// readObject walks the object in value and hands each member to member. It
// returns ok false, without an error, when a key is escaped or member does
// not know it; the caller then decodes value with encoding/json instead. A
// null is an empty object.
func readObject(value []byte, member func(key, value []byte) (known bool, err error)) (ok bool, err error) {
	if isJSONNull(value) {
		return true, nil
	}
	s, isObject := newObjectScan(value)
	if !isObject {
		return false, nil
	}
	for {
		k, escaped, v, more := s.next()
		if !more {
			break
		}
		if escaped {
			return false, nil
		}
		known, err := member(k, v)
		if err != nil {
			return true, err
		}
		if !known {
			return false, nil
		}
	}
	return !s.failed(), nil
}

// readUsage reads a Usage, by hand when every key is ours and through
// encoding/json otherwise. Usage has no Extra: its members are numbers a
// newer writer is unlikely to add to, and it is rebuilt on every call.
func readUsage(value []byte, u *Usage) error {
	saved := *u
	ok, err := readObject(value, func(k, v []byte) (bool, error) {
		switch string(k) {
		case "input":
			return true, named("input", readInt(v, &u.Input))
		case "output":
			return true, named("output", readInt(v, &u.Output))
		case "cacheRead":
			return true, named("cacheRead", readInt(v, &u.CacheRead))
		case "cacheWrite":
			return true, named("cacheWrite", readInt(v, &u.CacheWrite))
		case "totalTokens":
			return true, named("totalTokens", readInt(v, &u.TotalTokens))
		case "cost":
			return true, named("cost", readCost(v, &u.Cost))
		}
		return false, nil
	})
	if ok || err != nil {
		return err
	}
	*u = saved
	return json.Unmarshal(value, u)
}

// readCost reads a Cost like readUsage.
func readCost(value []byte, c *Cost) error {
	saved := *c
	ok, err := readObject(value, func(k, v []byte) (bool, error) {
		switch string(k) {
		case "input":
			return true, named("input", readFloat(v, &c.Input))
		case "output":
			return true, named("output", readFloat(v, &c.Output))
		case "cacheRead":
			return true, named("cacheRead", readFloat(v, &c.CacheRead))
		case "cacheWrite":
			return true, named("cacheWrite", readFloat(v, &c.CacheWrite))
		case "total":
			return true, named("total", readFloat(v, &c.Total))
		}
		return false, nil
	})
	if ok || err != nil {
		return err
	}
	*c = saved
	return json.Unmarshal(value, c)
}
