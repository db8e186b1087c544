package linebridge

import (
	"errors"
	"net"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/core"
)

// DefaultListen is the address the bridge listens on when Config.Listen is
// empty: loopback only, because the protocol believes the name a client
// gives.
const DefaultListen = "127.0.0.1:7070"

// maxChunk caps textChunkLimit. A line protocol has no ceiling of its own;
// this one keeps one reply message within what a simple client reads
// into a buffer.
const maxChunk = 16000

// Config is the `channels.line:` section of the configuration. Sender ids
// in allowFrom are the names clients give in HELLO, in lower case. Some
// shared keys mean nothing on this platform: there are no groups
// (groupPolicy, groups, groupAllowFrom, historyLimit), nothing to reply to
// natively (replyToMode), and no files (mediaMaxMb must stay 0).
//
// Config is a bridges.Section: IsEnabled is its own, Policy and
// RouteOptions come from the embedded Common.
type Config struct {
	// Enabled starts the bridge.
	Enabled bool `json:"enabled,omitempty"`
	// Listen is the TCP address to listen on, host:port (default
	// 127.0.0.1:7070). ":0" picks a free port (tests).
	Listen string `json:"listen,omitempty"`
	// Common holds the keys every channel shares (dmPolicy, allowFrom,
	// groupPolicy, groups, groupAllowFrom, historyLimit, replyToMode,
	// responsePrefix, textChunkLimit, mediaMaxMb).
	bridges.Common
}

var _ bridges.Section = Config{}

// IsEnabled implements bridges.Section.
func (c Config) IsEnabled() bool { return c.Enabled }

// Validate reports settings the bridge cannot run with, as field errors
// the configuration loader places at their keys. It does no IO.
func (c Config) Validate() error {
	var errs []error
	if c.Listen != "" {
		if _, _, err := net.SplitHostPort(c.Listen); err != nil {
			errs = append(errs, core.FieldErrorf("listen", "write host:port, e.g. 127.0.0.1:7070 ("+err.Error()+")"))
		}
	}
	// Common's Access.Validate is hidden by this method: call it.
	if err := c.Policy().Validate(); err != nil {
		errs = append(errs, core.FieldErrorf("dmPolicy", err.Error()))
	}
	if err := c.CheckLimits(maxChunk, 0); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Options turns the section into bridge options; the caller adds what the
// host provides (agent, session settings, clock, logger).
func (c Config) Options() Options {
	return Options{Listen: c.Listen, ChunkLimit: c.TextChunkLimit}
}
