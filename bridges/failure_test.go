package bridges

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"
)

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

func TestSummarize(t *testing.T) {
	get := func(err error) error {
		return &url.Error{Op: "Get", URL: "https://proxy.example/api/v9/gateway/bot", Err: err}
	}
	dial := func(err error) error { return &net.OpError{Op: "dial", Net: "tcp", Err: err} }
	for _, tt := range []struct {
		state State
		err   error
		want  string
	}{
		{StateTransientDisconnect, get(dial(os.NewSyscallError("connect", syscall.ECONNREFUSED))), "cannot reach proxy.example (connection refused)"},
		{StateTransientDisconnect, get(dial(&net.DNSError{Err: "no such host", Name: "proxy.example", IsNotFound: true})), "cannot find the server proxy.example (no such host)"},
		{StateTransientDisconnect, get(dial(timeoutError{})), "proxy.example did not answer in time"},
		{StateTransientDisconnect, get(io.ErrUnexpectedEOF), "the connection to proxy.example dropped"},
		{StateTransientDisconnect, get(x509.UnknownAuthorityError{}), "the TLS certificate of proxy.example is not trusted"},
		{StateTransientDisconnect, &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 443}, Err: errors.New("network is unreachable")},
			"cannot reach 10.0.0.1:443"},
		// Wrapped, retried and summarized by the bridge: its words win.
		{StateTransientDisconnect, RetryIn(fmt.Errorf("discord: %w", Summarized(get(io.EOF), "Discord is rate limiting this bot")), time.Second), "Discord is rate limiting this bot"},
		{StateBadCredentials, errors.New("401 Unauthorized"), "token refused"},
		{StateLoggedOut, errors.New("device removed"), "logged out; link the account again"},
		{StateConflict, errors.New("409"), "another client is using this account's connection"},
		{StateFailed, errors.New("banned"), "refused by the platform"},
		{StateTransientDisconnect, errors.New("websocket: close 1006"), "connection lost"},
		{StateStarting, errors.New("odd"), "failed"},
		{StateConnected, nil, ""},
		{StateTransientDisconnect, context.DeadlineExceeded, "the server did not answer in time"},
	} {
		if got := Summarize(tt.state, tt.err); got != tt.want {
			t.Errorf("Summarize(%s, %v) = %q, want %q", tt.state, tt.err, got, tt.want)
		}
	}
}

func TestTrackerRetryAt(t *testing.T) {
	now := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	tr := NewTracker("x", "default", func() time.Time { return now }, nil)
	tr.Set(StateTransientDisconnect, RetryIn(errors.New("boom"), 20*time.Second))
	if st := tr.Status(); !st.RetryAt.Equal(now.Add(20*time.Second)) || st.LastError != "boom" || st.Summary != "connection lost" {
		t.Errorf("after a failure: %+v", st)
	}
	tr.Set(StateStarting, nil)
	if st := tr.Status(); !st.RetryAt.IsZero() || st.LastError != "boom" {
		t.Errorf("retrying: %+v; want no retry due and the error kept", st)
	}
	if RetryIn(nil, time.Second) != nil || Summarized(nil, "x") != nil {
		t.Error("a nil error was wrapped")
	}
}
