package discord

import (
	"strings"

	"github.com/switchboardhq/switchboard/bridges"
)

// maxMediaMB caps mediaMaxMb: Discord's largest upload (a boosted server).
const maxMediaMB = 500

// Descriptor registers the Discord bridge: channels.discord, targets
// "discord:channel:<id>", "discord:user:<id>" (the bridge opens the DM) or
// "discord:<channelId>". Its gateway session is exclusive per bot token.
func Descriptor() bridges.Descriptor {
	return bridges.Descriptor{
		Channel:    Channel,
		Label:      "Discord",
		New:        newFromSection,
		ParseChat:  parseChat,
		IsDirect:   isDirectChat,
		TargetHelp: "discord:channel:<id>, discord:user:<id>",
		Exclusive:  func(bridges.Section) bool { return true },
	}
}

// newFromSection builds the bridge from channels.discord and the host's
// environment.
func newFromSection(section bridges.Section, env bridges.Env) (bridges.Bridge, error) {
	c, err := bridges.SectionAs[Config](Channel, section)
	if err != nil {
		return nil, err
	}
	opts := c.Options(env.AgentID, env.Session)
	opts.MentionPatterns = env.MentionPatterns
	opts.MediaDir = env.MediaDir
	if env.State != nil {
		opts.Positions = env.State
	}
	opts.Log = env.Logger()
	if env.Now != nil {
		opts.Now = env.Now
	}
	b, err := New(opts)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// parseChat reads "channel:<id>", a bare channel id, or "user:<id>", which
// stays as it is: Discord sends to channels, so the bridge opens the
// user's DM channel when it delivers.
func parseChat(chat string) (to, thread string, err error) {
	if kind, id, ok := strings.Cut(chat, ":"); ok && kind == "channel" {
		return id, "", nil
	}
	return chat, "", nil
}

// isDirectChat reports a "user:<id>" chat; a DM channel's id looks like any
// other channel's.
func isDirectChat(to string) bool { return strings.HasPrefix(to, "user:") }
