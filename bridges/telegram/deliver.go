package telegram

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/markup"
)

// maxSendAttempts bounds the retries of one chunk (rate limits, network).
const maxSendAttempts = 5

// Deliver implements bridges.Bridge: the text is converted to Telegram
// HTML and sent in chunks of at most ChunkLimit, the first one replying to
// out.ReplyToMessageID. When Telegram rejects a chunk's HTML, that chunk
// is sent again as plain text, so a reply is never lost to markup. Rate
// limits are waited out (retry_after); with a ledger, chunks already sent
// are skipped and each sent chunk is recorded.
func (b *Bridge) Deliver(ctx context.Context, out bridges.Outbound) (bridges.Receipt, error) {
	var rc bridges.Receipt
	id, err := chatID(out.Route)
	if err != nil {
		return rc, err
	}
	var chunks []string
	if strings.TrimSpace(out.Text) != "" {
		chunks = b.render(out.Text)
	}
	for i, chunk := range chunks {
		sent, err := bridges.SendOnce(ctx, out, strconv.Itoa(i), func() (bridges.MessageID, error) {
			params := &bot.SendMessageParams{
				ChatID: id, Text: chunk, ParseMode: models.ParseModeHTML, MessageThreadID: threadID(out.Route, false),
				DisableNotification: out.Silent,
				LinkPreviewOptions:  &models.LinkPreviewOptions{IsDisabled: bot.True()},
			}
			if i == 0 && out.ReplyToMessageID != "" {
				if to, err := strconv.Atoi(string(out.ReplyToMessageID)); err == nil {
					params.ReplyParameters = &models.ReplyParameters{MessageID: to, AllowSendingWithoutReply: true}
				}
			}
			msg, err := b.send(ctx, params)
			if err != nil {
				return "", fmt.Errorf("telegram: sending chunk %d of %d to %s: %w", i+1, len(chunks), out.Route.To, err)
			}
			b.tracker.Outbound()
			return bridges.MessageID(strconv.Itoa(msg.ID)), nil
		})
		if sent != "" {
			rc.MessageIDs = append(rc.MessageIDs, sent)
		}
		if err != nil {
			return rc, err
		}
	}
	for j, ref := range out.MediaURLs {
		sent, err := bridges.SendOnce(ctx, out, "m"+strconv.Itoa(j), func() (bridges.MessageID, error) {
			msg, err := b.sendMedia(ctx, out.Route, ref)
			if err != nil {
				return "", fmt.Errorf("telegram: sending attachment %d of %d: %w", j+1, len(out.MediaURLs), err)
			}
			b.tracker.Outbound()
			return bridges.MessageID(strconv.Itoa(msg.ID)), nil
		})
		if sent != "" {
			rc.MessageIDs = append(rc.MessageIDs, sent)
		}
		if err != nil {
			return rc, err
		}
	}
	return rc, nil
}

// send sends one message, paced per chat, waiting out rate limits and
// retrying network failures, and falling back to plain text when the HTML
// is refused.
func (b *Bridge) send(ctx context.Context, p *bot.SendMessageParams) (*models.Message, error) {
	if id, ok := p.ChatID.(int64); ok {
		if d := b.pace.reserve(id); d > 0 && !bridges.Sleep(ctx, d) {
			return nil, ctx.Err()
		}
	}
	for attempt := 0; ; attempt++ {
		msg, err := b.api.SendMessage(ctx, p)
		if err == nil {
			return msg, nil
		}
		err = b.redact(err)
		if ctx.Err() != nil || attempt+1 >= maxSendAttempts {
			return nil, err
		}
		switch kind, retryAfter := classify(err); {
		case p.ParseMode == models.ParseModeHTML && isEntityError(err):
			b.opts.Log.Warn("telegram: HTML refused, sending as plain text", "err", err)
			p.Text, p.ParseMode = markup.HTMLToPlain(p.Text), ""
		case kind == kindRateLimited:
			if !bridges.Sleep(ctx, retryAfter) {
				return nil, err
			}
		case errors.Is(err, bot.ErrorBadRequest), errors.Is(err, bot.ErrorForbidden), kind == kindBadToken:
			return nil, err // retrying will not help
		default:
			if !bridges.Sleep(ctx, b.opts.Backoff.Delay(attempt)) {
				return nil, err
			}
		}
	}
}

// isEntityError reports Telegram's refusal of a message's markup.
func isEntityError(err error) bool {
	return errors.Is(err, bot.ErrorBadRequest) && strings.Contains(err.Error(), "can't parse entities")
}
