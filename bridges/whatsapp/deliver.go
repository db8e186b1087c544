package whatsapp

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waCommon"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/markup"
	"github.com/switchboardhq/switchboard/core"
)

// Deliver implements bridges.Bridge: the text is converted to WhatsApp's
// markup (openclaw-facts §5.3), split into messages of at most the chunk
// limit, the first quoting out.ReplyToMessageID when set; then each
// attachment is uploaded and sent. Every piece goes through the ledger.
func (b *Bridge) Deliver(ctx context.Context, out bridges.Outbound) (bridges.Receipt, error) {
	var rec bridges.Receipt
	cli, _, err := b.client()
	if err != nil {
		return rec, err
	}
	to, err := ParseTarget(string(out.Route.To))
	if err != nil {
		return rec, err
	}
	var quote *waE2E.ContextInfo
	if out.ReplyToMessageID != "" {
		quote = b.quote(to, types.MessageID(out.ReplyToMessageID))
	}
	text := strings.TrimSpace(out.Text)
	if text != "" {
		for i, chunk := range markup.RenderChunks(text, markup.WhatsApp, b.opts.ChunkLimit, markup.ModeLength) {
			ci := quote
			if i > 0 {
				ci = nil
			}
			id, err := bridges.SendOnce(ctx, out, strconv.Itoa(i), func() (bridges.MessageID, error) {
				return b.send(ctx, cli, to, textMessage(chunk, ci))
			})
			if err != nil {
				return rec, err
			}
			rec.MessageIDs = append(rec.MessageIDs, id)
		}
		quote = nil
	}
	for i, ref := range out.MediaURLs {
		ci := quote
		quote = nil
		id, err := bridges.SendOnce(ctx, out, "m"+strconv.Itoa(i), func() (bridges.MessageID, error) {
			msg, err := b.mediaMessage(ctx, cli, ref, ci)
			if err != nil {
				return "", err
			}
			return b.send(ctx, cli, to, msg)
		})
		if err != nil {
			return rec, err
		}
		rec.MessageIDs = append(rec.MessageIDs, id)
	}
	return rec, nil
}

func (b *Bridge) send(ctx context.Context, cli Client, to types.JID, msg *waE2E.Message) (bridges.MessageID, error) {
	resp, err := cli.SendMessage(ctx, to, msg)
	if err != nil {
		return "", fmt.Errorf("whatsapp: send to %s: %w", to, err)
	}
	b.tracker.Outbound()
	return bridges.MessageID(resp.ID), nil
}

// textMessage is plain text, or extended text when it quotes.
func textMessage(text string, quote *waE2E.ContextInfo) *waE2E.Message {
	if quote == nil {
		return &waE2E.Message{Conversation: proto.String(text)}
	}
	return &waE2E.Message{ExtendedTextMessage: &waE2E.ExtendedTextMessage{Text: proto.String(text), ContextInfo: quote}}
}

// quote is the context that makes a message a reply to id in chat. The
// quoted text and author come from the recent inbound messages; without
// them WhatsApp still links the reply by id.
func (b *Bridge) quote(chat types.JID, id types.MessageID) *waE2E.ContextInfo {
	ci := &waE2E.ContextInfo{StanzaID: proto.String(string(id)), QuotedMessage: &waE2E.Message{Conversation: proto.String("")}}
	if m, ok := b.recent.get(id); ok {
		ci.Participant = proto.String(m.sender.String())
		ci.QuotedMessage.Conversation = proto.String(m.text)
	} else if chat.Server != types.GroupServer {
		ci.Participant = proto.String(chat.ToNonAD().String())
	}
	return ci
}

