package llm

import (
	"fmt"
	"net/http"
	"time"
)

// ProviderOptions are a provider's dependencies. The zero value is usable.
type ProviderOptions struct {
	// HTTPClient sends the requests. Nil means a client on a copy of
	// http.DefaultTransport, which has no overall timeout (streams run as
	// long as the context allows) but gives up on a server that sends no
	// headers for 10 minutes.
	HTTPClient *http.Client
	// Clock stamps each message's timestamp and dates a Retry-After. Nil
	// means time.Now.
	Clock func() time.Time
}

func (o ProviderOptions) clock() func() time.Time {
	if o.Clock == nil {
		return time.Now
	}
	return o.Clock
}

// NewProvider builds the provider cfg.API names, under name (the key of
// models.providers, written into every message's provider field).
func NewProvider(name string, cfg ProviderConfig, opts ProviderOptions) (Provider, error) {
	switch cfg.API {
	case APIAnthropicMessages:
		return NewAnthropic(name, cfg, opts), nil
	case APIOpenAICompletions:
		return NewOpenAI(name, cfg, opts), nil
	case APIEcho:
		return NewEcho(name, opts), nil
	case "":
		return nil, fmt.Errorf("llm: models.providers.%s.api is required; one of anthropic-messages, openai-completions, echo", name)
	default:
		return nil, fmt.Errorf("llm: models.providers.%s.api: unknown api %q; one of anthropic-messages, openai-completions, echo", name, cfg.API)
	}
}

// responseHeaderTimeout bounds the wait for a response's headers, so that a
// server that accepts the connection and never answers fails the call; it
// does not limit how long a response streams.
const responseHeaderTimeout = 10 * time.Minute

// httpClient returns opts.HTTPClient, else a client on a copy of
// http.DefaultTransport with responseHeaderTimeout and
// maxIdleConnsPerHost.
func httpClient(opts ProviderOptions) *http.Client {
	if opts.HTTPClient != nil {
		return opts.HTTPClient
	}
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return &http.Client{Transport: http.DefaultTransport}
	}
	t = t.Clone()
	t.ResponseHeaderTimeout = responseHeaderTimeout
	// net/http keeps two idle connections per host; with more sessions
	// answering at once, every other turn would open (and for a real
	// provider, TLS-handshake) a new one. Keep as many as the lanes can
	// run at once by default (main 4, cron 1, subagents 8) and then some;
	// idle ones still close after IdleConnTimeout (90 s).
	t.MaxIdleConnsPerHost = maxIdleConnsPerHost
	return &http.Client{Transport: t}
}

// maxIdleConnsPerHost bounds the idle connections kept to one provider.
const maxIdleConnsPerHost = 32
