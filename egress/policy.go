package egress

import (
	"fmt"
	"net/netip"
)

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

// IsBlockedIP reports whether ip is an address a Client must not reach:
// loopback, private (RFC 1918, fc00::/7), link-local (including the
// 169.254.169.254 metadata service), the cloud metadata endpoints outside
// those (Azure's 168.63.129.16, AWS's fd00:ec2::254), shared CGNAT space, unspecified,
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
	// Azure's wire server answers VM agents and serves metadata from a
	// public-looking address, so no range below covers it.
	br("168.63.129.16/32", "Azure's wire server (168.63.129.16, a cloud metadata and agent endpoint)", false),
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
	// AWS's IPv6 metadata service sits in unique-local space, which
	// AllowPrivate opens: it must be refused before fc00::/7 is matched.
	br("fd00:ec2::254/128", "the AWS instance metadata service (fd00:ec2::254)", false),
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
