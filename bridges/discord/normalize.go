package discord

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/bwmarrin/discordgo"
	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/core"
)

// normalize turns a MESSAGE_CREATE into a gated inbound message; false
// for messages the bot ignores (its own, other bots' unless allowed,
// system messages such as joins and pins).
func (b *Bridge) normalize(ctx context.Context, m *discordgo.Message) (bridges.Inbound, bool) {
	b.mu.Lock()
	botID := b.botID
	roles := b.botRoles[m.GuildID]
	b.mu.Unlock()
	if m.Author == nil || m.Author.ID == botID || ((m.Author.Bot || m.WebhookID != "") && !b.opts.AllowBots) {
		return bridges.Inbound{}, false
	}
	switch m.Type {
	case discordgo.MessageTypeDefault, discordgo.MessageTypeReply:
	default:
		return bridges.Inbound{}, false
	}
	c := conversation{DM: m.GuildID == "", ChannelID: m.ChannelID, AuthorID: m.Author.ID}
	var info channelInfo
	if !c.DM {
		info, _ = b.channel(ctx, m.ChannelID)
		c.ParentID = info.parentID
	}
	key, parent, kind := sessionKey(b.opts.AgentID, b.opts.AccountID, b.opts.Session, c)

	native := mentionsBot(m, botID, roles)
	in := &core.Inbound{
		Kind: core.InboundUser, AgentID: b.opts.AgentID, Surface: Channel, SessionKey: key, ParentSessionKey: parent,
		ChatType: kind, Body: plainContent(m, botID), MessageID: core.MessageID(m.ID), Timestamp: m.Timestamp.UnixMilli(),
		Sender: core.Sender{ID: m.Author.ID, Name: m.Author.GlobalName, Username: m.Author.Username},
		Route:  core.Route{Channel: Channel, AccountID: core.AccountID(b.opts.AccountID), To: core.ChatID(m.ChannelID)},
	}
	if in.Sender.Name == "" {
		in.Sender.Name = m.Author.Username
	}
	if m.Author.Discriminator != "" && m.Author.Discriminator != "0" {
		in.Sender.Tag = m.Author.Discriminator
	}
	fromBot := false
	if r := m.ReferencedMessage; r != nil && r.Author != nil {
		fromBot = r.Author.ID == botID
		in.ReplyTo = &core.QuotedMessage{ID: r.ID, Sender: r.Author.Username, Body: plainContent(r, botID), FromBot: fromBot}
	}
	if !c.DM {
		in.WasMentioned = native || b.mentions.Match(m.Content)
		in.Group = &core.GroupInfo{Channel: "#" + info.name}
		if info.thread {
			in.ThreadLabel = info.name
		}
	}
	b.attachments(ctx, m, in)
	if strings.TrimSpace(in.Body) == "" && len(in.Media) == 0 && len(in.UntrustedContext) == 0 {
		return bridges.Inbound{}, false
	}
	msg := bridges.Inbound{
		Message: in, CanDetectMention: true, ImplicitMention: fromBot,
		DedupeKey: "discord:" + botID + ":message:" + m.ID,
	}
	if !c.DM {
		msg.GroupID = m.ChannelID
		if c.ParentID != "" {
			msg.GroupParents = append(msg.GroupParents, c.ParentID)
		}
		msg.GroupParents = append(msg.GroupParents, "guild:"+m.GuildID)
		msg.HistoryKey = core.GroupHistoryKey(Channel, b.opts.AccountID, kind, m.ChannelID)
		msg.IsControlCommand = strings.HasPrefix(in.Body, "/")
	}
	return msg, true
}

// mentionsBot reports a native mention of the bot: <@id>, <@!id>, the
// mentions list, or one of the bot's roles in the guild.
func mentionsBot(m *discordgo.Message, botID string, roles []string) bool {
	if botID == "" {
		return false
	}
	if strings.Contains(m.Content, "<@"+botID+">") || strings.Contains(m.Content, "<@!"+botID+">") {
		return true
	}
	for _, u := range m.Mentions {
		if u != nil && u.ID == botID {
			return true
		}
	}
	for _, r := range m.MentionRoles {
		if slices.Contains(roles, r) {
			return true
		}
	}
	return false
}

// plainContent is the message text for the model: the bot's own mention
// removed, other user mentions shown as @name.
func plainContent(m *discordgo.Message, botID string) string {
	s := m.Content
	if botID != "" {
		s = strings.NewReplacer("<@"+botID+">", "", "<@!"+botID+">", "").Replace(s)
	}
	for _, u := range m.Mentions {
		if u == nil || u.ID == botID {
			continue
		}
		name := "@" + u.Username
		s = strings.NewReplacer("<@"+u.ID+">", name, "<@!"+u.ID+">", name).Replace(s)
	}
	return strings.TrimSpace(s)
}

// attachments downloads a message's files into MediaDir; a file that
// cannot be fetched is described in the untrusted context instead.
func (b *Bridge) attachments(ctx context.Context, m *discordgo.Message, in *core.Inbound) {
	for _, a := range m.Attachments {
		if a == nil || a.URL == "" {
			continue
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.URL, nil)
		var path string
		if err == nil {
			path, err = bridges.SaveDownload(b.opts.HTTPClient, bridges.Download{
				Request: req, ID: "discord:" + a.ID, Name: a.Filename, MimeType: a.ContentType, Size: int64(a.Size),
			}, b.opts.MediaDir, b.opts.MaxMediaBytes)
		}
		if err != nil {
			b.opts.Log.Warn("discord: attachment not downloaded", "file", a.Filename, "err", err)
			in.UntrustedContext = append(in.UntrustedContext, fmt.Sprintf("An attachment (%s, %s) could not be downloaded: %v", a.Filename, a.ContentType, err))
			continue
		}
		in.Media = append(in.Media, core.Media{Path: path, MimeType: a.ContentType})
	}
}
