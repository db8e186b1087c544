package slack

import (
	"errors"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/core"
)

// Config is the `channels.slack:` section of the configuration. Ids in
// allowFrom and groupAllowFrom are Slack user ids (U…); groups are keyed by
// channel id (C…, G…); a message in a thread is always answered in its
// thread. textChunkLimit defaults to 8000.
type Config struct {
	// Enabled starts the Slack bridge (it also needs botToken and
	// appToken).
	Enabled bool `json:"enabled,omitempty"`
	// BotToken is the app's bot token (xoxb-…); keep it in the
	// environment: ${SLACK_BOT_TOKEN}.
	BotToken string `json:"botToken,omitempty" config:"secret"`
	// AppToken is the app-level token (xapp-…) with connections:write, for
	// Socket Mode: ${SLACK_APP_TOKEN}.
	AppToken string `json:"appToken,omitempty" config:"secret"`
	// APIURL is the Web API base ending in "/api/"; empty means Slack's.
	APIURL string `json:"apiUrl,omitempty" secretURL:"botToken,appToken"`
	// Mode is "socket" (default: Socket Mode, needs appToken) or "http"
	// (the Events API over HTTP, needs signingSecret).
	Mode string `json:"mode,omitempty"`
	// SigningSecret verifies Events API requests in http mode:
	// ${SLACK_SIGNING_SECRET}.
	SigningSecret string `json:"signingSecret,omitempty" config:"secret"`
	// HTTP is where http mode listens.
	HTTP HTTPConfig `json:"http"`
	// ReplyToModeByChatType overrides replyToMode for "direct", "group"
	// (group DMs) or "channel" chats.
	ReplyToModeByChatType map[string]bridges.ReplyToMode `json:"replyToModeByChatType,omitempty"`
	// Common holds the keys every channel shares (dmPolicy, allowFrom,
	// groupPolicy, groups, groupAllowFrom, historyLimit, replyToMode,
	// responsePrefix, textChunkLimit, mediaMaxMb).
	bridges.Common
}

// HTTPConfig is `channels.slack.http:`.
type HTTPConfig struct {
	// Listen is the local address Slack's requests reach through your TLS
	// proxy (default 127.0.0.1:8788).
	Listen string `json:"listen,omitempty"`
	// Path is the path served (default /slack/events).
	Path string `json:"path,omitempty"`
}

// IsEnabled implements bridges.Section.
func (c Config) IsEnabled() bool { return c.Enabled }

// Validate reports settings that contradict each other.
func (c Config) Validate() error {
	var errs []error
	if c.Enabled && c.BotToken == "" {
		errs = append(errs, core.FieldErrorf("botToken", "required when channels.slack.enabled is true: the bot token (xoxb-…), e.g. ${SLACK_BOT_TOKEN}"))
	}
	switch c.Mode {
	case "", "socket", "http":
	default:
		errs = append(errs, core.FieldErrorf("mode", `must be "socket" or "http"`))
	}
	if c.Enabled && c.Mode == "http" && c.SigningSecret == "" {
		errs = append(errs, core.FieldErrorf("signingSecret", "required in http mode: the app's signing secret, e.g. ${SLACK_SIGNING_SECRET}"))
	}
	if c.Enabled && c.Mode != "http" && c.AppToken == "" {
		errs = append(errs, core.FieldErrorf("appToken", "required when channels.slack.enabled is true: an app-level token (xapp-…) with connections:write for Socket Mode, e.g. ${SLACK_APP_TOKEN}"))
	}
	for kind := range c.ReplyToModeByChatType {
		switch core.ChatType(kind) {
		case core.ChatDirect, core.ChatGroup, core.ChatChannel:
		default:
			errs = append(errs, core.FieldErrorf("replyToModeByChatType."+kind, `unknown chat type: use "direct", "group" or "channel"`))
		}
	}
	if err := c.Policy().Validate(); err != nil {
		errs = append(errs, core.FieldErrorf("dmPolicy", err.Error()))
	}
	if err := c.CheckLimits(maxChunkLimit, maxMediaMB); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Options turns the section into bridge options; the caller adds the
// logger and the media directory.
func (c Config) Options(agentID string, session core.SessionConfig) Options {
	o := Options{BotToken: c.BotToken, AppToken: c.AppToken, APIURL: c.APIURL, AgentID: agentID, Session: session, ChunkLimit: c.TextChunkLimit,
		MaxMediaBytes: c.MaxMediaBytes()}
	if c.Mode == "http" {
		listen := c.HTTP.Listen
		if listen == "" {
			listen = "127.0.0.1:8788"
		}
		o.HTTP = &HTTPOptions{SigningSecret: c.SigningSecret, Listen: listen, Path: c.HTTP.Path}
	}
	return o
}

// RouteOptions returns how replies are threaded: replyToMode, its
// per-chat-type overrides, and Slack's rule that "off" ignores reply tags
// too.
func (c Config) RouteOptions() bridges.RouteOptions {
	o := bridges.RouteOptions{Mode: c.ReplyToMode, OffIgnoresTags: true, Prefix: c.ResponsePrefix}
	if len(c.ReplyToModeByChatType) > 0 {
		o.ByChatType = map[core.ChatType]bridges.ReplyToMode{}
		for kind, mode := range c.ReplyToModeByChatType {
			o.ByChatType[core.ChatType(kind)] = mode
		}
	}
	return o
}
