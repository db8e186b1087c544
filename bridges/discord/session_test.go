package discord

import (
	"testing"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/core"
)

func TestSessionKeys(t *testing.T) {
	perPeer := core.SessionConfig{DMScope: core.DMScopePerChannelPeer}
	for _, tc := range []struct {
		name        string
		c           conversation
		key, parent core.SessionKey
		kind        core.ChatType
	}{
		{"dm", conversation{DM: true, ChannelID: "111", AuthorID: "42"}, "agent:main:discord:direct:42", "", core.ChatDirect},
		{"group dm", conversation{GroupDM: true, ChannelID: "222", AuthorID: "42"}, "agent:main:discord:group:222", "", core.ChatGroup},
		{"guild channel", conversation{ChannelID: "123456", AuthorID: "42"}, "agent:main:discord:channel:123456", "", core.ChatChannel},
		{"thread", conversation{ChannelID: "987654", ParentID: "123456", AuthorID: "42"}, "agent:main:discord:channel:987654", "agent:main:discord:channel:123456", core.ChatChannel},
	} {
		key, parent, kind := sessionKey("main", "default", perPeer, tc.c)
		if key != tc.key || parent != tc.parent || kind != tc.kind {
			t.Errorf("%s: %q %q %q, want %q %q %q", tc.name, key, parent, kind, tc.key, tc.parent, tc.kind)
		}
	}
}

func TestCloseCodes(t *testing.T) {
	for _, code := range []int{4004, 4010, 4011, 4012, 4013, 4014} {
		if st, why := closeState(code); !st.Terminal() || why == "" {
			t.Errorf("close %d: %s %q, want terminal with a reason", code, st, why)
		}
	}
	for _, code := range []int{1000, 1001, 1006, 4000, 4001, 4002, 4003, 4005, 4007, 4008, 4009} {
		if st, _ := closeState(code); st != bridges.StateTransientDisconnect {
			t.Errorf("close %d: %s, want transient", code, st)
		}
	}
}
