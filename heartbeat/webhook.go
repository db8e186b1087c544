package heartbeat

import (
	"time"

	"github.com/switchboardhq/switchboard/egress"
)

// Cron webhook URLs come from a user or a model, so deliveries go through
// the egress client, which applies the address policy to what is actually
// dialled (reliability-security.md §1.2.E). Only the defaults below are
// the webhook's own.

// Webhook defaults NewWebhookClient applies to zero options.
const (
	DefaultWebhookTimeout          = 10 * time.Second
	DefaultWebhookMaxResponseBytes = 64 << 10
	DefaultWebhookUserAgent        = "Switchboard-Cron/1"
	DefaultWebhookRedirects        = 3
)

// NewWebhookClient returns the egress client cron webhooks are posted
// with: o with the webhook defaults for its zero timeout, response cap,
// user agent and redirect limit.
func NewWebhookClient(o egress.Options) *egress.Client {
	if o.Timeout <= 0 {
		o.Timeout = DefaultWebhookTimeout
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = DefaultWebhookMaxResponseBytes
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultWebhookUserAgent
	}
	if o.MaxRedirects == 0 {
		o.MaxRedirects = DefaultWebhookRedirects
	}
	return egress.New(o)
}
