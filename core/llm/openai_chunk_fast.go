package llm

import (
	"encoding/json"
	"unicode/utf8"
)

// decodeChunk decodes one chat.completion.chunk. Nearly every chunk of a
// stream is the same small shape, {"id", "object", "created", "model",
// "choices": [{"index", "delta": {"role"?, "content"}, "logprobs",
// "finish_reason"}]}, and encoding/json's reflection cost ~10 µs a chunk
// (8% of the daemon's CPU per message in the gateway bench, issue 24).
// fastChunk reads that shape by hand and gives up on anything else (tool
// calls, reasoning, usage, errors, escapes it does not handle, a member it
// does not know), which then goes through the lenient decoder; the fuzz
// target FuzzChunkFastPath holds the two to the same result.
func (c *openaiChunk) decodeChunk(b []byte) error {
	if fastChunk(b, c) {
		return nil
	}
	*c = openaiChunk{}
	return c.UnmarshalJSON(b)
}

// chunkScanner reads JSON from b at i.
type chunkScanner struct {
	b []byte
	i int
}

func (s *chunkScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// eat skips whitespace and then ch, reporting whether ch was there.
func (s *chunkScanner) eat(ch byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == ch {
		s.i++
		return true
	}
	return false
}

// peek skips whitespace and returns the next byte, 0 at the end.
func (s *chunkScanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// null reads the literal null.
func (s *chunkScanner) null() bool {
	s.ws()
	if len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}

// str reads a string. Escapes go through encoding/json, so the result is
// exactly what it would decode; so do strings with invalid UTF-8, which
// it replaces.
func (s *chunkScanner) str() (string, bool) {
	if !s.eat('"') {
		return "", false
	}
	start, escaped := s.i, false
	for s.i < len(s.b) {
		switch ch := s.b[s.i]; {
		case ch == '"':
			raw := s.b[start:s.i]
			s.i++
			if !escaped && utf8.Valid(raw) {
				return string(raw), true
			}
			var v string
			if json.Unmarshal(s.b[start-1:s.i], &v) != nil {
				return "", false
			}
			return v, true
		case ch == '\\':
			escaped = true
			s.i += 2
		case ch < 0x20:
			return "", false
		default:
			s.i++
		}
	}
	return "", false
}

// integer reads an integer of at most 18 digits in JSON's syntax.
func (s *chunkScanner) integer() (int64, bool) {
	s.ws()
	neg := s.i < len(s.b) && s.b[s.i] == '-'
	if neg {
		s.i++
	}
	start := s.i
	var n int64
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		n = n*10 + int64(s.b[s.i]-'0')
		s.i++
	}
	digits := s.i - start
	if digits == 0 || digits > 18 || digits > 1 && s.b[start] == '0' {
		return 0, false
	}
	if s.i < len(s.b) {
		switch s.b[s.i] {
		case '.', 'e', 'E':
			return 0, false
		}
	}
	if neg {
		n = -n
	}
	return n, true
}

// scalar reads a string, an integer or null whose value is not kept.
func (s *chunkScanner) scalar() bool {
	switch s.peek() {
	case '"':
		return s.skipStr()
	case 'n':
		return s.null()
	}
	_, ok := s.integer()
	return ok
}

// skipStr reads a string whose value is not kept, checking its escapes as
// encoding/json does (invalid UTF-8 it would replace, so that passes).
func (s *chunkScanner) skipStr() bool {
	if !s.eat('"') {
		return false
	}
	for s.i < len(s.b) {
		ch := s.b[s.i]
		switch {
		case ch == '"':
			s.i++
			return true
		case ch < 0x20:
			return false
		case ch != '\\':
			s.i++
			continue
		}
		if s.i+1 >= len(s.b) {
			return false
		}
		switch s.b[s.i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			s.i += 2
		case 'u':
			if s.i+6 > len(s.b) {
				return false
			}
			for _, h := range s.b[s.i+2 : s.i+6] {
				if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
					return false
				}
			}
			s.i += 6
		default:
			return false
		}
	}
	return false
}

