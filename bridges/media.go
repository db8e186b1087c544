package bridges

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/egress"
)

// DefaultMaxMediaBytes caps one attachment a bridge downloads or uploads
// unless its configuration says otherwise.
const DefaultMaxMediaBytes = 20 << 20

// LocalMedia resolves a local media reference of a reply (a path, or a
// file:// URL) to a file inside the parent of mediaDir (the state
// directory's media folder, which holds every bridge's downloads), after
// following symlinks. Anything outside is refused, so a model cannot make
// a bridge send arbitrary files from disk.
func LocalMedia(mediaDir, ref string) (string, error) {
	if mediaDir == "" {
		return "", fmt.Errorf("media %q is not an http(s) URL and no media directory is configured", ref)
	}
	root, err := filepath.Abs(filepath.Dir(mediaDir))
	if err != nil {
		return "", err
	}
	p, err := filepath.Abs(strings.TrimPrefix(ref, "file://"))
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	}
	if realRoot, err := filepath.EvalSymlinks(root); err == nil {
		root = realRoot
	}
	if rel, err := filepath.Rel(root, p); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("media %q is outside the media directory; only http(s) URLs and files under %s can be sent", ref, root)
	}
	return p, nil
}

// IsRemoteMedia reports whether ref is an http(s) URL.
func IsRemoteMedia(ref string) bool {
	u, err := url.Parse(ref)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// MediaFile is an attachment of a reply, opened for upload.
type MediaFile struct {
	// Name is the file name to show (the base of the path or URL).
	Name string
	// ContentType is the media type, from the server or the extension.
	ContentType string
	// Body is the content; the caller closes it.
	Body io.ReadCloser
}

// OpenMedia opens one attachment of a reply for upload: an http(s) URL is
// fetched with client (at most max bytes are read: a longer body fails
// the read), anything else must be a file inside the media folder
// (LocalMedia) no larger than max.
func OpenMedia(ctx context.Context, client *http.Client, mediaDir, ref string, max int64) (MediaFile, error) {
	if max <= 0 {
		max = DefaultMaxMediaBytes
	}
	if IsRemoteMedia(ref) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, ref, nil)
		if err != nil {
			return MediaFile{}, err
		}
		resp, err := client.Do(req)
		if err != nil {
			// *url.Error quotes the whole URL, query (maybe a signature)
			// included; name it without.
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
			return MediaFile{}, fmt.Errorf("media %s: %w", redactURL(ref), err)
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return MediaFile{}, fmt.Errorf("media %s answered HTTP %d", redactURL(ref), resp.StatusCode)
		}
		if resp.ContentLength > max {
			resp.Body.Close()
			return MediaFile{}, fmt.Errorf("media %s is %d bytes, over the %d-byte limit", redactURL(ref), resp.ContentLength, max)
		}
		name := path.Base(req.URL.Path)
		if name == "/" || name == "." {
			name = "file"
		}
		ct := resp.Header.Get("Content-Type")
		if ct == "" {
			ct = mime.TypeByExtension(path.Ext(name))
		}
		return MediaFile{Name: name, ContentType: ct, Body: &capped{r: resp.Body, left: max, max: max}}, nil
	}
	p, err := LocalMedia(mediaDir, ref)
	if err != nil {
		return MediaFile{}, err
	}
	f, err := os.Open(p)
	if err != nil {
		return MediaFile{}, fmt.Errorf("media %s: %w", filepath.Base(p), err)
	}
	if fi, err := f.Stat(); err != nil || fi.Size() > max {
		f.Close()
		if err == nil {
			err = fmt.Errorf("media %s is %d bytes, over the %d-byte limit", filepath.Base(p), fi.Size(), max)
		}
		return MediaFile{}, err
	}
	return MediaFile{Name: filepath.Base(p), ContentType: mime.TypeByExtension(filepath.Ext(p)), Body: f}, nil
}

// redactURL drops a URL's query and user info, which may hold secrets.
func redactURL(ref string) string {
	u, err := url.Parse(ref)
	if err != nil {
		return "(unparsable URL)"
	}
	u.RawQuery, u.User, u.Fragment = "", nil, ""
	return u.String()
}

// capped fails a read past max bytes instead of truncating silently.
type capped struct {
	r         io.ReadCloser
	left, max int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var one [1]byte
		n, err := c.r.Read(one[:])
		if n > 0 {
			return 0, fmt.Errorf("media is over the %d-byte limit", c.max)
		}
		return 0, err
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

func (c *capped) Close() error { return c.r.Close() }

// Download is one inbound attachment to fetch into a media folder.
type Download struct {
	// Request fetches the file (with whatever authorization the platform
	// wants in its headers: never in the URL that gets logged).
	Request *http.Request
	// ID identifies the file durably on the platform; the saved name is
	// derived from it, so a redelivered message reuses the same file.
	ID string
	// Name and MimeType pick the saved file's extension.
	Name, MimeType string
	// Size is the size the platform announced (0: unknown).
	Size int64
}

// SaveDownload fetches d into dir with client, refusing files over max
// bytes (announced or actual), and returns the saved path. The file
// appears under its final name only when complete.
func SaveDownload(client *http.Client, d Download, dir string, max int64) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("no media directory is configured")
	}
	if max <= 0 {
		max = DefaultMaxMediaBytes
	}
	if d.Size > max {
		return "", fmt.Errorf("%d bytes is over the %d-byte limit", d.Size, max)
	}
	resp, err := client.Do(d.Request)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("file download answered HTTP %d", resp.StatusCode)
	}
	if resp.ContentLength > max {
		return "", fmt.Errorf("%d bytes is over the %d-byte limit", resp.ContentLength, max)
	}
	return SaveMedia(dir, d.ID, MediaExtension(d.Name, d.MimeType, d.Request.URL.Path), resp.Body, max)
}

// SaveMedia writes r into dir under a name derived from id (so the same
// platform file always lands in the same place) plus ext, refusing more
// than max bytes, and returns the path. The file appears under its final
// name only when complete.
func SaveMedia(dir, id, ext string, r io.Reader, max int64) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("no media directory is configured")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(id))
	dst := filepath.Join(dir, hex.EncodeToString(sum[:8])+ext)
	tmp, err := os.CreateTemp(dir, ".download-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	n, err := io.Copy(tmp, io.LimitReader(r, max+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	if n > max {
		return "", fmt.Errorf("the file is over the %d-byte limit", max)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return "", err
	}
	return dst, nil
}

// MediaExtension picks a file extension from a name, the server's path,
// or the media type ("" when none fits).
func MediaExtension(name, mimeType, serverPath string) string {
	for _, p := range []string{name, serverPath} {
		if ext := filepath.Ext(p); ext != "" && len(ext) <= 8 && !strings.ContainsAny(ext, `/\`) {
			return strings.ToLower(ext)
		}
	}
	if exts, _ := mime.ExtensionsByType(mimeType); len(exts) > 0 {
		return exts[0]
	}
	return ""
}

// MediaClient is the client for outbound media URLs, which the model may
// choose (reply media, the message tool): c when set, else the egress
// client, which refuses private, loopback, link-local and metadata
// addresses on every hop (reliability-security §1.2.E). Platform APIs use
// the bridge's own client; model-chosen URLs never do.
func MediaClient(c *http.Client, maxBytes int64) *http.Client {
	if c != nil {
		return c
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxMediaBytes
	}
	return egress.New(egress.Options{Timeout: 2 * time.Minute, MaxResponseBytes: maxBytes + 1}).HTTPClient()
}
