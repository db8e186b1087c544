package tools

import (
	"fmt"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// Owners is the owner list of commands.ownerAllowFrom: the senders whose
// turns may run owner-only tools (write, edit, exec, process, cron,
// sessions_list, sessions_history, and the message tool beyond the current
// chat).
//
// An entry is "<channel>:<sender id>" ("telegram:123456789",
// "slack:U0123ABC", "discord:80351110224678912", "whatsapp:+15551234567")
// or "*" for every sender. Turns that no chat message started (heartbeats,
// cron jobs, which only owners can create) and messages sent through the
// gateway (whose clients hold the gateway token) count as the owner's.
type Owners struct {
	all     bool
	senders map[string]bool
}

// NewOwners parses the owner list; an entry that is not "<channel>:<id>"
// or "*" is an error naming it.
func NewOwners(list []string) (*Owners, error) {
	o := &Owners{senders: make(map[string]bool, len(list))}
	for i, e := range list {
		e = strings.TrimSpace(e)
		if e == "*" {
			o.all = true
			continue
		}
		channel, id, ok := strings.Cut(e, ":")
		if !ok || channel == "" || strings.TrimSpace(id) == "" {
			return nil, fmt.Errorf("[%d]: %q is not <channel>:<sender id> (for example telegram:123456789) or *", i, e)
		}
		o.senders[strings.ToLower(channel)+":"+strings.TrimSpace(id)] = true
	}
	return o, nil
}

// IsOwner reports whether in comes from an owner.
func (o *Owners) IsOwner(in core.Inbound) bool {
	if in.EffectiveKind() == core.InboundHeartbeat || in.EffectiveKind() == core.InboundCron {
		return true
	}
	if in.Surface == "webchat" {
		return true
	}
	if in.EffectiveKind() != core.InboundUser || o == nil {
		return false
	}
	if o.all {
		return true
	}
	ch := strings.ToLower(string(in.Route.Channel))
	for _, id := range []string{in.Sender.ID, in.Sender.E164} {
		if id != "" && o.senders[ch+":"+id] {
			return true
		}
	}
	return false
}
