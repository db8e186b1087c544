package llm

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// A server that holds the response open after [DONE] does not hold the
// turn: the rest is read for a bounded time, then the request is ended,
// the reply stands, and the provider stops waiting for that server's
// responses to end.
func TestStreamHeldOpenAfterDoneStillEnds(t *testing.T) {
	released := make(chan struct{}, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"hello"}}]}`+"\n\n"+
			`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n"+
			"data: [DONE]\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // until the client gives up on the rest
		released <- struct{}{}
	}))
	defer srv.Close()
	p, err := NewProvider("prov", ProviderConfig{API: APIOpenAICompletions, BaseURL: srv.URL, APIKey: "k"},
		ProviderOptions{HTTPClient: srv.Client(), Clock: func() time.Time { return time.Unix(0, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	req := &Request{Model: ModelConfig{ID: "m"}, Messages: []core.Message{core.NewUserText("hi", 1)}}
	for i := range 2 {
		msg, err := p.Stream(context.Background(), req, nil)
		if err != nil || msg.StopReason != core.StopReasonStop || msg.Content.Text() != "hello" {
			t.Fatalf("call %d: Stream = %+v, %v; want hello, stop", i, msg, err)
		}
		select {
		case <-released:
		case <-time.After(10 * time.Second):
			t.Fatalf("call %d: the request was never ended", i)
		}
		if !p.(*OpenAI).drainer.lingers.Load() {
			t.Fatalf("call %d: the provider still waits for this server's responses to end", i)
		}
	}
}
