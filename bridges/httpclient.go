package bridges

import (
	"net/http"
	"sync"
)

// maxIdlePerPlatform is how many idle connections a bridge keeps to its
// platform's API host.
const maxIdlePerPlatform = 32

// apiTransport is http.DefaultTransport's settings with more idle
// connections per host: net/http keeps two, so when more replies go to one
// platform at once (the lanes run several turns together) the rest of the
// connections were closed after each request and the next send paid a new
// TCP and TLS handshake.
var apiTransport = sync.OnceValue(func() http.RoundTripper {
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return http.DefaultTransport
	}
	t = t.Clone()
	t.MaxIdleConnsPerHost = maxIdlePerPlatform
	return t
})

// APIHTTPClient returns the HTTP client a bridge uses for its platform's
// API when the host gives it none: no overall timeout (long polls and
// uploads set their own), connections kept between requests. The clients
// share one transport; safe for concurrent use.
func APIHTTPClient() *http.Client { return &http.Client{Transport: apiTransport()} }
