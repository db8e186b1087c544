package slack

import (
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

func TestSessionKeys(t *testing.T) {
	perPeer := core.SessionConfig{DMScope: core.DMScopePerChannelPeer}
	for _, tc := range []struct {
		name    string
		session core.SessionConfig
		c       conversation
		key     core.SessionKey
		kind    core.ChatType
	}{
		{"dm under main scope", core.SessionConfig{}, conversation{ChannelType: "im", ChannelID: "D1", UserID: "U9", TS: "1.1"}, "agent:main:main", core.ChatDirect},
		{"dm per channel peer", perPeer, conversation{ChannelType: "im", ChannelID: "D1", UserID: "U9", TS: "1.1"}, "agent:main:slack:direct:u9", core.ChatDirect},
		{"group dm", perPeer, conversation{ChannelType: "mpim", ChannelID: "G77", UserID: "U9", TS: "1.1"}, "agent:main:slack:group:g77", core.ChatGroup},
		{"public channel", perPeer, conversation{ChannelType: "channel", ChannelID: "C123", UserID: "U9", TS: "1.1"}, "agent:main:slack:channel:c123", core.ChatChannel},
		{"private channel", perPeer, conversation{ChannelType: "group", ChannelID: "C555", UserID: "U9", TS: "1.1"}, "agent:main:slack:channel:c555", core.ChatChannel},
		{"thread reply", perPeer, conversation{ChannelType: "channel", ChannelID: "C123", UserID: "U9", TS: "1712345679.000200", ThreadTS: "1712345678.123456"},
			"agent:main:slack:channel:c123:thread:1712345678.123456", core.ChatChannel},
		{"thread parent stays on the channel", perPeer, conversation{ChannelType: "channel", ChannelID: "C123", UserID: "U9", TS: "1712345678.123456", ThreadTS: "1712345678.123456"},
			"agent:main:slack:channel:c123", core.ChatChannel},
	} {
		key, kind := sessionKey("main", "default", tc.session, tc.c)
		if key != tc.key || kind != tc.kind {
			t.Errorf("%s: %q %q, want %q %q", tc.name, key, kind, tc.key, tc.kind)
		}
	}
}
