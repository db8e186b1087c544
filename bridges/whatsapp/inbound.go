package whatsapp

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/core"
)

// onMessage journals one message. It returns false (whatsmeow then
// withholds the ack, so WhatsApp delivers the message again) when the
// bridge is not running or the journal refused it.
func (b *Bridge) onMessage(e *events.Message) bool {
	b.mu.Lock()
	ctx, sink, cli, dev := b.runCtx, b.sink, b.cli, b.dev
	b.mu.Unlock()
	if sink == nil || ctx == nil || cli == nil {
		return false
	}
	if e.Message == nil {
		if e.RawMessage == nil {
			return true
		}
		e.UnwrapRaw()
	}
	if e.IsEdit {
		b.editNotice(ctx, sink, dev, e)
		return true
	}
	msg, ok := b.normalize(ctx, cli, dev, e)
	if !ok {
		return true
	}
	b.recent.add(e.Info.ID, recentMessage{chat: e.Info.Chat.ToNonAD(), sender: e.Info.Sender.ToNonAD(), text: textOf(e.Message)})
	b.tracker.Inbound()
	if err := sink.Submit(ctx, msg); err != nil {
		b.opts.Log.Warn("whatsapp: a message was not journaled; WhatsApp will deliver it again", "id", e.Info.ID, "err", err)
		return false
	}
	if b.opts.SendReadReceipts {
		if err := cli.MarkRead(ctx, []types.MessageID{e.Info.ID}, e.Info.Timestamp, e.Info.Chat, e.Info.Sender); err != nil {
			b.opts.Log.Debug("whatsapp: read receipt failed", "err", err)
		}
	}
	return true
}

// normalize turns a message event into a gated inbound message; false for
// what the bot ignores (its own messages, status updates, channels,
// reactions and other messages without text or media).
func (b *Bridge) normalize(ctx context.Context, cli Client, dev *store.Device, e *events.Message) (bridges.Inbound, bool) {
	info := e.Info
	chat := info.Chat.ToNonAD()
	if info.IsFromMe || isMe(dev, info.Sender) || chat.Server == types.BroadcastServer || chat.Server == types.NewsletterServer {
		return bridges.Inbound{}, false
	}
	m := e.Message
	group := info.IsGroup || chat.Server == types.GroupServer
	sender := b.sender(ctx, dev, info.Sender, info.SenderAlt)
	sender.Name = info.PushName
	kind, peer := core.ChatDirect, sender.ID
	if group {
		kind, peer = core.ChatGroup, chat.String()
	}
	in := &core.Inbound{
		Kind: core.InboundUser, AgentID: b.opts.AgentID, Surface: Channel, ChatType: kind,
		SessionKey: core.BuildPeerSessionKey(core.PeerKeyParams{
			AgentID: b.opts.AgentID, Channel: Channel, AccountID: b.opts.AccountID, Kind: kind, PeerID: peer,
			DMScope: b.opts.Session.DMScope, IdentityLinks: b.opts.Session.IdentityLinks,
		}),
		MessageID: core.MessageID(info.ID), Timestamp: info.Timestamp.UnixMilli(), Sender: sender,
		Route: core.Route{Channel: Channel, AccountID: core.AccountID(b.opts.AccountID), To: core.ChatID(chat.String())},
	}
	body := textOf(m)
	ci := contextInfo(m)
	native := false
	for _, raw := range ci.GetMentionedJID() {
		if jid, err := types.ParseJID(raw); err == nil && isMe(dev, jid) {
			native = true
			body = strings.TrimSpace(strings.ReplaceAll(body, "@"+jid.User, ""))
		}
	}
	fromBot := false
	if q := ci.GetQuotedMessage(); q != nil {
		part, _ := types.ParseJID(ci.GetParticipant())
		fromBot = isMe(dev, part)
		label := ownLabel(dev)
		if !fromBot {
			label = b.sender(ctx, dev, part, types.EmptyJID).Label()
		}
		qBody := textOf(q)
		in.ReplyTo = &core.QuotedMessage{ID: ci.GetStanzaID(), Sender: label, Body: qBody, FromBot: fromBot}
		body = strings.TrimSpace(body + "\n\n" + QuoteBlock(label, ci.GetStanzaID(), qBody))
	}
	if group {
		in.WasMentioned = native || b.mentions.Match(textOf(m))
		in.Group = &core.GroupInfo{}
	}
	in.Body = body
	b.attachments(ctx, cli, chat, info.ID, m, in)
	if strings.TrimSpace(in.Body) == "" && len(in.Media) == 0 && len(in.UntrustedContext) == 0 {
		return bridges.Inbound{}, false
	}
	msg := bridges.Inbound{
		Message: in, CanDetectMention: true, ImplicitMention: fromBot,
		DedupeKey: "whatsapp:" + b.opts.AccountID + ":" + chat.String() + ":" + info.Sender.ToNonAD().User + ":" + info.ID,
	}
	if group {
		msg.GroupID = chat.String()
		msg.HistoryKey = core.GroupHistoryKey(Channel, b.opts.AccountID, kind, msg.GroupID)
		msg.IsControlCommand = strings.HasPrefix(strings.TrimSpace(textOf(m)), "/")
	}
	return msg, true
}

// QuoteBlock is how a quoted reply is appended to the body
// (openclaw-facts §4.2).
func QuoteBlock(sender, id, body string) string {
	return "[Replying to " + sender + " id:" + id + "]\n" + body + "\n[/Replying]"
}

