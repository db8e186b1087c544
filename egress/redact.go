package egress

import (
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// redactURL renders u for an error message without its credentials, query or
// fragment, and without its path unless withPath: URLs commonly carry
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
// error: at most maxErrorBody characters, control characters and
// invalid UTF-8 replaced.
func errorBodySnippet(b []byte) string {
	var sb strings.Builder
	chars := 0
	for len(b) > 0 && chars < maxErrorBody {
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

// maxErrorBody is how much of a refusing server's body a StatusError
// quotes, in characters.
const maxErrorBody = 200
