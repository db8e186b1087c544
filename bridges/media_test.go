package bridges

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// mediaServer serves n bytes at /sized?n= with a Content-Length and at
// /chunked?n= without one, and counts requests.
func mediaServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		body := bytes.Repeat([]byte("x"), n)
		switch r.URL.Path {
		case "/sized.bin":
			w.Header().Set("Content-Length", strconv.Itoa(n))
			_, _ = w.Write(body)
		case "/chunked.bin":
			// A flush before the end makes the answer chunked.
			_, _ = w.Write(body[:1])
			w.(http.Flusher).Flush()
			_, _ = w.Write(body[1:])
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func TestLocalMedia(t *testing.T) {
	root := t.TempDir()
	mediaDir := filepath.Join(root, "media", "slack")
	for _, dir := range []string{mediaDir, filepath.Join(root, "outside"), filepath.Join(root, "media2")} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p string) string {
		if err := os.WriteFile(p, []byte("data"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	inside := write(filepath.Join(mediaDir, "a.png"))
	shared := write(filepath.Join(root, "media", "report.txt"))
	secret := write(filepath.Join(root, "outside", "secret.txt"))
	sibling := write(filepath.Join(root, "media2", "x.txt"))
	if err := os.Symlink(secret, filepath.Join(mediaDir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(root, filepath.Join(mediaDir, "up")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, ref string
		want      string // "" means refused
	}{
		{"file in the bridge's folder", inside, inside},
		{"file URL", "file://" + inside, inside},
		{"file in the media folder", shared, shared},
		{"dot-dot out of the folder", filepath.Join(mediaDir, "..", "..", "outside", "secret.txt"), ""},
		{"dot-dot spelled out", mediaDir + "/../../outside/secret.txt", ""},
		{"absolute path elsewhere", "/etc/passwd", ""},
		{"sibling with the same prefix", sibling, ""},
		{"symlink pointing out", filepath.Join(mediaDir, "link.txt"), ""},
		{"through a symlinked directory", filepath.Join(mediaDir, "up", "outside", "secret.txt"), ""},
		{"relative path", "../../../etc/passwd", ""},
	} {
		got, err := LocalMedia(mediaDir, tc.ref)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("%s: %q accepted as %q", tc.name, tc.ref, got)
		case tc.want == "" && !strings.Contains(err.Error(), "outside the media directory"):
			t.Errorf("%s: %v, want the outside-the-media-directory refusal", tc.name, err)
		case tc.want != "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "":
			if real, _ := filepath.EvalSymlinks(tc.want); got != real {
				t.Errorf("%s: %q, want %q", tc.name, got, real)
			}
		}
	}
	if _, err := LocalMedia("", inside); err == nil {
		t.Error("a local file accepted with no media directory")
	}
}

func TestOpenMediaCaps(t *testing.T) {
	srv, _ := mediaServer(t)
	const max = 100
	read := func(ref string) (string, error) {
		f, err := OpenMedia(t.Context(), srv.Client(), "", ref, max)
		if err != nil {
			return "", err
		}
		defer f.Body.Close()
		data, err := io.ReadAll(f.Body)
		return string(data), err
	}
	for _, tc := range []struct {
		name string
		n    int
		path string
		ok   bool
	}{
		{"sized at the cap", max, "/sized.bin", true},
		{"sized over the cap", max + 1, "/sized.bin", false},
		{"chunked at the cap", max, "/chunked.bin", true},
		{"chunked over the cap", max * 3, "/chunked.bin", false},
	} {
		data, err := read(srv.URL + tc.path + "?n=" + strconv.Itoa(tc.n))
		switch {
		case tc.ok && (err != nil || len(data) != tc.n):
			t.Errorf("%s: %d bytes, %v", tc.name, len(data), err)
		case !tc.ok && (err == nil || !strings.Contains(err.Error(), "limit")):
			t.Errorf("%s: %d bytes read, %v; want the limit error, not a truncated file", tc.name, len(data), err)
		}
	}
	if _, err := read(srv.URL + "/missing.png?token=SECRET"); err == nil || !strings.Contains(err.Error(), "404") || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("a failing URL: %v, want HTTP 404 without the query", err)
	}

	mediaDir := filepath.Join(t.TempDir(), "media", "slack")
	if err := os.MkdirAll(mediaDir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		size int
		ok   bool
	}{{"local file at the cap", max, true}, {"local file over the cap", max + 1, false}} {
		p := filepath.Join(mediaDir, strings.ReplaceAll(tc.name, " ", "-")+".bin")
		if err := os.WriteFile(p, make([]byte, tc.size), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := OpenMedia(t.Context(), srv.Client(), mediaDir, p, max)
		if err == nil {
			f.Body.Close()
		}
		if (err == nil) != tc.ok || (err != nil && !strings.Contains(err.Error(), "limit")) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

func TestSaveDownload(t *testing.T) {
	srv, hits := mediaServer(t)
	const max = 100
	get := func(t *testing.T, path string, n int) *http.Request {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL+path+"?n="+strconv.Itoa(n), nil)
		if err != nil {
			t.Fatal(err)
		}
		return req
	}
	// entries lists what dir holds, temporary files included.
	entries := func(dir string) []string {
		des, _ := os.ReadDir(dir)
		var names []string
		for _, de := range des {
			names = append(names, de.Name())
		}
		return names
	}

	t.Run("refusals leave nothing behind", func(t *testing.T) {
		dir := t.TempDir()
		before := hits.Load()
		if _, err := SaveDownload(srv.Client(), Download{Request: get(t, "/sized.bin", 10), ID: "F1", Size: max + 1}, dir, max); err == nil {
			t.Error("an announced size over the cap was fetched")
		}
		if hits.Load() != before {
			t.Error("a file announced over the cap was requested at all")
		}
		for _, tc := range []struct{ name, path string }{{"Content-Length over the cap", "/sized.bin"}, {"chunked body over the cap", "/chunked.bin"}} {
			if _, err := SaveDownload(srv.Client(), Download{Request: get(t, tc.path, max*3), ID: "F2"}, dir, max); err == nil || !strings.Contains(err.Error(), "limit") {
				t.Errorf("%s: %v, want the limit error", tc.name, err)
			}
		}
		if _, err := SaveDownload(srv.Client(), Download{Request: get(t, "/missing", 1), ID: "F3"}, dir, max); err == nil {
			t.Error("a 404 was saved")
		}
		if names := entries(dir); len(names) != 0 {
			t.Errorf("refused downloads left %q", names)
		}
		if _, err := SaveDownload(srv.Client(), Download{Request: get(t, "/sized.bin", 1), ID: "F4"}, "", max); err == nil {
			t.Error("a download with no media directory succeeded")
		}
	})

	t.Run("names are stable by ID", func(t *testing.T) {
		dir := t.TempDir()
		save := func(id string, n int) string {
			p, err := SaveDownload(srv.Client(), Download{Request: get(t, "/chunked.bin", n), ID: id, Name: "photo.JPG", MimeType: "image/jpeg"}, dir, max)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		a1, a2, b := save("F1", max), save("F1", 5), save("F2", 5)
		if a1 != a2 || a1 == b || filepath.Dir(a1) != dir || filepath.Ext(a1) != ".jpg" {
			t.Errorf("paths %q %q %q: want one stable name per ID, in dir, with the name's extension", a1, a2, b)
		}
		if data, err := os.ReadFile(a1); err != nil || len(data) != 5 {
			t.Errorf("the second download of F1 did not replace the first: %d bytes, %v", len(data), err)
		}
		if names := entries(dir); len(names) != 2 {
			t.Errorf("dir holds %q, want the two files only", names)
		}
	})
}

func TestOpenMediaErrorHidesTheQuery(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	_, err = OpenMedia(t.Context(), http.DefaultClient, "", "http://"+addr+"/f.png?sig=SECRET123", 100)
	if err == nil || strings.Contains(err.Error(), "SECRET123") || !strings.Contains(err.Error(), addr+"/f.png") {
		t.Errorf("error = %v, want the URL named without its query", err)
	}
}
