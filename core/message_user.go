package core

import (
	"encoding/json"
	"strconv"
)

// UserMessage is what the user (or a channel on their behalf) said (seed 000
// §3.1).
type UserMessage struct {
	Content UserContent `json:"content"`
	// Timestamp is when the message was made, in Unix milliseconds.
	Timestamp int64 `json:"timestamp"`
	// Provenance is set when a person did not write the message (a
	// heartbeat poll, a cron prompt, the /new prompt); nil for a person's.
	Provenance *InputProvenance `json:"provenance,omitempty"`
	// Extra holds the members this version does not know, keyed by name,
	// their values compacted. MarshalJSON writes them after the known
	// members in key order, so a transcript line written by a newer program
	// survives a rewrite; keys that name a known member (or "role") are not
	// written. Nil for messages without unknown members.
	Extra map[string]json.RawMessage `json:"-"`
}

var userObject = knownObject{
	label: "user message", discKey: "role", discValue: RoleUser,
	keys: []string{"content", "timestamp", "provenance"},
}

// NewUserText returns a plain-text user message, the common case of a chat
// message without attachments; ts is in Unix milliseconds.
func NewUserText(text string, ts int64) *UserMessage {
	return &UserMessage{Content: UserContent{Text: text}, Timestamp: ts}
}

// Role returns "user".
func (*UserMessage) Role() string { return RoleUser }

// Text returns the message's text: Content.Text for string content, or the
// text blocks concatenated for array content.
func (m *UserMessage) Text() string {
	if m.Content.Blocks == nil {
		return m.Content.Text
	}
	return m.Content.Blocks.Text()
}

// MarshalJSON writes the message with "role" first.
func (m *UserMessage) MarshalJSON() ([]byte, error) { return m.appendJSON(nil) }

func (m *UserMessage) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"role":"user","content":`...)
	b, err := m.Content.appendJSON(b)
	if err != nil {
		return b, err
	}
	b = append(b, `,"timestamp":`...)
	b = strconv.AppendInt(b, m.Timestamp, 10)
	if m.Provenance != nil {
		p, err := json.Marshal(m.Provenance)
		if err != nil {
			return b, err
		}
		b = append(b, `,"provenance":`...)
		b = append(b, p...)
	}
	b, err = userObject.appendExtra(b, m.Extra)
	return append(b, '}'), err
}

// UnmarshalJSON reads a user message; a "role" other than "user" is an
// error, a missing one is accepted.
func (m *UserMessage) UnmarshalJSON(data []byte) error {
	*m = UserMessage{}
	extra, err := userObject.decode(data, m.readMember)
	if err != nil {
		return decodeErr(userObject.label, err)
	}
	m.Extra = extra
	return nil
}

func (m *UserMessage) readMember(k, v []byte) (bool, error) {
	switch string(k) {
	case "content":
		return true, m.Content.UnmarshalJSON(v)
	case "timestamp":
		return true, named("timestamp", readInt(v, &m.Timestamp))
	case "provenance":
		p, err := readProvenance(v)
		m.Provenance = p
		return true, named("provenance", err)
	}
	return false, nil
}

// UserContent is a user message's content, which the seed allows to be
// either a string or an array of blocks. When Blocks is not nil it is
// written as an array (an empty non-nil Blocks as []) and Text is ignored;
// otherwise Text is written as a string. Decoding keeps the form it read:
// a string sets Text and leaves Blocks nil, an array sets Blocks non-nil.
type UserContent struct {
	Text   string
	Blocks Content
}

// Compile-time checks that UserContent encodes itself.
var (
	_ json.Marshaler   = UserContent{}
	_ json.Unmarshaler = (*UserContent)(nil)
)

// MarshalJSON writes Blocks as an array when it is not nil, else Text as a
// string.
func (c UserContent) MarshalJSON() ([]byte, error) { return c.appendJSON(nil) }

func (c UserContent) appendJSON(b []byte) ([]byte, error) {
	if c.Blocks != nil {
		return c.Blocks.appendJSON(b)
	}
	return appendJSONString(b, c.Text), nil
}

// UnmarshalJSON accepts a string or an array of blocks; null leaves both
// fields zero.
func (c *UserContent) UnmarshalJSON(data []byte) error {
	*c = UserContent{}
	i := skipJSONSpace(data, 0)
	switch {
	case isJSONNull(data):
		return nil
	case i < len(data) && data[i] == '"':
		if err := readString(data[i:], &c.Text); err != nil {
			return decodeErr("content", err)
		}
		return nil
	case i < len(data) && data[i] == '[':
		var blocks Content
		if err := blocks.UnmarshalJSON(data); err != nil {
			return err
		}
		c.Blocks = blocks
		return nil
	default:
		if err := syntaxError(data); err != nil {
			return decodeErr("content", err)
		}
		return decodeErrf("content", "want a string or an array, got %s", jsonKind(data))
	}
}
