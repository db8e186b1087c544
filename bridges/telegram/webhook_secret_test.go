package telegram

import (
	"strings"
	"testing"
)

func TestValidSecret(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want bool
	}{
		{"", false},
		{"a", true},
		{"Az09_-", true},
		{strings.Repeat("x", 256), true},
		{strings.Repeat("x", 257), false},
		{"with space", false},
		{"dot.", false},
		{"é", false},
		{"tab\t", false},
	} {
		if got := validSecret(tt.s); got != tt.want {
			t.Errorf("validSecret(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
}
