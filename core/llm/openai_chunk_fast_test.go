package llm

import (
	"reflect"
	"testing"
)

// chunkSeeds are chunks as servers send them, and near misses.
var chunkSeeds = []string{
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1730000000,"model":"gpt-4o","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1730000000,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":" world"},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"x","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}`,
	`{"choices":[{"index":0,"delta":{"content":"caf\u00e9 \"q\"\n"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"a"},"delta":{"refusal":"no"},"finish_reason":"x","finish_reason":null}]}`,
	`{"choices":[{"index":0,"delta":{"content":null,"refusal":"I can't"}}]}`,
	`{"choices":[],"usage":{"prompt_tokens":1}}`,
	`{"choices":[]}`, `{"choices":null}`, `{}`, ` { "choices" : [ { "index" : 2 , "delta" : { "content" : "x" } } ] } `,
	`{"choices":[{"index":01}]}`, `{"choices":[{"index":1.5}]}`, `{"choices":[{"index":-0}]}`,
	`{"choices":[{"index":0,"delta":{"content":"\x"}}]}`, "{\"choices\":[{\"delta\":{\"content\":\"\xff\"}}]}",
	`{"Choices":[{"index":0}]}`, `{"choices":[{"index":0}],"choices":[{"index":1}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0}]}}]}`,
	`{"id":"a\u0041\n\/","model":"\ud83d\ude00","choices":[]}`, `{"id":"\q"}`, `{"id":"\u12"}`, "{\"id\":\"\xff\",\"choices\":[]}",
	`{"error":{"message":"boom"}}`, `null`, `{"choices":[{"index":0}]} x`, `{"created":true}`,
}

// Whatever the fast path accepts, it decodes exactly as the lenient
// decoder does; the seeds include both kinds.
func FuzzChunkFastPath(f *testing.F) {
	for _, s := range chunkSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var fast openaiChunk
		if !fastChunk(b, &fast) {
			return
		}
		var slow openaiChunk
		if err := slow.UnmarshalJSON(b); err != nil {
			t.Fatalf("fast path accepted %q, which the decoder refuses: %v", b, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q:\nfast %+v\nslow %+v", b, fast, slow)
		}
	})
}

// The common shapes do take the fast path, and a shape it does not know
// still decodes.
func TestChunkFastPathTakesCommonChunks(t *testing.T) {
	for _, i := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 13} {
		s := chunkSeeds[i]
		var c openaiChunk
		if !fastChunk([]byte(s), &c) {
			t.Errorf("fast path refused %s", s)
		}
	}
	var c openaiChunk
	if err := c.decodeChunk([]byte(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"n","arguments":"{}"}}]}}]}`)); err != nil ||
		len(c.Choices) != 1 || len(c.Choices[0].Delta.ToolCalls) != 1 || c.Choices[0].Delta.ToolCalls[0].Function.Name != "n" {
		t.Fatalf("tool call chunk: %+v, %v", c, err)
	}
}

// BenchmarkChunkDecode decodes a typical content chunk.
func BenchmarkChunkDecode(b *testing.B) {
	data := []byte(chunkSeeds[1])
	b.ReportAllocs()
	for b.Loop() {
		var c openaiChunk
		if err := c.decodeChunk(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkChunkDecodeLenient is BenchmarkChunkDecode through
// encoding/json, for comparison.
func BenchmarkChunkDecodeLenient(b *testing.B) {
	data := []byte(chunkSeeds[1])
	b.ReportAllocs()
	for b.Loop() {
		var c openaiChunk
		if err := c.UnmarshalJSON(data); err != nil {
			b.Fatal(err)
		}
	}
}
