package llm_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/llm"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
)

// newRouter returns a router whose provider "p" is srv, with models m1
// and m2 configured, and the sleeper that records its backoff.
func newRouter(t *testing.T, srv *llmtest.Server) (*llm.Router, *sleeper) {
	t.Helper()
	cfg := srv.Config(testKey)
	cfg.Models = []llm.ModelConfig{
		{ID: "m1", MaxTokens: 1000, Cost: llm.ModelCost{Input: 1}},
		{ID: "m2", MaxTokens: 2000},
	}
	sl := &sleeper{}
	r, err := llm.NewRouter(llm.ModelsConfig{Providers: map[string]llm.ProviderConfig{"p": cfg}},
		llm.RouterOptions{HTTPClient: srv.Client(), Clock: fixedClock, Sleep: sl.sleep})
	if err != nil {
		t.Fatal(err)
	}
	return r, sl
}

// requestModels lists the model of each request srv received.
func requestModels(t *testing.T, srv *llmtest.Server) []string {
	var out []string
	for _, r := range srv.Requests() {
		out = append(out, r.JSON(t)["model"].(string))
	}
	return out
}

func TestRouterRetriesRateLimitWithRetryAfter(t *testing.T) {
	for _, v := range vendors {
		t.Run(v.name, func(t *testing.T) {
			srv := v.newServer(t, llmtest.RateLimited("7"), llmtest.Text("Hello", " again"))
			r, sl := newRouter(t, srv)
			rec := &recorder{}
			msg, err := r.Stream(context.Background(), []string{"p/m1"}, userRequest("hi"), rec.emit)
			if err != nil {
				t.Fatal(err)
			}
			if got := sl.got(); !slices.Equal(got, []time.Duration{7 * time.Second}) {
				t.Errorf("sleeps = %v, want [7s]", got)
			}
			if n := len(srv.Requests()); n != 2 {
				t.Errorf("%d requests, want 2", n)
			}
			wantTypes(t, rec, "start", "text_start:0", "text_delta:0", "text_delta:0", "text_end:0", "done(stop)")
			if msg.Text() != "Hello again" || msg.Model != "m1" || msg.Provider != "p" {
				t.Errorf("message = %+v", msg)
			}
		})
	}
}

func TestRouterRetryAfterIsCapped(t *testing.T) {
	srv := llmtest.NewAnthropicServer(t, llmtest.RateLimited("3600"), llmtest.Text("ok"))
	r, sl := newRouter(t, srv)
	if _, err := r.Stream(context.Background(), []string{"p/m1"}, userRequest("hi"), nil); err != nil {
		t.Fatal(err)
	}
	if got := sl.got(); !slices.Equal(got, []time.Duration{time.Minute}) {
		t.Errorf("sleeps = %v, want [1m0s]", got)
	}
}

func TestRouterRetriesErrorEventBeforeContent(t *testing.T) {
	srv := llmtest.NewAnthropicServer(t, llmtest.MidStreamError("overloaded_error"), llmtest.Text("ok"))
	r, sl := newRouter(t, srv)
	rec := &recorder{}
	msg, err := r.Stream(context.Background(), []string{"p/m1"}, userRequest("hi"), rec.emit)
	if err != nil || msg.Text() != "ok" {
		t.Fatalf("Stream = %+v, %v", msg, err)
	}
	wantTypes(t, rec, "start", "text_start:0", "text_delta:0", "text_end:0", "done(stop)")
	if len(sl.got()) != 1 || len(srv.Requests()) != 2 {
		t.Errorf("sleeps %v, requests %d", sl.got(), len(srv.Requests()))
	}
}

func TestRouterContextTooLongIsFinal(t *testing.T) {
	for _, v := range vendors {
		t.Run(v.name, func(t *testing.T) {
			srv := v.newServer(t, llmtest.ContextTooLong(), llmtest.Text("unused"))
			r, sl := newRouter(t, srv)
			rec := &recorder{}
			msg, err := r.Stream(context.Background(), []string{"p/m1", "p/m2"}, userRequest("hi"), rec.emit)
			e := asError(t, err)
			if e.Kind != llm.ErrorContextLength || e.Retryable {
				t.Errorf("error = %+v", e)
			}
			if n := len(srv.Requests()); n != 1 || len(sl.got()) != 0 {
				t.Errorf("%d requests, sleeps %v; want 1 request, no retry or fallback", n, sl.got())
			}
			wantTypes(t, rec, "start", "error(error)")
			if msg.StopReason != core.StopReasonError || msg.Model != "m1" {
				t.Errorf("message = %+v", msg)
			}
		})
	}
}

