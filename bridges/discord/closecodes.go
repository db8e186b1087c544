package discord

import "github.com/switchboardhq/switchboard/bridges"

// closeState maps a gateway close code to the bridge's state: the codes
// that no reconnect can fix are terminal (a bad token is bad-credentials;
// invalid shard, sharding required, invalid API version, invalid or
// disallowed intents are configuration errors, reported the same way so
// the owner acts), everything else is a transient disconnect to resume
// or re-identify after.
func closeState(code int) (state bridges.State, reason string) {
	switch code {
	case 4004:
		return bridges.StateBadCredentials, "Discord refused the bot token (close 4004 Authentication failed); check channels.discord.token"
	case 4010:
		return bridges.StateBadCredentials, "Discord closed the connection: invalid shard (4010); check the shard settings"
	case 4011:
		return bridges.StateBadCredentials, "Discord requires sharding for this bot (4011)"
	case 4012:
		return bridges.StateBadCredentials, "Discord refused the gateway API version (4012)"
	case 4013:
		return bridges.StateBadCredentials, "Discord refused the gateway intents as invalid (4013)"
	case 4014:
		return bridges.StateBadCredentials, "Discord refused privileged intents the bot is not allowed (4014): enable Message Content Intent in the Developer Portal"
	}
	return bridges.StateTransientDisconnect, ""
}
