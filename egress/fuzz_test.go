package egress_test

import (
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/egress"
)

// FuzzCheckURL feeds arbitrary strings to CheckURL: it must
// not panic; whatever it accepts is an absolute http(s) URL with a host, no
// credentials or fragment, and no blocked, local or non-canonical numeric
// host; and whatever it refuses, its error never repeats the query. The
// seeds run as a unit test.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"https://hooks.example.com/cron",
		"http://hook.example:8080/p?x=1",
		"https://[2606:4700:4700::1111]:8443/",
		"http://127.0.0.1/",
		"http://[::ffff:127.0.0.1]/",
		"http://[::127.0.0.1]/",
		"http://[64:ff9b::7f00:1]/",
		"http://[2002:a9fe:a9fe::]/",
		"http://[fe80::1%25eth0]/",
		"http://127.1/",
		"http://2130706433/",
		"http://0x7f.1/",
		"http://0177.0.0.1/",
		"http://localhost./",
		"http://user:pass@hook.example/",
		"http://hook.example/#x",
		"http:hook.example",
		"//hook.example/",
		"https://hook.example:0/",
		"https://u:p@h x/",
		"http://%zz/",
		"",
	} {
		f.Add(s)
	}
	const secret = "zqSECRETzq"
	f.Fuzz(func(t *testing.T, raw string) {
		err := egress.CheckURL(raw)
		if err == nil {
			checkAccepted(t, raw)
		}
		if strings.Contains(raw, secret) {
			return
		}
		// The secret lands in the query, or in the fragment if raw has one:
		// either way, no error may show it.
		if err := egress.CheckURL(raw + "?" + secret); err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("CheckURL(%q) error %q repeats the query", raw+"?"+secret, err)
		}
	})
}

func checkAccepted(t *testing.T, raw string) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("accepted %q, which does not parse: %v", raw, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Opaque != "" || u.User != nil || u.Hostname() == "" || strings.Contains(raw, "#") {
		t.Fatalf("accepted %q: scheme %q, opaque %q, user %v, host %q", raw, u.Scheme, u.Opaque, u.User, u.Hostname())
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		if egress.IsBlockedIP(ip) {
			t.Fatalf("accepted %q, whose address is blocked", raw)
		}
		return
	}
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		t.Fatalf("accepted %q, a localhost name", raw)
	}
	last := h[strings.LastIndexByte(h, '.')+1:]
	if last != "" && strings.Trim(last, "0123456789") == "" {
		t.Fatalf("accepted %q, whose host ends in a number but is not a canonical address", raw)
	}
}

// FuzzIsBlockedIP checks IsBlockedIP against the standard library's
// classification and against itself across the IPv6 forms that carry an
// IPv4 address. The seeds run as a unit test.
func FuzzIsBlockedIP(f *testing.F) {
	for _, s := range []string{
		"127.0.0.1", "8.8.8.8", "10.0.0.1", "169.254.169.254", "100.64.0.1", "255.255.255.255", "0.0.0.0",
		"::1", "::", "fe80::1", "fd00::1", "ff02::1", "2606:4700:4700::1111", "::ffff:127.0.0.1",
		"64:ff9b::808:808", "2002:7f00:1::", "2001::1", "4000::1",
	} {
		f.Add(netip.MustParseAddr(s).AsSlice())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ip, ok := netip.AddrFromSlice(b)
		if !ok {
			return
		}
		blocked := egress.IsBlockedIP(ip)
		if !ip.IsGlobalUnicast() && !blocked {
			t.Errorf("IsBlockedIP(%s) = false for an address the standard library calls not global unicast", ip)
		}
		if (ip.IsPrivate() || ip.IsLoopback() || ip.IsLinkLocalUnicast()) && !blocked {
			t.Errorf("IsBlockedIP(%s) = false for a private, loopback or link-local address", ip)
		}
		if ip.Is6() && !ip.Is4In6() && egress.IsBlockedIP(ip.WithZone("eth0")) != blocked {
			t.Errorf("IsBlockedIP(%s) changes with a zone", ip)
		}
		if !ip.Is4() {
			return
		}
		v4 := ip.As4()
		mapped := netip.AddrFrom16([16]byte{10: 0xff, 11: 0xff, 12: v4[0], 13: v4[1], 14: v4[2], 15: v4[3]})
		compat := netip.AddrFrom16([16]byte{12: v4[0], 13: v4[1], 14: v4[2], 15: v4[3]})
		nat64 := netip.AddrFrom16([16]byte{0: 0x00, 1: 0x64, 2: 0xff, 3: 0x9b, 12: v4[0], 13: v4[1], 14: v4[2], 15: v4[3]})
		sixToFour := netip.AddrFrom16([16]byte{0: 0x20, 1: 0x02, 2: v4[0], 3: v4[1], 4: v4[2], 5: v4[3], 15: 1})
		if egress.IsBlockedIP(mapped) != blocked {
			t.Errorf("IsBlockedIP(%s) != IsBlockedIP(%s)", mapped, ip)
		}
		if !egress.IsBlockedIP(compat) {
			t.Errorf("IsBlockedIP(%s) = false for an IPv4-compatible address", compat)
		}
		if egress.IsBlockedIP(nat64) != blocked || egress.IsBlockedIP(sixToFour) != blocked {
			t.Errorf("IsBlockedIP(%s) = %v, but NAT64 %s = %v and 6to4 %s = %v", ip, blocked,
				nat64, egress.IsBlockedIP(nat64), sixToFour, egress.IsBlockedIP(sixToFour))
		}
	})
}
