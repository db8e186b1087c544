package bridges

import (
	"errors"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
)

// Common is the part of a channel's configuration section that every
// platform shares. A bridge's Config embeds it, so its keys sit flat under
// channels.<name>: beside the platform's own, and its methods give the
// Config most of Section.
type Common struct {
	// Access is who may talk to the bot: dmPolicy, allowFrom, groupPolicy,
	// groups, groupAllowFrom and historyLimit.
	Access
	// ReplyToMode is which messages of an answer reply natively to the
	// message answered: "off" (default), "first", "all" or "batched".
	ReplyToMode ReplyToMode `json:"replyToMode,omitempty"`
	// ResponsePrefix is put before every reply ("" for none).
	ResponsePrefix string `json:"responsePrefix,omitempty"`
	// TextChunkLimit is the longest message sent in one piece; longer
	// answers are split at a paragraph, line or sentence end. Zero means
	// the platform's own limit, which is also the most it accepts.
	TextChunkLimit int `json:"textChunkLimit,omitempty" min:"0"`
	// MediaMaxMB caps one attachment the bot downloads from a message or
	// sends with a reply, in megabytes (default 20); a larger inbound file
	// is described to the model instead, a larger reply attachment fails
	// its delivery.
	MediaMaxMB int `json:"mediaMaxMb,omitempty" min:"0"`
}

// Policy implements Section: the embedded Access as written.
func (c Common) Policy() Access { return c.Access }

// RouteOptions implements Section: replyToMode and responsePrefix.
func (c Common) RouteOptions() RouteOptions {
	return RouteOptions{Mode: c.ReplyToMode, Prefix: c.ResponsePrefix}
}

// MaxMediaBytes is mediaMaxMb in bytes; zero means the default
// (DefaultMaxMediaBytes, applied by the bridge).
func (c Common) MaxMediaBytes() int64 { return int64(c.MediaMaxMB) << 20 }

// CheckLimits reports a textChunkLimit above maxChunk or a mediaMaxMb above
// maxMediaMB, the platform's own ceilings, as field errors a section's
// Validate returns.
func (c Common) CheckLimits(maxChunk, maxMediaMB int) error {
	var errs []error
	if c.TextChunkLimit > maxChunk {
		errs = append(errs, core.FieldErrorf("textChunkLimit", fmt.Sprintf("%d is over the platform's limit of %d", c.TextChunkLimit, maxChunk)))
	}
	if c.MediaMaxMB > maxMediaMB {
		errs = append(errs, core.FieldErrorf("mediaMaxMb", fmt.Sprintf("%d is over the %d MB this bridge handles", c.MediaMaxMB, maxMediaMB)))
	}
	return errors.Join(errs...)
}

// SectionAs returns section as the bridge package's own configuration type
// C (given as C or *C), for a Descriptor's New; channel names the bridge
// in the error when it is another type.
func SectionAs[C any](channel string, section Section) (C, error) {
	if c, ok := any(section).(C); ok {
		return c, nil
	}
	if p, ok := any(section).(*C); ok && p != nil {
		return *p, nil
	}
	var zero C
	return zero, fmt.Errorf("%s: the configuration section is %T, want %T", channel, section, zero)
}