// mediaMessage uploads one attachment (an http(s) URL or a file in the
// media folder, at most MaxMediaBytes) and builds its message.
func (b *Bridge) mediaMessage(ctx context.Context, cli Client, ref string, quote *waE2E.ContextInfo) (*waE2E.Message, error) {
	f, err := bridges.OpenMedia(ctx, b.mediaClient, b.opts.MediaDir, ref, b.opts.MaxMediaBytes)
	if err != nil {
		return nil, fmt.Errorf("whatsapp: %w", err)
	}
	defer f.Body.Close()
	data, err := io.ReadAll(f.Body)
	if err != nil {
		return nil, fmt.Errorf("whatsapp: read %s: %w", f.Name, err)
	}
	ctype := f.ContentType
	if ctype == "" || ctype == "application/octet-stream" {
		ctype = http.DetectContentType(data)
	}
	kind := mediaKind(ctype)
	up, err := cli.Upload(ctx, data, kind)
	if err != nil {
		return nil, fmt.Errorf("whatsapp: upload %s: %w", f.Name, err)
	}
	size := proto.Uint64(uint64(len(data)))
	switch kind {
	case whatsmeow.MediaImage:
		return &waE2E.Message{ImageMessage: &waE2E.ImageMessage{
			URL: &up.URL, DirectPath: &up.DirectPath, MediaKey: up.MediaKey, FileEncSHA256: up.FileEncSHA256,
			FileSHA256: up.FileSHA256, FileLength: size, Mimetype: proto.String(ctype), ContextInfo: quote,
		}}, nil
	case whatsmeow.MediaVideo:
		return &waE2E.Message{VideoMessage: &waE2E.VideoMessage{
			URL: &up.URL, DirectPath: &up.DirectPath, MediaKey: up.MediaKey, FileEncSHA256: up.FileEncSHA256,
			FileSHA256: up.FileSHA256, FileLength: size, Mimetype: proto.String(ctype), ContextInfo: quote,
		}}, nil
	case whatsmeow.MediaAudio:
		return &waE2E.Message{AudioMessage: &waE2E.AudioMessage{
			URL: &up.URL, DirectPath: &up.DirectPath, MediaKey: up.MediaKey, FileEncSHA256: up.FileEncSHA256,
			FileSHA256: up.FileSHA256, FileLength: size, Mimetype: proto.String(ctype), ContextInfo: quote,
		}}, nil
	}
	return &waE2E.Message{DocumentMessage: &waE2E.DocumentMessage{
		URL: &up.URL, DirectPath: &up.DirectPath, MediaKey: up.MediaKey, FileEncSHA256: up.FileEncSHA256,
		FileSHA256: up.FileSHA256, FileLength: size, Mimetype: proto.String(ctype), FileName: proto.String(f.Name),
		Title: proto.String(f.Name), ContextInfo: quote,
	}}, nil
}

// mediaKind picks WhatsApp's media kind for a content type; anything not
// an image, video or audio goes as a document.
func mediaKind(ctype string) whatsmeow.MediaType {
	switch {
	case strings.HasPrefix(ctype, "image/") && ctype != "image/svg+xml":
		return whatsmeow.MediaImage
	case strings.HasPrefix(ctype, "video/"):
		return whatsmeow.MediaVideo
	case strings.HasPrefix(ctype, "audio/"):
		return whatsmeow.MediaAudio
	}
	return whatsmeow.MediaDocument
}

// Typing implements bridges.Typer: "typing…" (composing) in the chat.
func (b *Bridge) Typing(ctx context.Context, route core.Route) error {
	return b.presence(ctx, route, types.ChatPresenceComposing)
}

// StopTyping implements bridges.TypingStopper: WhatsApp keeps showing
// composing until told otherwise.
func (b *Bridge) StopTyping(ctx context.Context, route core.Route) error {
	return b.presence(ctx, route, types.ChatPresencePaused)
}

func (b *Bridge) presence(ctx context.Context, route core.Route, state types.ChatPresence) error {
	cli, _, err := b.client()
	if err != nil {
		return err
	}
	to, err := ParseTarget(string(route.To))
	if err != nil {
		return err
	}
	return cli.SendChatPresence(ctx, to, state, types.ChatPresenceMediaText)
}

// React implements bridges.Reactor (the ack reaction).
func (b *Bridge) React(ctx context.Context, route core.Route, messageID bridges.MessageID, emoji string) error {
	cli, _, err := b.client()
	if err != nil {
		return err
	}
	chat, err := ParseTarget(string(route.To))
	if err != nil {
		return err
	}
	key := &waCommon.MessageKey{RemoteJID: proto.String(chat.String()), ID: proto.String(string(messageID)), FromMe: proto.Bool(false)}
	if m, ok := b.recent.get(types.MessageID(messageID)); ok && chat.Server == types.GroupServer {
		key.Participant = proto.String(m.sender.String())
	}
	_, err = b.send(ctx, cli, chat, &waE2E.Message{ReactionMessage: &waE2E.ReactionMessage{
		Key: key, Text: proto.String(emoji), SenderTimestampMS: proto.Int64(b.opts.Now().UnixMilli()),
	}})
	return err
}