// next moves to the next member of an object whose '{' was read, the
// n-th (from 0): done at the closing '}', else the member's key with the
// scanner at its value; ok is false on anything else. Keys with escapes
// are refused (no member the fast path knows has one).
func (s *chunkScanner) next(n int) (key []byte, done, ok bool) {
	if s.eat('}') {
		return nil, true, true
	}
	if n > 0 && !s.eat(',') {
		return nil, false, false
	}
	if !s.eat('"') {
		return nil, false, false
	}
	start := s.i
	for s.i < len(s.b) && s.b[s.i] != '"' {
		if s.b[s.i] == '\\' || s.b[s.i] < 0x20 {
			return nil, false, false
		}
		s.i++
	}
	if s.i == len(s.b) {
		return nil, false, false
	}
	key = s.b[start:s.i]
	s.i++
	return key, false, s.eat(':')
}

// fastChunk decodes b into c if b is the common shape, reporting whether
// it did; c is left partly filled when it did not.
func fastChunk(b []byte, c *openaiChunk) bool {
	s := &chunkScanner{b: b}
	if !s.eat('{') {
		return false
	}
	choices := false
	for n := 0; ; n++ {
		key, done, ok := s.next(n)
		if !ok {
			return false
		}
		if done {
			break
		}
		switch string(key) {
		case "id", "object", "created", "model", "system_fingerprint", "service_tier":
			ok = s.scalar()
		case "choices":
			ok = !choices && s.choices(c)
			choices = true
		case "usage":
			ok = s.null()
		default:
			ok = false
		}
		if !ok {
			return false
		}
	}
	s.ws()
	return s.i == len(s.b)
}

// choices reads the choices array (or null).
func (s *chunkScanner) choices(c *openaiChunk) bool {
	if s.null() {
		return true
	}
	if !s.eat('[') {
		return false
	}
	c.Choices = make([]openaiChoiceDelta, 0, 1)
	if s.eat(']') {
		return true
	}
	for {
		var ch openaiChoiceDelta
		if !s.choice(&ch) {
			return false
		}
		c.Choices = append(c.Choices, ch)
		if s.eat(']') {
			return true
		}
		if !s.eat(',') {
			return false
		}
	}
}

// choice reads one choice. A member given twice decodes as encoding/json
// does: the last value wins, a null leaves the one before, two deltas
// merge.
func (s *chunkScanner) choice(ch *openaiChoiceDelta) bool {
	if !s.eat('{') {
		return false
	}
	for n := 0; ; n++ {
		key, done, ok := s.next(n)
		if !ok {
			return false
		}
		if done {
			return true
		}
		switch string(key) {
		case "index":
			ch.Index, ok = s.integer()
		case "delta":
			ok = s.delta(&ch.Delta)
		case "finish_reason":
			ok = s.optString(&ch.FinishReason)
		case "logprobs":
			ok = s.null()
		default:
			ok = false
		}
		if !ok {
			return false
		}
	}
}

// delta reads a delta of role, content and refusal only.
func (s *chunkScanner) delta(d *openaiDelta) bool {
	if !s.eat('{') {
		return false
	}
	for n := 0; ; n++ {
		key, done, ok := s.next(n)
		if !ok {
			return false
		}
		if done {
			return true
		}
		switch string(key) {
		case "role":
			ok = s.scalar()
		case "content":
			ok = s.optString(&d.Content)
		case "refusal":
			ok = s.optString(&d.Refusal)
		default:
			ok = false
		}
		if !ok {
			return false
		}
	}
}

// optString reads a string into dst, or null, which leaves dst as it was.
func (s *chunkScanner) optString(dst *string) bool {
	if s.null() {
		return true
	}
	v, ok := s.str()
	if ok {
		*dst = v
	}
	return ok
}
