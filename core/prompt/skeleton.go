package prompt

import (
	"slices"
	"unicode"
	"unicode/utf8"
)

// A line's skeleton is what the neutraliser compares with the markers
// Switchboard writes. It is the line as a model might read it, reduced to
// lower-case ASCII wherever a rune reads as ASCII:
//
//   - runes that show nothing are dropped: format characters (zero-width
//     space and joiners, bidirectional controls, tag characters, BOM),
//     combining marks (so "Ṡ" and "S̶" read as "s"), variation selectors, the
//     Hangul fillers, the braille blank U+2800, C0 and C1 controls;
//   - white space of every kind is one space; runs of it collapse and the
//     ends are trimmed;
//   - letters, digits and signs become the ASCII they read as, lower-cased:
//     the compatibility decomposition (NFKD, which folds full-width,
//     mathematical, circled and small-capital forms and ligatures), else the
//     Unicode confusables prototype (UTS #39: Cyrillic "ѕ", Cherokee "Ꮪ",
//     Lisu "ꓢ", Greek "Ι"), from skeletonTable;
//   - any other punctuation or symbol is skelSymbol, and anything else
//     (a letter of another script, an ideograph) is skelOther.
//
// Markers are compared with the skeleton allowing a space between any two
// characters and treating "i", "l" and "1" as one letter, and "o" and "0"
// as one (see sameSkeletonByte).

// The two placeholders of the skeleton. No marker holds them; they only
// need to be told apart because a symbol can be decoration at the start of
// a line and a letter cannot.
const (
	skelSymbol = "\x01"
	skelOther  = "\x02"
)

// skeletonEntry is one row of skeletonTable.
type skeletonEntry struct {
	r rune
	s string
}

// asciiSkeleton is skeletonRune for ASCII: controls vanish, tab is a space,
// capitals are lower-cased.
var asciiSkeleton = func() (t [utf8.RuneSelf]string) {
	const all = "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f" +
		"\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f" +
		" !\"#$%&'()*+,-./0123456789:;<=>?@abcdefghijklmnopqrstuvwxyz[\\]^_" +
		"`abcdefghijklmnopqrstuvwxyz{|}~\x7f"
	for c := range t {
		switch {
		case c == '\t':
			t[c] = " "
		case c < ' ' || c == 0x7F:
			t[c] = ""
		default:
			t[c] = all[c : c+1]
		}
	}
	return t
}()

// skeletonRune returns what r contributes to a skeleton: "" for a rune
// that shows nothing, " " for white space, the lower-case ASCII it reads
// as, skelSymbol or skelOther. The result is never more than a few bytes
// and never allocates.
func skeletonRune(r rune) string {
	if r < utf8.RuneSelf {
		if r < 0 {
			return skelOther
		}
		return asciiSkeleton[r]
	}
	if skeletonHidden(r) {
		return ""
	}
	if unicode.IsSpace(r) || isJSSpace(r) {
		return " "
	}
	if i, ok := slices.BinarySearchFunc(skeletonTable[:], r, func(e skeletonEntry, r rune) int {
		return int(e.r - r)
	}); ok {
		return skeletonTable[i].s
	}
	if unicode.In(r, unicode.P, unicode.S) && !unicode.In(r, unicode.Ps, unicode.Pe) {
		return skelSymbol
	}
	return skelOther
}

// skeletonHidden reports runes that render as nothing, or only change how
// their neighbours render.
func skeletonHidden(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9F: // C1 controls (NEL is a line break by now)
		return true
	case r == 0x115F, r == 0x1160, r == 0x3164, r == 0xFFA0: // Hangul fillers
		return true
	case r == 0x2800: // braille pattern blank
		return true
	case r == 0x2065, r >= 0xFFF0 && r <= 0xFFF8, r >= 0xE0000 && r <= 0xE0FFF:
		return true // default-ignorable, partly unassigned
	}
	return unicode.In(r, unicode.Cf, unicode.Mn, unicode.Me)
}

// isSkeletonDecoration reports a skeleton byte that only decorates the
// start of a line (a quote, a bullet, emphasis, a rule, an emoji), so a
// marker after it still reads as the line's start: "> System:",
// "- System:", "**System:**", "⚠️ System:".
func isSkeletonDecoration(b byte) bool {
	switch b {
	case ' ', '>', '-', '*', '+', '_', '~', '`', '"', '\'', '|', '=', skelSymbol[0]:
		return true
	}
	return false
}

// sameSkeletonByte reports whether skeleton byte b matches marker byte m:
// equal, or both in a class of letters UTS #39 calls confusable ("i", "l"
// and "1"; "o" and "0").
func sameSkeletonByte(b, m byte) bool {
	if b == m {
		return true
	}
	switch m {
	case 'i', 'l', '1':
		return b == 'i' || b == 'l' || b == '1'
	case 'o', '0':
		return b == 'o' || b == '0'
	}
	return false
}

// canonicalSkeletonByte picks one byte for each class of sameSkeletonByte.
func canonicalSkeletonByte(b byte) byte {
	switch b {
	case 'l', '1':
		return 'i'
	case '0':
		return 'o'
	}
	return b
}
