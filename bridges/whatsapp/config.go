package whatsapp

import (
	"errors"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/core"
)

// Config is the `channels.whatsapp:` section of the configuration. The
// account is linked with `switchboard whatsapp link` (or from the web
// page); its keys live in <stateDir>/whatsapp/device.db, never in the
// configuration.
type Config struct {
	// Enabled starts the WhatsApp bridge. With no account linked yet it
	// waits for one.
	Enabled bool `json:"enabled,omitempty"`
	// DMPolicy is who may talk to the bot in a direct chat: "pairing"
	// (default), "allowlist", "open" (needs "*" in allowFrom) or
	// "disabled".
	DMPolicy bridges.DMPolicy `json:"dmPolicy,omitempty"`
	// AllowFrom lists phone numbers (E.164, "+15551234567") always
	// allowed in direct chats; "*" is anyone.
	AllowFrom []string `json:"allowFrom,omitempty"`
	// GroupPolicy is which groups the bot answers in: "allowlist"
	// (default: only those under groups), "open" or "disabled".
	GroupPolicy bridges.GroupPolicy `json:"groupPolicy,omitempty"`
	// Groups configures groups by JID ("120363…@g.us"); "*" applies to
	// every group. Each may set requireMention (default true) and
	// allowFrom (phone numbers).
	Groups map[string]bridges.GroupRule `json:"groups,omitempty"`
	// GroupAllowFrom limits who may trigger the bot in any group (phone
	// numbers).
	GroupAllowFrom []string `json:"groupAllowFrom,omitempty"`
	// HistoryLimit is how many group messages not addressed to the bot are
	// kept per group for the next one that is; default 50, 0 off.
	HistoryLimit *int `json:"historyLimit,omitempty"`
	// ReplyToMode is "off" (default), "first", "all" or "batched": when
	// replies quote the message they answer.
	ReplyToMode bridges.ReplyToMode `json:"replyToMode,omitempty"`
	// ResponsePrefix is put before every reply ("" for none).
	ResponsePrefix string `json:"responsePrefix,omitempty"`
	// TextChunkLimit is the longest message sent in one piece (default and
	// maximum 4000).
	TextChunkLimit int `json:"textChunkLimit,omitempty" min:"0" max:"4000"`
	// MediaMaxMB caps one attachment downloaded or sent (default 20).
	MediaMaxMB int `json:"mediaMaxMb,omitempty" min:"0" max:"500"`
	// SendReadReceipts marks messages read (blue ticks) once they are
	// journaled. Default false.
	SendReadReceipts bool `json:"sendReadReceipts,omitempty"`
}

// Access returns the section's gating settings, phone numbers in E.164.
func (c Config) Access() bridges.Access {
	groups := c.Groups
	if len(groups) > 0 {
		groups = make(map[string]bridges.GroupRule, len(c.Groups))
		for id, r := range c.Groups {
			r.AllowFrom = phones(r.AllowFrom)
			groups[id] = r
		}
	}
	return bridges.Access{
		DMPolicy: c.DMPolicy, AllowFrom: phones(c.AllowFrom), GroupPolicy: c.GroupPolicy, Groups: groups,
		GroupAllowFrom: phones(c.GroupAllowFrom), HistoryLimit: c.HistoryLimit,
	}
}

func phones(list []string) []string {
	if list == nil {
		return nil
	}
	out := make([]string, len(list))
	for i, e := range list {
		out[i] = NormalizePhone(e)
	}
	return out
}

// Validate reports settings that contradict each other.
func (c Config) Validate() error {
	var errs []error
	if err := c.Access().Validate(); err != nil {
		errs = append(errs, core.FieldErrorf("dmPolicy", err.Error()))
	}
	return errors.Join(errs...)
}

// Options turns the section into bridge options; the caller adds the
// store, the logger and the media directory.
func (c Config) Options(agentID string, session core.SessionConfig) Options {
	return Options{
		AgentID: agentID, Session: session, ChunkLimit: c.TextChunkLimit,
		MaxMediaBytes: int64(c.MediaMaxMB) << 20, SendReadReceipts: c.SendReadReceipts,
	}
}
