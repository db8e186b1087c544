package llm_test

import (
	"context"
	"net/http/httptrace"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core/llm"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
)

// A provider on the default HTTP client keeps the connections of
// concurrent streams for the next turns: net/http's default keeps two per
// host, so with more sessions answering at once every turn opened (and
// for a real provider, TLS-handshook) a new connection. The client's
// trace says, for each connection a response leaves, whether it went back
// to the idle pool.
func TestDefaultClientKeepsConnectionsOfConcurrentStreams(t *testing.T) {
	const concurrent = 12
	for _, v := range vendors {
		t.Run(v.name, func(t *testing.T) {
			srv := v.newServer(t)
			gate := make(chan struct{})
			for range concurrent {
				srv.Push(llmtest.Text("ok").Gated(gate))
			}
			p, err := llm.NewProvider("prov", srv.Config(testKey), llm.ProviderOptions{Clock: fixedClock})
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var kept, dropped int
			var dropErr error
			done := make(chan struct{}, concurrent)
			conns := make(chan struct{}, concurrent)
			trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { conns <- struct{}{} }, PutIdleConn: func(err error) {
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					dropped++
					dropErr = err
				} else {
					kept++
				}
				done <- struct{}{}
			}}
			ctx := httptrace.WithClientTrace(context.Background(), trace)
			var wg sync.WaitGroup
			for range concurrent {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := p.Stream(ctx, userRequest("hi"), nil); err != nil {
						t.Error(err)
					}
				}()
			}
			// Every request has its connection before any response ends
			// (the gate holds them), so there are twelve.
			deadline := time.After(10 * time.Second)
			for range concurrent {
				select {
				case <-conns:
				case <-deadline:
					t.Fatal("not every request got a connection")
				}
			}
			close(gate)
			wg.Wait()
			for range concurrent {
				select {
				case <-done:
				case <-deadline:
					t.Fatal("the client did not report every connection's return to the pool")
				}
			}
			if dropped > 0 {
				t.Fatalf("%d of %d connections were closed after their response (%v); want all kept", dropped, concurrent, dropErr)
			}
		})
	}
}