func TestRouterFallsBackAfterRetriesExhausted(t *testing.T) {
	for _, v := range vendors {
		t.Run(v.name, func(t *testing.T) {
			srv := v.newServer(t,
				llmtest.HTTPError(503, nil, ""), llmtest.HTTPError(503, nil, ""),
				llmtest.HTTPError(503, nil, ""), llmtest.HTTPError(503, nil, ""),
				llmtest.Text("from m2"))
			r, sl := newRouter(t, srv)
			rec := &recorder{}
			msg, err := r.Stream(context.Background(), []string{"p/m1", "p/m2"}, userRequest("hi"), rec.emit)
			if err != nil {
				t.Fatal(err)
			}
			if got := requestModels(t, srv); !slices.Equal(got, []string{"m1", "m1", "m1", "m1", "m2"}) {
				t.Errorf("models = %v", got)
			}
			// 1s, 2s, 4s, each ±20%.
			got := sl.got()
			if len(got) != 3 {
				t.Fatalf("sleeps = %v", got)
			}
			for i, base := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
				if lo, hi := base*8/10, base*12/10; got[i] < lo || got[i] > hi {
					t.Errorf("sleep %d = %v, want %v..%v", i, got[i], lo, hi)
				}
			}
			wantTypes(t, rec, "start", "text_start:0", "text_delta:0", "text_end:0", "done(stop)")
			if msg.Model != "m2" || msg.Text() != "from m2" {
				t.Errorf("message = %+v", msg)
			}
			// m2's limits came from the configuration.
			if body := srv.Requests()[4].JSON(t); v.api == llm.APIAnthropicMessages && body["max_tokens"] != 2000.0 {
				t.Errorf("max_tokens = %v", body["max_tokens"])
			}
		})
	}
}

func TestRouterAllModelsFail(t *testing.T) {
	srv := llmtest.NewAnthropicServer(t,
		llmtest.HTTPError(401, nil, ""), // not retryable: straight to m2
		llmtest.HTTPError(500, nil, ""), llmtest.HTTPError(500, nil, ""),
		llmtest.HTTPError(500, nil, ""), llmtest.HTTPError(500, nil, ""))
	r, sl := newRouter(t, srv)
	rec := &recorder{}
	msg, err := r.Stream(context.Background(), []string{"p/m1", "p/m2"}, userRequest("hi"), rec.emit)
	e := asError(t, err)
	if e.StatusCode != 500 || e.Model != "m2" || msg.Model != "m2" || msg.StopReason != core.StopReasonError {
		t.Errorf("error %+v, message %+v", e, msg)
	}
	if got := requestModels(t, srv); !slices.Equal(got, []string{"m1", "m2", "m2", "m2", "m2"}) {
		t.Errorf("models = %v", got)
	}
	if len(sl.got()) != 3 {
		t.Errorf("sleeps = %v", sl.got())
	}
	wantTypes(t, rec, "start", "error(error)")
}

func TestRouterNoRetryOnceContentStreamed(t *testing.T) {
	for _, v := range vendors {
		t.Run(v.name, func(t *testing.T) {
			errType := "overloaded_error"
			if v.api == llm.APIOpenAICompletions {
				errType = "server_error"
			}
			srv := v.newServer(t, llmtest.MidStreamError(errType, "partial"), llmtest.Text("unused"))
			r, sl := newRouter(t, srv)
			rec := &recorder{}
			msg, err := r.Stream(context.Background(), []string{"p/m1", "p/m2"}, userRequest("hi"), rec.emit)
			e := asError(t, err)
			if !e.Retryable {
				t.Errorf("error = %+v, want the retryable error returned as is", e)
			}
			if n := len(srv.Requests()); n != 1 || len(sl.got()) != 0 || srv.Remaining() != 1 {
				t.Errorf("%d requests, sleeps %v", n, sl.got())
			}
			wantTypes(t, rec, "start", "text_start:0", "text_delta:0", "error(error)")
			if msg.Text() != "partial" || msg.StopReason != core.StopReasonError {
				t.Errorf("message = %+v", msg)
			}
		})
	}
}

