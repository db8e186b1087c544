package discord

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/bwmarrin/discordgo"
)

// maxBackfillChannels bounds the channels remembered for backfill; past it
// the memory starts over.
const maxBackfillChannels = 1000

// maxStoredChannels bounds the channels noted as having a stored
// position. Past it the notes start over, and each channel's next message
// stores its position once more before it is journaled: a note is a few
// dozen bytes, a store write is a disk write on the event loop.
const maxStoredChannels = 1 << 16

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

// positionPrefix is the key prefix of the account's channel positions in
// Positions: "<account>/ch/<channel id>".
func (b *Bridge) positionPrefix() string { return b.opts.AccountID + "/ch/" }

// restorePositions loads the channel positions a previous run stored, so
// the first session's READY backfills what was written meanwhile.
func (b *Bridge) restorePositions(ctx context.Context) {
	if b.opts.Positions == nil {
		return
	}
	stored, err := b.opts.Positions.ChannelOffsets(ctx, Channel, b.positionPrefix())
	if err != nil {
		b.opts.Log.Warn("discord: stored channel positions unreadable; messages written while Switchboard was down will not be fetched", "err", err)
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for k, id := range stored {
		ch := strings.TrimPrefix(k, b.positionPrefix())
		b.markStoredLocked(ch)
		if len(b.lastSeen) < maxBackfillChannels && newerID(id, b.lastSeen[ch]) {
			b.lastSeen[ch] = id
		}
	}
	b.restored = len(b.lastSeen) > 0
}

// persistPosition stores a submitted message as its channel's position.
// It runs after the message is journaled: a crash in between leaves an
// older position, and the backfill's refetch of the message is stopped by
// its dedupe key.
func (b *Bridge) persistPosition(ctx context.Context, channelID, messageID string) {
	if b.opts.Positions == nil {
		return
	}
	if err := b.opts.Positions.SetChannelOffset(context.WithoutCancel(ctx), Channel, b.positionPrefix()+channelID, messageID); err != nil {
		b.opts.Log.Warn("discord: channel position not saved (messages written during a restart may be missed)", "channel", channelID, "err", err)
		return
	}
	b.mu.Lock()
	b.markStoredLocked(channelID)
	b.mu.Unlock()
}

// persistBefore stores, for a channel with no stored position yet, the
// position just before messageID, before the message is journaled. Without
// it a crash after the channel's first message was journaled and before
// its position was stored left the channel unknown to the next run, which
// then never fetched what was written there while it was down. The next
// run refetches the message itself; its dedupe key stops it.
func (b *Bridge) persistBefore(ctx context.Context, channelID, messageID string) {
	b.mu.Lock()
	known := b.stored[channelID]
	b.mu.Unlock()
	if known || b.opts.Positions == nil {
		return
	}
	id, err := strconv.ParseUint(messageID, 10, 64)
	if err != nil || id == 0 {
		return // not a snowflake: the position after journaling must do
	}
	b.persistPosition(ctx, channelID, strconv.FormatUint(id-1, 10))
}

// markStoredLocked notes that channelID has a stored position; called
// with b.mu held.
func (b *Bridge) markStoredLocked(channelID string) {
	if len(b.stored) >= maxStoredChannels {
		clear(b.stored)
	}
	b.stored[channelID] = true
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
				b.opts.Log.Warn("discord: backfill failed", "channel", ch, "err", b.apiErr(err))
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
