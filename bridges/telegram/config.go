package telegram

import (
	"errors"
	"time"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/markup"
	"github.com/switchboardhq/switchboard/core"
)

// Config is the `channels.telegram:` section of the configuration. Ids in
// allowFrom and groupAllowFrom are Telegram user ids (or @usernames);
// groups are keyed by chat id (e.g. "-1001234567890"). textChunkLimit is at
// most 4096 (default 4000).
type Config struct {
	// Enabled starts the Telegram bridge (it also needs botToken).
	Enabled bool `json:"enabled,omitempty"`
	// BotToken is the bot's token from @BotFather. Keep it in the
	// environment: botToken: ${TELEGRAM_BOT_TOKEN}.
	BotToken string `json:"botToken,omitempty" config:"secret"`
	// APIURL is the Bot API server; empty means https://api.telegram.org.
	// Any server that implements the Bot API works (a self-hosted
	// telegram-bot-api).
	APIURL string `json:"apiUrl,omitempty" secretURL:"botToken"`
	// ChunkMode is how long answers are split: "length" (default: as late
	// as fits, at a paragraph, line or sentence end) or "newline" (at every
	// paragraph).
	ChunkMode string `json:"chunkMode,omitempty"`
	// PollTimeoutSeconds is getUpdates' long-poll timeout (default 30).
	PollTimeoutSeconds int `json:"pollTimeoutSeconds,omitempty" min:"0" max:"50"`
	// Webhook receives updates over HTTP instead of long polling, when its
	// url is set.
	Webhook WebhookConfig `json:"webhook"`
	// Common holds the keys every channel shares (dmPolicy, allowFrom,
	// groupPolicy, groups, groupAllowFrom, historyLimit, replyToMode,
	// responsePrefix, textChunkLimit, mediaMaxMb).
	bridges.Common
}

// WebhookConfig is `channels.telegram.webhook:`.
type WebhookConfig struct {
	// URL is the public https URL Telegram posts updates to; empty means
	// long polling.
	URL string `json:"url,omitempty" secretURL:"secret"`
	// Secret is checked on every update (X-Telegram-Bot-Api-Secret-Token):
	// 1–256 characters of A–Z, a–z, 0–9, _ and -.
	Secret string `json:"secret,omitempty" config:"secret"`
	// Listen is the local address the webhook is served on, behind your
	// TLS proxy (default 127.0.0.1:8787).
	Listen string `json:"listen,omitempty"`
	// Path is the path served (default /telegram-webhook).
	Path string `json:"path,omitempty"`
}

// IsEnabled implements bridges.Section.
func (c Config) IsEnabled() bool { return c.Enabled }

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
	if err := c.Policy().Validate(); err != nil {
		errs = append(errs, core.FieldErrorf("dmPolicy", err.Error()))
	}
	if err := c.CheckLimits(markup.TelegramMaxLength, maxMediaMB); err != nil {
		errs = append(errs, err)
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
		MaxMediaBytes: c.MaxMediaBytes(),
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