func TestRouterCancelDuringBackoff(t *testing.T) {
	srv := llmtest.NewAnthropicServer(t, llmtest.HTTPError(529, nil, ""), llmtest.Text("unused"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, err := llm.NewRouter(llm.ModelsConfig{Providers: map[string]llm.ProviderConfig{"p": srv.Config(testKey)}},
		llm.RouterOptions{HTTPClient: srv.Client(), Sleep: func(ctx context.Context, d time.Duration) error {
			cancel() // the user gave up while we waited
			<-ctx.Done()
			return ctx.Err()
		}})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	msg, err := r.Stream(ctx, []string{"p/m1", "p/m2"}, userRequest("hi"), rec.emit)
	if !errors.Is(err, context.Canceled) || msg.StopReason != core.StopReasonAborted {
		t.Errorf("Stream = %+v, %v", msg, err)
	}
	wantTypes(t, rec, "start", "error(aborted)")
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests", n)
	}
}

func TestRouterCancelMidStream(t *testing.T) {
	srv := llmtest.NewOpenAIServer(t, llmtest.Text("a ", "b ", "c").HangAfter(2), llmtest.Text("unused"))
	r, sl := newRouter(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &recorder{onEvent: func(e event) {
		if e.Type == core.AssistantEventTextDelta && e.Delta == "b " {
			cancel()
		}
	}}
	msg, err := r.Stream(ctx, []string{"p/m1", "p/m2"}, userRequest("hi"), rec.emit)
	if !errors.Is(err, context.Canceled) || msg.StopReason != core.StopReasonAborted || msg.Text() != "a b " {
		t.Errorf("Stream = %+v, %v", msg, err)
	}
	wantTypes(t, rec, "start", "text_start:0", "text_delta:0", "text_delta:0", "error(aborted)")
	if len(srv.Requests()) != 1 || len(sl.got()) != 0 {
		t.Errorf("requests %d, sleeps %v", len(srv.Requests()), sl.got())
	}
}

func TestRouterResolve(t *testing.T) {
	r, err := llm.NewRouter(llm.ModelsConfig{Providers: map[string]llm.ProviderConfig{
		"anthropic": {API: llm.APIAnthropicMessages, APIKey: testKey, Models: []llm.ModelConfig{{ID: "claude-x", ContextWindow: 200000, MaxTokens: 64000}}},
		"local":     {API: llm.APIOpenAICompletions, BaseURL: "http://127.0.0.1:11434/v1"},
	}}, llm.RouterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		ref     string
		model   llm.ModelConfig
		wantErr string
	}{
		{"anthropic/claude-x", llm.ModelConfig{ID: "claude-x", ContextWindow: 200000, MaxTokens: 64000}, ""},
		{"anthropic/claude-unlisted", llm.ModelConfig{ID: "claude-unlisted"}, ""},
		{"local/qwen/qwen3:8b", llm.ModelConfig{ID: "qwen/qwen3:8b"}, ""},
		{"echo/echo", llm.ModelConfig{ID: "echo"}, ""},
		{"nope/x", llm.ModelConfig{}, `no provider "nope"`},
		{"no-slash", llm.ModelConfig{}, "<provider>/<model>"},
	}
	for _, tt := range tests {
		p, m, err := r.Resolve(tt.ref)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Resolve(%q) error = %v, want %q", tt.ref, err, tt.wantErr)
			}
			continue
		}
		if err != nil || p == nil || !equalModel(m, tt.model) {
			t.Errorf("Resolve(%q) = %v, %+v, %v", tt.ref, p, m, err)
		}
	}
}

func equalModel(a, b llm.ModelConfig) bool {
	return a.ID == b.ID && a.ContextWindow == b.ContextWindow && a.MaxTokens == b.MaxTokens && a.Cost == b.Cost
}

func TestNewRouterErrors(t *testing.T) {
	for name, pc := range map[string]llm.ProviderConfig{
		"no api":   {},
		"bad url":  {API: llm.APIOpenAICompletions, BaseURL: "ftp://x"},
		"bad api":  {API: "grpc"},
		"no model": {API: llm.APIEcho, Models: []llm.ModelConfig{{}}},
	} {
		_, err := llm.NewRouter(llm.ModelsConfig{Providers: map[string]llm.ProviderConfig{"x": pc}}, llm.RouterOptions{})
		if err == nil || !strings.Contains(err.Error(), "models.providers.x") {
			t.Errorf("%s: error = %v", name, err)
		}
	}
}

