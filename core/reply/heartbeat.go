package reply

import (
	"strings"
	"unicode/utf8"
)

// DefaultAckMaxChars is how much text may remain after stripping
// HeartbeatToken for a heartbeat reply to still count as an ack
// (openclaw-facts §6.1, ackMaxChars).
const DefaultAckMaxChars = 300

// Mode says what kind of reply StripHeartbeatToken looks at.
type Mode uint8

const (
	// ModeMessage is a normal reply: the token is stripped and the rest
	// delivered. It is the zero value.
	ModeMessage Mode = iota
	// ModeHeartbeat is the reply to a heartbeat poll: a short remainder
	// counts as an ack too and is skipped.
	ModeHeartbeat
)

// StripResult is what StripHeartbeatToken found.
type StripResult struct {
	// Text is what remains to deliver; empty when ShouldSkip.
	Text string
	// ShouldSkip reports that nothing should be delivered: the reply was
	// empty, only the token, or (in heartbeat mode) an ack.
	ShouldSkip bool
	// DidStrip reports that a token was removed.
	DidStrip bool
}

// StripHeartbeatToken removes HeartbeatToken from the start or end of a
// reply, as OpenClaw's stripHeartbeatToken does (openclaw-facts §6.2):
//
//  1. HTML tags and &nbsp; are dropped and markdown wrappers (* ` ~ _) at
//     the edges removed, so <b>HEARTBEAT_OK</b> and **HEARTBEAT_OK** count;
//  2. the token is stripped repeatedly at the start or the end; at the end
//     up to 4 non-word characters after it go too ("HEARTBEAT_OK."), but
//     punctuation stays when text precedes the token;
//  3. a token in the middle strips nothing;
//  4. nothing left means skip;
//  5. in ModeHeartbeat a remainder of at most ackMaxChars characters (UTF-16
//     units) is an ack and is skipped too;
//  6. in ModeMessage the remainder is delivered.
//
// ackMaxChars zero means DefaultAckMaxChars; a negative value means zero.
// The result is a fixed point: stripping its Text again in ModeMessage
// changes nothing, which OpenClaw's single pass does not guarantee for
// texts like "_HEARTBEAT_OK_ x HEARTBEAT_OK".
func StripHeartbeatToken(text string, mode Mode, ackMaxChars int) StripResult {
	switch {
	case ackMaxChars == 0:
		ackMaxChars = DefaultAckMaxChars
	case ackMaxChars < 0:
		ackMaxChars = 0
	}
	res := stripHeartbeatOnce(text)
	for res.DidStrip && res.Text != "" {
		next := stripHeartbeatOnce(res.Text)
		if !next.DidStrip {
			break
		}
		res = next
	}
	if res.DidStrip && res.Text != "" && mode == ModeHeartbeat && utf16Len(res.Text) <= ackMaxChars {
		return StripResult{ShouldSkip: true, DidStrip: true}
	}
	return res
}

// stripHeartbeatOnce is one pass of OpenClaw's stripHeartbeatToken, without
// the heartbeat-mode threshold.
func stripHeartbeatOnce(raw string) StripResult {
	trimmed := jsTrim(raw)
	if trimmed == "" {
		return StripResult{ShouldSkip: true}
	}
	normalized := stripMarkup(trimmed)
	if !strings.Contains(trimmed, HeartbeatToken) && !strings.Contains(normalized, HeartbeatToken) {
		return StripResult{Text: trimmed}
	}
	origText, origDid := stripTokenAtEdges(trimmed)
	text, did := origText, origDid
	if !origDid || origText == "" {
		text, did = stripTokenAtEdges(normalized)
	}
	if !did {
		return StripResult{Text: trimmed}
	}
	if text == "" {
		return StripResult{ShouldSkip: true, DidStrip: true}
	}
	return StripResult{Text: jsTrim(text), DidStrip: true}
}

// stripMarkup drops HTML tags (each becomes a space), decodes &nbsp; and
// removes markdown wrappers at the edges.
func stripMarkup(s string) string {
	if strings.IndexByte(s, '<') >= 0 {
		var b strings.Builder
		b.Grow(len(s))
		for i := 0; i < len(s); {
			if s[i] == '<' {
				if j := strings.IndexByte(s[i+1:], '>'); j >= 0 {
					b.WriteByte(' ')
					i += j + 2
					continue
				}
			}
			b.WriteByte(s[i])
			i++
		}
		s = b.String()
	}
	if strings.Contains(strings.ToLower(s), "&nbsp;") {
		var b strings.Builder
		for i := 0; i < len(s); {
			if i+6 <= len(s) && asciiEqualFold(s[i:i+6], "&nbsp;") {
				b.WriteByte(' ')
				i += 6
				continue
			}
			b.WriteByte(s[i])
			i++
		}
		s = b.String()
	}
	s = strings.TrimLeft(s, "*`~_")
	return strings.TrimRight(s, "*`~_")
}

// stripTokenAtEdges strips the token at the start or end until neither
// applies, then collapses white space.
func stripTokenAtEdges(raw string) (string, bool) {
	text := jsTrim(raw)
	if text == "" || !strings.Contains(text, HeartbeatToken) {
		return text, false
	}
	did := false
	for {
		next := jsTrim(text)
		if strings.HasPrefix(next, HeartbeatToken) {
			text = jsTrimStart(next[len(HeartbeatToken):])
			did = true
			continue
		}
		idx := strings.LastIndex(next, HeartbeatToken)
		if idx < 0 || !isTrailingPunctuation(next[idx+len(HeartbeatToken):]) {
			break
		}
		before := jsTrimEnd(next[:idx])
		if before == "" {
			text = ""
		} else {
			text = jsTrimEnd(before + jsTrimStart(next[idx+len(HeartbeatToken):]))
		}
		did = true
	}
	return collapseJSSpace(text), did
}

// isTrailingPunctuation reports whether s matches [^\w]{0,4} as a whole:
// at most four UTF-16 units, none of them [A-Za-z0-9_].
func isTrailingPunctuation(s string) bool {
	if len(s) > 16 || utf16Len(s) > 4 {
		return false
	}
	for _, r := range s {
		if r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}
