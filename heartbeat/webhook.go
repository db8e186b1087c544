package heartbeat

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/switchboardhq/switchboard/egress"
)

// This file adapts the shared egress client to cron webhook delivery. The
// URL comes from a user or a model, so it goes through egress, which applies
// the address policy to what is actually dialled (reliability-security.md
// §1.2.E); only the webhook defaults and the error prefix are heartbeat's.

// Webhook defaults; WebhookOptions documents where each applies.
const (
	DefaultWebhookTimeout          = 10 * time.Second
	DefaultWebhookMaxResponseBytes = 64 << 10
	DefaultWebhookUserAgent        = "Switchboard-Cron/1"
)

// maxWebhookRedirects is how many redirects a delivery follows; each hop is
// checked like the first request.
const maxWebhookRedirects = 3

// WebhookStatusError is a webhook answered with a status outside 2xx.
type WebhookStatusError = egress.StatusError

// WebhookOptions configure a WebhookPoster; the fields are egress.Options'
// with webhook defaults.
type WebhookOptions struct {
	// Timeout bounds a whole delivery; zero means DefaultWebhookTimeout.
	Timeout time.Duration
	// MaxResponseBytes is how much of a response body is read (and
	// discarded); zero means DefaultWebhookMaxResponseBytes.
	MaxResponseBytes int64
	// AllowPrivate lets deliveries reach loopback and private networks,
	// for tests; see egress.Options.AllowPrivate.
	AllowPrivate bool
	// Resolver looks up host names; nil means net.DefaultResolver.
	Resolver interface {
		LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
	}
	// UserAgent is sent with every request; zero means
	// DefaultWebhookUserAgent.
	UserAgent string
	// AllowAddr, when set, replaces the address policy; see
	// egress.Options.AllowAddr.
	AllowAddr func(netip.AddrPort) bool
}

// WebhookPoster posts JSON to webhook URLs through an egress.Client. It is
// safe for concurrent use.
type WebhookPoster struct {
	client *egress.Client
}

// NewWebhookPoster returns a poster configured by o.
func NewWebhookPoster(o WebhookOptions) *WebhookPoster {
	if o.Timeout <= 0 {
		o.Timeout = DefaultWebhookTimeout
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = DefaultWebhookMaxResponseBytes
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultWebhookUserAgent
	}
	return &WebhookPoster{client: egress.New(egress.Options{
		Timeout:          o.Timeout,
		MaxResponseBytes: o.MaxResponseBytes,
		AllowPrivate:     o.AllowPrivate,
		Resolver:         o.Resolver,
		UserAgent:        o.UserAgent,
		AllowAddr:        o.AllowAddr,
		MaxRedirects:     maxWebhookRedirects,
	})}
}

// CheckWebhookURL validates a webhook URL before a job is saved; see
// egress.CheckURL.
func CheckWebhookURL(raw string) error { return egress.CheckURL(raw) }

// Post sends body, which must already be JSON, to rawURL with egress's
// PostJSON: a refused address wraps egress.ErrBlockedAddress, a status
// outside 2xx is a *WebhookStatusError, and errors name the target by
// scheme and host only.
func (p *WebhookPoster) Post(ctx context.Context, rawURL string, body []byte) error {
	if err := p.client.PostJSON(ctx, rawURL, body); err != nil {
		return fmt.Errorf("webhook: %w", err)
	}
	return nil
}