func TestRouterInjectedProviderAndFallbackOverUnknownRef(t *testing.T) {
	scripted := llmtest.NewScriptedProvider(llmtest.Text("scripted ", "reply"))
	scripted.Name = "fake"
	var logs bytes.Buffer
	r, err := llm.NewRouter(llm.ModelsConfig{}, llm.RouterOptions{
		Providers: map[string]llm.Provider{"fake": scripted},
		Logger:    slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	msg, err := r.Stream(context.Background(), []string{"missing/x", "fake/model-a"}, userRequest("hi"), rec.emit)
	if err != nil || msg.Text() != "scripted reply" {
		t.Fatalf("Stream = %+v, %v", msg, err)
	}
	wantTypes(t, rec, "start", "text_start:0", "text_delta:0", "text_delta:0", "text_end:0", "done(stop)")
	reqs := scripted.Requests()
	if len(reqs) != 1 || reqs[0].Model.ID != "model-a" {
		t.Errorf("requests = %+v", reqs)
	}
	if !strings.Contains(logs.String(), "falling back") || strings.Contains(logs.String(), testKey) {
		t.Errorf("logs = %s", logs.String())
	}
}

func TestRouterUnknownOnlyRef(t *testing.T) {
	r, err := llm.NewRouter(llm.ModelsConfig{}, llm.RouterOptions{Clock: fixedClock})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	msg, err := r.Stream(context.Background(), []string{"missing/x"}, userRequest("hi"), rec.emit)
	if err == nil || msg == nil || msg.StopReason != core.StopReasonError || msg.Provider != "missing" || msg.Timestamp != fixedTime.UnixMilli() {
		t.Errorf("Stream = %+v, %v", msg, err)
	}
	wantTypes(t, rec, "start", "error(error)")
	msg, err = r.Stream(context.Background(), nil, userRequest("hi"), nil)
	if err == nil || msg == nil || !strings.Contains(err.Error(), "agents.defaults.model.primary") {
		t.Errorf("no refs: %+v, %v", msg, err)
	}
}

func TestRouterBindAndEcho(t *testing.T) {
	r, err := llm.NewRouter(llm.ModelsConfig{}, llm.RouterOptions{Clock: fixedClock})
	if err != nil {
		t.Fatal(err)
	}
	p := r.Bind("echo/echo")
	rec := &recorder{}
	msg, err := p.Stream(context.Background(), userRequest("ping pong"), rec.emit)
	if err != nil || msg.Text() != "echo: ping pong" || msg.API != "echo" || msg.Provider != "echo" || msg.Model != "echo" {
		t.Errorf("Stream = %+v, %v", msg, err)
	}
	wantTypes(t, rec, "start", "text_start:0", "text_delta:0", "text_delta:0", "text_delta:0", "text_end:0", "done(stop)")
}

func TestRouterConcurrentUse(t *testing.T) {
	srv := llmtest.NewOpenAIServer(t)
	for range 8 {
		srv.Push(llmtest.Text("x"))
	}
	r, _ := newRouter(t, srv)
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			_, err := r.Stream(context.Background(), []string{"p/m1"}, userRequest("hi"), nil)
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

func TestScriptedProviderHTTPErrorsThroughRouter(t *testing.T) {
	scripted := llmtest.NewScriptedProvider(
		llmtest.HTTPError(http.StatusServiceUnavailable, http.Header{"Retry-After": {"2"}}, ""),
		llmtest.Text("ok"))
	sl := &sleeper{}
	r, err := llm.NewRouter(llm.ModelsConfig{}, llm.RouterOptions{Providers: map[string]llm.Provider{"s": scripted}, Sleep: sl.sleep})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	if _, err := r.Stream(context.Background(), []string{"s/m"}, userRequest("hi"), rec.emit); err != nil {
		t.Fatal(err)
	}
	if got := sl.got(); !slices.Equal(got, []time.Duration{2 * time.Second}) {
		t.Errorf("sleeps = %v", got)
	}
	if rec.count(core.AssistantEventStart) != 1 {
		t.Errorf("events = %v", rec.types())
	}
}
