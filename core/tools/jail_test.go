package tools_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core/tools"
)

// jailTree is a workspace with every kind of way out next to it:
//
//	base/ws/                     the workspace
//	base/ws/file.txt             an ordinary file
//	base/ws/sub/up -> ..         a symlink back to the workspace
//	base/ws/inlink -> file.txt   a symlink that stays inside
//	base/ws/link-out -> base/outside/secret.txt
//	base/ws/linkdir -> base/outside
//	base/ws/dangling -> base/outside/nope.txt (does not exist)
//	base/ws/hard.txt             a hard link of base/outside/hard.txt
//	base/ws2/secret              a sibling whose name extends "ws"
//	base/outside/secret.txt, base/outside/hard.txt
type jailTree struct {
	base, ws, ws2, outside string
	// secrets are the files outside the workspace no operation may read
	// or change.
	secrets []string
}

func newJailTree(tb testing.TB, base string) *jailTree {
	tb.Helper()
	tr := &jailTree{
		base:    base,
		ws:      filepath.Join(base, "ws"),
		ws2:     filepath.Join(base, "ws2"),
		outside: filepath.Join(base, "outside"),
	}
	for _, d := range []string{tr.ws, filepath.Join(tr.ws, "sub"), tr.ws2, tr.outside} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			tb.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(tr.ws, "file.txt"):          "inside\n",
		filepath.Join(tr.ws2, "secret"):           "ws2 secret\n",
		filepath.Join(tr.outside, "secret.txt"):   "outside secret\n",
		filepath.Join(tr.outside, "hard.txt"):     "hard secret\n",
		filepath.Join(tr.outside, "untouched.md"): "canary\n",
	}
	for p, s := range files {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	tr.secrets = []string{
		filepath.Join(tr.ws2, "secret"),
		filepath.Join(tr.outside, "secret.txt"),
		filepath.Join(tr.outside, "hard.txt"),
		filepath.Join(tr.outside, "untouched.md"),
	}
	links := map[string]string{
		filepath.Join(tr.ws, "sub", "up"): "..",
		filepath.Join(tr.ws, "inlink"):    "file.txt",
		filepath.Join(tr.ws, "link-out"):  filepath.Join(tr.outside, "secret.txt"),
		filepath.Join(tr.ws, "linkdir"):   tr.outside,
		filepath.Join(tr.ws, "dangling"):  filepath.Join(tr.outside, "nope.txt"),
	}
	for name, target := range links {
		if err := os.Symlink(target, name); err != nil {
			tb.Skipf("symlinks unavailable: %v", err)
		}
	}
	if err := os.Link(filepath.Join(tr.outside, "hard.txt"), filepath.Join(tr.ws, "hard.txt")); err != nil {
		tb.Skipf("hard links unavailable: %v", err)
	}
	return tr
}

// fileState is what "unchanged" means for a secret.
type fileState struct {
	data  []byte
	mtime time.Time
	mode  fs.FileMode
}

