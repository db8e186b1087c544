// Package webui is the gateway's web chat and control page: static HTML,
// CSS and JavaScript modules embedded in the binary (no CDN, no build
// step, works offline). The page speaks only the gateway's WebSocket
// protocol; it has no HTTP API of its own.
//
// The gateway serves Index on GET / and Assets under AssetsPrefix. Both set
// a strict Content-Security-Policy (scripts and styles from the gateway
// only, no inline script, no framing), so even a rendering bug could not
// run script from a chat message; the page itself never puts message text
// into HTML (see static/js/markdown.js).
package webui

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

// AssetsPrefix is the URL path under which the page's assets are served.
const AssetsPrefix = "/ui/"

//go:embed static
var static embed.FS

// contentSecurityPolicy allows the page's own scripts, styles and images
// and WebSocket connections back to the gateway, and nothing else.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// FS returns the page's files: index.html at the root, assets below it.
func FS() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree always has static/
	}
	return sub
}

// setHeaders sets the security headers every response of the page carries.
func setHeaders(h http.Header) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-cache")
}

// Index serves the page itself (index.html).
func Index() http.Handler {
	files := FS()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setHeaders(w.Header())
		http.ServeFileFS(w, r, files, "index.html")
	})
}

// Assets serves the page's scripts, styles and icons under AssetsPrefix.
// Directory listings are refused.
func Assets() http.Handler {
	fileServer := http.StripPrefix(strings.TrimSuffix(AssetsPrefix, "/"), http.FileServerFS(FS()))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") || strings.HasSuffix(r.URL.Path, "index.html") {
			http.NotFound(w, r)
			return
		}
		setHeaders(w.Header())
		fileServer.ServeHTTP(w, r)
	})
}
