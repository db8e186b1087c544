package bridges

import (
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/url"
	"syscall"
	"time"
)

// A bridge reports a failure with Sink.State(state, err). Two wrappers let
// err say more than its text, for channels.status and the web page (issue
// 26, finding 8: raw Go errors, and no word of when the bridge would try
// again):
//
//   - RetryIn(err, d): the bridge waits d before trying again. The
//     Tracker turns it into Status.RetryAt.
//   - Summarized(err, "rate limited"): a few words a person reads in
//     place of err's text, where only the bridge knows what err means (a
//     platform library's error type). Summarize finds it, and otherwise
//     words network failures and states itself.
//
// Neither changes err's text, which stays the detail (Status.LastError).

// RetryError is a failure after which the bridge tries again in Delay.
type RetryError struct {
	// Err is the failure.
	Err error
	// Delay is the wait before the next attempt.
	Delay time.Duration
}

// Error returns Err's text.
func (e *RetryError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *RetryError) Unwrap() error { return e.Err }

// RetryIn returns err marked with the wait before the bridge's next
// attempt; nil when err is nil.
func RetryIn(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	return &RetryError{Err: err, Delay: d}
}

// summarizedError is an error with the words Summarize gives for it.
type summarizedError struct {
	err     error
	summary string
}

func (e *summarizedError) Error() string { return e.err.Error() }
func (e *summarizedError) Unwrap() error { return e.err }

// Summarized returns err with summary, a few words saying what went wrong
// ("rate limited", "token refused"), which Summarize returns for it; nil
// when err is nil.
func Summarized(err error, summary string) error {
	if err == nil {
		return nil
	}
	return &summarizedError{err: err, summary: summary}
}

// Summarize says in a few words what err, reported with state s, means for
// the person reading the bridge's status: the words a bridge gave with
// Summarized, else what the network failure was and with which host
// ("cannot reach proxy.example:443"), else what the state says. It is ""
// when err is nil and s is not a failure. It does no IO.
func Summarize(s State, err error) string {
	var se *summarizedError
	if errors.As(err, &se) {
		return se.summary
	}
	if err != nil {
		if why := networkSummary(err); why != "" {
			return why
		}
	}
	switch s {
	case StateBadCredentials:
		return "token refused"
	case StateLoggedOut:
		return "logged out; link the account again"
	case StateConflict:
		return "another client is using this account's connection"
	case StateFailed:
		return "refused by the platform"
	case StateTransientDisconnect:
		return "connection lost"
	}
	if err != nil {
		return "failed"
	}
	return ""
}

// networkSummary words a failure to reach a server, naming the host the
// request went to; "" when err is not one.
func networkSummary(err error) string {
	host := ""
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil {
			host = u.Host
		}
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		if dns.IsNotFound {
			return "cannot find the server " + dns.Name + " (no such host)"
		}
		return "cannot look up the server " + dns.Name
	}
	var op *net.OpError
	if errors.As(err, &op) && host == "" && op.Addr != nil {
		host = op.Addr.String()
	}
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var ne net.Error
	switch {
	case errors.As(err, &unknownAuthority), errors.As(err, &hostname), errors.As(err, &invalid):
		return "the TLS certificate of " + orServer(host) + " is not trusted"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "cannot reach " + orServer(host) + " (connection refused)"
	case errors.As(err, &ne) && ne.Timeout():
		return orServer(host) + " did not answer in time"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		return "the connection to " + orServer(host) + " dropped"
	case op != nil:
		return "cannot reach " + orServer(host)
	}
	return ""
}

func orServer(host string) string {
	if host == "" {
		return "the server"
	}
	return host
}
