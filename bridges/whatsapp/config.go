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
	// SendReadReceipts marks messages read (blue ticks) once they are
	// journaled. Default false.
	SendReadReceipts bool `json:"sendReadReceipts,omitempty"`
	// Common holds the keys every channel shares (dmPolicy, allowFrom,
	// groupPolicy, groups, groupAllowFrom, historyLimit, replyToMode,
	// responsePrefix, textChunkLimit, mediaMaxMb).
	bridges.Common
}

// IsEnabled implements bridges.Section.
func (c Config) IsEnabled() bool { return c.Enabled }

// Policy implements bridges.Section: the shared access keys with phone
// numbers in E.164.
func (c Config) Policy() bridges.Access {
	groups := c.Groups
	if len(groups) > 0 {
		groups = make(map[string]bridges.GroupRule, len(c.Groups))
		for id, r := range c.Groups {
			r.AllowFrom = phones(r.AllowFrom)
			groups[id] = r
		}
	}
	a := c.Access
	a.AllowFrom, a.Groups, a.GroupAllowFrom = phones(c.AllowFrom), groups, phones(c.GroupAllowFrom)
	return a
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
	if err := c.Policy().Validate(); err != nil {
		errs = append(errs, core.FieldErrorf("dmPolicy", err.Error()))
	}
	if err := c.CheckLimits(DefaultChunkLimit, maxMediaMB); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Options turns the section into bridge options; the caller adds the
// store, the logger and the media directory.
func (c Config) Options(agentID string, session core.SessionConfig) Options {
	return Options{
		AgentID: agentID, Session: session, ChunkLimit: c.TextChunkLimit,
		MaxMediaBytes: c.MaxMediaBytes(), SendReadReceipts: c.SendReadReceipts,
	}
}
