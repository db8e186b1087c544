package llm

import (
	"bytes"
	"context"
	"io"
	"maps"
	"net/http"
	"slices"
	"sync/atomic"
	"time"
)

// maxErrorBody bounds how much of a failed response's body is read for
// its error message.
const maxErrorBody = 64 << 10

// userAgent names us to the providers.
const userAgent = "switchboard"

// httpStatusError is a response with a status other than 2xx: its status,
// header (for Retry-After) and the start of its body.
type httpStatusError struct {
	status int
	header http.Header
	body   []byte
}

func (e *httpStatusError) Error() string {
	return http.StatusText(e.status) + ": " + string(e.body)
}

// postStream POSTs body as JSON to url with header and returns the
// response of a 2xx status, whose body the caller reads and closes. Any
// other status is an *httpStatusError; a request that got no response
// returns the transport's error. Blocking network IO on the calling
// goroutine, bounded by ctx.
func postStream(ctx context.Context, client *http.Client, url string, header http.Header, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = header.Clone()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", userAgent)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	return nil, &httpStatusError{status: resp.StatusCode, header: resp.Header, body: b}
}

// A stream that ends in-band ([DONE], message_stop) has a few bytes of
// framing left (the chunked encoding's last chunk). Read to its end, the
// response leaves its connection to the next request; closed early, the
// connection is dropped and the next turn pays a new TCP (and TLS)
// handshake. The rest is read up to drainBytes and drainTime. A server
// that holds the response open after its last event costs that once: the
// provider then stops draining (see drainer).
const (
	drainBytes = 4 << 10
	drainTime  = time.Second
)

// drainer reads the end of a provider's responses until one of its
// servers is seen to hold a response open after the last event. Safe for
// concurrent use.
type drainer struct {
	lingers atomic.Bool
}

// drain reads what is left of body, within drainBytes and drainTime;
// cancel ends the request when time is up, and from then on drain does
// nothing. Blocking, on the calling goroutine.
func (d *drainer) drain(body io.Reader, cancel context.CancelFunc) {
	if d.lingers.Load() {
		return
	}
	t := time.AfterFunc(drainTime, cancel)
	_, _ = io.CopyN(io.Discard, body, drainBytes)
	if !t.Stop() {
		d.lingers.Store(true)
	}
}

// extraHeaders returns the configured headers (models.providers.*.headers)
// in a stable order, set last so they can override ours.
func extraHeaders(h http.Header, extra map[string]string) {
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		h.Set(k, extra[k])
	}
}
