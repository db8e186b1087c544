package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// Equal compares a presented secret with the configured one in constant
// time. Both are hashed with SHA-256 first, so neither the content nor the
// length of the configured secret leaks through timing.
func Equal(a, b string) bool {
	ha := sha256.Sum256([]byte(a))
	hb := sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(ha[:], hb[:]) == 1
}

// NewToken returns a fresh gateway token: 24 random bytes as 48 lowercase
// hex characters, as OpenClaw generates when token mode has none configured.
func NewToken() string {
	var b [24]byte
	_, _ = rand.Read(b[:]) // never fails; crypto/rand aborts the program instead
	return hex.EncodeToString(b[:])
}

// MinTokenLength is the shortest shared secret WeakToken accepts, in
// characters.
const MinTokenLength = 16

// knownWeakSecrets are published placeholders (OpenClaw's
// known-weak-gateway-secrets.ts and its docs' examples) and values left by
// blank input or JavaScript string coercion, compared case-insensitively
// after trimming.
var knownWeakSecrets = []string{
	"change-me-to-a-long-random-token", "change-me-now", "change-me-to-a-strong-password",
	"your-secret-token-here", "undefined", "null", "changeme", "password", "token", "secret",
	"test-token", "my-token", "123456", "abc123", "admin", "letmein", "qwerty",
}

// placeholderMarkers flag an example value copied without being replaced.
var placeholderMarkers = []string{"change-me", "changeme", "replace-me", "replaceme", "your-token", "your-secret", "example"}

// WeakToken reports whether a configured shared secret (token or password)
// must be refused at startup: empty or blank, shorter than MinTokenLength
// characters after trimming, a published placeholder or an obvious
// placeholder marker, one repeated character or a short repeated pattern,
// fewer than four distinct characters, or a plain ascending or descending
// run such as "abcdefghijklmnop".
func WeakToken(s string) bool {
	t := strings.ToLower(strings.TrimSpace(s))
	if utf8.RuneCountInString(t) < MinTokenLength {
		return true
	}
	for _, weak := range knownWeakSecrets {
		if t == weak {
			return true
		}
	}
	for _, marker := range placeholderMarkers {
		if strings.Contains(t, marker) {
			return true
		}
	}
	runes := []rune(t)
	if shortPeriod(runes, 4) || distinct(runes) < 4 || sequential(runes) {
		return true
	}
	return false
}

// shortPeriod reports whether r repeats a pattern of at most maxPeriod
// runes ("aaaa…", "abab…", "abcabc…").
func shortPeriod(r []rune, maxPeriod int) bool {
	for p := 1; p <= maxPeriod && p < len(r); p++ {
		periodic := true
		for i := p; i < len(r); i++ {
			if r[i] != r[i-p] {
				periodic = false
				break
			}
		}
		if periodic {
			return true
		}
	}
	return false
}

func distinct(r []rune) int {
	seen := map[rune]bool{}
	for _, c := range r {
		seen[c] = true
	}
	return len(seen)
}

// sequential reports whether every step of r is +1, or every step is -1,
// with digits wrapping around ("0123456789012345").
func sequential(r []rune) bool {
	step := func(a, b rune) int {
		if isDigit(a) && isDigit(b) {
			switch (b - a + 10) % 10 {
			case 1:
				return 1
			case 9:
				return -1
			}
			return 0
		}
		switch b - a {
		case 1:
			return 1
		case -1:
			return -1
		}
		return 0
	}
	dir := step(r[0], r[1])
	if dir == 0 {
		return false
	}
	for i := 2; i < len(r); i++ {
		if step(r[i-1], r[i]) != dir {
			return false
		}
	}
	return true
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }
