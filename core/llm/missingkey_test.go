package llm_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/llm"
)

// countingTransport fails every request as a machine without DNS does,
// counting them.
type countingTransport struct{ n atomic.Int32 }

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return nil, &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: req.URL.Hostname(), IsNotFound: true}}
}

// Issue 26, finding 5: with its key's variable unset, the agent called
// Anthropic with no key, and retried three times. A vendor's endpoint
// refuses a request without a key, so none is sent: the call fails at
// once, naming the key to set, and is neither retried nor waited on.
func TestFinding5EmptyKeyIsNotSentOrRetried(t *testing.T) {
	for _, api := range []llm.API{llm.APIAnthropicMessages, llm.APIOpenAICompletions} {
		t.Run(string(api), func(t *testing.T) {
			rt := &countingTransport{}
			sl := &sleeper{}
			r, err := llm.NewRouter(llm.ModelsConfig{Providers: map[string]llm.ProviderConfig{"vendor": {API: api}}},
				llm.RouterOptions{HTTPClient: &http.Client{Transport: rt}, Clock: fixedClock, Sleep: sl.sleep})
			if err != nil {
				t.Fatal(err)
			}
			rec := &recorder{}
			msg, err := r.Stream(context.Background(), []string{"vendor/m1"}, userRequest("hi"), rec.emit)
			e := asError(t, err)
			if e.Retryable || !strings.Contains(e.Message, "models.providers.vendor.apiKey is empty") || !strings.Contains(e.Message, "refuses requests without one") {
				t.Errorf("error = %+v", e)
			}
			if n := rt.n.Load(); n != 0 || len(sl.got()) != 0 {
				t.Errorf("%d requests sent, sleeps %v; want none", n, sl.got())
			}
			if msg.StopReason != core.StopReasonError {
				t.Errorf("message = %+v", msg)
			}
			wantTypes(t, rec, "start", "error(error)")
		})
	}
}

// A key in a header, or a server of one's own, needs no apiKey: the
// request is sent.
func TestEmptyKeySentWhereNoneIsRequired(t *testing.T) {
	for name, pc := range map[string]llm.ProviderConfig{
		"header":    {API: llm.APIAnthropicMessages, Headers: map[string]string{"X-Api-Key": "sk-in-a-header"}},
		"own":       {API: llm.APIOpenAICompletions, BaseURL: "http://127.0.0.1:11434/v1"},
		"anthropic": {API: llm.APIAnthropicMessages, BaseURL: "https://proxy.example/anthropic"},
	} {
		t.Run(name, func(t *testing.T) {
			rt := &countingTransport{}
			r, err := llm.NewRouter(llm.ModelsConfig{Providers: map[string]llm.ProviderConfig{"p": pc}},
				llm.RouterOptions{HTTPClient: &http.Client{Transport: rt}, Clock: fixedClock, Sleep: (&sleeper{}).sleep})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Stream(context.Background(), []string{"p/m1"}, userRequest("hi"), nil); err == nil || rt.n.Load() == 0 {
				t.Errorf("err %v after %d requests; want the request sent", err, rt.n.Load())
			}
		})
	}
}

func TestKeyRequired(t *testing.T) {
	for _, tt := range []struct {
		pc   llm.ProviderConfig
		host string
		need bool
	}{
		{llm.ProviderConfig{API: llm.APIAnthropicMessages}, "api.anthropic.com", true},
		{llm.ProviderConfig{API: llm.APIAnthropicMessages, BaseURL: "https://API.anthropic.com/"}, "api.anthropic.com", true},
		{llm.ProviderConfig{API: llm.APIOpenAICompletions}, "api.openai.com", true},
		{llm.ProviderConfig{API: llm.APIOpenAICompletions, BaseURL: "https://api.openai.com/v1"}, "api.openai.com", true},
		{llm.ProviderConfig{API: llm.APIOpenAICompletions, Headers: map[string]string{"authorization": "Bearer x"}}, "api.openai.com", false},
		{llm.ProviderConfig{API: llm.APIOpenAICompletions, BaseURL: "http://127.0.0.1:11434/v1"}, "", false},
		{llm.ProviderConfig{API: llm.APIEcho}, "", false},
	} {
		if host, need := tt.pc.VendorHost(), tt.pc.KeyRequired(); host != tt.host || need != tt.need {
			t.Errorf("%+v: VendorHost %q, KeyRequired %v; want %q, %v", tt.pc, host, need, tt.host, tt.need)
		}
	}
}
