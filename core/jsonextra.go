package core

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// This file decodes the known object types and keeps the members this
// version does not know. Messages and content blocks are written by other
// programs too (OpenClaw, newer Switchboard releases), and a transcript
// rewrite (repair, compaction) must not strip what they added. Each known
// message and block type has an Extra map that decoding fills with the
// unknown members and encoding writes back after the known ones, in key
// order.
//
// Decoding is one ordered walk over the object's members (see
// knownObject.decode): known members go straight into their fields, unknown
// ones into Extra. There is no generic map decode, and our own output, which
// has no unknown members, allocates nothing beyond the values themselves.

// DecodeError is returned by the decoders of this package. Path names where
// in the value the problem is, outermost first ("assistant message",
// "content[2]", "toolCall block"), so the message reads as one sentence:
// "core: assistant message: content[2]: toolCall block: ...".
type DecodeError struct {
	Path []string
	Err  error
}

// Error returns "core: " followed by the path and the cause.
func (e *DecodeError) Error() string {
	return "core: " + strings.Join(e.Path, ": ") + ": " + e.Err.Error()
}

// Unwrap returns the cause, which may be an encoding/json error.
func (e *DecodeError) Unwrap() error { return e.Err }

// decodeErr puts seg in front of err's path, or starts one.
func decodeErr(seg string, err error) error {
	if de, ok := err.(*DecodeError); ok {
		return &DecodeError{Path: append([]string{seg}, de.Path...), Err: de.Err}
	}
	return &DecodeError{Path: []string{seg}, Err: err}
}

// decodeErrf is decodeErr with a formatted cause.
func decodeErrf(seg, format string, args ...any) error {
	return &DecodeError{Path: []string{seg}, Err: fmt.Errorf(format, args...)}
}

// notAnObject explains why data could not be walked as an object: either it
// is not JSON at all, or it is JSON of another kind.
func notAnObject(data []byte) error {
	if err := syntaxError(data); err != nil {
		return err
	}
	return fmt.Errorf("want a JSON object, got %s", jsonKind(data))
}

// notAnArray is notAnObject for arrays.
func notAnArray(data []byte) error {
	if err := syntaxError(data); err != nil {
		return err
	}
	return fmt.Errorf("want a JSON array, got %s", jsonKind(data))
}

// syntaxError returns encoding/json's precise error for invalid data, or nil.
func syntaxError(data []byte) error {
	if json.Valid(data) {
		return nil
	}
	var v json.RawMessage
	if err := json.Unmarshal(data, &v); err != nil {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	return errors.New("invalid JSON")
}

// discriminator finds the last member named key in the object in data (the
// one encoding/json would keep) and returns its value's bytes. found is false
// when there is no such member; err is set when data is not an object.
func discriminator(data []byte, key string) (value []byte, found bool, err error) {
	s, ok := newObjectScan(data)
	if !ok {
		return nil, false, notAnObject(data)
	}
	for {
		k, escaped, v, ok := s.next()
		if !ok {
			break
		}
		if escaped || !isPlainJSONString(k) {
			// A key such as "\u0072ole" is "role" too.
			if k, err = unquoteKey(k); err != nil {
				return nil, false, err
			}
		}
		if string(k) == key {
			value, found = v, true
		}
	}
	if s.failed() {
		return nil, false, notAnObject(data)
	}
	return value, found, nil
}

// unquoteKey decodes the bytes between a key's quotes as encoding/json
// would, for keys with escapes or bytes that are not plain UTF-8 text.
func unquoteKey(raw []byte) ([]byte, error) {
	var str string
	if err := json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &str); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	return []byte(str), nil
}

// discriminatorString returns the text of a discriminator value without
// allocating when it is a plain string, so callers can switch on
// string(result) for free.
func discriminatorString(key string, value []byte) ([]byte, error) {
	if len(value) >= 2 && value[0] == '"' && value[len(value)-1] == '"' {
		// Without escapes or invalid UTF-8 (which encoding/json would turn
		// into U+FFFD), the bytes between the quotes are the string.
		if inner := value[1 : len(value)-1]; bytes.IndexByte(inner, '\\') < 0 &&
			bytes.IndexByte(inner, '"') < 0 && utf8.Valid(inner) {
			return inner, nil
		}
	}
	if err := syntaxError(value); err != nil {
		return nil, err
	}
	if jsonKind(value) != "a string" {
		return nil, fmt.Errorf("%s must be a string, got %s", key, jsonKind(value))
	}
	var s string
	if err := json.Unmarshal(value, &s); err != nil {
		return nil, err
	}
	return []byte(s), nil
}

