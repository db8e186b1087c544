package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/core/llm"
)

// Server is a fake model API: an httptest server that answers each request
// with the next Response of its script, in the vendor's real wire format
// (SSE events as the vendor sends them, vendor error bodies and headers),
// and records every request. It is closed when the test ends.
type Server struct {
	// URL is the server's root URL.
	URL string
	// BaseURL is the baseUrl a provider configuration uses to reach the
	// server: the root for Anthropic, root+"/v1" for OpenAI.
	BaseURL string

	t      testing.TB
	vendor vendor
	srv    *httptest.Server
	done   chan struct{}

	mu       sync.Mutex
	script   []Response
	requests []Request
}

// Request is a request a Server received.
type Request struct {
	// Method and Path are the request line's, such as "POST" and
	// "/v1/messages".
	Method, Path string
	// Header is the request's header (x-api-key, Authorization, extra
	// headers...).
	Header http.Header
	// Body is the JSON body as sent.
	Body []byte
}

// JSON decodes the body into a generic map, failing t if it is not a JSON
// object.
func (r Request) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("llmtest: request body is not a JSON object: %v\n%s", err, r.Body)
	}
	return m
}

// vendor renders Responses in one vendor's wire format.
type vendor interface {
	name() string
	api() llm.API
	path() string
	baseURL(root string) string
	// render turns a reply into the SSE events of its stream.
	render(r Response, model string) []sseEvent
	// errorBody is the vendor's JSON error body for an HTTP error.
	errorBody(r Response) string
	// streamHeader sets the headers of a streaming response.
	streamHeader(h http.Header)
}

func newServer(t testing.TB, v vendor, script []Response) *Server {
	s := &Server{t: t, vendor: v, done: make(chan struct{}), script: slices.Clone(script)}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	s.BaseURL = v.baseURL(s.srv.URL)
	t.Cleanup(func() {
		// Release handlers held by HangAfter or Gated first: Close waits
		// for them.
		close(s.done)
		s.srv.Close()
	})
	return s
}

// Client returns an HTTP client for the server whose idle connections are
// closed with it, for ProviderOptions.HTTPClient.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// Config returns a provider configuration that reaches the server with
// apiKey.
func (s *Server) Config(apiKey string) llm.ProviderConfig {
	return llm.ProviderConfig{API: s.vendor.api(), BaseURL: s.BaseURL, APIKey: apiKey}
}

// Push appends responses to the script.
func (s *Server) Push(r ...Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, r...)
}

// Requests returns the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Remaining returns how many scripted responses have not been used.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script)
}

func (s *Server) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	n := len(s.requests) + 1
	s.requests = append(s.requests, Request{Method: req.Method, Path: req.URL.Path, Header: req.Header.Clone(), Body: body})
	resp, ok := Response{}, len(s.script) > 0
	if ok {
		resp, s.script = s.script[0], s.script[1:]
	}
	s.mu.Unlock()

	if req.Method != http.MethodPost || req.URL.Path != s.vendor.path() {
		s.t.Errorf("llmtest: %s server: request %d: %s %s, want POST %s", s.vendor.name(), n, req.Method, req.URL.Path, s.vendor.path())
		http.NotFound(w, req)
		return
	}
	if !ok {
		s.t.Errorf("llmtest: %s server: request %d: the script has no response left", s.vendor.name(), n)
		resp = HTTPError(http.StatusInternalServerError, nil, "")
	}
	reqID := fmt.Sprintf("req_llmtest_%d", n)
	if resp.status != 0 {
		h := w.Header()
		for k, vs := range resp.header {
			h[http.CanonicalHeaderKey(k)] = slices.Clone(vs)
		}
		h.Set("Content-Type", "application/json")
		h.Set("Request-Id", reqID)
		b := resp.body
		if b == "" {
			b = s.vendor.errorBody(resp)
		}
		w.WriteHeader(resp.status)
		_, _ = io.WriteString(w, b)
		return
	}

	var head struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(body, &head)
	events := resp.cache.get(s.vendor.name()+"\x00"+head.Model, func() []sseEvent {
		if resp.raw != "" {
			return []sseEvent{{data: []byte(resp.raw)}}
		}
		return s.vendor.render(resp, head.Model)
	})
	s.vendor.streamHeader(w.Header())
	w.Header().Set("Request-Id", reqID)
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	if flusher != nil {
		flusher.Flush()
	}
	deltas := 0
	for _, ev := range events {
		if resp.gate != nil {
			select {
			case <-resp.gate:
			case <-req.Context().Done():
				return
			case <-s.done:
				return
			}
		}
		if _, err := w.Write(ev.data); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
		if ev.delta {
			deltas++
			if deltas == resp.hangAfter {
				select {
				case <-req.Context().Done():
				case <-s.done:
				}
				return
			}
		}
	}
}

// quote returns s as a JSON string.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// sse formats one server-sent event; an empty name writes data only.
func sse(name, data string, delta bool) sseEvent {
	var b strings.Builder
	if name != "" {
		b.WriteString("event: ")
		b.WriteString(name)
		b.WriteByte('\n')
	}
	b.WriteString("data: ")
	b.WriteString(data)
	b.WriteString("\n\n")
	return sseEvent{data: []byte(b.String()), delta: delta}
}
