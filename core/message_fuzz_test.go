package core_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// FuzzUnmarshalMessage checks that decoding never panics, accepts only
// valid JSON, and that encoding is a fixed point after one round: whatever
// UnmarshalMessage accepts, Marshal, UnmarshalMessage, Marshal gives the
// same bytes as the first Marshal. That is what lets a transcript be
// rewritten any number of times without drifting.
func FuzzUnmarshalMessage(f *testing.F) {
	for name, kind := range goldenFiles {
		if kind != goldenMessage {
			continue
		}
		for _, doc := range goldenDocs(f, name) {
			f.Add(doc)
		}
	}
	for _, s := range []string{
		`{"role":"bashExecution","command":"ls","nested":{"a":[1.50,2e3]}}`,
		`{"role":"user","content":[{"type":"redacted_thinking","data":"x"}],"timestamp":1,"extra":{"k": [ 1 ]}}`,
		`{"role":"user","Content":"a","content":"b","\u0074imestamp":2,"x":1,"x":2}`,
		`{"role":"toolResult","toolCallId":"c","content":[],"details":null,"isError":true}`,
		`{"role":"assistant","content":[{"type":"toolCall","id":"1","name":"n","arguments":null,"thoughtSignature":"s","z":0}],"usage":{"cost":{"total":1e-7}}}`,
		`{"role":"us\u0065r","content":"<&>\u2028","timestamp":-1}`,
		`{"role":"x\xffy"}`,
		"{\"role\":\"\x970&000000\"}",
		`{"role":5}`,
		`[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := core.UnmarshalMessage(data)
		if err != nil {
			return
		}
		// The decoders walk JSON themselves; they must not accept what
		// encoding/json rejects.
		if !json.Valid(data) {
			t.Fatalf("accepted invalid JSON %q as %T", data, m)
		}
		first, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("decoded %T from %q but cannot encode it: %v", m, data, err)
		}
		m2, err := core.UnmarshalMessage(first)
		if err != nil {
			t.Fatalf("cannot decode our own output %s: %v", first, err)
		}
		if m2.Role() != m.Role() {
			t.Errorf("role changed from %q to %q", m.Role(), m2.Role())
		}
		second, err := json.Marshal(m2)
		if err != nil {
			t.Fatalf("cannot encode %T decoded from %s: %v", m2, first, err)
		}
		if !bytes.Equal(first, second) {
			t.Errorf("encoding is not stable:\ninput  %q\nfirst  %s\nsecond %s", data, first, second)
		}
	})
}
