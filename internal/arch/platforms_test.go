package arch_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// platformLiteralAllowed are the files outside bridges/<platform>/ that
// may hold a platform's name as a string value, each with its reason.
// Keep it short: code that needs to know a platform asks its Descriptor.
var platformLiteralAllowed = map[string]string{
	"bridges/markup/target.go":           "markup names each dialect after the platform whose syntax it writes; every adapter picks its own",
	"cmd/switchboard-bench/fakes.go":     "the load tool starts each platform's wire-level fake by name",
	"cmd/switchboard-bench/main.go":      "the load tool's -platforms flag defaults to the platforms it can fake",
	"cmd/switchboard-bench/footprint.go": "the load tool's report says which platforms it ran",
}

// TestNoPlatformNameOutsideItsBridge fails for a string literal, in a
// non-test Go file outside bridges/<platform>/, whose value is a
// platform's channel name or starts with one followed by ":", "#", "/"
// or "," (a target, an account, a list): such a literal is a switch on
// platforms that a fifth bridge would silently miss. The platforms are
// the folders under bridges/ whose package declares a Descriptor.
// Struct tags (configuration keys) and import paths are not values.
func TestNoPlatformNameOutsideItsBridge(t *testing.T) {
	root := moduleRoot(t)
	platforms := platformNames(t, root)
	if len(platforms) < 4 {
		t.Fatalf("found the platforms %q under bridges/; want at least telegram, slack, discord and whatsapp", platforms)
	}
	var findings []string
	used := map[string]bool{}
	fset := token.NewFileSet()
	err := walkGo(root, func(rel, path string) error {
		for _, p := range platforms {
			if strings.HasPrefix(rel, "bridges/"+p+"/") {
				return nil
			}
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, lit := range valueLiterals(f) {
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				continue
			}
			name, ok := namesPlatform(s, platforms)
			if !ok {
				continue
			}
			if _, ok := platformLiteralAllowed[rel]; ok {
				used[rel] = true
				continue
			}
			findings = append(findings, rel+":"+strconv.Itoa(fset.Position(lit.Pos()).Line)+": "+lit.Value+" names "+name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(findings) > 0 {
		t.Errorf("platform names drive logic outside their bridge's folder; ask the bridge's bridges.Descriptor "+
			"(ParseChat, IsDirect, Label, Linkable...) or a capability interface instead, or, where there is no other way, "+
			"add the file to platformLiteralAllowed with a reason:\n\t%s", strings.Join(findings, "\n\t"))
	}
	for rel := range platformLiteralAllowed {
		if !used[rel] {
			t.Errorf("platformLiteralAllowed lists %s, which names no platform any more; remove the entry", rel)
		}
	}
}

// namesPlatform reports whether a literal's value is a platform's name, or
// starts with one followed by a separator.
func namesPlatform(s string, platforms []string) (string, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, p := range platforms {
		if s == p {
			return p, true
		}
		if rest, ok := strings.CutPrefix(s, p); ok && rest != "" && strings.ContainsRune(":#/,", rune(rest[0])) {
			return p, true
		}
	}
	return "", false
}

// platformNames lists the folders under bridges/ whose non-test files
// declare a func Descriptor: the platforms this module carries.
func platformNames(t *testing.T, root string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, "bridges"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	fset := token.NewFileSet()
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, "bridges", e.Name())
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			if slices.ContainsFunc(f.Decls, func(d ast.Decl) bool {
				fn, ok := d.(*ast.FuncDecl)
				return ok && fn.Recv == nil && fn.Name.Name == "Descriptor"
			}) {
				out = append(out, e.Name())
				break
			}
		}
	}
	return out
}

// valueLiterals returns f's string literals that are values: not struct
// tags, not import paths.
func valueLiterals(f *ast.File) []*ast.BasicLit {
	skip := map[*ast.BasicLit]bool{}
	var out []*ast.BasicLit
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.Field:
			if x.Tag != nil {
				skip[x.Tag] = true
			}
		case *ast.ImportSpec:
			skip[x.Path] = true
		case *ast.BasicLit:
			if x.Kind == token.STRING && !skip[x] {
				out = append(out, x)
			}
		}
		return true
	})
	return out
}

// moduleRoot is the module's root, two folders up from this test.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found from the test's directory: %v", err)
	}
	return root
}

// walkGo calls fn for every non-test Go file of the module, with its path
// relative to root (slash-separated), skipping testdata, hidden folders and
// nested modules.
func walkGo(root string, fn func(rel, path string) error) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if rel != "." && (name == "vendor" || name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if rel != "." {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		return fn(rel, path)
	})
}
