// Package suggest finds the likely intended word for a mistyped one, for
// "did you mean" hints in configuration errors and on the command line.
package suggest

import "strings"

// Closest returns the candidate closest to got when it is close enough to
// be a likely typo (an edit distance of at most 2, or a third of the
// candidate's length), else "". Case is ignored; an exact match other than
// in case is returned as is. It does no IO and is safe for concurrent use.
func Closest(got string, candidates []string) string {
	best, bestDist := "", -1
	lg := strings.ToLower(got)
	for _, c := range candidates {
		lc := strings.ToLower(c)
		if lc == lg {
			return c
		}
		d := levenshtein(lg, lc)
		limit := max(2, len(c)/3)
		if d <= limit && (bestDist < 0 || d < bestDist) {
			best, bestDist = c, d
		}
	}
	return best
}

// levenshtein is the edit distance between a and b, counted in bytes
// (keys and command names are ASCII).
func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
