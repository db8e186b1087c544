package egress_test

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

// forbiddenHTTP are the net/http names that reach the network without the
// egress policy: the package-level helpers use http.DefaultClient, which
// dials anything, follows redirects anywhere and reads without a cap.
var forbiddenHTTP = []string{"Get", "Post", "Head", "PostForm", "DefaultClient", "DefaultTransport"}

// egressLintAllowed are the uses outside this package that are allowed, as
// "path:name" (path from the module root, slash-separated), each with its
// reason. They are clients of fixed platform or provider APIs whose base
// URL the operator configures; no model or message chooses where they
// connect. Keep this list short: a URL a model, user or remote message
// chose must go through egress.Client.
var egressLintAllowed = map[string]string{
	"bridges/discord/apiurl.go:DefaultTransport":  "base of the transport that rebases Discord API requests onto the operator's apiUrl",
	"bridges/httpclient.go:DefaultTransport":      "base of the bridges' client for their fixed platform APIs (api.telegram.org, slack.com, discord.com, or the operator's API server or apiUrl)",
	"bridges/whatsapp/bridge.go:DefaultTransport": "whatsmeow's client for WhatsApp's own servers",
	"core/llm/options.go:DefaultTransport":        "LLM provider client; the base URL comes from the operator's config",
}

// TestNoUnguardedHTTP fails for any non-test Go file of the module, outside
// egress/, that uses http.Get, http.Post, http.Head, http.PostForm,
// http.DefaultClient or http.DefaultTransport (by any import name of
// net/http), unless egressLintAllowed lists it.
func TestNoUnguardedHTTP(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found from the test's directory: %v", err)
	}
	var findings []string
	used := map[string]bool{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if rel != "." && (rel == "egress" || name == "vendor" || name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if rel != "." {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // another module
				}
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, pos := range forbiddenUses(fset, f) {
			key := rel + ":" + pos.name
			if _, ok := egressLintAllowed[key]; ok {
				used[key] = true
				continue
			}
			findings = append(findings, rel+":"+strconv.Itoa(pos.line)+": http."+pos.name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(findings) > 0 {
		t.Errorf("HTTP requests outside the egress policy; use an *egress.Client (egress.New, Client.Get/Do, "+
			"Client.HTTPClient for libraries), or, for a fixed platform API, add the file to egressLintAllowed with a reason:\n\t%s",
			strings.Join(findings, "\n\t"))
	}
	for key := range egressLintAllowed {
		if !used[key] {
			t.Errorf("egressLintAllowed lists %s, which no longer uses it; remove the entry", key)
		}
	}
}

type httpUse struct {
	name string
	line int
}

// forbiddenUses returns the forbidden net/http selectors in f. A dot
// import of net/http is reported too: its names could not be told apart.
func forbiddenUses(fset *token.FileSet, f *ast.File) []httpUse {
	local := ""
	var uses []httpUse
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p != "net/http" {
			continue
		}
		local = "http"
		if imp.Name != nil {
			local = imp.Name.Name
		}
		if local == "." {
			uses = append(uses, httpUse{name: "(dot import)", line: fset.Position(imp.Pos()).Line})
		}
	}
	if local == "" || local == "_" || local == "." {
		return uses
	}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && id.Name == local && slices.Contains(forbiddenHTTP, sel.Sel.Name) {
			uses = append(uses, httpUse{name: sel.Sel.Name, line: fset.Position(sel.Pos()).Line})
		}
		return true
	})
	return uses
}
