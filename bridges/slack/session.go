package slack

import "github.com/switchboardhq/switchboard/core"

// Channel is the bridge's channel name.
const Channel = "slack"

// conversation is what a Slack message says about where it was written.
type conversation struct {
	// ChannelType is the event's channel_type: "im", "mpim", "channel" or
	// "group" (a private channel).
	ChannelType string
	// ChannelID, UserID, TS and ThreadTS are the event's channel, user, ts
	// and thread_ts.
	ChannelID, UserID, TS, ThreadTS string
}

// sessionKey keys a Slack conversation (openclaw-facts §2.4): a DM by the
// user under dmScope, a group DM as a group, public and private channels
// as channels; a true thread reply (thread_ts ≠ ts) gets
// ":thread:<thread_ts>", a top-level message stays on the channel key.
func sessionKey(agentID, accountID string, session core.SessionConfig, c conversation) (core.SessionKey, core.ChatType) {
	var key core.SessionKey
	var kind core.ChatType
	switch c.ChannelType {
	case "im":
		kind = core.ChatDirect
		key = core.BuildPeerSessionKey(core.PeerKeyParams{
			AgentID: agentID, Channel: Channel, AccountID: accountID, Kind: kind,
			PeerID: c.UserID, DMScope: session.DMScope, IdentityLinks: session.IdentityLinks,
		})
	case "mpim":
		kind = core.ChatGroup
		key = core.BuildPeerSessionKey(core.PeerKeyParams{AgentID: agentID, Channel: Channel, Kind: kind, PeerID: c.ChannelID})
	default:
		kind = core.ChatChannel
		key = core.BuildPeerSessionKey(core.PeerKeyParams{AgentID: agentID, Channel: Channel, Kind: kind, PeerID: c.ChannelID})
	}
	if c.ThreadTS != "" && c.ThreadTS != c.TS {
		key = key.WithThread(c.ThreadTS)
	}
	return key, kind
}
