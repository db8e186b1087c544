package egress

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"syscall"
	"time"
)

// Defaults of Options; each field's comment says where it applies.
const (
	DefaultTimeout          = 30 * time.Second
	DefaultMaxResponseBytes = 20 << 20
	DefaultUserAgent        = "Switchboard/1"
	DefaultMaxRedirects     = 5
)

// ErrBlockedAddress is returned (wrapped) when a URL's host is, or resolves
// to, an address a Client must not reach: loopback, private, link-local
// (cloud metadata), or another reserved range (see IsBlockedIP). It is a
// policy refusal, not a transient failure: retrying will not help.
var ErrBlockedAddress = errors.New("only public internet hosts may be reached; use the host's public name or address")

// ErrInvalidURL is returned (wrapped) for a URL that is not an absolute
// http(s) URL that may be used as given.
var ErrInvalidURL = errors.New("invalid URL")

// ErrTooLarge is returned (wrapped) by a response body read past
// Options.MaxResponseBytes, and by Do for a response that announces a
// larger Content-Length.
var ErrTooLarge = errors.New("response is larger than allowed")

// StatusError is a response with a status outside 2xx, from PostJSON.
type StatusError struct {
	// StatusCode is the HTTP status, e.g. 500.
	StatusCode int
	// Body is the start of the response body, at most 200 characters, with
	// control characters replaced, for the error message.
	Body string
}

// Error names the status and quotes the start of the body.
func (e *StatusError) Error() string {
	s := fmt.Sprintf("status %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Body != "" {
		s += ": " + strconv.Quote(e.Body)
	}
	return s
}

// Options configure a Client. The zero value is production's policy with
// the defaults above.
type Options struct {
	// Timeout bounds a whole request: resolving, connecting, every
	// redirect and reading the response body. Zero means DefaultTimeout.
	Timeout time.Duration
	// MaxResponseBytes caps each response body: reading past it fails with
	// ErrTooLarge. Zero means DefaultMaxResponseBytes (20 MiB).
	MaxResponseBytes int64
	// AllowPrivate lets requests reach loopback and private networks
	// (127/8, ::1, RFC 1918, fc00::/7), for tests against httptest servers.
	// Link-local (including the 169.254.169.254 metadata service),
	// unspecified, multicast and the other reserved ranges stay refused.
	// Production leaves it false.
	AllowPrivate bool
	// Resolver looks up host names; nil means net.DefaultResolver. Tests
	// inject fakes.
	Resolver interface {
		LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
	}
	// UserAgent is sent with requests that set none; zero means
	// DefaultUserAgent.
	UserAgent string
	// AllowAddr, when set, replaces the address policy (IsBlockedIP and
	// AllowPrivate): it reports whether an address may be dialled. It is
	// asked before dialling, for every resolved address, and again for the
	// address the socket actually connects to. Tests use it to treat one
	// httptest listener as a public host so that redirects and mixed DNS
	// answers can be exercised without real egress; production leaves it
	// nil.
	AllowAddr func(netip.AddrPort) bool
	// MaxRedirects is how many redirects a request follows, each checked
	// like the first request. Zero means DefaultMaxRedirects; a negative
	// value follows none.
	MaxRedirects int
}

// ipResolver is Options.Resolver's type; *net.Resolver implements it.
type ipResolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// Client makes HTTP requests to untrusted URLs. It dials only addresses its
// policy permits, uses no proxy (a proxy would resolve and connect out of
// reach of the dial-time check), follows a bounded number of redirects
// under the same rules, and caps each response in time and size. It is safe
// for concurrent use.
type Client struct {
	hc           *http.Client
	rt           *transport
	resolver     ipResolver
	policy       addrPolicy
	maxBody      int64
	maxRedirects int
	timeout      time.Duration
}

