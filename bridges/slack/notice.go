package slack

import (
	"github.com/slack-go/slack/slackevents"
)

// notice turns a message_changed or message_deleted event into a system
// event for the conversation's session: "Slack message edited in #C1." The
// message's text is left out, as it is untrusted and the model did not ask
// for it; the author of the message is the sender the access policy
// judges. The bot's own and other bots' messages are ignored, and so is a
// message_changed that is no edit (Slack sends one when it unfurls a
// link).
func (b *Bridge) notice(outer slackevents.EventsAPIEvent, ev *slackevents.MessageEvent, botID string) (event, bool) {
	var verb, ts, user, threadTS string
	fromBot := false
	switch ev.SubType {
	case "message_changed":
		m := ev.Message
		if m == nil || m.Edited == nil {
			return event{}, false
		}
		verb, ts, user, threadTS, fromBot = "changed", m.Timestamp, m.User, m.ThreadTimestamp, m.BotID != ""
	case "message_deleted":
		p := ev.PreviousMessage
		if p == nil {
			return event{}, false // no author to judge
		}
		verb, ts, user, threadTS, fromBot = "deleted", ev.DeletedTimeStamp, p.User, p.ThreadTimestamp, p.BotID != ""
	default:
		return event{}, false
	}
	if fromBot || user == "" || user == botID || ev.Channel == "" || ts == "" {
		return event{}, false
	}
	c := conversation{ChannelType: ev.ChannelType, ChannelID: ev.Channel, UserID: user, TS: ts, ThreadTS: threadTS}
	msg := b.inbound(outer, c, "", false, botID)
	msg.DedupeKey = ""
	where := "#" + ev.Channel
	switch ev.ChannelType {
	case "im":
		where = "a direct message"
	case "mpim":
		where = "a group direct message"
	}
	text := "Slack message edited in " + where + "."
	if verb == "deleted" {
		text = "Slack message deleted in " + where + "."
	}
	return event{msg: msg, notice: text, contextKey: "slack:message:" + verb + ":" + ev.Channel + ":" + ts}, true
}