func (tr *jailTree) snapshot(tb testing.TB) map[string]fileState {
	tb.Helper()
	out := map[string]fileState{}
	for _, p := range tr.secrets {
		fi, err := os.Lstat(p)
		if err != nil {
			tb.Fatalf("secret %s: %v", p, err)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		out[p] = fileState{data: data, mtime: fi.ModTime(), mode: fi.Mode()}
	}
	// Nothing may appear outside the workspace either.
	for _, d := range []string{tr.base, tr.ws2, tr.outside} {
		names, err := os.ReadDir(d)
		if err != nil {
			tb.Fatal(err)
		}
		var list []string
		for _, n := range names {
			list = append(list, n.Name())
		}
		out[d] = fileState{data: []byte(strings.Join(list, "\n"))}
	}
	return out
}

func (tr *jailTree) assertUnchanged(tb testing.TB, before map[string]fileState, what string) {
	tb.Helper()
	after := tr.snapshot(tb)
	for p, b := range before {
		a := after[p]
		if !bytes.Equal(a.data, b.data) || !a.mtime.Equal(b.mtime) || a.mode != b.mode {
			tb.Fatalf("%s changed %s outside the workspace: before %q %v %v, after %q %v %v",
				what, p, b.data, b.mtime, b.mode, a.data, a.mtime, a.mode)
		}
	}
}

func openTreeJail(t *testing.T) (*jailTree, *tools.Jail) {
	t.Helper()
	tr := newJailTree(t, t.TempDir())
	j, err := tools.OpenJail(tr.ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return tr, j
}

// Reasons the jail gives, as the model reads them.
const (
	wantDotDot    = ".. leads outside the workspace"
	wantAbsolute  = "absolute paths are not allowed; give a path inside the workspace"
	wantEscapes   = "the path leads outside the workspace through a symlink"
	wantWriteLink = "the path is a symlink, and writing through symlinks is not allowed"
	wantLinkDots  = "a symlink followed by .. is not allowed"
	wantHardLink  = "hard-linked files are not allowed: it may be linked from outside the workspace"
	wantPercent   = "percent-encoded dot segments or separators (such as %2e%2e) are not allowed"
	wantNUL       = "NUL bytes are not allowed in paths"
	wantHome      = "~ (the home directory) is not allowed"
	wantBackslash = "backslashes are not allowed; separate directories with /"
	wantEmpty     = "empty path"
)

// jailCase is one row of the reliability-security matrix row 12 table.
type jailCase struct {
	name string
	path string
	// read and write are the reasons each operation must be refused
	// with; "" skips the operation.
	read, write string
}

// jailCases is the row 12 table; the fuzz target is seeded with it.
var jailCases = []jailCase{
	{"dotdot", "../x", wantDotDot, wantDotDot},
	{"absolute", "/etc/passwd", wantAbsolute, wantAbsolute},
	{"windows drive", `C:\x`, wantAbsolute, wantAbsolute},
	{"sibling prefix ws2", "../ws2/secret", wantDotDot, wantDotDot},
	{"dotdot after descending", "sub/../../ws2/secret", wantDotDot, wantDotDot},
	{"symlink to outside file", "link-out", wantEscapes, wantWriteLink},
	{"through symlinked dir", "linkdir/secret.txt", wantEscapes, wantEscapes},
	{"new file through symlinked dir", "linkdir/new.txt", wantEscapes, wantEscapes},
	{"symlink then dotdot", "sub/up/../outside/secret.txt", wantLinkDots, wantLinkDots},
	{"dangling symlink", "dangling", wantEscapes, wantWriteLink},
	{"hardlink to outside", "hard.txt", wantHardLink, wantHardLink},
	{"percent-encoded dotdot", "%2e%2e/secret", wantPercent, wantPercent},
	{"double-encoded dotdot", "%252e%252e/ws2/secret", wantPercent, wantPercent},
	{"percent-encoded slash", "..%2fws2%2fsecret", wantPercent, wantPercent},
	{"NUL byte", "file.txt\x00../../ws2/secret", wantNUL, wantNUL},
	{"exactly ../ (GO-2026-4403)", "../", wantDotDot, wantDotDot},
	{"tilde", "~", wantHome, wantHome},
	{"tilde slash", "~/x", wantHome, wantHome},
	{"backslash dotdot", `..\x`, wantBackslash, wantBackslash},
	{"empty", "", wantEmpty, wantEmpty},
}

// assertRefused fails unless err is a *JailError with the reason want.
func assertRefused(t *testing.T, op, p string, err error, want string) {
	t.Helper()
	var je *tools.JailError
	if !errors.As(err, &je) || !errors.Is(err, tools.ErrJail) {
		t.Fatalf("%s(%q) = %v, want a *JailError %q", op, p, err, want)
	}
	if !strings.Contains(je.Reason, want) {
		t.Fatalf("%s(%q) reason = %q, want %q", op, p, je.Reason, want)
	}
	if je.Path != p || !strings.Contains(err.Error(), want) {
		t.Fatalf("%s(%q) error = %q: path %q", op, p, err, je.Path)
	}
}

func TestJailRefusesEveryEscape(t *testing.T) {
	tr, j := openTreeJail(t)
	before := tr.snapshot(t)
	for _, c := range jailCases {
		t.Run(c.name, func(t *testing.T) {
			if c.read != "" {
				data, err := j.ReadFile(c.path)
				assertRefused(t, "ReadFile", c.path, err, c.read)
				if data != nil {
					t.Fatalf("ReadFile(%q) returned %q with its error", c.path, data)
				}
				f, err := j.Open(c.path)
				assertRefused(t, "Open", c.path, err, c.read)
				if f != nil {
					t.Fatalf("Open(%q) returned a file", c.path)
				}
			}
			if c.write != "" {
				assertRefused(t, "WriteFile", c.path, j.WriteFile(c.path, []byte("pwned")), c.write)
				err := j.UpdateFile(c.path, func(b []byte) ([]byte, error) { return []byte("pwned"), nil })
				assertRefused(t, "UpdateFile", c.path, err, c.write)
			}
			tr.assertUnchanged(t, before, c.name)
		})
	}
	if _, err := os.Lstat(filepath.Join(tr.outside, "nope.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the dangling symlink's target exists after the refused writes: %v", err)
	}
	// The symlinks themselves are left alone too.
	for _, l := range []string{"link-out", "dangling", "linkdir", "sub/up"} {
		fi, err := os.Lstat(filepath.Join(tr.ws, l))
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%s is no longer a symlink: %v", l, err)
		}
	}
}

func TestJailCleanRefusesWithoutTouchingDisk(t *testing.T) {
	_, j := openTreeJail(t)
	for _, c := range jailCases {
		if c.read == wantEscapes || c.read == wantHardLink {
			continue // only the OS can tell these
		}
		_, err := j.Clean(c.path)
		assertRefused(t, "Clean", c.path, err, c.read)
	}
	// Stat, ReadDir and Remove refuse the lexical escapes too.
	for _, p := range []string{"../", "/", "~", "../ws2", "linkdir", "sub/up/.."} {
		if _, err := j.Stat(p + "/secret.txt"); !errors.Is(err, tools.ErrJail) {
			t.Errorf("Stat(%q) = %v, want a jail error", p+"/secret.txt", err)
		}
		if _, _, err := j.ReadDir(p, 0); !errors.Is(err, tools.ErrJail) {
			t.Errorf("ReadDir(%q) = %v, want a jail error", p, err)
		}
		if err := j.Remove(p + "/secret.txt"); !errors.Is(err, tools.ErrJail) {
			t.Errorf("Remove(%q) = %v, want a jail error", p+"/secret.txt", err)
		}
	}
}

func TestJailCleanAcceptsPathsInside(t *testing.T) {
	_, j := openTreeJail(t)
	for in, want := range map[string]string{
		".":               "",
		"./":              "",
		"a":               "a",
		"a/b/c.txt":       "a/b/c.txt",
		"./a/../b":        "b",
		"a//b/./c/":       "a/b/c",
		"ünï/日本語.txt":     "ünï/日本語.txt",
		"100%.txt":        "100%.txt",
		"50%25off.txt":    "50%25off.txt",
		"notes~":          "notes~",
		"a/~b":            "a/~b",
		"sub/../file.txt": "file.txt",
		"file..txt":       "file..txt",
		"...":             "...",
		"a/b/../../c":     "c",
		"inlink":          "inlink",
		"sub/up/file.txt": "sub/up/file.txt",
	} {
		if want == "" {
			want = "."
		}
		got, err := j.Clean(in)
		if err != nil || got != want {
			t.Errorf("Clean(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestJailReadsAndWritesInside(t *testing.T) {
	tr, j := openTreeJail(t)
	before := tr.snapshot(t)
	write := func(p, content string) {
		t.Helper()
		if err := j.WriteFile(p, []byte(content)); err != nil {
			t.Fatalf("WriteFile(%q): %v", p, err)
		}
	}
	read := func(p string) string {
		t.Helper()
		data, err := j.ReadFile(p)
		if err != nil {
			t.Fatalf("ReadFile(%q): %v", p, err)
		}
		return string(data)
	}

	write("a/b/c/deep.txt", "deep")
	if got := read("a/b/c/deep.txt"); got != "deep" {
		t.Errorf("nested read = %q", got)
	}
	write("./a/../b.txt", "bee")
	if got, err := os.ReadFile(filepath.Join(tr.ws, "b.txt")); err != nil || string(got) != "bee" {
		t.Errorf("./a/../b.txt landed elsewhere: %q, %v", got, err)
	}
	write("ünï/日本語.txt", "こんにちは")
	if got := read("ünï/日本語.txt"); got != "こんにちは" {
		t.Errorf("unicode read = %q", got)
	}
	// Replacing keeps one link and the jail's mode.
	write("b.txt", "second")
	if got := read("b.txt"); got != "second" {
		t.Errorf("replaced read = %q", got)
	}
	// A symlink that stays inside is followed for reading.
	if got := read("inlink"); got != "inside\n" {
		t.Errorf("read through inside symlink = %q", got)
	}
	if got := read("sub/up/file.txt"); got != "inside\n" {
		t.Errorf("read through sub/up = %q", got)
	}

	if runtime.GOOS != "windows" {
		for p, want := range map[string]fs.FileMode{
			"a": 0o700, "a/b/c": 0o700, "a/b/c/deep.txt": 0o600, "b.txt": 0o600,
		} {
			fi, err := os.Stat(filepath.Join(tr.ws, p))
			if err != nil || fi.Mode().Perm() != want {
				t.Errorf("mode of %s = %v, %v; want %v", p, fi.Mode().Perm(), err, want)
			}
		}
	}
	// No temporary files are left behind.
	entries, total, err := j.ReadDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{"a", "b.txt", "dangling", "file.txt", "hard.txt", "inlink", "link-out", "linkdir", "sub", "ünï"}
	if !slices.Equal(names, want) || total != len(want) {
		t.Errorf("ReadDir(.) = %v (total %d), want %v", names, total, want)
	}
	if entries, total, err := j.ReadDir(".", 2); err != nil || len(entries) != 2 || total != len(want) {
		t.Errorf("ReadDir(., 2) = %d entries, total %d, %v", len(entries), total, err)
	}

	fi, err := j.Stat("a/b/c/deep.txt")
	if err != nil || fi.Size() != 4 {
		t.Errorf("Stat = %v, %v", fi, err)
	}
	if err := j.Remove("b.txt"); err != nil {
		t.Fatal(err)
	}
	if _, err := j.Stat("b.txt"); err == nil || errors.Is(err, tools.ErrJail) || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("Stat after Remove = %v", err)
	}
	// Removing a symlink removes the link, not what it points to.
	if err := j.Remove("link-out"); err != nil {
		t.Fatal(err)
	}
	tr.assertUnchanged(t, before, "the positive cases")
	// Errors name the model's path, never the workspace's location.
	_, err = j.ReadFile("missing/file.txt")
	if err == nil || strings.Contains(err.Error(), tr.ws) || !strings.Contains(err.Error(), `"missing/file.txt"`) {
		t.Errorf("missing file error = %v", err)
	}
}

func TestJailRefusesDirectoriesAndSpecialFiles(t *testing.T) {
	_, j := openTreeJail(t)
	if _, err := j.ReadFile("sub"); !strings.Contains(fmtErr(err), "is a directory") {
		t.Errorf("ReadFile(dir) = %v", err)
	}
	if err := j.WriteFile("sub", nil); !strings.Contains(fmtErr(err), "is a directory") {
		t.Errorf("WriteFile(dir) = %v", err)
	}
	if err := j.WriteFile(".", nil); !strings.Contains(fmtErr(err), "is a directory") {
		t.Errorf("WriteFile(.) = %v", err)
	}
	if err := j.Remove("."); !errors.Is(err, tools.ErrJail) {
		t.Errorf("Remove(.) = %v", err)
	}
}

func TestOpenJailCreatesThePrivateDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "ws")
	j, err := tools.OpenJail(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if j.Dir() != dir {
		t.Errorf("Dir() = %q, want %q", j.Dir(), dir)
	}
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o700) {
		t.Errorf("workspace = %v, %v", fi, err)
	}
}

func fmtErr(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
