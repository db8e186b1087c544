package slack

import (
	"context"
	"fmt"
	"strings"

	slackapi "github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/core"
)

// event is what one Events API callback asks of the bridge: a message to
// submit (with files to download first), or a notice about an earlier
// message to queue as a system event.
type event struct {
	// msg is the gated message; for a notice, its conversation and sender.
	msg bridges.Inbound
	// files are the message's attachments.
	files []slackapi.File
	// notice, when set, makes the event a system event; contextKey names
	// what it is about.
	notice, contextKey string
}

// handle takes one Events API callback to sink: a message is submitted
// after its files are downloaded, a notice is queued when sink takes
// system events, anything else is ignored. An error means the message was
// not accepted, so the delivery must not be acknowledged. A notice that
// cannot be queued is only logged: system events live in memory, so
// Slack's retry would buy nothing a restart does not lose anyway.
func (b *Bridge) handle(ctx context.Context, sink bridges.Sink, outer slackevents.EventsAPIEvent) error {
	ev, ok := b.parse(outer)
	if !ok {
		return nil
	}
	if ev.notice != "" {
		if notices, ok := sink.(bridges.SystemEventSink); ok {
			if err := notices.SystemEvent(ctx, ev.msg, ev.notice, ev.contextKey); err != nil {
				b.opts.Log.Warn("slack: notice not queued", "context", ev.contextKey, "err", err)
			}
		}
		return nil
	}
	b.fetchFiles(ctx, ev.files, ev.msg.Message)
	if err := sink.Submit(ctx, ev.msg); err != nil {
		return err
	}
	b.tracker.Inbound()
	return nil
}

// parse turns an Events API callback into an event; false means the
// callback is not for the bridge (the bot's own and other bots' messages,
// joins and other subtypes, the message event of a mention that
// app_mention answers, unknown event types).
func (b *Bridge) parse(outer slackevents.EventsAPIEvent) (event, bool) {
	b.mu.Lock()
	botID := b.botID
	b.mu.Unlock()
	switch ev := outer.InnerEvent.Data.(type) {
	case *slackevents.MessageEvent:
		switch ev.SubType {
		case "", "file_share", "thread_broadcast":
		case "message_changed", "message_deleted":
			return b.notice(outer, ev, botID)
		default:
			return event{}, false
		}
		if ev.BotID != "" || ev.User == "" || ev.User == botID {
			return event{}, false
		}
		if ev.ChannelType != "im" && botID != "" && strings.Contains(ev.Text, "<@"+botID+">") {
			// The app_mention event of the same message answers it.
			return event{}, false
		}
		var files []slackapi.File
		if ev.Message != nil {
			files = ev.Message.Files
		}
		c := conversation{ChannelType: ev.ChannelType, ChannelID: ev.Channel, UserID: ev.User, TS: ev.TimeStamp, ThreadTS: ev.ThreadTimeStamp}
		return event{msg: b.inbound(outer, c, ev.Text, false, botID), files: files}, true
	case *slackevents.AppMentionEvent:
		if ev.BotID != "" || ev.User == "" || ev.User == botID {
			return event{}, false
		}
		kind := "channel"
		if strings.HasPrefix(ev.Channel, "G") {
			kind = "group"
		}
		c := conversation{ChannelType: kind, ChannelID: ev.Channel, UserID: ev.User, TS: ev.TimeStamp, ThreadTS: ev.ThreadTimeStamp}
		return event{msg: b.inbound(outer, c, ev.Text, true, botID), files: ev.Files}, true
	}
	return event{}, false
}

// inbound builds the gated message of conversation c from its raw text.
func (b *Bridge) inbound(outer slackevents.EventsAPIEvent, c conversation, text string, mentioned bool, botID string) bridges.Inbound {
	eventID := ""
	if cb, ok := outer.Data.(*slackevents.EventsAPICallbackEvent); ok {
		eventID = cb.EventID
	}
	key, kind := sessionKey(b.opts.AgentID, b.opts.AccountID, b.opts.Session, c)
	body := inboundText(text, botID)
	in := &core.Inbound{
		Kind: core.InboundUser, AgentID: b.opts.AgentID, Surface: Channel, SessionKey: key, ChatType: kind,
		Body: body, MessageID: core.MessageID(c.TS), Timestamp: tsMillis(c.TS),
		Sender:       core.Sender{ID: c.UserID},
		Route:        core.Route{Channel: Channel, AccountID: core.AccountID(b.opts.AccountID), To: core.ChatID(c.ChannelID), ThreadID: c.ThreadTS},
		WasMentioned: mentioned || b.mentions.Match(text),
	}
	msg := bridges.Inbound{Message: in, CanDetectMention: true}
	if eventID != "" {
		msg.DedupeKey = "slack:" + outer.TeamID + ":event:" + eventID
	}
	if kind != core.ChatDirect {
		msg.GroupID = c.ChannelID
		msg.HistoryKey = core.GroupHistoryKey(Channel, b.opts.AccountID, kind, c.ChannelID)
		msg.IsControlCommand = strings.HasPrefix(body, "/")
	}
	return msg
}

// tsMillis turns a Slack ts ("1700000000.000100") into Unix milliseconds.
func tsMillis(ts string) int64 {
	sec, frac, _ := strings.Cut(ts, ".")
	var s, f int64
	fmt.Sscan(sec, &s)
	if len(frac) >= 3 {
		fmt.Sscan(frac[:3], &f)
	}
	return s*1000 + f
}
