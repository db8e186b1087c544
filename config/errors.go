package config

import (
	"fmt"
	"sort"
	"strings"
)

// Error is one problem in a configuration file, located by file, line and
// column and named by its key path (for example "gateway.port").
type Error struct {
	// File is the configuration file's name as given to Load or Parse.
	File string
	// Line and Column are 1-based; zero when the problem has no single
	// position (a missing required key, say).
	Line, Column int
	// Path is the dotted key path, with [i] for sequence entries.
	Path string
	// Message says what is wrong and what to write instead.
	Message string
}

// Error formats the problem as "file:line:col: path: message", leaving out
// the parts that are unknown.
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
		}
		b.WriteString(": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
	return b.String()
}

// Errors is every problem found in one configuration file, in file order.
// Load and Parse return it (as an error) when the file has any problem, so a
// user fixes them all in one pass instead of one per run.
type Errors []*Error

// Error returns one problem per line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// sorted orders problems by position; problems without a position go last,
// in the order they were found.
func (es Errors) sorted() Errors {
	sort.SliceStable(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if (a.Line == 0) != (b.Line == 0) {
			return b.Line == 0
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	return es
}

// suggest returns the candidate closest to got, if one is close enough to be
// a likely typo, else "".
func suggest(got string, candidates []string) string {
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

// levenshtein is the edit distance between a and b, counted in bytes (keys
// are ASCII).
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
