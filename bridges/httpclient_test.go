package bridges_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/bridges"
)

// Replies sent to one platform at once keep their connections for the
// next ones: the client's trace reports, for each response, whether its
// connection went back to the idle pool (net/http's default keeps two per
// host and closes the rest).
func TestAPIHTTPClientKeepsConcurrentConnections(t *testing.T) {
	const concurrent = 8
	hold := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-hold
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	defer srv.Close()
	c := bridges.APIHTTPClient()
	defer c.CloseIdleConnections()
	conns, back := make(chan struct{}, concurrent), make(chan error, concurrent)
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		GotConn:     func(httptrace.GotConnInfo) { conns <- struct{}{} },
		PutIdleConn: func(err error) { back <- err },
	})
	var wg sync.WaitGroup
	for range concurrent {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/sendMessage", nil)
			resp, err := c.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}()
	}
	deadline := time.After(10 * time.Second)
	for range concurrent { // every request holds a connection of its own
		select {
		case <-conns:
		case <-deadline:
			t.Fatal("not every request got a connection")
		}
	}
	close(hold)
	wg.Wait()
	for range concurrent {
		select {
		case err := <-back:
			if err != nil {
				t.Fatalf("a connection was closed after its response: %v", err)
			}
		case <-deadline:
			t.Fatal("the client did not report every connection's return")
		}
	}
}
