package core

// This file walks JSON objects and arrays structurally, without decoding
// them, so the message decoders can read a discriminator ("role", "type") or
// check that every key is one they know without a generic map decode. The
// walk validates only structure: callers either run it on bytes that
// encoding/json has already accepted, or validate the pieces it hands out.
// On malformed input it reports failure and never panics.

import "bytes"

func isJSONSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

func skipJSONSpace(data []byte, i int) int {
	for i < len(data) && isJSONSpace(data[i]) {
		i++
	}
	return i
}

// skipJSONString returns the index just past the string that opens at
// data[i], and whether the string holds an escape sequence.
func skipJSONString(data []byte, i int) (end int, escaped, ok bool) {
	// Jump from quote to quote with bytes.IndexByte, which is vectorized;
	// long message texts make this the hottest loop of decoding.
	start := i + 1
	for i = start; ; {
		q := bytes.IndexByte(data[i:], '"')
		if q < 0 {
			return 0, false, false
		}
		q += i
		// The quote ends the string unless an odd number of backslashes
		// precede it.
		n := 0
		for j := q - 1; j >= start && data[j] == '\\'; j-- {
			n++
		}
		if n%2 == 0 {
			return q + 1, escaped || bytes.IndexByte(data[start:q], '\\') >= 0, true
		}
		escaped = true
		i = q + 1
	}
}

// skipJSONValue returns the index just past the value that starts at data[i].
func skipJSONValue(data []byte, i int) (end int, ok bool) {
	if i >= len(data) {
		return 0, false
	}
	switch data[i] {
	case '"':
		end, _, ok = skipJSONString(data, i)
		return end, ok
	case '{', '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				e, _, ok := skipJSONString(data, i)
				if !ok {
					return 0, false
				}
				i = e
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return 0, false
	case ',', ':', '}', ']':
		return 0, false
	default:
		start := i
		for i < len(data) {
			c := data[i]
			if isJSONSpace(c) || c == ',' || c == '}' || c == ']' {
				break
			}
			i++
		}
		return i, i > start
	}
}

// jsonKind names the kind of the JSON value in data for error messages.
func jsonKind(data []byte) string {
	i := skipJSONSpace(data, 0)
	if i >= len(data) {
		return "nothing"
	}
	switch c := data[i]; {
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	default:
		return "a number"
	}
}

// isJSONNull reports whether data is the literal null, as encoding/json hands
// it to an UnmarshalJSON method.
func isJSONNull(data []byte) bool {
	i := skipJSONSpace(data, 0)
	return len(data)-i >= 4 && string(data[i:i+4]) == "null" && skipJSONSpace(data, i+4) == len(data)
}

// objectScan iterates over the members of one JSON object.
type objectScan struct {
	data []byte
	pos  int
	bad  bool
	done bool
}

// newObjectScan starts a walk over the object in data; ok is false when data
// does not start with an object.
func newObjectScan(data []byte) (s objectScan, ok bool) {
	i := skipJSONSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return objectScan{bad: true, done: true}, false
	}
	i = skipJSONSpace(data, i+1)
	s = objectScan{data: data, pos: i}
	if i < len(data) && data[i] == '}' {
		s.finish(i + 1)
	}
	return s, true
}

// finish ends the walk at i, just past the closing brace or bracket; only
// white space may follow.
func (s *objectScan) finish(i int) {
	s.done = true
	if skipJSONSpace(s.data, i) != len(s.data) {
		s.bad = true
	}
}

// next returns the next member: the key's bytes between its quotes (escape
// sequences undecoded; escaped says whether there are any) and the value's
// bytes. ok is false at the end of the object or on malformed input; failed
// tells the two apart.
func (s *objectScan) next() (key []byte, escaped bool, value []byte, ok bool) {
	if s.done {
		return nil, false, nil, false
	}
	data, i := s.data, s.pos
	if i >= len(data) || data[i] != '"' {
		return s.fail()
	}
	end, escaped, ok := skipJSONString(data, i)
	if !ok {
		return s.fail()
	}
	key = data[i+1 : end-1]
	i = skipJSONSpace(data, end)
	if i >= len(data) || data[i] != ':' {
		return s.fail()
	}
	i = skipJSONSpace(data, i+1)
	end, ok = skipJSONValue(data, i)
	if !ok {
		return s.fail()
	}
	value = data[i:end]
	i = skipJSONSpace(data, end)
	switch {
	case i < len(data) && data[i] == ',':
		s.pos = skipJSONSpace(data, i+1)
	case i < len(data) && data[i] == '}':
		s.finish(i + 1)
	default:
		return s.fail()
	}
	return key, escaped, value, true
}

func (s *objectScan) fail() ([]byte, bool, []byte, bool) {
	s.bad, s.done = true, true
	return nil, false, nil, false
}

// failed reports whether the walk stopped on malformed input.
func (s *objectScan) failed() bool { return s.bad }

// arrayScan iterates over the elements of one JSON array.
type arrayScan struct {
	data []byte
	pos  int
	bad  bool
	done bool
}

// newArrayScan starts a walk over the array in data; ok is false when data
// does not start with an array.
func newArrayScan(data []byte) (s arrayScan, ok bool) {
	i := skipJSONSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return arrayScan{bad: true, done: true}, false
	}
	i = skipJSONSpace(data, i+1)
	s = arrayScan{data: data, pos: i}
	if i < len(data) && data[i] == ']' {
		s.done = true
		if skipJSONSpace(data, i+1) != len(data) {
			s.bad = true
		}
	}
	return s, true
}

// next returns the bytes of the next element; ok is false at the end of the
// array or on malformed input, which failed tells apart.
func (s *arrayScan) next() (elem []byte, ok bool) {
	if s.done {
		return nil, false
	}
	data, i := s.data, s.pos
	end, ok := skipJSONValue(data, i)
	if !ok {
		s.bad, s.done = true, true
		return nil, false
	}
	elem = data[i:end]
	i = skipJSONSpace(data, end)
	switch {
	case i < len(data) && data[i] == ',':
		s.pos = skipJSONSpace(data, i+1)
	case i < len(data) && data[i] == ']':
		s.done = true
		if skipJSONSpace(data, i+1) != len(data) {
			s.bad = true
		}
	default:
		s.bad, s.done = true, true
		return nil, false
	}
	return elem, true
}

// failed reports whether the walk stopped on malformed input.
func (s *arrayScan) failed() bool { return s.bad }
