package heartbeat

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"
)

// This file is the egress path for cron webhook delivery. The URL comes from
// a user or a model, so everything here assumes it is hostile: the address
// policy is applied to what is actually dialled (every resolved address, then
// again on the socket in net.Dialer.Control), not to the URL string, which is
// how OpenClaw's string-level guards were bypassed (reliability-security.md
// §1.2.E). It is self-contained so that the shared egress client (issue 11)
// can take it over unchanged.

// Webhook defaults; WebhookOptions documents where each applies.
const (
	DefaultWebhookTimeout          = 10 * time.Second
	DefaultWebhookMaxResponseBytes = 64 << 10
	DefaultWebhookUserAgent        = "Switchboard-Cron/1"
)

// maxWebhookRedirects is how many redirects a delivery follows; each hop is
// checked like the first request.
const maxWebhookRedirects = 3

// maxWebhookErrorBody is how much of a refusing server's body an error
// quotes, in characters.
const maxWebhookErrorBody = 200

// ErrBlockedAddress is returned (wrapped) when a webhook URL's host is, or
// resolves to, an address webhooks must not reach: loopback, private,
// link-local (cloud metadata), or another reserved range (see IsBlockedIP).
// It is a policy refusal, not a transient failure: retrying will not help.
var ErrBlockedAddress = errors.New("webhooks may only reach public internet hosts; use the receiver's public name or address")

// ErrInvalidWebhookURL is returned (wrapped) for a webhook URL that is not an
// absolute http(s) URL that may be used as given.
var ErrInvalidWebhookURL = errors.New("invalid webhook URL")

// WebhookStatusError is a webhook answered with a status outside 2xx.
type WebhookStatusError struct {
	// StatusCode is the HTTP status, e.g. 500.
	StatusCode int
	// Body is the start of the response body, at most 200 characters, with
	// control characters replaced, for the error message.
	Body string
}

// Error names the status and quotes the start of the body.
func (e *WebhookStatusError) Error() string {
	s := fmt.Sprintf("status %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Body != "" {
		s += ": " + strconv.Quote(e.Body)
	}
	return s
}

// WebhookOptions configure a WebhookPoster.
type WebhookOptions struct {
	// Timeout bounds a whole delivery: resolving, connecting, every redirect
	// and reading the response. Zero means DefaultWebhookTimeout (10s).
	Timeout time.Duration
	// MaxResponseBytes is how much of a response body is read (and
	// discarded) before the connection is closed. Zero means
	// DefaultWebhookMaxResponseBytes (64 KiB).
	MaxResponseBytes int64
	// AllowPrivate lets deliveries reach loopback and private networks
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
	// UserAgent is sent with every request; zero means
	// DefaultWebhookUserAgent.
	UserAgent string
	// AllowAddr, when set, replaces the address policy (IsBlockedIP and
	// AllowPrivate): it reports whether an address may be dialled. It is
	// asked before dialling, for every resolved address, and again for the
	// address the socket actually connects to. Tests use it to treat one
	// httptest listener as a public host so that redirects and mixed DNS
	// answers can be exercised without real egress; production leaves it
	// nil.
	AllowAddr func(netip.AddrPort) bool
}

// WebhookPoster posts JSON to webhook URLs through its own http.Client (never
// http.DefaultClient), which dials only addresses its policy permits. It is
// safe for concurrent use.
type WebhookPoster struct {
	client    *http.Client
	resolver  ipResolver
	policy    addrPolicy
	maxBody   int64
	userAgent string
}

// ipResolver is WebhookOptions.Resolver's type; *net.Resolver implements it.
type ipResolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// NewWebhookPoster returns a poster configured by o.
func NewWebhookPoster(o WebhookOptions) *WebhookPoster {
	if o.Timeout <= 0 {
		o.Timeout = DefaultWebhookTimeout
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = DefaultWebhookMaxResponseBytes
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultWebhookUserAgent
	}
	p := &WebhookPoster{
		resolver:  o.Resolver,
		policy:    addrPolicy{allowPrivate: o.AllowPrivate, allow: o.AllowAddr},
		maxBody:   o.MaxResponseBytes,
		userAgent: o.UserAgent,
	}
	if p.resolver == nil {
		p.resolver = net.DefaultResolver
	}
	p.client = &http.Client{
		Transport: &http.Transport{
			// No proxy: a proxy would resolve and connect on our behalf,
			// out of reach of the dial-time check.
			Proxy:       nil,
			DialContext: p.dialContext,
			// Deliveries are rare and each goes to a user-chosen host:
			// pooling buys nothing and would leave idle sockets open.
			DisableKeepAlives:      true,
			MaxResponseHeaderBytes: 64 << 10,
		},
		CheckRedirect: p.checkRedirect,
		Timeout:       o.Timeout,
	}
	return p
}

// CheckWebhookURL validates a webhook URL before a job is saved: it must be
// an absolute http or https URL with a host and an optional port, without
// credentials (user:password@) or a fragment. A host written as an IP address
// must be a canonical, public one (see IsBlockedIP); shorthand and numeric
// forms such as 127.1 or 2130706433 are refused, as are localhost names.
// Host names are resolved only when posting, where Post applies the policy
// to every address. Error messages name the URL with its credentials, query
// and fragment redacted, and say what to write instead.
func CheckWebhookURL(raw string) error {
	if raw == "" {
		return fmt.Errorf("%w: empty; write an absolute https URL such as https://hooks.example.com/cron", ErrInvalidWebhookURL)
	}
	if strings.TrimSpace(raw) != raw {
		return fmt.Errorf("%w %s: surrounding spaces; remove them", ErrInvalidWebhookURL, redactRawURL(raw))
	}
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error repeats the raw URL, query and all
		}
		return fmt.Errorf("%w %s: %v; write an absolute https URL such as https://hooks.example.com/cron", ErrInvalidWebhookURL, redactRawURL(raw), err)
	}
	if strings.Contains(raw, "#") {
		return fmt.Errorf("%w %s: has a fragment (#...), which is never sent to the server; remove it", ErrInvalidWebhookURL, redactURL(u, true))
	}
	if err := checkWebhookTarget(u, defaultAddrPolicy); err != nil {
		return fmt.Errorf("%w %s: %w", ErrInvalidWebhookURL, redactURL(u, true), err)
	}
	return nil
}

// Post sends body, which must already be JSON, to rawURL with Content-Type
// application/json. It resolves the host itself and refuses the delivery if
// any resolved address is blocked (an answer mixing public and private
// addresses fails), dials the checked addresses only, checks the socket's
// address again as it connects (so DNS rebinding cannot slip through),
// follows at most 3 redirects under the same rules, and returns a
// *WebhookStatusError for a status outside 2xx. Errors name the target by
// scheme and host only: webhook paths and queries often carry tokens.
func (p *WebhookPoster) Post(ctx context.Context, rawURL string, body []byte) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("webhook %s: %w: %v", redactRawURL(rawURL), ErrInvalidWebhookURL, err)
	}
	target := redactURL(u, false)
	if err := checkWebhookTarget(u, p.policy); err != nil {
		return fmt.Errorf("webhook %s: %w: %w", target, ErrInvalidWebhookURL, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("webhook %s: %w", target, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", p.userAgent)
	resp, err := p.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error names the URL with its query
		}
		return fmt.Errorf("webhook %s: %w", target, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		// Read what the server sends, up to the cap, so it sees a clean
		// exchange; a bigger answer is cut off, not an error.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, p.maxBody))
		return nil
	}
	head := make([]byte, min(p.maxBody, 4*maxWebhookErrorBody))
	n, _ := io.ReadFull(resp.Body, head)
	return fmt.Errorf("webhook %s: %w", target, &WebhookStatusError{StatusCode: resp.StatusCode, Body: errorBodySnippet(head[:n])})
}

// checkRedirect applies the first request's rules to every hop.
func (p *WebhookPoster) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > maxWebhookRedirects {
		return fmt.Errorf("stopped after %d redirects; point the webhook at the final URL", maxWebhookRedirects)
	}
	if err := checkWebhookTarget(req.URL, p.policy); err != nil {
		return fmt.Errorf("redirect to %s: %w", redactURL(req.URL, false), err)
	}
	return nil
}

