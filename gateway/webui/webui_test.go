package webui

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, path string) *http.Response {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Result()
}

func mux() http.Handler {
	m := http.NewServeMux()
	m.Handle("GET /{$}", Index())
	m.Handle("GET "+AssetsPrefix, Assets())
	return m
}

func TestIndexServesThePageWithStrictHeaders(t *testing.T) {
	res := get(t, mux(), "/")
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET / = %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if !strings.Contains(string(body), `<script type="module" src="/ui/js/app.js">`) {
		t.Error("the page does not load its script")
	}
	csp := res.Header.Get("Content-Security-Policy")
	for _, want := range []string{"script-src 'self'", "default-src 'none'", "frame-ancestors 'none'", "connect-src 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("CSP %q allows inline or eval'd script", csp)
	}
	if res.Header.Get("X-Content-Type-Options") != "nosniff" || res.Header.Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("headers = %v", res.Header)
	}
}

func TestAssetsServeEveryFileTheTreeHolds(t *testing.T) {
	types := map[string]string{".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}
	n := 0
	err := fs.WalkDir(FS(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path == "index.html" {
			return err
		}
		n++
		res := get(t, mux(), AssetsPrefix+path)
		if res.StatusCode != http.StatusOK {
			t.Errorf("GET %s%s = %d", AssetsPrefix, path, res.StatusCode)
		}
		for ext, ct := range types {
			if strings.HasSuffix(path, ext) && !strings.HasPrefix(res.Header.Get("Content-Type"), ct) {
				t.Errorf("%s served as %q, want %s", path, res.Header.Get("Content-Type"), ct)
			}
		}
		if res.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("%s served without a CSP", path)
		}
		return nil
	})
	if err != nil || n < 6 {
		t.Fatalf("walked %d assets: %v", n, err)
	}
}

func TestAssetsRefuseListingsAndUnknownFiles(t *testing.T) {
	for _, p := range []string{"/ui/", "/ui/js/", "/ui/index.html", "/ui/nope.js", "/ui/../go.mod"} {
		if res := get(t, mux(), p); res.StatusCode == http.StatusOK {
			t.Errorf("GET %s = 200, want a refusal", p)
		}
	}
}

// TestPageReferencesOnlyOwnAssets: no CDN, nothing fetched from elsewhere,
// every asset the page names exists.
func TestPageReferencesOnlyOwnAssets(t *testing.T) {
	files := FS()
	external := regexp.MustCompile(`(?:src|href)=["'](?:https?:)?//|(?:import|fetch)\(\s*["'](?:https?:)?//|from\s+["'](?:https?:)?//|url\(\s*["']?(?:https?:)?//`)
	refs := regexp.MustCompile(`(?:src|href)="([^"#]+)"|from "(\./[^"]+)"|import\("([^"]+)"\)`)
	err := fs.WalkDir(files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".html") || strings.HasSuffix(path, ".js") || strings.HasSuffix(path, ".css")) {
			return err
		}
		b, _ := fs.ReadFile(files, path)
		if external.Match(b) {
			t.Errorf("%s loads something from another site (%s); the page must work offline", path, external.Find(b))
		}
		for _, m := range refs.FindAllStringSubmatch(string(b), -1) {
			ref := m[1] + m[2] + m[3]
			var target string
			switch {
			case strings.HasPrefix(ref, AssetsPrefix):
				target = strings.TrimPrefix(ref, AssetsPrefix)
			case strings.HasPrefix(ref, "./"):
				target = path[:strings.LastIndex(path, "/")+1] + ref[2:]
			default:
				continue
			}
			if _, err := fs.Stat(files, target); err != nil {
				t.Errorf("%s refers to %s, which is not embedded", path, ref)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
