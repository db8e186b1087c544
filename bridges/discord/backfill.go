package discord

import (
	"context"
	"slices"

	"github.com/bwmarrin/discordgo"
)

// maxBackfillChannels bounds the channels remembered for backfill; past it
// the memory starts over.
const maxBackfillChannels = 1000

// backfillPages bounds the pages (of 100) fetched per channel.
const backfillPages = 5

// seen records the newest message id of a channel.
func (b *Bridge) seen(channelID, messageID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.lastSeen) >= maxBackfillChannels {
		clear(b.lastSeen)
	}
	if newerID(messageID, b.lastSeen[channelID]) {
		b.lastSeen[channelID] = messageID
	}
}

// newerID compares snowflakes: longer is newer, then lexical order.
func newerID(a, b string) bool {
	if len(a) != len(b) {
		return len(a) > len(b)
	}
	return a > b
}

// startBackfill runs backfill on its own goroutine unless one is running
// (that one covers every known channel already). Live messages arriving
// meanwhile are held and submitted after it, so each channel stays in
// order.
func (b *Bridge) startBackfill(ctx context.Context) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.backfilling {
		return
	}
	b.backfilling = true
	b.background.Add(1)
	go func() {
		defer b.background.Done()
		b.backfill(ctx)
		for {
			b.mu.Lock()
			held := b.held
			b.held = nil
			if len(held) == 0 {
				b.backfilling = false
				b.mu.Unlock()
				return
			}
			b.mu.Unlock()
			for _, m := range held {
				if b.backfilled(m) {
					continue
				}
				b.message(ctx, m)
			}
		}
	}()
}

// backfilled reports whether the backfill already handled m (it fetched
// m or a newer message of its channel).
func (b *Bridge) backfilled(m *discordgo.Message) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !newerID(m.ID, b.lastSeen[m.ChannelID])
}

// hold keeps a live message for after a running backfill and reports
// whether it did.
func (b *Bridge) hold(m *discordgo.Message) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.backfilling {
		return false
	}
	b.held = append(b.held, m)
	return true
}

// backfill fetches, over REST, the messages posted in known channels
// while the gateway had no session, and handles them in order as if they
// had arrived live; their dedupe keys stop any the journal already has.
func (b *Bridge) backfill(ctx context.Context) {
	b.mu.Lock()
	after := make(map[string]string, len(b.lastSeen))
	for ch, id := range b.lastSeen {
		after[ch] = id
	}
	b.mu.Unlock()
	for ch, last := range after {
		for range backfillPages {
			page, err := b.api.ChannelMessages(ch, 100, "", last, "", discordgo.WithContext(ctx))
			if err != nil {
				b.opts.Log.Warn("discord: backfill failed", "channel", ch, "err", redact(err, b.opts.Token))
				break
			}
			slices.SortFunc(page, func(x, y *discordgo.Message) int {
				if x.ID == y.ID {
					return 0
				}
				if newerID(x.ID, y.ID) {
					return 1
				}
				return -1
			})
			for _, m := range page {
				if m.GuildID == "" {
					// REST leaves guild_id out; the channel tells.
					if info, ok := b.channel(ctx, ch); ok {
						m.GuildID = info.guildID
					}
				}
				b.message(ctx, m)
				last = m.ID
			}
			if len(page) < 100 {
				break
			}
		}
	}
}
