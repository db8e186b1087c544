package reply

import (
	"net/netip"
	"net/url"
	"strings"
	"unicode"
)

// SplitMedia removes the MEDIA: lines from a reply and returns the media
// they name (openclaw-facts §5.1, OpenClaw's splitMediaFromOutput in
// src/media/parse.ts). A line that starts (after indentation) with
// "MEDIA:" in any case carries one or more https URLs or local paths,
// separated by spaces, or one quoted path that may contain spaces. Lines
// inside fenced code blocks are left alone. A MEDIA: line whose target is
// rejected stays in the text, except one that looks like a local path,
// which is dropped so a tool's file path never leaks into a chat.
//
// Accepted targets: https URLs without credentials whose host is a public
// name or address (no localhost, .local, .internal or private ranges), and
// local paths (/…, ./…, ~/…, C:\…, or a relative path with a slash) that
// do not climb with "..". A leading file:// is removed. Whether a path may
// actually be sent is the bridge's decision; this only parses.
func SplitMedia(text string) (string, []string) {
	if !containsFold(text, "media:") {
		return text, nil
	}
	var media []string
	found := false
	lines := strings.Split(text, "\n")
	kept := lines[:0:0]
	fence := ""
	for _, line := range lines {
		trimmed := strings.TrimLeft(line, " \t")
		if marker := fenceMarker(trimmed); marker != "" {
			switch {
			case fence == "":
				fence = marker
			case strings.HasPrefix(trimmed, fence) && strings.TrimSpace(trimmed[len(marker):]) == "":
				fence = ""
			}
			kept = append(kept, line)
			continue
		}
		if fence != "" || !hasPrefixFold(trimmed, "MEDIA:") {
			kept = append(kept, line)
			continue
		}
		urls, leftover, drop := parseMediaLine(trimmed[len("MEDIA:"):])
		switch {
		case len(urls) > 0:
			media = append(media, urls...)
			found = true
			if leftover != "" {
				kept = append(kept, leftover)
			}
		case drop:
			found = true
		default:
			kept = append(kept, line)
		}
	}
	if !found {
		return text, nil
	}
	return jsTrim(strings.Join(kept, "\n")), media
}

// fenceMarker returns the ``` or ~~~ run opening a fence line, or "".
func fenceMarker(line string) string {
	for _, c := range []byte{'`', '~'} {
		n := 0
		for n < len(line) && line[n] == c {
			n++
		}
		if n >= 3 {
			return line[:n]
		}
	}
	return ""
}

// parseMediaLine reads the payload after "MEDIA:". It returns the accepted
// targets and the words that were not targets; drop reports a rejected
// payload that looks like a local path.
func parseMediaLine(payload string) (urls []string, leftover string, drop bool) {
	payload = jsTrim(payload)
	if payload == "" {
		return nil, "", false
	}
	if unq, ok := unwrapQuoted(payload); ok {
		if c := normalizeMediaSource(cleanCandidate(unq)); isValidMedia(c, true, false) {
			return []string{c}, "", false
		}
		return nil, "", looksLikeLocalPath(unq)
	}
	parts := strings.Fields(payload)
	var invalid []string
	for _, p := range parts {
		if c := normalizeMediaSource(cleanCandidate(p)); isValidMedia(c, false, false) {
			urls = append(urls, c)
		} else {
			invalid = append(invalid, p)
		}
	}
	hasSpace := len(parts) > 1
	local := looksLikeLocalPath(payload) || strings.HasPrefix(payload, "file://")
	whole := normalizeMediaSource(cleanCandidate(payload))
	switch {
	case len(urls) == 1 && len(invalid) > 0 && hasSpace && local && isValidMedia(whole, true, false):
		// A path with spaces that split into one valid-looking piece.
		return []string{whole}, "", false
	case len(urls) > 0:
		return urls, strings.Join(invalid, " "), false
	case isValidMedia(whole, true, true):
		return []string{whole}, "", false
	}
	return nil, "", local
}

// unwrapQuoted returns the inside of a "…", '…' or `…` quoted payload.
func unwrapQuoted(s string) (string, bool) {
	if len(s) < 2 {
		return "", false
	}
	first, last := s[0], s[len(s)-1]
	if first != last || (first != '"' && first != '\'' && first != '`') {
		return "", false
	}
	return jsTrim(s[1 : len(s)-1]), true
}

