package discord

import (
	"errors"
	"maps"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/core"
)

// Config is the `channels.discord:` section of the configuration. Ids in
// allowFrom and groupAllowFrom are Discord user ids; groups are keyed by
// channel id (a thread falls back to its parent channel), and guilds
// allowlists whole servers. textChunkLimit is at most 2000 (the default),
// and pieces also stop at 17 lines; mediaMaxMb is at most 500.
type Config struct {
	// Enabled starts the Discord bridge (it also needs token).
	Enabled bool `json:"enabled,omitempty"`
	// Token is the bot token from the Developer Portal; keep it in the
	// environment: ${DISCORD_BOT_TOKEN}. Enable the Message Content
	// Intent for the bot there too.
	Token string `json:"token,omitempty" config:"secret"`
	// APIURL replaces Discord's REST base (https://discord.com/api/v9/),
	// e.g. a REST proxy; empty means Discord's.
	APIURL string `json:"apiUrl,omitempty" secretURL:"token"`
	// Guilds allowlists servers by guild id: every channel of a listed
	// guild, or only its listed channels. Each may set requireMention
	// (default true) and allowFrom (user ids).
	Guilds map[string]GuildConfig `json:"guilds,omitempty"`
	// AllowBots answers other bots' messages too (never the bot's own).
	AllowBots bool `json:"allowBots,omitempty"`
	// Common holds the keys every channel shares (dmPolicy, allowFrom,
	// groupPolicy, groups, groupAllowFrom, historyLimit, replyToMode,
	// responsePrefix, textChunkLimit, mediaMaxMb).
	bridges.Common
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

// IsEnabled implements bridges.Section.
func (c Config) IsEnabled() bool { return c.Enabled }

// Policy implements bridges.Section: the shared access keys, with guilds
// turned into group rules under "guild:<id>" (a whole guild) or their
// channel ids.
func (c Config) Policy() bridges.Access {
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
	a := c.Access
	a.Groups = groups
	return a
}

// Validate reports settings that contradict each other.
func (c Config) Validate() error {
	var errs []error
	if c.Enabled && c.Token == "" {
		errs = append(errs, core.FieldErrorf("token", "required when channels.discord.enabled is true: the bot token from the Developer Portal, e.g. ${DISCORD_BOT_TOKEN}"))
	}
	if err := c.Policy().Validate(); err != nil {
		errs = append(errs, core.FieldErrorf("dmPolicy", err.Error()))
	}
	if err := c.CheckLimits(DefaultChunkLimit, maxMediaMB); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Options turns the section into bridge options; the caller adds the
// logger and the media directory.
func (c Config) Options(agentID string, session core.SessionConfig) Options {
	return Options{
		Token: c.Token, APIURL: c.APIURL, AgentID: agentID, Session: session, ChunkLimit: c.TextChunkLimit,
		AllowBots: c.AllowBots, MaxMediaBytes: c.MaxMediaBytes(),
	}
}
