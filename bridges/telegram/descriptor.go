package telegram

import (
	"errors"
	"strconv"
	"strings"

	"github.com/switchboardhq/switchboard/bridges"
)

// maxMediaMB caps mediaMaxMb: the public Bot API serves files up to 20 MB,
// a self-hosted telegram-bot-api up to 2,000 MB.
const maxMediaMB = 2000

// Descriptor registers the Telegram bridge: channels.telegram, targets
// "telegram:<chatId>" and "telegram:<chatId>:topic:<topicId>" (a forum
// topic), direct chats by their positive chat ids. Long polling is
// exclusive per bot; a webhook is not.
func Descriptor() bridges.Descriptor {
	return bridges.Descriptor{
		Channel:    Channel,
		Label:      "Telegram",
		New:        newFromSection,
		ParseChat:  parseChat,
		IsDirect:   isDirectChat,
		TargetHelp: "telegram:<chatId>, telegram:<chatId>:topic:<topicId>",
		Exclusive: func(s bridges.Section) bool {
			c, err := bridges.SectionAs[Config](Channel, s)
			return err == nil && c.Webhook.URL == ""
		},
	}
}

// newFromSection builds the bridge from channels.telegram and the host's
// environment.
func newFromSection(section bridges.Section, env bridges.Env) (bridges.Bridge, error) {
	c, err := bridges.SectionAs[Config](Channel, section)
	if err != nil {
		return nil, err
	}
	opts := c.Options(env.AgentID, env.Session)
	if env.State != nil {
		opts.Offsets = env.State
	}
	opts.MentionPatterns = env.MentionPatterns
	opts.MediaDir = env.MediaDir
	opts.LockDir = env.StateDir
	opts.Log = env.Logger()
	b, err := New(opts)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// parseChat reads "<chatId>" or "<chatId>:topic:<topicId>".
func parseChat(chat string) (to, thread string, err error) {
	to, topic, hasTopic := strings.Cut(chat, ":topic:")
	if hasTopic && topic == "" {
		return "", "", errors.New("the topic id is empty")
	}
	return to, topic, nil
}

// isDirectChat reports a private chat: Telegram gives users positive chat
// ids and groups and channels negative ones.
func isDirectChat(to string) bool {
	n, err := strconv.ParseInt(to, 10, 64)
	return err == nil && n > 0
}
