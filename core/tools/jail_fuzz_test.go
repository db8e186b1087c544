package tools_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/tools"
)

// FuzzJail feeds arbitrary paths to every jail operation over a tree with
// symlinks and a hard link leading out. The oracle is the file system: an
// operation either fails, or the location it touched resolves, link by
// link, to a real path under the workspace, and the files outside are
// never changed.
func FuzzJail(f *testing.F) {
	for _, c := range jailCases {
		f.Add(c.path)
	}
	for _, p := range []string{
		"file.txt", "sub/up/file.txt", "inlink", "new/dir/x.txt", "./a/../b",
		"sub/up/sub/up/link-out", "linkdir/../ws/file.txt", "..", ".", "sub/..",
		"%2E%2E/", "....//", "link-out/", "hard.txt/.", "日本/語.txt", "file.txt/..",
	} {
		f.Add(p)
	}
	// One tree per fuzz process: building it per input would dominate.
	tr := newJailTree(f, f.TempDir())
	j, err := tools.OpenJail(tr.ws)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { j.Close() })
	wsReal, err := filepath.EvalSymlinks(tr.ws)
	if err != nil {
		f.Fatal(err)
	}
	before := tr.snapshot(f)

	f.Fuzz(func(t *testing.T, p string) {
		rel, cleanErr := j.Clean(p)
		if cleanErr == nil && rel != "." && !filepath.IsLocal(rel) {
			t.Fatalf("Clean(%q) = %q, which is not local", p, rel)
		}
		// loc is where an operation that succeeded acted.
		loc := filepath.Join(tr.ws, filepath.FromSlash(rel))
		inside := func(op string) {
			t.Helper()
			real, err := filepath.EvalSymlinks(loc)
			if err != nil {
				t.Fatalf("%s(%q) succeeded but %s does not resolve: %v", op, p, loc, err)
			}
			if real != wsReal && !strings.HasPrefix(real, wsReal+string(filepath.Separator)) {
				t.Fatalf("%s(%q) reached %s, outside %s", op, p, real, wsReal)
			}
		}

		// What Clean refuses, every operation refuses.
		refused := func(op string, err error) bool {
			t.Helper()
			if cleanErr != nil && err == nil {
				t.Fatalf("%s(%q) succeeded, but Clean refused it: %v", op, p, cleanErr)
			}
			return err != nil
		}
		if data, err := j.ReadFile(p); !refused("ReadFile", err) {
			inside("ReadFile")
			if onDisk, _ := os.ReadFile(loc); !bytes.Equal(onDisk, data) {
				t.Fatalf("ReadFile(%q) = %q, the file holds %q", p, data, onDisk)
			}
		}
		if _, err := j.Stat(p); !refused("Stat", err) {
			inside("Stat")
		}
		if _, _, err := j.ReadDir(p, 4); !refused("ReadDir", err) {
			inside("ReadDir")
		}
		payload := []byte("fuzz:" + p)
		if err := j.WriteFile(p, payload); !refused("WriteFile", err) {
			fi, lerr := os.Lstat(loc)
			if lerr != nil || !fi.Mode().IsRegular() {
				t.Fatalf("WriteFile(%q) succeeded but %s is %v, %v", p, loc, fi, lerr)
			}
			inside("WriteFile")
			if onDisk, _ := os.ReadFile(loc); !bytes.Equal(onDisk, payload) {
				t.Fatalf("WriteFile(%q) left %q", p, onDisk)
			}
		}
		tr.assertUnchanged(t, before, "an operation on "+p)
	})
}