// cleanCandidate strips wrapping punctuation (OpenClaw's cleanCandidate),
// and cuts serialized-JSON residue after a file extension
// ("/tmp/a.png\"}," becomes "/tmp/a.png").
func cleanCandidate(s string) string {
	s = strings.TrimLeft(s, "`\"'[{(")
	s = strings.TrimRight(s, "`\"'\\})],")
	for i := len(s) - 1; i > 0; i-- {
		if s[i] != '"' || (i+1 < len(s) && !strings.ContainsRune("]},:", rune(s[i+1]))) {
			continue
		}
		j := i
		if s[j-1] == '\\' {
			j--
		}
		run := 0
		for run < j && isWordByte(s[j-1-run]) {
			run++
		}
		if run >= 1 && run <= 10 && j-run-1 >= 0 && s[j-run-1] == '.' {
			return s[:j]
		}
	}
	return s
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isWord(s string) bool {
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

func normalizeMediaSource(s string) string {
	return strings.Replace(s, "file://", "", 1)
}

// isValidMedia is OpenClaw's isValidMedia.
func isValidMedia(c string, allowSpaces, allowBareFilename bool) bool {
	if c == "" || len(c) > 4096 {
		return false
	}
	if !allowSpaces && strings.IndexFunc(c, isJSSpace) >= 0 {
		return false
	}
	if hasPrefixFold(c, "http://") || hasPrefixFold(c, "https://") {
		return isAllowedRemoteMedia(c)
	}
	if isLikelyLocalPath(c) {
		return true
	}
	if hasTraversal(c) {
		return false
	}
	return allowBareFilename && !hasScheme(c) && hasFileExt(c)
}

func hasScheme(s string) bool {
	i := strings.IndexByte(s, ':')
	if i <= 0 {
		return false
	}
	for j, r := range s[:i] {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || j > 0 && (r >= '0' && r <= '9' || r == '+' || r == '.' || r == '-')) {
			return false
		}
	}
	return true
}

func hasFileExt(s string) bool {
	dot := strings.LastIndexByte(s, '.')
	return dot >= 0 && len(s)-dot-1 >= 1 && len(s)-dot-1 <= 10 && isWord(s[dot+1:])
}

func isWindowsDrive(s string) bool {
	return len(s) >= 3 && (s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') && s[1] == ':' && (s[2] == '\\' || s[2] == '/')
}

// hasTraversal rejects "..", "../…", a ".." segment anywhere and "~user"
// home paths.
func hasTraversal(c string) bool {
	if c == ".." || strings.HasPrefix(c, "../") {
		return true
	}
	if strings.HasPrefix(c, "~") && !strings.HasPrefix(c, "~/") && !strings.HasPrefix(c, "~\\") {
		return true
	}
	for _, seg := range strings.FieldsFunc(c, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg == ".." {
			return true
		}
	}
	return false
}

// looksLikeLocalPath is the broad check used to hide rejected MEDIA: lines.
func looksLikeLocalPath(c string) bool {
	return strings.HasPrefix(c, "/") || strings.HasPrefix(c, "./") || strings.HasPrefix(c, "../") ||
		strings.HasPrefix(c, "~") || isWindowsDrive(c) || strings.HasPrefix(c, `\\`) ||
		(!hasScheme(c) && strings.ContainsAny(c, `/\`))
}

// isLikelyLocalPath is the strict check used to accept a path.
func isLikelyLocalPath(c string) bool {
	if hasTraversal(c) {
		return false
	}
	return strings.HasPrefix(c, "/") || strings.HasPrefix(c, "./") || strings.HasPrefix(c, "~/") ||
		strings.HasPrefix(c, `~\`) || isWindowsDrive(c) || strings.HasPrefix(c, `\\`) ||
		(!hasScheme(c) && strings.ContainsAny(c, `/\`))
}

// isAllowedRemoteMedia accepts https URLs without credentials on a public
// host.
func isAllowedRemoteMedia(c string) bool {
	u, err := url.Parse(c)
	if err != nil || !strings.EqualFold(u.Scheme, "https") || u.User != nil {
		return false
	}
	return !isBlockedHost(u.Hostname())
}

// isBlockedHost rejects hosts that are not public: no dot, localhost and
// the .local/.internal suffixes, cloud metadata, private, loopback,
// link-local, shared and reserved addresses, and legacy numeric forms such
// as 2130706433 or 0x7f.1.
func isBlockedHost(host string) bool {
	h := strings.TrimRight(strings.ToLower(strings.Trim(jsTrim(host), "[]")), ".")
	if h == "" || slicesContainEmpty(strings.Split(h, ".")) && !strings.Contains(h, ":") {
		return true
	}
	if addr, err := netip.ParseAddr(h); err == nil {
		return isBlockedAddr(addr)
	}
	if strings.Contains(h, ":") || !strings.Contains(h, ".") {
		return true
	}
	switch {
	case h == "localhost", h == "localhost.localdomain", h == "metadata.google.internal",
		strings.HasSuffix(h, ".localhost"), strings.HasSuffix(h, ".local"), strings.HasSuffix(h, ".internal"):
		return true
	}
	return isLegacyIPv4(h)
}

func slicesContainEmpty(labels []string) bool {
	for _, l := range labels {
		if l == "" {
			return true
		}
	}
	return false
}

// blockedPrefixes are IPv4 ranges that are not public beyond what netip's
// predicates cover.
var blockedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("2001:db8::/32"),
}

func isBlockedAddr(a netip.Addr) bool {
	a = a.Unmap()
	if a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return true
	}
	for _, p := range blockedPrefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// isLegacyIPv4 reports a host made only of numeric labels (decimal, octal
// or 0x hex) that is not a canonical dotted quad; canonical quads were
// handled by netip.
func isLegacyIPv4(h string) bool {
	for _, label := range strings.Split(h, ".") {
		l := label
		if strings.HasPrefix(l, "0x") {
			l = l[2:]
			if l == "" {
				return false
			}
			for _, r := range l {
				if !unicode.Is(unicode.ASCII_Hex_Digit, r) {
					return false
				}
			}
			continue
		}
		for _, r := range l {
			if r < '0' || r > '9' {
				return false
			}
		}
	}
	return true
}

// containsFold reports whether s contains the lower-case ASCII substr in
// any case.
func containsFold(s, substr string) bool {
	for i := 0; i+len(substr) <= len(s); i++ {
		if asciiEqualFold(s[i:i+len(substr)], substr) {
			return true
		}
	}
	return false
}
