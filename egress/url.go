package egress

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// CheckURL validates a URL before it is stored or handed on: it must be an
// absolute http or https URL with a host and an optional port, without
// credentials (user:password@) or a fragment. A host written as an IP
// address must be a canonical, public one (see IsBlockedIP); shorthand and
// numeric forms such as 127.1 or 2130706433 are refused, as are localhost
// names. Host names are not resolved here: a Client applies the policy to
// every address when it connects. Error messages name the URL with its
// credentials, query and fragment redacted, and say what to write instead.
func CheckURL(raw string) error {
	if raw == "" {
		return fmt.Errorf("%w: empty; write an absolute https URL such as https://example.com/path", ErrInvalidURL)
	}
	if strings.TrimSpace(raw) != raw {
		return fmt.Errorf("%w %s: surrounding spaces; remove them", ErrInvalidURL, redactRawURL(raw))
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w %s: %v; write an absolute https URL such as https://example.com/path", ErrInvalidURL, redactRawURL(raw), unwrapURLError(err))
	}
	if strings.Contains(raw, "#") {
		return fmt.Errorf("%w %s: has a fragment (#...), which is never sent to the server; remove it", ErrInvalidURL, redactURL(u, true))
	}
	if err := checkTarget(u, defaultAddrPolicy); err != nil {
		return fmt.Errorf("%w %s: %w", ErrInvalidURL, redactURL(u, true), err)
	}
	return nil
}

// unwrapURLError drops a *url.Error's wrapping: it repeats the raw URL,
// query and all.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// checkTarget checks a URL's shape and, for an IP address host, the address
// policy. The error does not name the URL; callers do, redacted.
func checkTarget(u *url.URL, policy addrPolicy) error {
	switch {
	case u.Scheme == "":
		return errors.New("not an absolute URL; write it with its scheme, e.g. https://example.com/path")
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("scheme %q is not supported; write an http:// or https:// URL", u.Scheme)
	case u.Opaque != "":
		return fmt.Errorf("no host; write %s://host/path", u.Scheme)
	case u.User != nil:
		return errors.New("credentials in the URL (user:password@) are refused: they would be stored and logged; remove them")
	case u.Host == "" || u.Hostname() == "":
		return fmt.Errorf("no host; write %s://host/path, e.g. https://example.com/path", u.Scheme)
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
