package config

import (
	"fmt"
	"sort"
	"strings"

	suggestpkg "github.com/switchboardhq/switchboard/internal/suggest"
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
	return suggestpkg.Closest(got, candidates)
}
