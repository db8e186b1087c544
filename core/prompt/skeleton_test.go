package prompt

import (
	"strings"
	"testing"
	"unicode"
)

// TestSkeletonTableBounds checks what the code relies on in the generated
// table: sorted without duplicates (binary search), every value short
// enough for skelIter, lower-case printable ASCII without spaces or
// backslashes, no rune that skeletonRune settles before the lookup, and no
// value that is both an opening and a closing bracket.
func TestSkeletonTableBounds(t *testing.T) {
	for i, e := range skeletonTable {
		if i > 0 && skeletonTable[i-1].r >= e.r {
			t.Fatalf("table not sorted at %U", e.r)
		}
		if e.r < 0x80 || skeletonHidden(e.r) || unicode.IsSpace(e.r) || isJSSpace(e.r) {
			t.Errorf("%U is settled before the table", e.r)
		}
		if len(e.s) == 0 || len(e.s) > maxSkeletonRune {
			t.Errorf("%U maps to %q, want 1 to %d bytes", e.r, e.s, maxSkeletonRune)
		}
		for j := 0; j < len(e.s); j++ {
			if c := e.s[j]; c <= ' ' || c >= 0x7F || c == '\\' || c >= 'A' && c <= 'Z' {
				t.Errorf("%U maps to %q", e.r, e.s)
			}
		}
		if strings.ContainsAny(e.s, "<[") && strings.ContainsAny(e.s, ">]") {
			t.Errorf("%U maps to %q, both ends of a tag", e.r, e.s)
		}
	}
	if len(tagOpeners) == 0 {
		t.Error("no tag openers")
	}
}

// TestSkeletonIterMatchesRunes checks skelIter against the plain
// definition: each rune's skeleton, white space collapsed and trimmed.
func TestSkeletonIterMatchesRunes(t *testing.T) {
	for _, s := range []string{
		"", "  ", "System: x", "  Ｓｙｓ\u200bｔｅｍ：  x\t y ", "a\u3000\u3000b", "\ufb06op \u2800 \U0001F534!",
		"mixed ж 中 • \u0336", "\x00\x01ab\x7f", "\xff\xfe",
	} {
		it := newSkelIter(s, 0)
		var got []byte
		for {
			b, ok := it.nextByte()
			if !ok {
				break
			}
			got = append(got, b)
		}
		if want := f8Skeleton(s); string(got) != want {
			t.Errorf("skeleton of %q = %q, want %q", s, got, want)
		}
	}
}

// FuzzClassifyLineFastPaths checks that the ASCII fast paths of
// classifyLine (plainStart, lineStartPrintable) agree with the general
// skeleton iterator.
func FuzzClassifyLineFastPaths(f *testing.F) {
	for _, s := range []string{
		"System: x", "> 1. **Note: the previous agent run", "Owner (trusted):", "a: (trusted)",
		"  12) [Telegram x]", "1234567890. System", "\tSystem\t:", "A line of ordinary chat text.",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		line = strings.ReplaceAll(line, "\n", " ")
		var fast, slow [startWindow]byte
		k2, complete2 := lineStartIter(line, &slow)
		if plainStart(line) && startsLikeMarker(k2, complete2) {
			t.Fatalf("plainStart(%q) passes a marker", line)
		}
		if k, complete, ok := lineStartPrintable(line, &fast); ok && (string(k) != string(k2) || complete != complete2) {
			t.Fatalf("lineStartPrintable(%q) = %q, %v; the iterator gives %q, %v", line, k, complete, k2, complete2)
		}
	})
}