// sender describes a user: by phone number when one is known (the LID map
// of the store, or the alternate JID WhatsApp sent), else by JID.
func (b *Bridge) sender(ctx context.Context, dev *store.Device, jid, alt types.JID) core.Sender {
	if jid.IsEmpty() {
		return core.Sender{}
	}
	if pn, ok := phoneOf(ctx, dev, jid, alt); ok {
		return core.Sender{ID: e164(pn), E164: e164(pn)}
	}
	return core.Sender{ID: jid.ToNonAD().String()}
}

// textOf is a message's text: the text itself, or a media caption.
func textOf(m *waE2E.Message) string {
	switch {
	case m == nil:
		return ""
	case m.GetConversation() != "":
		return m.GetConversation()
	case m.GetExtendedTextMessage() != nil:
		return m.GetExtendedTextMessage().GetText()
	case m.GetImageMessage() != nil:
		return m.GetImageMessage().GetCaption()
	case m.GetVideoMessage() != nil:
		return m.GetVideoMessage().GetCaption()
	case m.GetDocumentMessage() != nil:
		return m.GetDocumentMessage().GetCaption()
	case m.GetDocumentWithCaptionMessage().GetMessage() != nil:
		return textOf(m.GetDocumentWithCaptionMessage().GetMessage())
	}
	return ""
}

// contextInfo is the reply and mention context of whichever part the
// message has.
func contextInfo(m *waE2E.Message) *waE2E.ContextInfo {
	switch {
	case m == nil:
		return nil
	case m.GetExtendedTextMessage() != nil:
		return m.GetExtendedTextMessage().GetContextInfo()
	case m.GetImageMessage() != nil:
		return m.GetImageMessage().GetContextInfo()
	case m.GetVideoMessage() != nil:
		return m.GetVideoMessage().GetContextInfo()
	case m.GetDocumentMessage() != nil:
		return m.GetDocumentMessage().GetContextInfo()
	case m.GetAudioMessage() != nil:
		return m.GetAudioMessage().GetContextInfo()
	}
	return nil
}

// attachment is one downloadable part of a message.
type attachment struct {
	kind string
	msg  whatsmeow.DownloadableMessage
	mime string
	name string
	size uint64
}

func attachmentsOf(m *waE2E.Message) []attachment {
	var out []attachment
	if x := m.GetImageMessage(); x != nil {
		out = append(out, attachment{"image", x, x.GetMimetype(), "", x.GetFileLength()})
	}
	if x := m.GetVideoMessage(); x != nil {
		out = append(out, attachment{"video", x, x.GetMimetype(), "", x.GetFileLength()})
	}
	if x := m.GetAudioMessage(); x != nil {
		out = append(out, attachment{"audio", x, x.GetMimetype(), "", x.GetFileLength()})
	}
	if x := m.GetDocumentMessage(); x != nil {
		out = append(out, attachment{"document", x, x.GetMimetype(), x.GetFileName(), x.GetFileLength()})
	}
	if x := m.GetStickerMessage(); x != nil {
		out = append(out, attachment{"sticker", x, x.GetMimetype(), "", x.GetFileLength()})
	}
	return out
}

// attachments downloads the message's media into the media folder, up to
// the size cap; what cannot be fetched is described instead.
func (b *Bridge) attachments(ctx context.Context, cli Client, chat types.JID, id types.MessageID, m *waE2E.Message, in *core.Inbound) {
	for i, a := range attachmentsOf(m) {
		if a.size > uint64(b.opts.MaxMediaBytes) {
			in.UntrustedContext = append(in.UntrustedContext, fmt.Sprintf(
				"[%s %q not downloaded: %d bytes is over the %d-byte limit]", a.kind, a.name, a.size, b.opts.MaxMediaBytes))
			continue
		}
		path, err := b.download(ctx, cli, chat, id, i, a)
		if err != nil {
			b.opts.Log.Warn("whatsapp: attachment not downloaded", "kind", a.kind, "err", err)
			in.UntrustedContext = append(in.UntrustedContext, fmt.Sprintf("[%s %q could not be downloaded]", a.kind, a.name))
			continue
		}
		in.Media = append(in.Media, core.Media{Path: path, MimeType: a.mime})
	}
}

func (b *Bridge) download(ctx context.Context, cli Client, chat types.JID, id types.MessageID, i int, a attachment) (string, error) {
	data, err := cli.Download(ctx, a.msg)
	if err != nil {
		return "", err
	}
	if int64(len(data)) > b.opts.MaxMediaBytes {
		return "", fmt.Errorf("%d bytes is over the %d-byte limit", len(data), b.opts.MaxMediaBytes)
	}
	key := fmt.Sprintf("%s:%s:%d", chat, id, i)
	return bridges.SaveMedia(b.opts.MediaDir, key, bridges.MediaExtension(a.name, a.mime, ""), bytes.NewReader(data), b.opts.MaxMediaBytes)
}

// editNotice reports an edited message as an untrusted system event
// (without its text) when the sink takes them.
func (b *Bridge) editNotice(ctx context.Context, sink bridges.Sink, dev *store.Device, e *events.Message) {
	ses, ok := sink.(bridges.SystemEventSink)
	if !ok || e.Info.IsFromMe {
		return
	}
	msg, ok := b.normalize(ctx, nil, dev, &events.Message{Info: e.Info, Message: &waE2E.Message{Conversation: strPtr("(edited)")}})
	if !ok {
		return
	}
	text := fmt.Sprintf("WhatsApp: %s edited a message (id %s).", msg.Message.Sender.Label(), e.Info.ID)
	if err := ses.SystemEvent(ctx, msg, text, "whatsapp:edit:"+e.Info.ID); err != nil {
		b.opts.Log.Debug("whatsapp: edit notice failed", "err", err)
	}
}

func strPtr(s string) *string { return &s }
