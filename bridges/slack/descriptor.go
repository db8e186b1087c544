package slack

import (
	"strings"

	"github.com/switchboardhq/switchboard/bridges"
)

// Ceilings of channels.slack's shared limits: Slack truncates a message
// past 40,000 characters; files above 1 GB are refused.
const (
	maxChunkLimit = 40000
	maxMediaMB    = 1024
)

// Descriptor registers the Slack bridge: channels.slack, targets
// "slack:channel:<id>", "slack:user:<id>" or "slack:<id>", direct chats by
// their user (U…) or DM channel (D…) ids. Socket Mode is exclusive per app;
// the Events API over HTTP is not.
func Descriptor() bridges.Descriptor {
	return bridges.Descriptor{
		Channel:    Channel,
		Label:      "Slack",
		New:        newFromSection,
		ParseChat:  parseChat,
		IsDirect:   isDirectChat,
		TargetHelp: "slack:channel:<id>, slack:user:<id>",
		Exclusive: func(s bridges.Section) bool {
			c, err := bridges.SectionAs[Config](Channel, s)
			return err == nil && c.Mode != "http"
		},
	}
}

// newFromSection builds the bridge from channels.slack and the host's
// environment.
func newFromSection(section bridges.Section, env bridges.Env) (bridges.Bridge, error) {
	c, err := bridges.SectionAs[Config](Channel, section)
	if err != nil {
		return nil, err
	}
	opts := c.Options(env.AgentID, env.Session)
	opts.MentionPatterns = env.MentionPatterns
	opts.MediaDir = env.MediaDir
	opts.Log = env.Logger()
	b, err := New(opts)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// parseChat reads "channel:<id>", "user:<id>" or a bare id: Slack posts to
// a user id as to their DM.
func parseChat(chat string) (to, thread string, err error) {
	if kind, id, ok := strings.Cut(chat, ":"); ok && (kind == "channel" || kind == "user") {
		return id, "", nil
	}
	return chat, "", nil
}

// isDirectChat reports a user id (U…, W… on Enterprise Grid) or a DM
// channel id (D…).
func isDirectChat(to string) bool {
	return strings.HasPrefix(to, "U") || strings.HasPrefix(to, "W") || strings.HasPrefix(to, "D")
}