// New returns a Client configured by o.
func New(o Options) *Client {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = DefaultMaxResponseBytes
	}
	switch {
	case o.MaxRedirects == 0:
		o.MaxRedirects = DefaultMaxRedirects
	case o.MaxRedirects < 0:
		o.MaxRedirects = 0
	}
	c := &Client{
		resolver:     o.Resolver,
		policy:       addrPolicy{allowPrivate: o.AllowPrivate, allow: o.AllowAddr},
		maxBody:      o.MaxResponseBytes,
		maxRedirects: o.MaxRedirects,
		timeout:      o.Timeout,
	}
	if c.resolver == nil {
		c.resolver = net.DefaultResolver
	}
	c.rt = &transport{
		c:         c,
		userAgent: cmp.Or(o.UserAgent, DefaultUserAgent),
		base: &http.Transport{
			Proxy:       nil,
			DialContext: c.dialContext,
			// Each request goes to a host someone else chose: pooling
			// buys little and would leave idle sockets open.
			DisableKeepAlives:      true,
			MaxResponseHeaderBytes: 64 << 10,
		},
	}
	c.hc = c.HTTPClient()
	return c
}

// HTTPClient returns an *http.Client with the Client's policy, for
// libraries that take one (media downloads). Each call returns a new
// *http.Client sharing the Client's transport; replacing its Transport or
// CheckRedirect removes the protection. Its errors are net/http's
// *url.Error, which names the whole URL; Do, Get and PostJSON redact it.
func (c *Client) HTTPClient() *http.Client {
	return &http.Client{Transport: c.rt, CheckRedirect: c.checkRedirect, Timeout: c.timeout}
}

// Do sends req under the Client's policy. The response body fails with
// ErrTooLarge when read past MaxResponseBytes, and a response announcing a
// larger Content-Length is refused before its body is read; the caller
// closes the body as with http.Client.Do. Errors name the target by scheme
// and host only, since paths and queries often carry tokens.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	method := cmp.Or(req.Method, http.MethodGet)
	if req.URL == nil {
		return nil, fmt.Errorf("%s: %w: no URL", method, ErrInvalidURL)
	}
	target := redactURL(req.URL, false)
	if err := checkTarget(req.URL, c.policy); err != nil {
		return nil, fmt.Errorf("%s %s: %w: %w", method, target, ErrInvalidURL, err)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, target, unwrapURLError(err))
	}
	return resp, nil
}

// Get fetches rawURL with Do.
func (c *Client) Get(ctx context.Context, rawURL string) (*http.Response, error) {
	req, err := c.newRequest(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, err
	}
	return c.Do(req)
}

// PostJSON sends body, which must already be JSON, to rawURL with
// Content-Type application/json. A 2xx response is read up to
// MaxResponseBytes and discarded (a bigger one is cut off, not an error);
// any other status is a *StatusError quoting the start of the body.
func (c *Client) PostJSON(ctx context.Context, rawURL string, body []byte) error {
	req, err := c.newRequest(ctx, http.MethodPost, rawURL, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		// Read what the server sends, up to the cap, so it sees a clean
		// exchange.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, c.maxBody))
		return nil
	}
	head := make([]byte, min(c.maxBody, 4*maxErrorBody))
	n, _ := io.ReadFull(resp.Body, head)
	return fmt.Errorf("%s %s: %w", http.MethodPost, redactURL(req.URL, false), &StatusError{StatusCode: resp.StatusCode, Body: errorBodySnippet(head[:n])})
}

// newRequest builds a request whose parse errors do not repeat the URL.
func (c *Client) newRequest(ctx context.Context, method, rawURL string, body []byte) (*http.Request, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w: %v", method, redactRawURL(rawURL), ErrInvalidURL, unwrapURLError(err))
	}
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), r)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, redactURL(u, false), unwrapURLError(err))
	}
	return req, nil
}

// checkRedirect applies the first request's rules to every hop.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > c.maxRedirects {
		return fmt.Errorf("stopped after %d redirects; use the final URL", c.maxRedirects)
	}
	if err := checkTarget(req.URL, c.policy); err != nil {
		return fmt.Errorf("redirect to %s: %w", redactURL(req.URL, false), err)
	}
	return nil
}

