package discord

import "github.com/switchboardhq/switchboard/core"

// Channel is the bridge's channel name.
const Channel = "discord"

// conversation is where a Discord message was written.
type conversation struct {
	// DM reports a direct message (channel type 1); GroupDM a group DM
	// (type 3).
	DM, GroupDM bool
	// ChannelID is the channel, or the thread's own channel id.
	ChannelID string
	// ParentID is a thread's parent channel ("" otherwise).
	ParentID string
	// AuthorID is the message author.
	AuthorID string
}

// sessionKey keys a Discord conversation (openclaw-facts §2.4): a DM by
// its author under dmScope, a group DM as a group, a guild channel as
// "discord:channel:<id>", and a thread by its own channel id with no
// ":thread:" suffix; parent is the thread's parent channel key ("" when
// not a thread), kept for context.
func sessionKey(agentID, accountID string, session core.SessionConfig, c conversation) (key, parent core.SessionKey, kind core.ChatType) {
	switch {
	case c.DM:
		kind = core.ChatDirect
		key = core.BuildPeerSessionKey(core.PeerKeyParams{
			AgentID: agentID, Channel: Channel, AccountID: accountID, Kind: kind,
			PeerID: c.AuthorID, DMScope: session.DMScope, IdentityLinks: session.IdentityLinks,
		})
		return key, "", kind
	case c.GroupDM:
		kind = core.ChatGroup
	default:
		kind = core.ChatChannel
	}
	key = core.BuildPeerSessionKey(core.PeerKeyParams{AgentID: agentID, Channel: Channel, Kind: kind, PeerID: c.ChannelID})
	if c.ParentID != "" {
		parent = core.BuildPeerSessionKey(core.PeerKeyParams{AgentID: agentID, Channel: Channel, Kind: kind, PeerID: c.ParentID})
	}
	return key, parent, kind
}
