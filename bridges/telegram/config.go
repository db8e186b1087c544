package telegram

import (
	"errors"
	"time"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/markup"
	"github.com/switchboardhq/switchboard/core"
)

// Config is the `channels.telegram:` section of the configuration.
type Config struct {
	// Enabled starts the Telegram bridge (it also needs botToken).
	Enabled bool `json:"enabled,omitempty"`
	// BotToken is the bot's token from @BotFather. Keep it in the
	// environment: botToken: ${TELEGRAM_BOT_TOKEN}.
	BotToken string `json:"botToken,omitempty" config:"secret"`
	// APIURL is the Bot API server; empty means https://api.telegram.org.
	// Any server that implements the Bot API works (a self-hosted
	// telegram-bot-api).
	APIURL string `json:"apiUrl,omitempty"`
	// DMPolicy is who may talk to the bot in a direct chat: "pairing"
	// (default: an unknown sender gets a code, approved with `switchboard
	// pairing approve telegram <code>`), "allowlist" (only allowFrom),
	// "open" (anyone; needs "*" in allowFrom) or "disabled".
	DMPolicy bridges.DMPolicy `json:"dmPolicy,omitempty"`
	// AllowFrom lists Telegram user ids (or @usernames) always allowed in
	// direct chats; "*" allows anyone.
	AllowFrom []string `json:"allowFrom,omitempty"`
	// GroupPolicy is which groups the bot answers in: "allowlist"
	// (default: only those listed in groups), "open" or "disabled".
	GroupPolicy bridges.GroupPolicy `json:"groupPolicy,omitempty"`
	// Groups configures groups by chat id (e.g. "-1001234567890"); "*"
	// applies to every group. Each may set requireMention (default true)
	// and allowFrom.
	Groups map[string]bridges.GroupRule `json:"groups,omitempty"`
	// GroupAllowFrom limits who may trigger the bot in any group (user
	// ids); empty means everyone in an allowed group.
	GroupAllowFrom []string `json:"groupAllowFrom,omitempty"`
	// HistoryLimit is how many group messages not addressed to the bot are
	// kept per group and shown to the model on the next one that is;
	// default 50, 0 disables.
	HistoryLimit *int `json:"historyLimit,omitempty"`
	// ReplyToMode is which messages of an answer reply natively to the
	// message answered: "off" (default), "first", "all" or "batched".
	ReplyToMode bridges.ReplyToMode `json:"replyToMode,omitempty"`
	// ResponsePrefix is put before every reply ("" for none).
	ResponsePrefix string `json:"responsePrefix,omitempty"`
	// TextChunkLimit is the longest message sent in one piece; longer
	// answers are split (default 4000, at most 4096).
	TextChunkLimit int `json:"textChunkLimit,omitempty" min:"0" max:"4096"`
	// ChunkMode is how long answers are split: "length" (default: as late
	// as fits, at a paragraph, line or sentence end) or "newline" (at every
	// paragraph).
	ChunkMode string `json:"chunkMode,omitempty"`
	// PollTimeoutSeconds is getUpdates' long-poll timeout (default 30).
	PollTimeoutSeconds int `json:"pollTimeoutSeconds,omitempty" min:"0" max:"50"`
	// Webhook receives updates over HTTP instead of long polling, when its
	// url is set.
	Webhook WebhookConfig `json:"webhook"`
}

// WebhookConfig is `channels.telegram.webhook:`.
type WebhookConfig struct {
	// URL is the public https URL Telegram posts updates to; empty means
	// long polling.
	URL string `json:"url,omitempty"`
	// Secret is checked on every update (X-Telegram-Bot-Api-Secret-Token):
	// 1–256 characters of A–Z, a–z, 0–9, _ and -.
	Secret string `json:"secret,omitempty" config:"secret"`
	// Listen is the local address the webhook is served on, behind your
	// TLS proxy (default 127.0.0.1:8787).
	Listen string `json:"listen,omitempty"`
	// Path is the path served (default /telegram-webhook).
	Path string `json:"path,omitempty"`
}

// Access returns the section's gating settings.
func (c Config) Access() bridges.Access {
	return bridges.Access{
		DMPolicy: c.DMPolicy, AllowFrom: c.AllowFrom, GroupPolicy: c.GroupPolicy, Groups: c.Groups,
		GroupAllowFrom: c.GroupAllowFrom, HistoryLimit: c.HistoryLimit,
	}
}

// Validate reports settings that contradict each other.
func (c Config) Validate() error {
	var errs []error
	if c.Enabled && c.BotToken == "" {
		errs = append(errs, core.FieldErrorf("botToken", "required when channels.telegram.enabled is true: the token from @BotFather, e.g. ${TELEGRAM_BOT_TOKEN}"))
	}
	if _, err := markup.ParseMode(c.ChunkMode); err != nil {
		errs = append(errs, core.FieldErrorf("chunkMode", err.Error()))
	}
	if c.Webhook.URL != "" {
		wh := WebhookOptions{URL: c.Webhook.URL, Secret: c.Webhook.Secret}
		if err := wh.validate(); err != nil {
			errs = append(errs, core.FieldErrorf("webhook.secret", err.Error()))
		}
	}
	if err := c.Access().Validate(); err != nil {
		errs = append(errs, core.FieldErrorf("dmPolicy", err.Error()))
	}
	return errors.Join(errs...)
}

// Options turns the section into bridge options; the caller adds the
// stores, clock and logger.
func (c Config) Options(agentID string, session core.SessionConfig) Options {
	mode, _ := markup.ParseMode(c.ChunkMode)
	o := Options{
		Token: c.BotToken, APIURL: c.APIURL, AgentID: agentID, Session: session,
		ChunkLimit: c.TextChunkLimit, ChunkMode: mode, PollTimeout: time.Duration(c.PollTimeoutSeconds) * time.Second,
	}
	if c.Webhook.URL != "" {
		listen := c.Webhook.Listen
		if listen == "" {
			listen = "127.0.0.1:8787"
		}
		o.Webhook = &WebhookOptions{URL: c.Webhook.URL, Secret: c.Webhook.Secret, Listen: listen, Path: c.Webhook.Path}
	}
	return o
}
