package prompt

import (
	"strings"
	"testing"
)

// slowFirstLine is firstLine without its fast path.
func slowFirstLine(s string) string {
	for line := range strings.SplitSeq(s, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			return strings.Join(f, " ")
		}
	}
	return ""
}

// The tool list's fast path gives what the full normalisation gives.
func FuzzFirstLine(f *testing.F) {
	for _, s := range []string{
		"Read a file from the workspace.", "Run a command.\nSecond line.", "  leading", "trailing ", "two  spaces",
		"tab\there", "\n\nthird", "nbsp\u00a0here", "café", "a\r\nb", "", " ", "x", "line\u2028sep",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := firstLine(s), slowFirstLine(s); got != want {
			t.Fatalf("firstLine(%q) = %q, want %q", s, got, want)
		}
	})
}
