package discord

import (
	"errors"
	"maps"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/core"
)

// Config is the `channels.discord:` section of the configuration.
type Config struct {
	// Enabled starts the Discord bridge (it also needs token).
	Enabled bool `json:"enabled,omitempty"`
	// Token is the bot token from the Developer Portal; keep it in the
	// environment: ${DISCORD_BOT_TOKEN}. Enable the Message Content
	// Intent for the bot there too.
	Token string `json:"token,omitempty" config:"secret"`
	// APIURL replaces Discord's REST base (https://discord.com/api/v9/),
	// e.g. a REST proxy; empty means Discord's.
	APIURL string `json:"apiUrl,omitempty"`
	// DMPolicy is who may talk to the bot in a DM: "pairing" (default),
	// "allowlist", "open" (needs "*" in allowFrom) or "disabled".
	DMPolicy bridges.DMPolicy `json:"dmPolicy,omitempty"`
	// AllowFrom lists Discord user ids always allowed in DMs; "*" is
	// anyone.
	AllowFrom []string `json:"allowFrom,omitempty"`
	// GroupPolicy is which guild channels the bot answers in: "allowlist"
	// (default: only those under guilds or groups), "open" or "disabled".
	GroupPolicy bridges.GroupPolicy `json:"groupPolicy,omitempty"`
	// Guilds allowlists servers by guild id: every channel of a listed
	// guild, or only its listed channels. Each may set requireMention
	// (default true) and allowFrom (user ids).
	Guilds map[string]GuildConfig `json:"guilds,omitempty"`
	// Groups configures channels by channel id (a thread falls back to
	// its parent channel); "*" applies to every channel.
	Groups map[string]bridges.GroupRule `json:"groups,omitempty"`
	// GroupAllowFrom limits who may trigger the bot in any channel.
	GroupAllowFrom []string `json:"groupAllowFrom,omitempty"`
	// HistoryLimit is how many channel messages not addressed to the bot
	// are kept per channel for the next one that is; default 50, 0 off.
	HistoryLimit *int `json:"historyLimit,omitempty"`
	// AllowBots answers other bots' messages too (never the bot's own).
	AllowBots bool `json:"allowBots,omitempty"`
	// ReplyToMode is "off" (default), "first", "all" or "batched".
	ReplyToMode bridges.ReplyToMode `json:"replyToMode,omitempty"`
	// ResponsePrefix is put before every reply ("" for none).
	ResponsePrefix string `json:"responsePrefix,omitempty"`
	// TextChunkLimit is the longest message sent in one piece (default and
	// maximum 2000); pieces also stop at 17 lines.
	TextChunkLimit int `json:"textChunkLimit,omitempty" min:"0" max:"2000"`
	// MediaMaxMB caps one attachment downloaded or sent (default 20).
	MediaMaxMB int `json:"mediaMaxMb,omitempty" min:"0" max:"500"`
}

// GuildConfig is one entry of `channels.discord.guilds`.
type GuildConfig struct {
	// RequireMention makes the bot answer only when mentioned (by <@bot>,
	// one of its roles, a mention pattern, or a reply to it). Default
	// true.
	RequireMention *bool `json:"requireMention,omitempty"`
	// AllowFrom limits who may trigger the bot in the guild (user ids).
	AllowFrom []string `json:"allowFrom,omitempty"`
	// Channels, when set, limits the bot to these channel ids (threads
	// follow their parent), each with its own optional rule.
	Channels map[string]bridges.GroupRule `json:"channels,omitempty"`
}

// Access returns the section's gating settings: guilds become group
// rules under "guild:<id>" (a whole guild) or their channel ids.
func (c Config) Access() bridges.Access {
	groups := maps.Clone(c.Groups)
	if len(c.Guilds) > 0 && groups == nil {
		groups = map[string]bridges.GroupRule{}
	}
	for id, g := range c.Guilds {
		rule := bridges.GroupRule{RequireMention: g.RequireMention, AllowFrom: g.AllowFrom}
		if len(g.Channels) == 0 {
			groups["guild:"+id] = rule
			continue
		}
		for ch, r := range g.Channels {
			if r.RequireMention == nil {
				r.RequireMention = rule.RequireMention
			}
			if len(r.AllowFrom) == 0 {
				r.AllowFrom = rule.AllowFrom
			}
			if _, set := groups[ch]; !set {
				groups[ch] = r
			}
		}
	}
	return bridges.Access{
		DMPolicy: c.DMPolicy, AllowFrom: c.AllowFrom, GroupPolicy: c.GroupPolicy, Groups: groups,
		GroupAllowFrom: c.GroupAllowFrom, HistoryLimit: c.HistoryLimit,
	}
}

// Validate reports settings that contradict each other.
func (c Config) Validate() error {
	var errs []error
	if c.Enabled && c.Token == "" {
		errs = append(errs, core.FieldErrorf("token", "required when channels.discord.enabled is true: the bot token from the Developer Portal, e.g. ${DISCORD_BOT_TOKEN}"))
	}
	if err := c.Access().Validate(); err != nil {
		errs = append(errs, core.FieldErrorf("dmPolicy", err.Error()))
	}
	return errors.Join(errs...)
}

// Options turns the section into bridge options; the caller adds the
// logger and the media directory.
func (c Config) Options(agentID string, session core.SessionConfig) Options {
	return Options{
		Token: c.Token, APIURL: c.APIURL, AgentID: agentID, Session: session, ChunkLimit: c.TextChunkLimit,
		AllowBots: c.AllowBots, MaxMediaBytes: int64(c.MediaMaxMB) << 20,
	}
}
