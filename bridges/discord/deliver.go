package discord

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/bwmarrin/discordgo"
	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/markup"
	"github.com/switchboardhq/switchboard/core"
)

// Deliver implements bridges.Bridge: markdown in chunks of at most
// ChunkLimit characters and 17 lines (fences closed and reopened), the
// first chunk a native reply when out asks for one, then each attachment.
// Replies never ping @everyone or roles. discordgo waits out 429s (per
// route and the global limit) and sends again, so a rate limit delays a
// reply without dropping it. With a ledger, pieces already sent are
// skipped.
func (b *Bridge) Deliver(ctx context.Context, out bridges.Outbound) (bridges.Receipt, error) {
	var rc bridges.Receipt
	if user, ok := strings.CutPrefix(string(out.Route.To), "user:"); ok {
		// A target named by user (discord:user:<id>): their DM channel.
		ch, err := b.api.UserChannelCreate(user, discordgo.WithContext(ctx))
		if err != nil {
			return rc, fmt.Errorf("discord: opening a DM with user %s: %w", user, b.apiErr(err))
		}
		out.Route.To = core.ChatID(ch.ID)
	}
	// send sends one piece built by build (which may open a file, closed
	// by the done it returns) unless the ledger has it.
	send := func(piece, what string, build func() (*discordgo.MessageSend, func(), error)) error {
		id, err := bridges.SendOnce(ctx, out, piece, func() (bridges.MessageID, error) {
			data, done, err := build()
			if err != nil {
				return "", fmt.Errorf("discord: %s: %w", what, err)
			}
			defer done()
			m, err := b.api.ChannelMessageSendComplex(string(out.Route.To), data, discordgo.WithContext(ctx))
			if err != nil {
				return "", fmt.Errorf("discord: sending %s: %w", what, b.apiErr(err))
			}
			b.tracker.Outbound()
			return bridges.MessageID(m.ID), nil
		})
		if id != "" {
			rc.MessageIDs = append(rc.MessageIDs, id)
		}
		return err
	}
	// reference makes the first piece a native reply when asked, whether
	// or not an earlier attempt sent it.
	reference := func(first bool) *discordgo.MessageReference {
		if !first || out.ReplyToMessageID == "" {
			return nil
		}
		no := false
		return &discordgo.MessageReference{MessageID: string(out.ReplyToMessageID), ChannelID: string(out.Route.To), FailIfNotExists: &no}
	}
	hasText := strings.TrimSpace(out.Text) != ""
	if hasText {
		chunks := markup.RenderChunks(out.Text, markup.Discord, b.opts.ChunkLimit, markup.ModeLength)
		for i, chunk := range chunks {
			err := send(strconv.Itoa(i), fmt.Sprintf("chunk %d of %d", i+1, len(chunks)), func() (*discordgo.MessageSend, func(), error) {
				return &discordgo.MessageSend{Content: chunk, AllowedMentions: safeMentions(), Reference: reference(i == 0)}, func() {}, nil
			})
			if err != nil {
				return rc, err
			}
		}
	}
	for i, ref := range out.MediaURLs {
		err := send("m"+strconv.Itoa(i), fmt.Sprintf("attachment %d", i+1), func() (*discordgo.MessageSend, func(), error) {
			f, err := bridges.OpenMedia(ctx, b.mediaClient, b.opts.MediaDir, ref, b.opts.MaxMediaBytes)
			if err != nil {
				return nil, nil, err
			}
			return &discordgo.MessageSend{
				Files:           []*discordgo.File{{Name: f.Name, ContentType: f.ContentType, Reader: f.Body}},
				AllowedMentions: safeMentions(), Reference: reference(i == 0 && !hasText),
			}, func() { f.Body.Close() }, nil
		})
		if err != nil {
			return rc, err
		}
	}
	return rc, nil
}

// safeMentions lets a reply ping users it names, never @everyone, @here
// or roles.
func safeMentions() *discordgo.MessageAllowedMentions {
	return &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{discordgo.AllowedMentionTypeUsers}}
}

// Typing implements bridges.Typer; Discord shows it for about 10 s.
func (b *Bridge) Typing(ctx context.Context, route core.Route) error {
	return b.apiErr(b.api.ChannelTyping(string(route.To), discordgo.WithContext(ctx)))
}

// React implements bridges.Reactor with a Unicode emoji.
func (b *Bridge) React(ctx context.Context, route core.Route, messageID bridges.MessageID, emoji string) error {
	return b.apiErr(b.api.MessageReactionAdd(string(route.To), string(messageID), emoji, discordgo.WithContext(ctx)))
}
