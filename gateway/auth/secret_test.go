package auth

import (
	"encoding/hex"
	"strings"
	"testing"
)

func TestEqual(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"secret-token-123", "secret-token-123", true},
		{"secret-token-123", "secret-token-124", false},
		{"secret-token-123", "secret-token-1234", false},
		{"", "", true},
		{"", "x", false},
		{"é", "e\u0301", false}, // bytes, not Unicode equivalence
	}
	for _, tt := range tests {
		if got := Equal(tt.a, tt.b); got != tt.want {
			t.Errorf("Equal(%q, %q) = %v", tt.a, tt.b, got)
		}
	}
}

func TestNewToken(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		tok := NewToken()
		if len(tok) != 48 || strings.ToLower(tok) != tok {
			t.Fatalf("token %q", tok)
		}
		if _, err := hex.DecodeString(tok); err != nil {
			t.Fatalf("token %q: %v", tok, err)
		}
		if seen[tok] {
			t.Fatal("repeated token")
		}
		seen[tok] = true
		if WeakToken(tok) {
			t.Fatalf("generated token %q is weak", tok)
		}
	}
}

func TestWeakToken(t *testing.T) {
	weak := []string{
		"", "   ", "short", "fifteen-chars!!",
		"change-me-to-a-long-random-token", "  CHANGE-ME-TO-A-LONG-RANDOM-TOKEN  ",
		"change-me-to-a-strong-password", "your-secret-token-here",
		"please-changeme-token", "replace-me-with-a-secret", "example-token-value-1",
		"aaaaaaaaaaaaaaaaaaaaaaaa", "abababababababababab", "abcdabcdabcdabcdabcd",
		"aabbaabbaabbaabbaabb", "1111222211112222",
		"abcdefghijklmnopqrst", "zyxwvutsrqponmlkjihg", "0123456789012345678", "9876543210987654",
		"\u00a0\u00a0\u00a0", // blank after trimming
	}
	for _, s := range weak {
		if !WeakToken(s) {
			t.Errorf("WeakToken(%q) = false", s)
		}
	}
	strong := []string{
		"3f9c2a7e4b1d8f06a5c3e9b27d4f1a80c6e2b9d4f7a13c58", // NewToken-shaped
		"correct horse battery staple",
		"Tr0ub4dor&3-but-longer",
		"sixteen-chars-ok",
	}
	for _, s := range strong {
		if WeakToken(s) {
			t.Errorf("WeakToken(%q) = true", s)
		}
	}
}
