package gateway

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// proxySet is gateway.trustedProxies, parsed. The zero value trusts no
// one. It is read-only after New, so safe for concurrent use.
type proxySet []netip.Prefix

// newProxySet parses the configured entries; Validate has rejected bad
// ones, so any left are skipped.
func newProxySet(entries []string) proxySet {
	var ps proxySet
	for _, e := range entries {
		if p, err := parseProxy(e); err == nil {
			ps = append(ps, p)
		}
	}
	return ps
}

// parseProxy reads one trustedProxies entry: an address (a /32 or /128)
// or a CIDR range.
func parseProxy(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, err
		}
		if p.Addr().Is4In6() {
			p = netip.PrefixFrom(p.Addr().Unmap(), max(0, p.Bits()-96))
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	a = a.Unmap().WithZone("")
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// contains reports whether a is a trusted proxy.
func (ps proxySet) contains(a netip.Addr) bool {
	a = a.Unmap().WithZone("")
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// clientAddr returns the client's address and whether it connected
// directly from this machine. The address is the socket's peer, unless the
// peer is a trusted proxy: then it is the rightmost address of
// X-Forwarded-For (or, when that header is absent, of Forwarded's for=)
// that is not a trusted proxy itself, so a client cannot pick its own
// address by sending the header, and a chain of trusted proxies is walked
// back to the first hop outside it. A request carrying forwarding headers
// is never loopback, even when the proxy runs here (reliability-security
// §1.2 A1), whoever sent them.
func (s *Server) clientAddr(r *http.Request) (string, bool) {
	peer, ok := peerAddr(r.RemoteAddr)
	if !ok {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			host = r.RemoteAddr
		}
		return host, false
	}
	xff := r.Header.Values("X-Forwarded-For")
	fwd := r.Header.Values("Forwarded")
	forwarded := len(xff) > 0 || len(fwd) > 0 || r.Header.Get("X-Real-Ip") != ""
	if !forwarded {
		return peer.String(), peer.IsLoopback()
	}
	if !s.proxies.contains(peer) {
		s.warnUntrustedForwarding(peer)
		return peer.String(), false
	}
	var hops []string
	if len(xff) > 0 {
		hops = splitXFF(xff)
	} else {
		hops = forwardedFor(fwd)
	}
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := parseHop(hops[i])
		if !ok {
			// An unreadable hop ends the walk: what lies left of it
			// cannot be attributed, so the last trusted hop's peer
			// stands.
			break
		}
		client = a
		if !s.proxies.contains(a) {
			break
		}
	}
	return client.String(), false
}

// warnUntrustedForwarding logs, once, that forwarding headers arrive from
// a peer not listed in gateway.trustedProxies: behind a proxy that is a
// misconfiguration that makes every client share the proxy's limits.
func (s *Server) warnUntrustedForwarding(peer netip.Addr) {
	if s.warnedForwarding.Swap(true) {
		return
	}
	s.log.Warn("gateway: a request carries X-Forwarded-For or Forwarded from an address not in gateway.trustedProxies; the header is ignored, so every client behind that proxy shares its address's connection caps and failed-auth lockout. If it is your reverse proxy, add it to gateway.trustedProxies", "peer", peer.String())
}

// peerAddr parses an http.Request's RemoteAddr.
func peerAddr(remote string) (netip.Addr, bool) {
	ap, err := netip.ParseAddrPort(remote)
	if err != nil {
		host, _, err := net.SplitHostPort(remote)
		if err != nil {
			host = remote
		}
		a, err := netip.ParseAddr(host)
		if err != nil {
			return netip.Addr{}, false
		}
		return a.Unmap().WithZone(""), true
	}
	return ap.Addr().Unmap().WithZone(""), true
}

// splitXFF joins every X-Forwarded-For line into one list of hops, oldest
// first.
func splitXFF(lines []string) []string {
	var out []string
	for _, l := range lines {
		for h := range strings.SplitSeq(l, ",") {
			out = append(out, strings.TrimSpace(h))
		}
	}
	return out
}

// forwardedFor extracts the for= values of RFC 7239 Forwarded lines,
// oldest first.
func forwardedFor(lines []string) []string {
	var out []string
	for _, l := range lines {
		for elem := range strings.SplitSeq(l, ",") {
			for pair := range strings.SplitSeq(elem, ";") {
				k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
				if ok && strings.EqualFold(strings.TrimSpace(k), "for") {
					out = append(out, strings.Trim(strings.TrimSpace(v), `"`))
				}
			}
		}
	}
	return out
}

// parseHop reads one forwarded hop: an address, optionally with a port,
// IPv6 in brackets when it has one ("[2001:db8::1]:4711").
func parseHop(h string) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(h); err == nil {
		return ap.Addr().Unmap().WithZone(""), true
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	a, err := netip.ParseAddr(h)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap().WithZone(""), true
}

// addrKey is the key the connection caps count a client address under: an
// IPv4 address itself, an IPv6 address's /64, since one host is usually
// given a whole /64 and could otherwise take a fresh address for every
// connection. Unparsable input is its own key.
func addrKey(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	a = a.Unmap()
	if a.Is4() {
		return a.String()
	}
	p, _ := a.WithZone("").Prefix(64)
	return p.String()
}
