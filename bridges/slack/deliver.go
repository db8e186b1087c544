package slack

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	slackapi "github.com/slack-go/slack"
	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/markup"
	"github.com/switchboardhq/switchboard/core"
)

// Deliver implements bridges.Bridge: markdown becomes mrkdwn in chunks of
// at most ChunkLimit, then each of out.MediaURLs is uploaded, all in the
// route's thread when it has one (else in the thread of the message
// replied to). With a ledger, chunks ("0", "1"…) and files ("m0",
// "m1"…) already sent are skipped, so a delivery repeated after a crash
// neither posts nor uploads twice. Rate limits are waited out per Web API
// method.
func (b *Bridge) Deliver(ctx context.Context, out bridges.Outbound) (bridges.Receipt, error) {
	var rc bridges.Receipt
	var chunks []string
	if strings.TrimSpace(out.Text) != "" {
		chunks = markup.RenderChunks(out.Text, markup.Slack, b.opts.ChunkLimit, markup.ModeLength)
	}
	thread := out.Route.ThreadID
	if thread == "" && out.ReplyToMessageID != "" {
		thread = string(out.ReplyToMessageID)
	}
	for i, chunk := range chunks {
		sent, err := bridges.SendOnce(ctx, out, strconv.Itoa(i), func() (bridges.MessageID, error) {
			opts := []slackapi.MsgOption{slackapi.MsgOptionText(chunk, false)}
			if thread != "" {
				opts = append(opts, slackapi.MsgOptionTS(thread))
			}
			ts, err := b.post(ctx, string(out.Route.To), opts)
			if err != nil {
				return "", fmt.Errorf("slack: sending chunk %d of %d: %w", i+1, len(chunks), err)
			}
			b.tracker.Outbound()
			return bridges.MessageID(ts), nil
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
			id, err := b.upload(ctx, string(out.Route.To), thread, ref)
			if err != nil {
				return "", fmt.Errorf("slack: sending attachment %d of %d (%s): %w", j+1, len(out.MediaURLs), mediaName(ref), b.redact(err))
			}
			b.tracker.Outbound()
			return id, nil
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

// post sends one message with chat.postMessage, paced.
func (b *Bridge) post(ctx context.Context, channel string, opts []slackapi.MsgOption) (string, error) {
	var ts string
	err := b.pace.call(ctx, "chat.postMessage", func() (err error) {
		_, ts, err = b.api.PostMessageContext(ctx, channel, opts...)
		return err
	})
	return ts, b.redact(err)
}

// React implements bridges.Reactor with reactions.add, paced; Slack names
// emoji, so the common ack emoji are translated.
func (b *Bridge) React(ctx context.Context, route core.Route, messageID bridges.MessageID, emoji string) error {
	name := emojiNames[emoji]
	if name == "" {
		name = strings.Trim(emoji, ":")
	}
	return b.redact(b.pace.call(ctx, "reactions.add", func() error {
		return b.api.AddReactionContext(ctx, name, slackapi.ItemRef{Channel: string(route.To), Timestamp: string(messageID)})
	}))
}

var emojiNames = map[string]string{"👀": "eyes", "👍": "+1", "✅": "white_check_mark", "⏳": "hourglass_flowing_sand"}
