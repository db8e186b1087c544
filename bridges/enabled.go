package bridges

import (
	"fmt"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/suggest"
)

// Enabled is the core.Targets of the channels a daemon runs: the bridges
// its configuration turns on, out of all the binary carries. A target on
// an enabled channel resolves as the Registry's do. One on a channel the
// binary carries but the configuration leaves off is refused, naming the
// channel, the section that turns it on and the channels that are on, so
// that what is sent there (a cron job's announcement) is not accepted only
// to go nowhere (issue 26, finding 6); a name no bridge has gets the
// closest one. A plain value, read-only, safe for concurrent use; its
// methods do no IO.
type Enabled struct {
	// All is every bridge the binary carries.
	All Registry
	// On are the bridges the configuration enables; nil means none.
	On Registry
}

var _ core.Targets = Enabled{}

// ParseTarget implements core.Targets: "<channel>[#<accountId>]:<chat>"
// on an enabled channel.
func (e Enabled) ParseTarget(target string) (core.Route, error) {
	return parseTarget(target, e.On.examples(), e.Resolve)
}

// Resolve implements core.Targets for the enabled channels.
func (e Enabled) Resolve(channel, accountID, chat string) (core.Route, error) {
	if _, ok := e.On.Lookup(channel); ok {
		return e.On.Resolve(channel, accountID, chat)
	}
	if d, ok := e.All.Lookup(channel); ok {
		return core.Route{}, fmt.Errorf("channel %q is not enabled (enabled: %s); turn it on under channels.%s and restart",
			channel, e.On.known(), d.Channel)
	}
	if s := suggest.Closest(channel, e.All.Channels()); s != "" {
		return core.Route{}, fmt.Errorf("no channel %q (did you mean %q?); enabled: %s", channel, s, e.On.known())
	}
	return core.Route{}, fmt.Errorf("no channel %q; enabled: %s (this program has %s)", channel, e.On.known(), strings.Join(e.All.Channels(), ", "))
}

// IsDirect implements core.Targets: whether route's chat is a direct one,
// as its channel's bridge tells, enabled or not.
func (e Enabled) IsDirect(route core.Route) bool { return e.All.IsDirect(route) }
