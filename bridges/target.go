package bridges

import (
	"fmt"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// ParseTarget reads a delivery target as tools and the gateway's send
// name it: "<channel>:<chat>" plus the channel's own forms:
//
//	telegram:<chatId>                 telegram:-1001234567890:topic:42
//	slack:channel:<id>, slack:user:<id>, slack:<id>
//	discord:channel:<id>, discord:user:<id>, discord:<id>
//	whatsapp:+15551234567, whatsapp:<jid>
//
// A "#<accountId>" after the channel picks a bot account
// ("telegram#work:123").
func ParseTarget(s string) (core.Route, error) {
	channel, rest, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok || channel == "" || rest == "" {
		return core.Route{}, fmt.Errorf("target %q is not <channel>:<chat> (e.g. telegram:123456789 or slack:channel:C0123)", s)
	}
	r := core.Route{Channel: strings.ToLower(channel)}
	if c, acc, ok := strings.Cut(r.Channel, "#"); ok {
		r.Channel, r.AccountID = c, acc
	}
	switch r.Channel {
	case "telegram":
		chat, topic, hasTopic := strings.Cut(rest, ":topic:")
		r.To = chat
		if hasTopic {
			if topic == "" {
				return core.Route{}, fmt.Errorf("target %q has an empty topic id", s)
			}
			r.ThreadID = topic
		}
	case "slack", "discord":
		if kind, id, ok := strings.Cut(rest, ":"); ok && (kind == "channel" || kind == "user") {
			rest = id
			if kind == "user" && r.Channel == "discord" && id != "" {
				// Discord sends to channels: the bridge opens the DM.
				rest = "user:" + id
			}
		}
		r.To = rest
	default:
		r.To = rest
	}
	if r.To == "" || strings.ContainsAny(r.To, " \t\n") {
		return core.Route{}, fmt.Errorf("target %q has no usable chat id", s)
	}
	return r, nil
}
