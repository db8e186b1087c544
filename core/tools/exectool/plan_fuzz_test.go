package exectool

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/tools"
)

// FuzzPlan fuzzes the canonicaliser against the executor (matrix row 14):
// for any argv the planner accepts, the command started is exactly the
// plan (same argv, nothing re-parsed), the displayed command parses back
// to that argv, the hash is stable, and a changed argument changes it.
func FuzzPlan(f *testing.F) {
	for _, seed := range [][]string{
		{"echo", "hello"},
		{"echo", "it's", "a b", ""},
		{"echo", "a\nb", "$(id)", "`x`", "; rm -rf ~"},
		{"echo", "--x=y", "-n", "'"},
		{"env", "-S", "sh -c id"},
		{"echo", strings.Repeat("a", 300) + "\x1b[2K"},
	} {
		f.Add(strings.Join(seed, "\x1f"))
	}
	ws, err := filepath.EvalSymlinks(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	jail, err := tools.OpenJail(ws)
	if err != nil {
		f.Fatal(err)
	}
	defer jail.Close()
	pl := newPlanner(Config{}.withDefaults(), jail, os.LookupEnv)
	f.Fuzz(func(t *testing.T, joined string) {
		argv := strings.Split(joined, "\x1f")
		if argv[0] == "" || strings.ContainsRune(argv[0], '/') {
			argv[0] = "echo"
		}
		req := Request{Argv: argv}
		p, err := pl.plan(req)
		if err != nil {
			return // refused plans run nothing
		}
		again, err := pl.plan(req)
		if err != nil || again.Hash() != p.Hash() {
			t.Fatalf("planning is not stable: %v", err)
		}
		if !slices.Equal(p.Argv, argv) {
			t.Fatalf("plan argv %q != requested %q", p.Argv, argv)
		}
		proc := planCmd(p)
		if proc.Path != p.Path || !slices.Equal(proc.Args, argv) || proc.Dir != p.Cwd || !slices.Equal(proc.Env, p.Env) {
			t.Fatalf("the command built differs from the plan: %+v", proc)
		}
		if back, ok := parseQuoted(p.Command()); !ok || !slices.Equal(back, argv) {
			t.Fatalf("display %q parses to %q, not %q", p.Command(), back, argv)
		}
		changed := Request{Argv: slices.Clone(argv)}
		changed.Argv[len(argv)-1] += "x"
		if q, err := pl.plan(changed); err == nil && q.Hash() == p.Hash() {
			t.Fatalf("argv %q and %q hash the same", argv, changed.Argv)
		}
	})
}

// parseQuoted splits a line quoted by shellQuote: words separated by one
// space, each bare or in single quotes with '\” for a quote.
func parseQuoted(s string) ([]string, bool) {
	var out []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ':
			if !inWord {
				return nil, false
			}
			out = append(out, cur.String())
			cur.Reset()
			inWord = false
		case c == '\'':
			inWord = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			if strings.HasPrefix(s[i+1:], `\''`) {
				cur.WriteByte('\'')
				i += 2
			}
		default:
			inWord = true
			cur.WriteByte(c)
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out, true
}
