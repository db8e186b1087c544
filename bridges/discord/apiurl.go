package discord

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/switchboardhq/switchboard/bridges"
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

// rebased returns a client like c whose Discord API requests go to base,
// and base parsed.
func rebased(c *http.Client, base string) (*http.Client, *url.URL, error) {
	u, err := url.Parse(strings.TrimRight(base, "/") + "/")
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, nil, &url.Error{Op: "parse", URL: base, Err: errInvalidAPIURL}
	}
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	cc := *c
	cc.Transport = &rebase{base: u, next: next}
	return &cc, u, nil
}

var errInvalidAPIURL = errors.New("apiUrl must be an http(s) URL of a Discord API base such as https://proxy.example/api/v9/")

// apiHost is the host the bridge's REST requests go to: apiUrl's, else
// Discord's own.
func apiHost(base *url.URL) string {
	if base != nil {
		return base.Host
	}
	u, _ := url.Parse(discordgo.EndpointAPI)
	return u.Host
}

// apiErr prepares the error of a REST call for a log line or a status
// (issue 26, finding 8): it names the host the request went to, where
// net/http names the URL discordgo built on discord.com even when apiUrl
// sent it elsewhere; it says an HTTP error answer came from that host, in
// words Summarize returns; and it removes the token.
func (b *Bridge) apiErr(err error) error {
	if err == nil {
		return nil
	}
	host := apiHost(b.apiBase)
	var ue *url.Error
	if b.apiBase != nil && errors.As(err, &ue) {
		if rest, ok := strings.CutPrefix(ue.URL, discordgo.EndpointAPI); ok {
			if target, perr := b.apiBase.Parse(rest); perr == nil {
				// The error was made for this request alone: nothing else
				// holds it.
				ue.URL = target.String()
			}
		}
	}
	var re *discordgo.RESTError
	var rl *discordgo.RateLimitError
	switch {
	case errors.As(err, &rl):
		err = bridges.Summarized(err, "rate limited by Discord")
	case errors.As(err, &re) && re.Response != nil:
		err = bridges.Summarized(fmt.Errorf("%s answered %w", host, err), fmt.Sprintf("%s answered HTTP %d", host, re.Response.StatusCode))
	}
	return redact(err, b.opts.Token)
}
