package llm

import (
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// FuzzOpenAIChunk feeds server chunk data (outside input) through the
// decoder and the stream handler: neither may panic, and whatever the
// chunks, the builder finishes a message.
func FuzzOpenAIChunk(f *testing.F) {
	for _, seed := range []string{
		`{"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}`,
		`{"choices":[{"index":0,"delta":{"reasoning_content":"r","tool_calls":[{"index":0,"id":"a","function":{"name":"read","arguments":"{\"p\":1}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"x"}}]}}]}`,
		`{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":20}}}`,
		`{"choices":[{"index":1,"delta":{"content":5,"reasoning":{}}}]}`,
		`{"choices":null,"usage":null}`,
		`[]`, `"x"`, `{`,
	} {
		f.Add(seed, `{"choices":[{"index":0,"delta":{"content":"end"},"finish_reason":"stop"}]}`)
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		bl := NewMessageBuilder(APIOpenAICompletions, "p", ModelConfig{ID: "m"}, time.Unix(0, 0), func(core.AssistantMessageEvent) {})
		bl.Start()
		s := openaiStream{b: bl, cur: -1, now: time.Unix(0, 0)}
		for _, data := range []string{a, b} {
			var c openaiChunk
			if c.decodeChunk([]byte(data)) == nil {
				s.handle(c)
			}
		}
		if msg, _ := bl.Done(core.StopReasonStop); msg == nil {
			t.Fatal("no message")
		}
	})
}
