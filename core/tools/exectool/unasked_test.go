package exectool

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/tools"
)

// unaskedTools returns exec tools under ask: unlisted with every unasked
// program this machine has in allowBins, over a workspace holding a.txt,
// b.txt, the directories d and e, out (a symlink leading out of it) and
// mycat (a symlink to cat); mod changes the configuration first.
func unaskedTools(t *testing.T, mod func(*Config)) *Tools {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"a.txt", "b.txt", "d/x", "e/x"} {
		if err := os.MkdirAll(filepath.Join(ws, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, f), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	jail, err := tools.OpenJail(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { jail.Close() })
	cfg := Config{Enabled: true, Ask: AskUnlisted}.withDefaults()
	pl := newPlanner(cfg, jail, os.LookupEnv)
	cat, _, err := pl.lookPath("cat", ws)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(cat, filepath.Join(ws, "mycat")); err != nil {
		t.Fatal(err)
	}
	for _, name := range UnaskedPrograms() {
		if _, _, err := pl.lookPath(name, ws); err == nil {
			cfg.AllowBins = append(cfg.AllowBins, name)
		}
	}
	if mod != nil {
		mod(&cfg)
	}
	x, err := New(cfg, jail, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

// TestRunsUnasked is the decision itself: which commands of listed
// programs run without approval, and which options, operands and calls
// still ask.
func TestRunsUnasked(t *testing.T) {
	x := unaskedTools(t, nil)
	for _, tc := range []struct {
		argv []string
		env  map[string]string
		want string // "" runs unasked, else part of why it asks
	}{
		{argv: []string{"ls", "-la", "d"}},
		{argv: []string{"/usr/bin/ls", "-la"}},
		{argv: []string{"ls", "-lL"}, want: "ls runs unasked only without -L"},
		{argv: []string{"ls", "--deref"}, want: "without --dereference"},
		{argv: []string{"ls", "out"}, want: "leads outside the workspace"},
		{argv: []string{"cat", "a.txt", "b.txt"}},
		{argv: []string{"cat", "/etc/passwd"}, want: "outside the workspace"},
		{argv: []string{"./mycat", "a.txt"}, want: "was called as ./mycat"},
		{argv: []string{"echo", "hi"}, env: map[string]string{"TZ": "UTC"}, want: "sets environment variables"},
		{argv: []string{"grep", "-rn", "x", "."}},
		{argv: []string{"grep", "-f", "a.txt", "b.txt"}},
		{argv: []string{"grep", "-f", "/etc/passwd", "x"}, want: "outside the workspace"},
		{argv: []string{"grep", "-Rn", "x", "."}, want: "without -R"},
		{argv: []string{"grep", "--dereference-rec", "x"}, want: "without --dereference-recursive"},
		{argv: []string{"sort", "-u", "a.txt"}},
		{argv: []string{"sort", "--compress-program=sh", "a.txt"}, want: "without --compress-program"},
		{argv: []string{"sort", "--compress-prog", "sh", "a.txt"}, want: "without --compress-program"},
		{argv: []string{"sort", "--files0-from=a.txt"}, want: "without --files0-from"},
		{argv: []string{"sort", "-o", "c.txt", "a.txt"}, want: "without -o"},
		{argv: []string{"sort", "-T", "d", "a.txt"}, want: "without -T"},
		{argv: []string{"uniq", "-c", "a.txt"}},
		{argv: []string{"uniq", "a.txt", "c.txt"}, want: "writes it"},
		{argv: []string{"wc", "-l", "a.txt"}},
		{argv: []string{"wc", "--files0-from=a.txt"}, want: "without --files0-from"},
		{argv: []string{"tail", "-f", "a.txt"}},
		{argv: []string{"tail", "-F", "a.txt"}, want: "without -F"},
		{argv: []string{"tail", "--follow=name", "a.txt"}, want: "without --follow"},
		{argv: []string{"du", "-sh", "."}},
		{argv: []string{"du", "-sL", "."}, want: "without -L"},
		{argv: []string{"diff", "-u", "a.txt", "b.txt"}},
		{argv: []string{"diff", "d", "e"}, want: "symlinks inside a directory"},
		{argv: []string{"diff", "-r", "a.txt", "b.txt"}, want: "without -r"},
		{argv: []string{"diff", "--pag", "a.txt", "b.txt"}, want: "without --paginate"},
		{argv: []string{"date"}},
		{argv: []string{"date", "-u", "+%s"}},
		{argv: []string{"date", "--date=@0"}},
		{argv: []string{"date", "010100002030"}, want: "can set the clock"},
		{argv: []string{"date", "-s", "2030-01-01"}, want: "without -s"},
		{argv: []string{"file", "a.txt"}},
		{argv: []string{"file", "-z", "a.txt"}, want: "without -z"},
		{argv: []string{"file", "--files-from", "a.txt"}, want: "without --files-from"},
		{argv: []string{"sha256sum", "a.txt"}},
		{argv: []string{"sha256sum", "-c", "a.txt"}, want: "without -c"},
		{argv: []string{"tr", "a-z", "A-Z"}},
		{argv: []string{"sh", "-c", "id"}, want: "is not in tools.exec.allowBins"},
		{argv: []string{"tar", "-cf", "x.tar", "a.txt"}, want: "is not in tools.exec.allowBins"},
	} {
		p, err := x.planner.plan(Request{Argv: tc.argv, Env: tc.env})
		switch {
		case err != nil && strings.Contains(err.Error(), "not found"):
			continue // not installed here
		case err != nil && tc.want != "" && strings.Contains(err.Error(), tc.want):
			continue // refused before anyone is asked (workspaceOnly)
		case err != nil:
			t.Fatalf("%q: %v", tc.argv, err)
		}
		ok, why := x.runsUnasked(p, Request{Argv: tc.argv, Env: tc.env})
		switch {
		case tc.want == "" && !ok:
			t.Errorf("%q asks (%s); want it to run unasked", tc.argv, why)
		case tc.want != "" && ok:
			t.Errorf("%q runs unasked; want it to ask (%s)", tc.argv, tc.want)
		case tc.want != "" && !strings.Contains(why, tc.want):
			t.Errorf("%q asks because %q; want %q", tc.argv, why, tc.want)
		}
	}
}

// TestRunsUnaskedOnlyInsideTheWorkspace: with workspaceOnly off a command
// may name any path, but only an approved one; and ask: always or a shell
// command line never runs unasked.
func TestRunsUnaskedOnlyInsideTheWorkspace(t *testing.T) {
	off := false
	x := unaskedTools(t, func(c *Config) { c.WorkspaceOnly = &off; c.Shell = "/bin/sh" })
	for _, req := range []Request{
		{Argv: []string{"cat", "/etc/passwd"}},
		{Argv: []string{"cat", "out/secret"}},
		{Command: "cat a.txt"},
	} {
		p, err := x.planner.plan(req)
		if err != nil {
			t.Fatalf("%+v: %v", req, err)
		}
		if ok, _ := x.runsUnasked(p, req); ok {
			t.Errorf("%+v runs unasked", req)
		}
	}
	always := unaskedTools(t, func(c *Config) { c.Ask = AskAlways })
	p, err := always.planner.plan(Request{Argv: []string{"echo", "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := always.runsUnasked(p, Request{Argv: []string{"echo", "hi"}}); ok {
		t.Error("ask: always ran a command unasked")
	}
}

// Every program on the list resolves, where installed, to a file of its
// own name, so the list can be used as it stands on this machine.
func TestUnaskedProgramsResolveToThemselves(t *testing.T) {
	x := unaskedTools(t, nil)
	if len(x.allow) < len(UnaskedPrograms())/2 {
		t.Fatalf("only %d of the unasked programs are installed: %v", len(x.allow), x.allow)
	}
	for _, name := range UnaskedPrograms() {
		if why := notUnasked(name); why != "" {
			t.Errorf("%s: %s", name, why)
		}
		if _, ok := whyAsks[name]; ok {
			t.Errorf("%s is both unasked and given a reason to ask", name)
		}
	}
}

// The AllowBins doc comment (the configuration reference and schema)
// lists the unasked programs; it must name exactly these.
func TestAllowBinsDocListsTheUnaskedPrograms(t *testing.T) {
	src, err := os.ReadFile("config.go")
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	start := strings.Index(text, "// AllowBins names programs")
	end := strings.Index(text, "AllowBins []string")
	if start < 0 || end < start {
		t.Fatal("the AllowBins doc comment is not where this test looks")
	}
	doc := strings.Join(strings.Fields(strings.ReplaceAll(text[start:end], "//", "")), " ")
	_, list, _ := strings.Cut(doc, "may be listed (")
	list, _, _ = strings.Cut(list, ")")
	got := strings.Split(list, ", ")
	slices.Sort(got)
	if want := UnaskedPrograms(); !slices.Equal(got, want) {
		t.Fatalf("the AllowBins doc lists %q;\nthe programs are %q", got, want)
	}
}
