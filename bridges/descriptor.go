package bridges

import (
	"context"
	"log/slog"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// Descriptor is what a bridge package registers with the daemon: its
// channel name and label, how to build it from its configuration section,
// and the platform knowledge the rest of Switchboard asks about without
// running it (how a delivery target is written, which chats are direct,
// whether its connection must be unique). The daemon loops over a Registry
// of them; no code outside the bridge's own folder names its platform.
//
// A Descriptor holds no state. Its functions do no network IO and are safe
// for concurrent use; every field but Channel and New may be left zero.
type Descriptor struct {
	// Channel is the channel name: the key of the bridge's section under
	// channels: in the configuration, the Route.Channel of everything it
	// receives and sends, and what its Bridge's Name returns. Lower case.
	Channel string
	// Label is the platform's name as people write it ("Telegram"); empty
	// means Channel.
	Label string
	// New builds the bridge from its configuration section (the bridge
	// package's own type, which implements Section) and what the host
	// provides. It validates and may open files the bridge owns (a
	// device store: the Bridge then implements io.Closer and the host
	// closes it after its last Start returned), but it does no network IO;
	// Start connects.
	New func(section Section, env Env) (Bridge, error)
	// ParseChat reads the chat part of a delivery target as users and the
	// model write it ("-1001234567890:topic:42" on Telegram,
	// "channel:C0123" on Slack) into a route's To and ThreadID. nil takes
	// the chat id as written.
	ParseChat func(chat string) (to, threadID string, err error)
	// IsDirect reports whether a chat (a Route.To as ParseChat made it)
	// is a direct chat with one person. nil means the platform cannot
	// tell from the id alone, and no chat counts as direct.
	IsDirect func(to string) bool
	// TargetHelp shows how targets on this channel are written, for error
	// messages and the message tool's description
	// ("telegram:<chatId>, telegram:<chatId>:topic:<id>").
	TargetHelp string
	// Linkable reports that the bridge's account is linked from the
	// phone (its Bridge implements LoginFlow and Logouter) rather than
	// configured with a token: the CLI offers `switchboard <channel> link`,
	// `logout` and `status`.
	Linkable bool
	// Exclusive reports whether the bridge configured by section holds a
	// connection the platform allows only once per account (long polling,
	// a gateway session, a linked device, a Socket Mode app): it must run
	// in one process at a time. nil means never (webhook-style bridges
	// any number of processes can serve).
	Exclusive func(section Section) bool
}

// DisplayName is Label, or Channel when the label is empty.
func (d Descriptor) DisplayName() string {
	if d.Label != "" {
		return d.Label
	}
	return d.Channel
}

// Section is a bridge's configuration section (channels.<name>): the bridge
// package's own struct, which embeds Common for the keys every channel
// shares and implements these methods. Methods do no IO.
type Section interface {
	// IsEnabled reports whether the bridge is to run.
	IsEnabled() bool
	// Policy returns the access policy the gate applies to the bridge's
	// messages (Common's, unless the platform adds to it).
	Policy() Access
	// RouteOptions returns how replies are threaded and prefixed.
	RouteOptions() RouteOptions
}

// Env is what the host gives a bridge besides its section: the agent and
// session settings its session keys follow, where it may keep files, the
// durable state it may read and write, and a logger.
type Env struct {
	// AgentID is the agent that answers; empty means core.DefaultAgentID.
	AgentID string
	// Session configures session keys (dmScope, identity links).
	Session core.SessionConfig
	// MentionPatterns are messages.groupChat.mentionPatterns: regular
	// expressions that count as addressing the bot in a group.
	MentionPatterns []string
	// StateDir is the daemon's state directory; a bridge keeps files of
	// its own under <StateDir>/<channel>/. Empty means the bridge keeps
	// nothing on disk (tests).
	StateDir string
	// MediaDir is where the bridge saves attachments it receives
	// (<StateDir>/media/<channel>), and the only local folder a reply's
	// media may come from.
	MediaDir string
	// State persists small values across restarts (a poll offset, the
	// newest message seen per channel); nil keeps them in memory only.
	State ChannelState
	// Log receives the bridge's records, already labelled with its
	// channel; nil discards them.
	Log *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Logger returns Log, or a logger that discards everything.
func (e Env) Logger() *slog.Logger {
	if e.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return e.Log
}

// ChannelState keeps small named values for a bridge across restarts (the
// store implements it). Calls do IO, honour ctx, and are safe for
// concurrent use.
type ChannelState interface {
	// ChannelOffset returns the value stored under key for channel ("" if
	// none).
	ChannelOffset(ctx context.Context, channel, key string) (string, error)
	// ChannelOffsets returns every value of channel whose key starts with
	// prefix, by key.
	ChannelOffsets(ctx context.Context, channel, prefix string) (map[string]string, error)
	// SetChannelOffset stores value under key for channel.
	SetChannelOffset(ctx context.Context, channel, key, value string) error
}
