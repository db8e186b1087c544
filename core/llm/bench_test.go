package llm_test

import (
	"context"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
)

// benchmarkStream streams a 200-delta text reply from a fake server per
// iteration: the client's SSE parsing, our event mapping and the in-process
// server's writes (its rendering is cached).
func benchmarkStream(b *testing.B, newServer func(testing.TB, ...llmtest.Response) *llmtest.Server) {
	parts := make([]string, 200)
	for i := range parts {
		parts[i] = "word "
	}
	resp := llmtest.Text(parts...).WithUsage(llmtest.Usage{Input: 100, Output: 200})
	srv := newServer(b)
	p := newProvider("bench", srv)
	req := userRequest("hi")
	events := 0
	emit := func(core.AssistantMessageEvent) { events++ }
	b.ReportAllocs()
	for b.Loop() {
		srv.Push(resp)
		msg, err := p.Stream(context.Background(), req, emit)
		if err != nil || len(msg.Text()) != 1000 {
			b.Fatalf("Stream = %v, %v", msg, err)
		}
	}
	b.ReportMetric(float64(events)/float64(b.N), "events/op")
}

func BenchmarkAnthropicStream(b *testing.B) { benchmarkStream(b, llmtest.NewAnthropicServer) }

func BenchmarkOpenAIStream(b *testing.B) { benchmarkStream(b, llmtest.NewOpenAIServer) }
