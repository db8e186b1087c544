package llm

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// failure is what a provider learned about a failed call, in vendor-neutral
// terms, for classify.
type failure struct {
	// status is the HTTP status of a failed response; 0 for an error event
	// in the middle of a stream.
	status int
	// header is the failed response's header, for Retry-After.
	header http.Header
	// errType and code are the vendor's error type ("overloaded_error",
	// "invalid_request_error") and code ("context_length_exceeded").
	errType, code string
	// message is the vendor's explanation.
	message string
}

// errorSource names the provider and model a failure belongs to, and knows
// the secret that must not appear in its message.
type errorSource struct {
	provider, model string
	apiKey          string
	now             time.Time
}

// classify turns a failed response or error event into an *Error: whether
// a retry can help, what kind of failure it was, and a message safe to show
// a user. cause is the underlying error, kept (redacted) as Err.
func (s errorSource) classify(f failure, cause error) *Error {
	msg := s.redact(strings.TrimSpace(f.message))
	typ := strings.ToLower(f.errType)
	code := strings.ToLower(f.code)
	e := &Error{
		Kind:       ErrorUnknown,
		StatusCode: f.status,
		Provider:   s.provider,
		Model:      s.model,
		Err:        s.redactErr(cause),
	}
	switch {
	case isContextLength(f.status, typ, code, msg):
		e.Kind = ErrorContextLength
		e.Message = withStatus(orDefault(msg, "the conversation is longer than the model's context window"), f.status)
	case f.status == http.StatusUnauthorized || typ == "authentication_error" || code == "invalid_api_key":
		// The vendor's text may quote part of the key; say what to do instead.
		e.Message = fmt.Sprintf("authentication failed (HTTP %d): check models.providers.%s.apiKey", orStatus(f.status, http.StatusUnauthorized), s.provider)
	case f.status == http.StatusForbidden || typ == "permission_error":
		e.Message = fmt.Sprintf("permission denied (HTTP %d): %s; check models.providers.%s.apiKey and that the key may use model %q",
			orStatus(f.status, http.StatusForbidden), orDefault(msg, "forbidden"), s.provider, s.model)
	case code == "insufficient_quota" || typ == "insufficient_quota" || typ == "billing_error":
		// A 429 that waiting does not cure: the account is out of credit.
		e.Kind = ErrorRateLimit
		e.Message = withStatus(orDefault(msg, "the account has no credit left"), f.status)
	case f.status == http.StatusTooManyRequests || typ == "rate_limit_error" || code == "rate_limit_exceeded":
		e.Kind, e.Retryable = ErrorRateLimit, true
		e.Message = withStatus(orDefault(msg, "rate limited"), f.status)
	case f.status == http.StatusRequestTimeout || typ == "timeout_error":
		e.Kind, e.Retryable = ErrorTimeout, true
		e.Message = withStatus(orDefault(msg, "the provider timed out"), f.status)
	case f.status >= 500 || typ == "overloaded_error" || typ == "api_error" || typ == "server_error" || code == "server_error":
		e.Retryable = true
		e.Message = withStatus(orDefault(msg, "the provider failed"), f.status)
	default:
		e.Message = withStatus(orDefault(msg, "request failed"), f.status)
	}
	if e.Retryable {
		e.RetryAfter = retryAfter(f.header, s.now)
	}
	return e
}

// transport classifies an error that is not an API response: a dropped
// connection, a refused dial, a timeout. Those are worth a retry; anything
// else (a malformed stream, say) is not.
func (s errorSource) transport(err error) *Error {
	e := &Error{
		Kind:     ErrorUnknown,
		Provider: s.provider,
		Model:    s.model,
		Message:  s.redact(err.Error()),
		Err:      s.redactErr(err),
	}
	var ne net.Error
	var op *net.OpError
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		e.Kind, e.Retryable = ErrorTimeout, true
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE),
		errors.As(err, &op):
		e.Retryable = true
	}
	return e
}

