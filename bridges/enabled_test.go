package bridges_test

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/slack"
	"github.com/switchboardhq/switchboard/core"
)

// Issue 26, finding 6c: a cron job could announce to a channel the
// configuration leaves off. Enabled resolves targets on the enabled
// channels only; a channel that is off is named with how to turn it on
// and the channels that are on, a misspelt one gets the closest name.
func TestFinding6EnabledResolvesOnlyTheChannelsThatAreOn(t *testing.T) {
	e := bridges.Enabled{All: registry(), On: bridges.Registry{slack.Descriptor()}}
	if r, err := e.ParseTarget("slack:channel:C0123"); err != nil || r != (core.Route{Channel: "slack", To: "C0123"}) {
		t.Errorf("enabled channel: %+v, %v", r, err)
	}
	for _, tt := range []struct{ target, want string }{
		{"telegram:123", `target "telegram:123": channel "telegram" is not enabled (enabled: slack); turn it on under channels.telegram and restart`},
		{"Telgram:123", `target "Telgram:123": no channel "Telgram" (did you mean "telegram"?); enabled: slack`},
		{"pager:1", `target "pager:1": no channel "pager"; enabled: slack (this program has telegram, slack, discord, whatsapp)`},
		{"slack", `target "slack" is not <channel>:<chat> (for example slack:channel:`},
	} {
		if _, err := e.ParseTarget(tt.target); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("ParseTarget(%q) = %v, want %q", tt.target, err, tt.want)
		}
	}
	if _, err := (bridges.Enabled{All: registry()}).Resolve("slack", "", "C1"); err == nil || !strings.Contains(err.Error(), "(enabled: none)") {
		t.Errorf("nothing enabled: %v", err)
	}
	// Whether a chat is direct is the bridge's to tell, enabled or not.
	if !e.IsDirect(core.Route{Channel: "telegram", To: "123"}) || e.IsDirect(core.Route{Channel: "telegram", To: "-100"}) {
		t.Error("IsDirect does not follow the bridge's rule")
	}
}
