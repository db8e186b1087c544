package llm

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// API names the wire protocol a provider speaks.
type API string

// The wire protocols Switchboard speaks.
const (
	// APIAnthropicMessages is Anthropic's Messages API with streaming.
	APIAnthropicMessages API = "anthropic-messages"
	// APIOpenAICompletions is OpenAI's Chat Completions API with streaming,
	// also served by Ollama, vLLM and llama.cpp.
	APIOpenAICompletions API = "openai-completions"
	// APIEcho needs no network: it answers with the words of the last user
	// message.
	APIEcho API = "echo"
)

// EnumValues lists the accepted values, for validation messages and the
// JSON Schema.
func (API) EnumValues() []string {
	return []string{string(APIAnthropicMessages), string(APIOpenAICompletions), string(APIEcho)}
}

// UnmarshalText accepts one of EnumValues.
func (a *API) UnmarshalText(b []byte) error {
	s := API(strings.TrimSpace(string(b)))
	for _, v := range a.EnumValues() {
		if string(s) == v {
			*a = s
			return nil
		}
	}
	return fmt.Errorf("unknown api %q", s)
}

// ModelsConfig is the `models:` section of the configuration.
type ModelsConfig struct {
	// Providers maps a provider name, used in "<provider>/<model>"
	// references, to how to reach it.
	Providers map[string]ProviderConfig `json:"providers,omitempty"`
}

// ProviderConfig says how to reach one model provider.
type ProviderConfig struct {
	// API is the wire protocol: anthropic-messages, openai-completions, or
	// echo (no network; replies with the prompt, for demos and tests).
	API API `json:"api"`
	// BaseURL overrides the API endpoint, for example
	// "http://127.0.0.1:11434/v1" for Ollama. Empty means the vendor's public
	// endpoint.
	BaseURL string `json:"baseUrl,omitempty" secretURL:"apiKey"`
	// APIKey authenticates with the provider. Write it as
	// "${ANTHROPIC_API_KEY}" so the secret stays in the environment. When a
	// model reference uses this provider and it is the vendor's endpoint
	// (no baseUrl), `switchboard run` and `config check` refuse an empty
	// key; commands that manage the daemon never need it.
	APIKey string `json:"apiKey,omitempty" config:"secret"`
	// Headers are extra HTTP headers sent with every request.
	Headers map[string]string `json:"headers,omitempty"`
	// Models describes the models of this provider that Switchboard should
	// know limits and prices for. A model referenced but not listed still
	// works, with unknown limits and zero cost.
	Models []ModelConfig `json:"models,omitempty"`
}

// ModelConfig describes one model's limits and prices.
type ModelConfig struct {
	// ID is the provider's model id, as sent in the API request.
	ID string `json:"id"`
	// ContextWindow is the model's context size in tokens; history is pruned
	// and compacted to fit it. Zero means unknown.
	ContextWindow int `json:"contextWindow,omitempty" min:"0"`
	// MaxTokens caps the tokens generated per response. Zero means the
	// provider's default.
	MaxTokens int `json:"maxTokens,omitempty" min:"0"`
	// Cost is the price per million tokens, used to report the cost of each
	// response.
	Cost ModelCost `json:"cost,omitzero"`
}

// ModelCost is a model's price in US dollars per million tokens.
type ModelCost struct {
	// Input is the price of a million input tokens.
	Input float64 `json:"input,omitempty" min:"0"`
	// Output is the price of a million output tokens.
	Output float64 `json:"output,omitempty" min:"0"`
	// CacheRead is the price of a million tokens read from the prompt cache.
	CacheRead float64 `json:"cacheRead,omitempty" min:"0"`
	// CacheWrite is the price of a million tokens written to the prompt cache.
	CacheWrite float64 `json:"cacheWrite,omitempty" min:"0"`
}

// VendorHost returns the host of the vendor's public endpoint the provider
// speaks to, api.anthropic.com or api.openai.com, or "" when baseUrl names
// another server or the API needs no network.
func (p ProviderConfig) VendorHost() string {
	var public string
	switch p.API {
	case APIAnthropicMessages:
		public = anthropicBaseURL
	case APIOpenAICompletions:
		public = openaiBaseURL
	default:
		return ""
	}
	base := p.BaseURL
	if base == "" {
		base = public
	}
	u, err := url.Parse(base)
	pu, _ := url.Parse(public)
	if err != nil || !strings.EqualFold(u.Hostname(), pu.Hostname()) {
		return ""
	}
	return pu.Hostname()
}

// KeyVariable returns the environment variable the vendor's own tools read
// the key from, ANTHROPIC_API_KEY or OPENAI_API_KEY, to suggest when the
// configuration names none; "" for the echo API.
func (p ProviderConfig) KeyVariable() string {
	switch p.API {
	case APIAnthropicMessages:
		return "ANTHROPIC_API_KEY"
	case APIOpenAICompletions:
		return "OPENAI_API_KEY"
	}
	return ""
}

// KeyRequired reports whether calls to the provider fail without an API
// key: it speaks to the vendor's public endpoint (VendorHost), which
// refuses a request without one, and no header in Headers carries a
// credential instead. A server of one's own (Ollama, vLLM) may need none.
func (p ProviderConfig) KeyRequired() bool {
	if p.VendorHost() == "" {
		return false
	}
	for k := range p.Headers {
		switch strings.ToLower(k) {
		case "authorization", "x-api-key", "api-key":
			return false
		}
	}
	return true
}

// Validate reports providers without an api, malformed base URLs and models
// without an id.
func (p ProviderConfig) Validate() error {
	var errs []error
	if p.API == "" {
		errs = append(errs, core.FieldErrorf("api", "required; one of ", strings.Join(p.API.EnumValues(), ", ")))
	}
	if p.BaseURL != "" {
		u, err := url.Parse(p.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, core.FieldErrorf("baseUrl", "must be an http or https URL such as https://api.example.com/v1"))
		} else if u.User != nil || u.RawQuery != "" {
			// A key in the URL ends up in logs and error messages.
			errs = append(errs, core.FieldErrorf("baseUrl", "must not carry credentials or a query string; put the key in apiKey"))
		}
	}
	seen := map[string]bool{}
	for i, m := range p.Models {
		switch {
		case strings.TrimSpace(m.ID) == "":
			errs = append(errs, core.FieldErrorf(fmt.Sprintf("models[%d].id", i), "required"))
		case seen[m.ID]:
			errs = append(errs, core.FieldErrorf(fmt.Sprintf("models[%d].id", i), fmt.Sprintf("model %q is listed twice", m.ID)))
		}
		seen[m.ID] = true
	}
	return errors.Join(errs...)
}