// dialContext resolves addr's host, refuses the lot if any address is
// blocked, and dials the checked addresses in order; the dialer's Control
// checks the connected address once more.
func (p *WebhookPoster) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
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
		answers, err := p.resolver.LookupIPAddr(ctx, host)
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
		if why := p.policy.refusal(targets[i]); why != "" {
			return nil, fmt.Errorf("%s resolves to %s, which is %s: %w", host, ip, why, ErrBlockedAddress)
		}
	}
	d := net.Dialer{Control: p.controlDial}
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
func (p *WebhookPoster) controlDial(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("connecting to %q, which is not an address: %w", address, ErrBlockedAddress)
	}
	ap = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	if why := p.policy.refusal(ap); why != "" {
		return fmt.Errorf("connecting to %s, which is %s: %w", ap.Addr(), why, ErrBlockedAddress)
	}
	return nil
}

// checkWebhookTarget checks a URL's shape and, for an IP address host, the
// address policy. The error does not name the URL; callers do, redacted.
func checkWebhookTarget(u *url.URL, policy addrPolicy) error {
	switch {
	case u.Scheme == "":
		return errors.New("not an absolute URL; write it with its scheme, e.g. https://hooks.example.com/cron")
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("scheme %q is not supported; write an http:// or https:// URL", u.Scheme)
	case u.Opaque != "":
		return fmt.Errorf("no host; write %s://host/path", u.Scheme)
	case u.User != nil:
		return errors.New("credentials in the URL (user:password@) are refused: they would be stored and logged with the job; remove them")
	case u.Host == "" || u.Hostname() == "":
		return fmt.Errorf("no host; write %s://host/path, e.g. https://hooks.example.com/cron", u.Scheme)
	}
	port := uint64(80)
	if u.Scheme == "https" {
		port = 443
	}
	if ps := u.Port(); ps != "" {
		n, err := strconv.ParseUint(ps, 10, 16)
		if err != nil || n == 0 {
			return fmt.Errorf("port %s is out of range; write a port from 1 to 65535, or none", ps)
		}
		port = n
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		if why := policy.refusal(netip.AddrPortFrom(ip.Unmap(), uint16(port))); why != "" {
			return fmt.Errorf("%s is %s: %w", host, why, ErrBlockedAddress)
		}
		return nil
	}
	if h := strings.TrimSuffix(strings.ToLower(host), "."); h == "localhost" || strings.HasSuffix(h, ".localhost") {
		// RFC 6761: these names are this machine, whatever DNS says.
		loopback := netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(port))
		if why := policy.refusal(loopback); why != "" {
			return fmt.Errorf("%s is this machine, %s: %w", host, why, ErrBlockedAddress)
		}
		return nil
	}
	if endsInNumber(host) {
		// Resolvers (getaddrinfo, browsers) read 127.1, 0x7f.1 and
		// 2130706433 as IPv4 addresses; accepting them would let a
		// blocked address pass as a name.
		return fmt.Errorf("host %q is not a canonical IP address; write an IPv4 address as four decimal numbers (e.g. 93.184.216.34) or use a host name", host)
	}
	return nil
}

// endsInNumber reports whether host's last label is numeric (decimal, or hex
// with 0x), as in the WHATWG URL host parser: such a host is parsed as an
// IPv4 address, never looked up as a name.
func endsInNumber(host string) bool {
	host = strings.TrimSuffix(host, ".")
	last := host[strings.LastIndexByte(host, '.')+1:]
	if last == "" {
		return false
	}
	if strings.HasPrefix(last, "0x") || strings.HasPrefix(last, "0X") {
		return strings.Trim(last[2:], "0123456789abcdefABCDEF") == ""
	}
	return strings.Trim(last, "0123456789") == ""
}

// addrPolicy decides which addresses may be dialled.
type addrPolicy struct {
	allowPrivate bool
	allow        func(netip.AddrPort) bool // replaces the rest when set
}

// defaultAddrPolicy is production's: only public addresses.
var defaultAddrPolicy = addrPolicy{}

// refusal returns "" if ap may be dialled, or what ap is that makes it
// refused, e.g. "a loopback address (127.0.0.0/8)".
func (p addrPolicy) refusal(ap netip.AddrPort) string {
	if p.allow != nil {
		if p.allow(ap) {
			return ""
		}
		return "refused by the configured address policy"
	}
	r := blockedRangeOf(ap.Addr())
	if r == nil || (p.allowPrivate && r.local) {
		return ""
	}
	return r.name
}

