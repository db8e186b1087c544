package discord

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/bwmarrin/discordgo"
)

// rebase sends discordgo's REST requests (built on discordgo.EndpointAPI)
// to another API base: a REST proxy in front of Discord (nirn-proxy and
// the like), or a test server. Other requests (attachment downloads) pass
// unchanged.
type rebase struct {
	base *url.URL
	next http.RoundTripper
}

func (r *rebase) RoundTrip(req *http.Request) (*http.Response, error) {
	u := req.URL.String()
	if !strings.HasPrefix(u, discordgo.EndpointAPI) {
		return r.next.RoundTrip(req)
	}
	target, err := r.base.Parse(strings.TrimPrefix(u, discordgo.EndpointAPI))
	if err != nil {
		return nil, err
	}
	out := req.Clone(req.Context())
	out.URL, out.Host = target, ""
	return r.next.RoundTrip(out)
}

// rebased returns a client like c whose Discord API requests go to base.
func rebased(c *http.Client, base string) (*http.Client, error) {
	u, err := url.Parse(strings.TrimRight(base, "/") + "/")
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &url.Error{Op: "parse", URL: base, Err: errInvalidAPIURL}
	}
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	cc := *c
	cc.Transport = &rebase{base: u, next: next}
	return &cc, nil
}

var errInvalidAPIURL = errors.New("apiUrl must be an http(s) URL of a Discord API base such as https://proxy.example/api/v9/")
