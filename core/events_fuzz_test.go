package core_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// FuzzEvents checks the event decoders like FuzzUnmarshalMessage checks
// messages: no panics, only valid JSON accepted, and encoding stable after
// one round, since the gateway relays events it may have decoded.
func FuzzEvents(f *testing.F) {
	for name, kind := range goldenFiles {
		if kind != goldenAssistantEvent && kind != goldenAgentEvent {
			continue
		}
		for _, doc := range goldenDocs(f, name) {
			f.Add(doc)
		}
	}
	f.Add([]byte(`{"type":"compaction_start","n":1.50}`))
	f.Add([]byte(`{"type":"done","reason":"stop","message":null,"delta":"x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, newEvent := range []func() any{
			func() any { return new(core.AssistantMessageEvent) },
			func() any { return new(core.AgentEvent) },
		} {
			e := newEvent()
			if err := json.Unmarshal(data, e); err != nil {
				continue
			}
			first, err := json.Marshal(e)
			if err != nil {
				t.Fatalf("decoded %T from %q but cannot encode it: %v", e, data, err)
			}
			e2 := newEvent()
			if err := json.Unmarshal(first, e2); err != nil {
				t.Fatalf("cannot decode our own output %s: %v", first, err)
			}
			second, err := json.Marshal(e2)
			if err != nil {
				t.Fatalf("cannot encode %T decoded from %s: %v", e2, first, err)
			}
			if !bytes.Equal(first, second) {
				t.Errorf("%T encoding is not stable:\ninput  %q\nfirst  %s\nsecond %s", e, data, first, second)
			}
		}
	})
}