// dialContext resolves addr's host, refuses the lot if any address is
// blocked, and dials the checked addresses in order; the dialer's Control
// checks the connected address once more.
func (c *Client) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("port %q: %w", portStr, err)
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else {
		answers, err := c.resolver.LookupIPAddr(ctx, host)
		if err != nil {
			return nil, fmt.Errorf("resolve %s: %w", host, err)
		}
		for _, a := range answers {
			ip, ok := netip.AddrFromSlice(a.IP)
			if !ok {
				return nil, fmt.Errorf("resolve %s: malformed address %v: %w", host, a.IP, ErrBlockedAddress)
			}
			ips = append(ips, ip.Unmap().WithZone(a.Zone))
		}
		if len(ips) == 0 {
			return nil, fmt.Errorf("resolve %s: no addresses", host)
		}
	}
	// Every answer is checked before any is dialled: a name resolving to
	// one public and one private address is refused outright.
	targets := make([]netip.AddrPort, len(ips))
	for i, ip := range ips {
		targets[i] = netip.AddrPortFrom(ip, uint16(port))
		if why := c.policy.refusal(targets[i]); why != "" {
			return nil, fmt.Errorf("%s resolves to %s, which is %s: %w", host, ip, why, ErrBlockedAddress)
		}
	}
	d := net.Dialer{Control: c.controlDial}
	var firstErr error
	for _, t := range targets {
		conn, err := d.DialContext(ctx, network, t.String())
		if err == nil {
			return conn, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil || errors.Is(err, ErrBlockedAddress) {
			break
		}
	}
	return nil, firstErr
}

// controlDial runs on the socket before it connects, with the address the
// kernel is about to connect to.
func (c *Client) controlDial(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("connecting to %q, which is not an address: %w", address, ErrBlockedAddress)
	}
	ap = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	if why := c.policy.refusal(ap); why != "" {
		return fmt.Errorf("connecting to %s, which is %s: %w", ap.Addr(), why, ErrBlockedAddress)
	}
	return nil
}

// transport checks each request's URL, sets the User-Agent, and caps each
// response body. It serves Do and HTTPClient alike, so a library handed
// HTTPClient gets the first request checked as well as the redirects.
type transport struct {
	c         *Client
	base      *http.Transport
	userAgent string
}

// RoundTrip implements http.RoundTripper.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := checkTarget(req.URL, t.c.policy); err != nil {
		if req.Body != nil {
			_ = req.Body.Close() // RoundTrip must close it, even on error
		}
		return nil, fmt.Errorf("%w: %w", ErrInvalidURL, err)
	}
	if req.Header.Get("User-Agent") == "" {
		req = req.Clone(req.Context()) // a RoundTripper must not modify its request
		req.Header.Set("User-Agent", t.userAgent)
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	limit := t.c.maxBody
	if resp.ContentLength > limit && req.Method != http.MethodHead {
		_ = resp.Body.Close()
		return nil, fmt.Errorf("%w: %d bytes announced, the limit is %d", ErrTooLarge, resp.ContentLength, limit)
	}
	resp.Body = &cappedBody{rc: resp.Body, left: limit, limit: limit}
	return resp, nil
}

// cappedBody passes a response body through until limit bytes have been
// read, then fails with ErrTooLarge if the body has more: the excess is
// never read, let alone buffered.
type cappedBody struct {
	rc    io.ReadCloser
	left  int64
	limit int64
	over  bool
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.over {
		return 0, b.tooLarge()
	}
	if len(p) == 0 {
		return 0, nil
	}
	if b.left <= 0 {
		// Probe one byte: a body of exactly limit bytes ends here.
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			b.over = true
			return 0, b.tooLarge()
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *cappedBody) tooLarge() error {
	return fmt.Errorf("%w: the body exceeds %d bytes", ErrTooLarge, b.limit)
}

func (b *cappedBody) Close() error { return b.rc.Close() }
