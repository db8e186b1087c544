package llm

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		header http.Header
		want   time.Duration
	}{
		{nil, 0},
		{http.Header{}, 0},
		{http.Header{"Retry-After": {"7"}}, 7 * time.Second},
		{http.Header{"Retry-After": {" 1.5 "}}, 1500 * time.Millisecond},
		{http.Header{"Retry-After": {"0"}}, 0},
		{http.Header{"Retry-After": {"-3"}}, 0},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second},
		{http.Header{"Retry-After": {now.Add(-time.Hour).Format(http.TimeFormat)}}, 0},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond},
		{http.Header{"Retry-After-Ms": {"x"}, "Retry-After": {"9"}}, 9 * time.Second},
	}
	for _, tt := range tests {
		if got := retryAfter(tt.header, now); got != tt.want {
			t.Errorf("retryAfter(%v) = %v, want %v", tt.header, got, tt.want)
		}
	}
}

func TestClassify(t *testing.T) {
	src := errorSource{provider: "p", model: "m", apiKey: "KEY-123"}
	tests := []struct {
		f         failure
		kind      ErrorKind
		retryable bool
		msg       string
	}{
		{failure{status: 429, message: "slow down"}, ErrorRateLimit, true, "slow down (HTTP 429)"},
		{failure{status: 429, code: "insufficient_quota", message: "You exceeded your current quota"}, ErrorRateLimit, false, "quota"},
		{failure{errType: "rate_limit_error", message: "x"}, ErrorRateLimit, true, "x"},
		{failure{status: 529, errType: "overloaded_error", message: "Overloaded"}, ErrorUnknown, true, "Overloaded (HTTP 529)"},
		{failure{errType: "overloaded_error"}, ErrorUnknown, true, "the provider failed"},
		{failure{status: 400, message: "prompt is too long: 208310 tokens > 200000 maximum"}, ErrorContextLength, false, "prompt is too long"},
		{failure{status: 400, code: "context_length_exceeded"}, ErrorContextLength, false, "context window"},
		{failure{status: 413, message: "Request exceeds the maximum context window"}, ErrorContextLength, false, ""},
		{failure{status: 500, message: "maximum context length is broken"}, ErrorUnknown, true, ""},
		{failure{status: 429, message: "too many tokens per minute; context length fine"}, ErrorRateLimit, true, ""},
		{failure{status: 401, message: "Incorrect API key provided: KEY-***"}, ErrorUnknown, false, "check models.providers.p.apiKey"},
		{failure{status: 403, message: "key KEY-123 may not use m"}, ErrorUnknown, false, "key [redacted] may not use m"},
		{failure{status: 408}, ErrorTimeout, true, "HTTP 408"},
		{failure{status: 400, message: "bad"}, ErrorUnknown, false, "bad (HTTP 400)"},
		{failure{message: "mid-stream nonsense", errType: "invalid_request_error"}, ErrorUnknown, false, "mid-stream nonsense"},
	}
	for _, tt := range tests {
		e := src.classify(tt.f, nil)
		if e.Kind != tt.kind || e.Retryable != tt.retryable || !strings.Contains(e.Message, tt.msg) || strings.Contains(e.Message, "KEY-123") {
			t.Errorf("classify(%+v) = kind %q retryable %v %q; want %q %v containing %q", tt.f, e.Kind, e.Retryable, e.Message, tt.kind, tt.retryable, tt.msg)
		}
		if e.Provider != "p" || e.Model != "m" || e.StatusCode != tt.f.status {
			t.Errorf("classify(%+v) = %+v", tt.f, e)
		}
	}
}

func TestTransportErrors(t *testing.T) {
	src := errorSource{provider: "p", model: "m", apiKey: "KEY-123"}
	timeout := &net.OpError{Op: "read", Err: &timeoutErr{}}
	tests := []struct {
		err       error
		kind      ErrorKind
		retryable bool
	}{
		{fmt.Errorf("read: %w", io.ErrUnexpectedEOF), ErrorUnknown, true},
		{&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, ErrorUnknown, true},
		{fmt.Errorf("x: %w", syscall.ECONNRESET), ErrorUnknown, true},
		{timeout, ErrorTimeout, true},
		{errors.New("invalid character 'x' looking for beginning of value"), ErrorUnknown, false},
	}
	for _, tt := range tests {
		e := src.transport(tt.err)
		if e.Kind != tt.kind || e.Retryable != tt.retryable {
			t.Errorf("transport(%v) = %+v", tt.err, e)
		}
		if !errors.Is(e, tt.err) {
			t.Errorf("transport(%v) lost its cause", tt.err)
		}
	}
	leaky := fmt.Errorf("Post %q: refused", "http://u:KEY-123@host")
	e := src.transport(leaky)
	if strings.Contains(e.Error(), "KEY-123") || strings.Contains(e.Err.Error(), "KEY-123") || errors.Unwrap(e.Err) != nil {
		t.Errorf("key leaked: %q / %q", e.Error(), e.Err)
	}
}

type timeoutErr struct{}

func (*timeoutErr) Error() string   { return "i/o timeout" }
func (*timeoutErr) Timeout() bool   { return true }
func (*timeoutErr) Temporary() bool { return true }

func TestBackoff(t *testing.T) {
	for n, base := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second} {
		for range 50 {
			d := backoff(n, 0)
			if d < base*8/10 || d > base*12/10 {
				t.Fatalf("backoff(%d) = %v, want %v ±20%%", n, d, base)
			}
		}
	}
	if d := backoff(0, 5*time.Second); d != 5*time.Second {
		t.Errorf("backoff with Retry-After 5s = %v", d)
	}
	if d := backoff(2, 10*time.Minute); d != time.Minute {
		t.Errorf("backoff with Retry-After 10m = %v", d)
	}
}
