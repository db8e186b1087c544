package reply

import (
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The reply tokens (openclaw-facts §5.2, src/auto-reply/tokens.ts).
const (
	// SilentToken is the whole reply when the model has nothing to say.
	SilentToken = "NO_REPLY"
	// HeartbeatToken acknowledges a heartbeat poll with nothing to report.
	HeartbeatToken = "HEARTBEAT_OK"
)

// IsSilent reports a reply that is only SilentToken: the token alone with
// white space around it, in any case (^\s*NO_REPLY\s*$/i), or the JSON
// object {"action":"NO_REPLY"} with no other member. A reply that merely
// ends with the token is not silent (#19537).
func IsSilent(text string) bool {
	return asciiEqualFold(jsTrim(text), SilentToken) || isSilentEnvelope(text)
}

// isSilentEnvelope reports {"action":"NO_REPLY"} (OpenClaw's
// isSilentReplyEnvelopeText).
func isSilentEnvelope(text string) bool {
	t := jsTrim(text)
	if len(t) < 2 || t[0] != '{' || t[len(t)-1] != '}' || !strings.Contains(t, SilentToken) {
		return false
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(t), &obj); err != nil || len(obj) != 1 {
		return false
	}
	raw, ok := obj["action"]
	if !ok {
		return false
	}
	var action string
	if err := json.Unmarshal(raw, &action); err != nil {
		return false
	}
	return jsTrim(action) == SilentToken
}

// StripSilent removes SilentToken from mixed text as OpenClaw's
// normalizeReplyPayload does: leading tokens when the last one is glued to
// a letter or digit ("NO_REPLYhello" becomes "hello"), and a trailing token
// preceded by white space or asterisks, or alone ((^|\s+|\*+)NO_REPLY\s*$,
// any case). A token in the middle is kept. It returns the trimmed
// remainder and whether a token was removed; an empty remainder means the
// reply is silent.
func StripSilent(text string) (string, bool) {
	out := text
	stripped := false
	if startsWithGluedToken(out) {
		out = stripLeadingTokens(out)
		stripped = true
	}
	if rest, ok := stripTrailingToken(out); ok {
		out = rest
		stripped = true
	}
	if !stripped {
		return text, false
	}
	return jsTrim(out), true
}

// startsWithGluedToken is OpenClaw's startsWithSilentToken:
// ^\s*(?:NO_REPLY\s+)*NO_REPLY(?=[\p{L}\p{N}]) in any case.
func startsWithGluedToken(s string) bool {
	s = jsTrimStart(s)
	for hasPrefixFold(s, SilentToken) {
		s = s[len(SilentToken):]
		r, _ := utf8.DecodeRuneInString(s)
		switch {
		case unicode.IsLetter(r) || unicode.IsNumber(r):
			return true
		case isJSSpace(r):
			s = jsTrimStart(s)
		default:
			return false
		}
	}
	return false
}

// stripLeadingTokens removes ^(?:\s*NO_REPLY)+\s* (any case).
func stripLeadingTokens(s string) string {
	for {
		t := jsTrimStart(s)
		if !hasPrefixFold(t, SilentToken) {
			return jsTrimStart(s)
		}
		s = t[len(SilentToken):]
	}
}

// stripTrailingToken removes (?:^|\s+|\*+)NO_REPLY\s*$ (any case).
func stripTrailingToken(s string) (string, bool) {
	t := jsTrimEnd(s)
	if !hasSuffixFold(t, SilentToken) {
		return s, false
	}
	before := t[:len(t)-len(SilentToken)]
	switch {
	case before == "" && len(t) == len(jsTrimStart(t)):
		return "", true
	case strings.HasSuffix(before, "*"):
		return jsTrim(strings.TrimRight(before, "*")), true
	}
	if r, _ := utf8.DecodeLastRuneInString(before); isJSSpace(r) {
		return jsTrim(before), true
	}
	return s, false
}

// IsSilentPrefix reports text that may be the start of a streamed
// SilentToken (OpenClaw's isSilentReplyPrefixText): after leading white
// space, two or more upper-case letters and underscores that begin
// "NO_REPLY" and contain an underscore, or exactly "NO". Lower- and
// mixed-case text ("No", "no") never matches, so ordinary replies are not
// held back.
func IsSilentPrefix(text string) bool {
	t := jsTrimStart(text)
	if len(t) < 2 || len(t) > len(SilentToken) {
		return false
	}
	for i := 0; i < len(t); i++ {
		if c := t[i]; !(c >= 'A' && c <= 'Z' || c == '_') {
			return false
		}
	}
	if !strings.HasPrefix(SilentToken, t) {
		return false
	}
	return strings.Contains(t, "_") || t == "NO"
}