// IsBlockedIP reports whether ip is an address webhooks must not reach:
// loopback, private (RFC 1918, fc00::/7), link-local (including the
// 169.254.169.254 metadata service), shared CGNAT space, unspecified,
// multicast, broadcast and reserved, benchmarking and documentation ranges,
// and IPv6 outside global unicast (2000::/3). IPv4-mapped addresses are
// judged as the IPv4 address; IPv4-compatible (::/96) and Teredo addresses
// are always blocked; NAT64 (64:ff9b::/96) and 6to4 (2002::/16) addresses are
// blocked when the IPv4 address they embed is. The invalid Addr is blocked.
func IsBlockedIP(ip netip.Addr) bool { return blockedRangeOf(ip) != nil }

// blockedRange is a range IsBlockedIP refuses.
type blockedRange struct {
	prefix netip.Prefix
	name   string
	local  bool // loopback or private: AllowPrivate lets it through
}

func br(prefix, name string, local bool) blockedRange {
	return blockedRange{prefix: netip.MustParsePrefix(prefix), name: name, local: local}
}

// blockedIPv4 lists IPv4 special-purpose ranges (RFC 6890 and successors)
// that are not globally reachable.
var blockedIPv4 = []blockedRange{
	br("0.0.0.0/8", `a "this network" address (0.0.0.0/8, including the unspecified address)`, false),
	br("10.0.0.0/8", "a private address (10.0.0.0/8)", true),
	br("100.64.0.0/10", "a shared carrier-grade NAT address (100.64.0.0/10)", false),
	br("127.0.0.0/8", "a loopback address (127.0.0.0/8)", true),
	br("169.254.0.0/16", "a link-local address (169.254.0.0/16, including the cloud metadata service)", false),
	br("172.16.0.0/12", "a private address (172.16.0.0/12)", true),
	br("192.0.0.0/24", "an IETF protocol address (192.0.0.0/24)", false),
	br("192.0.2.0/24", "a documentation address (192.0.2.0/24)", false),
	br("192.88.99.0/24", "a 6to4 relay anycast address (192.88.99.0/24)", false),
	br("192.168.0.0/16", "a private address (192.168.0.0/16)", true),
	br("198.18.0.0/15", "a benchmarking address (198.18.0.0/15)", false),
	br("198.51.100.0/24", "a documentation address (198.51.100.0/24)", false),
	br("203.0.113.0/24", "a documentation address (203.0.113.0/24)", false),
	br("224.0.0.0/4", "a multicast address (224.0.0.0/4)", false),
	br("240.0.0.0/4", "a reserved address (240.0.0.0/4, including broadcast 255.255.255.255)", false),
}

// blockedIPv6 lists IPv6 ranges, most specific first; anything outside
// 2000::/3 is blocked after these, and NAT64 and 6to4 are judged by the IPv4
// address they embed.
var blockedIPv6 = []blockedRange{
	br("::/128", "the unspecified address (::)", false),
	br("::1/128", "the loopback address (::1)", true),
	br("::/96", "an IPv4-compatible address (::/96, deprecated)", false),
	br("64:ff9b:1::/48", "a local-use NAT64 address (64:ff9b:1::/48)", false),
	br("100::/64", "a discard-only address (100::/64)", false),
	br("fc00::/7", "a unique-local address (fc00::/7)", true),
	br("fe80::/10", "a link-local address (fe80::/10)", false),
	br("fec0::/10", "a site-local address (fec0::/10, deprecated)", false),
	br("ff00::/8", "a multicast address (ff00::/8)", false),
	br("2001::/32", "a Teredo address (2001::/32)", false),
	br("2001:2::/48", "a benchmarking address (2001:2::/48)", false),
	br("2001:db8::/32", "a documentation address (2001:db8::/32)", false),
	br("3fff::/20", "a documentation address (3fff::/20)", false),
}

var (
	nat64Prefix       = netip.MustParsePrefix("64:ff9b::/96")
	sixToFourPrefix   = netip.MustParsePrefix("2002::/16")
	globalUnicastIPv6 = netip.MustParsePrefix("2000::/3")
	notGlobalUnicast  = blockedRange{name: "not a global unicast address (outside 2000::/3)"}
	invalidAddr       = blockedRange{name: "not a valid address"}
)

