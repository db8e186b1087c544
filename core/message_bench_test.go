package core_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// benchAssistantJSON is a realistic assistant message: a paragraph of text,
// one tool call with a few arguments, and usage, as one transcript line.
var benchAssistantJSON = []byte(`{"role":"assistant","content":[` +
	`{"type":"text","text":"I'll look at the failing test first. The error says the session key is missing a channel segment, so the parser probably rejects keys written before the format change. Let me read the parser and its tests."},` +
	`{"type":"toolCall","id":"toolu_01A09q90qw90lq917835lq9","name":"read","arguments":{"file_path":"/home/user/project/core/sessionkey.go","offset":0,"limit":200}}],` +
	`"api":"anthropic-messages","provider":"anthropic","model":"claude-opus-4-6",` +
	`"usage":{"input":18234,"output":142,"cacheRead":17920,"cacheWrite":314,"totalTokens":18376,"cost":{"input":0.27351,"output":0.01065,"cacheRead":0.026880,"cacheWrite":0.0058875,"total":0.3169275}},` +
	`"stopReason":"toolUse","timestamp":1740000001000}`)

// benchAssistantUnknownJSON is the same message with one unknown member at
// the top level and one in the tool call, which takes the slow path.
var benchAssistantUnknownJSON = []byte(strings.Replace(
	strings.Replace(string(benchAssistantJSON), `"limit":200}}`, `"limit":200},"partialJson":""}`, 1),
	`"timestamp":1740000001000}`, `"timestamp":1740000001000,"responseId":"msg_01XFDUDYJgAACzvnptvVoYEL"}`, 1))

func BenchmarkUnmarshalAssistantMessage(b *testing.B) {
	b.Run("known", func(b *testing.B) { benchUnmarshal(b, benchAssistantJSON) })
	b.Run("unknown-fields", func(b *testing.B) { benchUnmarshal(b, benchAssistantUnknownJSON) })
	// The cost of a generic decode of the same bytes, for comparison.
	b.Run("baseline-map", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(benchAssistantJSON)))
		for b.Loop() {
			var v map[string]any
			if err := json.Unmarshal(benchAssistantJSON, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func benchUnmarshal(b *testing.B, data []byte) {
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := core.UnmarshalMessage(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMarshalAssistantMessage(b *testing.B) {
	m, err := core.UnmarshalMessage(benchAssistantJSON)
	if err != nil {
		b.Fatal(err)
	}
	am := m.(*core.AssistantMessage)
	b.Run("json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(benchAssistantJSON)))
		for b.Loop() {
			if _, err := json.Marshal(am); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("MarshalJSON", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(benchAssistantJSON)))
		for b.Loop() {
			if _, err := am.MarshalJSON(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