// truncated is the error for a stream that ended without its final event:
// the connection dropped, so a retry may succeed.
func (s errorSource) truncated(what string) *Error {
	return &Error{
		Kind:      ErrorUnknown,
		Retryable: true,
		Provider:  s.provider,
		Model:     s.model,
		Message:   "the response stream ended " + what,
		Err:       io.ErrUnexpectedEOF,
	}
}

// missingKey is the error for a call to host, a vendor's endpoint, with no
// API key: the vendor would refuse it (HTTP 401), so it is not sent, and a
// retry cannot help (issue 26, finding 5).
func (s errorSource) missingKey(k missingKey) *Error {
	return &Error{
		Kind:     ErrorUnknown,
		Provider: s.provider,
		Model:    s.model,
		Message: fmt.Sprintf("no API key: models.providers.%s.apiKey is empty and %s refuses requests without one; "+
			"write apiKey: ${%s}, export %s=<your key> and restart", s.provider, k.host, k.variable, k.variable),
	}
}

// missingKey describes a provider's missing API key: the host that needs
// it and the variable to suggest. The zero value means no key is missing.
type missingKey struct {
	host, variable string
}

// missingKeyOf returns what cfg lacks when its endpoint needs an API key
// and cfg has none (see ProviderConfig.KeyRequired); the zero value if
// nothing.
func missingKeyOf(cfg ProviderConfig) missingKey {
	if cfg.APIKey != "" || !cfg.KeyRequired() {
		return missingKey{}
	}
	return missingKey{host: cfg.VendorHost(), variable: cfg.KeyVariable()}
}

// refusal is the error for a response the model declined to give.
func (s errorSource) refusal(msg string) *Error {
	return &Error{Kind: ErrorRefusal, Provider: s.provider, Model: s.model, Message: msg}
}

// redact removes the API key from s.
func (s errorSource) redact(text string) string {
	if s.apiKey == "" {
		return text
	}
	return strings.ReplaceAll(text, s.apiKey, "[redacted]")
}

// redactErr returns err, or, when its message shows the API key (an
// error quoting a response body that echoes the key), an opaque error with
// the key removed: an error chain that leads to the key would leak it to
// whoever logs the cause.
func (s errorSource) redactErr(err error) error {
	if err == nil || s.apiKey == "" {
		return err
	}
	msg := err.Error()
	if !strings.Contains(msg, s.apiKey) {
		return err
	}
	return redactedError(strings.ReplaceAll(msg, s.apiKey, "[redacted]"))
}

// redactedError is an error whose message had the API key removed.
type redactedError string

func (e redactedError) Error() string { return string(e) }

// contextLengthPhrases are how providers say the prompt does not fit:
// Anthropic, OpenAI, vLLM, llama.cpp, Mistral and others.
var contextLengthPhrases = []string{
	"prompt is too long",
	"context length",
	"context_length",
	"maximum context",
	"context window",
	"exceed_context_size",
	"exceeds the available context",
	"input is too long",
	"too many input tokens",
	"reduce the length of the messages",
}

// isContextLength reports a client error saying the prompt is too long.
func isContextLength(status int, typ, code, msg string) bool {
	if code == "context_length_exceeded" || typ == "context_length_exceeded" || typ == "exceed_context_size_error" {
		return true
	}
	if status != 0 && (status < 400 || status >= 500 || status == http.StatusTooManyRequests) {
		return false
	}
	m := strings.ToLower(msg)
	for _, p := range contextLengthPhrases {
		if strings.Contains(m, p) {
			return true
		}
	}
	return false
}

// retryAfter reads how long the provider asked us to wait: retry-after-ms
// (milliseconds, as Anthropic and OpenAI send it), else Retry-After in
// seconds or as an HTTP date relative to now. Zero means not given.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if sec, err := strconv.ParseFloat(v, 64); err == nil {
		if sec > 0 {
			return time.Duration(sec * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// withStatus appends the HTTP status to msg when there was one.
func withStatus(msg string, status int) string {
	if status == 0 {
		return msg
	}
	return fmt.Sprintf("%s (HTTP %d)", msg, status)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func orStatus(status, def int) int {
	if status == 0 {
		return def
	}
	return status
}