// blockedRangeOf returns the blocked range holding ip, or nil if ip is public.
func blockedRangeOf(ip netip.Addr) *blockedRange {
	if !ip.IsValid() {
		return &invalidAddr
	}
	ip = ip.WithZone("").Unmap() // Prefix.Contains never matches a zoned address
	if ip.Is4() {
		for i := range blockedIPv4 {
			if blockedIPv4[i].prefix.Contains(ip) {
				return &blockedIPv4[i]
			}
		}
		return nil
	}
	b := ip.As16()
	switch {
	case nat64Prefix.Contains(ip):
		return embeddedIPv4Range("NAT64", netip.AddrFrom4([4]byte(b[12:16])))
	case sixToFourPrefix.Contains(ip):
		return embeddedIPv4Range("6to4", netip.AddrFrom4([4]byte(b[2:6])))
	}
	for i := range blockedIPv6 {
		if blockedIPv6[i].prefix.Contains(ip) {
			return &blockedIPv6[i]
		}
	}
	if !globalUnicastIPv6.Contains(ip) {
		return &notGlobalUnicast
	}
	return nil
}

// embeddedIPv4Range judges a tunnelling form by the IPv4 address inside it.
// It is never local: the packet leaves through a gateway, so AllowPrivate
// does not cover it.
func embeddedIPv4Range(kind string, v4 netip.Addr) *blockedRange {
	r := blockedRangeOf(v4)
	if r == nil {
		return nil
	}
	return &blockedRange{name: fmt.Sprintf("the %s form of %s, %s", kind, v4, r.name)}
}

// redactURL renders u for an error message without its credentials, query or
// fragment, and without its path unless withPath: webhook URLs commonly carry
// their secret in the path (Slack, Discord) or the query.
func redactURL(u *url.URL, withPath bool) string {
	var b strings.Builder
	if u.Scheme != "" {
		b.WriteString(u.Scheme)
		b.WriteByte(':')
	}
	if u.Opaque != "" {
		b.WriteString("REDACTED") // may hold anything, credentials included
		return b.String()
	}
	if u.Scheme != "" || u.Host != "" || u.User != nil {
		b.WriteString("//")
	}
	if u.User != nil {
		b.WriteString("REDACTED@")
	}
	b.WriteString(u.Host)
	switch {
	case withPath:
		b.WriteString(u.EscapedPath())
	case u.Path != "" && u.Path != "/":
		b.WriteString("/...")
	}
	if withPath && (u.RawQuery != "" || u.ForceQuery) {
		b.WriteString("?REDACTED")
	}
	if withPath && u.Fragment != "" {
		b.WriteString("#REDACTED")
	}
	return b.String()
}

// redactRawURL is redactURL's best effort for a string that does not parse:
// it keeps what precedes any query or fragment and drops credentials.
func redactRawURL(raw string) string {
	cut := len(raw)
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		cut = i
	}
	s := raw[:cut]
	authority := 0
	if i := strings.Index(s, "//"); i >= 0 {
		authority = i + 2
	}
	end := len(s)
	if i := strings.IndexByte(s[authority:], '/'); i >= 0 {
		end = authority + i
	}
	if at := strings.LastIndexByte(s[authority:end], '@'); at >= 0 {
		s = s[:authority] + "REDACTED" + s[authority+at:]
	}
	if cut < len(raw) {
		s += string(raw[cut]) + "REDACTED"
	}
	return strconv.Quote(s)
}

// errorBodySnippet makes the start of a response body safe to put in an
// error: at most maxWebhookErrorBody characters, control characters and
// invalid UTF-8 replaced.
func errorBodySnippet(b []byte) string {
	var sb strings.Builder
	chars := 0
	for len(b) > 0 && chars < maxWebhookErrorBody {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		if r == utf8.RuneError || unicode.IsControl(r) {
			r = ' '
		}
		sb.WriteRune(r)
		chars++
	}
	out := strings.TrimSpace(sb.String())
	if len(b) > 0 && out != "" {
		out += "..."
	}
	return out
}