// knownObject describes one known JSON object type: its discriminator
// member ("role" or "type") with the value it must have, and the names of
// the members decoded into fields.
type knownObject struct {
	label     string   // for errors: "user message", "text block"
	discKey   string   // "role" or "type"
	discValue string   // "user", "text", ...
	keys      []string // the members decoded into fields
}

// isKnownKey reports whether key names a field. Field names match
// case-insensitively (see decode), so a key like "Content" has been decoded
// into a field and must not also be written as an extra, or the output
// would repeat a member.
func (o *knownObject) isKnownKey(key string) bool {
	for _, k := range o.keys {
		if strings.EqualFold(k, key) {
			return true
		}
	}
	return false
}

// decode decodes the object in data and returns the members o does not
// know. The discriminator may be absent, since these decoders are also used
// where the type is implied (an AssistantMessageEvent's "partial"); when
// present it must be o.discValue.
//
// It walks the members once, in order, and hands each known one to member,
// which decodes the value into its field. Keys are matched the way
// encoding/json matches struct fields (exact spelling first, then
// bytes.EqualFold; a later member overwrites an earlier one), so the
// result is what a json.Unmarshal into a tagged struct would give. Other
// members are kept, compacted, in the returned map. Our own output has
// only plain known keys, and for it the walk allocates nothing of its own.
func (o *knownObject) decode(data []byte, member func(key, value []byte) (bool, error)) (map[string]json.RawMessage, error) {
	if isJSONNull(data) {
		return nil, nil
	}
	s, ok := newObjectScan(data)
	if !ok {
		return nil, notAnObject(data)
	}
	var (
		disc  []byte
		extra map[string]json.RawMessage
	)
	for {
		key, escaped, v, more := s.next()
		if !more {
			break
		}
		if escaped || !isPlainJSONString(key) {
			var err error
			if key, err = unquoteKey(key); err != nil {
				return nil, err
			}
		}
		if string(key) == o.discKey {
			disc = v
			continue
		}
		if name := o.fieldFor(key); name != nil {
			known, err := member(name, v)
			if err != nil {
				// A bad member value may really be bad JSON further out;
				// report that first, as encoding/json would.
				if serr := syntaxError(data); serr != nil {
					return nil, serr
				}
				return nil, err
			}
			if known {
				continue
			}
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, v); err != nil {
			if serr := syntaxError(data); serr != nil {
				return nil, serr
			}
			return nil, fmt.Errorf("invalid JSON: %w", err)
		}
		if extra == nil {
			extra = make(map[string]json.RawMessage)
		}
		extra[string(key)] = buf.Bytes()
	}
	if s.failed() {
		return nil, notAnObject(data)
	}
	if err := o.checkDiscriminator(disc); err != nil {
		return nil, err
	}
	return extra, nil
}

// fieldFor returns the name of the field key decodes into, as encoding/json
// would choose it, or nil.
func (o *knownObject) fieldFor(key []byte) []byte {
	for _, k := range o.keys {
		if string(key) == k {
			return key
		}
	}
	for _, k := range o.keys {
		if bytes.EqualFold(key, []byte(k)) {
			return []byte(k)
		}
	}
	return nil
}

// named puts the member name in front of a reader's error.
func named(name string, err error) error {
	if err == nil {
		return nil
	}
	return decodeErr(name, err)
}

// checkDiscriminator checks the discriminator's value, if there is one.
func (o *knownObject) checkDiscriminator(value []byte) error {
	if value == nil {
		return nil
	}
	got, err := discriminatorString(o.discKey, value)
	if err != nil {
		return err
	}
	if string(got) != o.discValue {
		return fmt.Errorf("%s is %q, want %q", o.discKey, got, o.discValue)
	}
	return nil
}

// appendExtra writes the members of extra after the known ones, in key
// order so that equal values encode to equal bytes. Keys that name a known
// member are skipped: the field wins, and the output never repeats a key.
func (o *knownObject) appendExtra(b []byte, extra map[string]json.RawMessage) ([]byte, error) {
	if len(extra) == 0 {
		return b, nil
	}
	var small [8]string
	keys := small[:0]
	for k := range extra {
		if k == o.discKey || o.isKnownKey(k) {
			continue
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b = append(b, ',')
		b = appendJSONString(b, k)
		b = append(b, ':')
		var err error
		if b, err = appendRawJSON(b, extra[k]); err != nil {
			return b, fmt.Errorf("core: %s: extra field %q: %w", o.label, k, err)
		}
	}
	return b, nil
}
