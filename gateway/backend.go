package gateway

import (
	"context"
	"encoding/json"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/core/tools/exectool"
	"github.com/switchboardhq/switchboard/heartbeat"
	"github.com/switchboardhq/switchboard/queue"
	"github.com/switchboardhq/switchboard/store"
)

// Backend is what the gateway's methods act on. The daemon builds the gateway
// first (it observes the dispatcher's runs, so it must exist when the
// dispatcher does) and attaches the backend before Start.
type Backend struct {
	// Store holds sessions and paired devices.
	Store Store
	// Dispatcher runs every turn; chat.send and agent submit to it.
	Dispatcher *queue.Dispatcher
	// Runner owns transcripts and session operations.
	Runner *agent.Runner
	// Deliverer sends the send method's messages to a channel; nil makes
	// send answer UNAVAILABLE.
	Deliverer queue.Deliverer
	// Targets reads send's "<channel>:<chat>" targets; nil reads the
	// chat as written after the first ":".
	Targets core.Targets
	// Config backs config.get, config.schema, config.set and config.patch;
	// nil makes them answer UNAVAILABLE.
	Config ConfigService
	// Channels reports the bridges for channels.status; nil means none run.
	Channels func() []ChannelStatus
	// Logout logs a bridge account out (channels.logout); nil makes it
	// answer UNAVAILABLE.
	Logout func(ctx context.Context, channel, accountID string) error
	// LoginStart begins linking a bridge account interactively
	// (web.login.start): it returns the QR code or pairing code to show,
	// or only a message when there is nothing to link (an account already
	// linked, without Force). It is called from its own goroutine with a
	// context bounded by the request's timeoutMs; the linking it begins
	// outlives that context. nil makes web.login.* answer UNAVAILABLE.
	LoginStart func(ctx context.Context, req LoginRequest) (LoginResult, error)
	// LoginWait waits for the linking LoginStart began (web.login.wait)
	// until it is linked (Connected), a fresh QR code replaces the shown
	// one, or ctx ends (its error is then returned, and the linking goes
	// on for the next call). It is called from its own goroutine.
	LoginWait func(ctx context.Context, req LoginRequest) (LoginResult, error)
	// Heartbeat is the default agent's heartbeat runner (last-heartbeat,
	// set-heartbeats, wake mode now); nil makes those answer UNAVAILABLE.
	Heartbeat *heartbeat.Runner
	// Cron is the cron service (cron.*); nil makes those answer
	// UNAVAILABLE.
	Cron *heartbeat.Cron
	// Approvals holds the pending exec approval requests
	// (exec.approval.*); nil makes those answer UNAVAILABLE.
	Approvals *exectool.Approvals
	// Agents lists the configured agents; empty means the default agent.
	Agents []AgentInfo
	// Models lists the configured models (models.list).
	Models []ModelInfo
	// DefaultModel is the "<provider>/<model>" of the default agent.
	DefaultModel string
	// ContextTokens is the default model's context window, if known.
	ContextTokens int
	// CommandOwnerConfigured reports that the configuration names the
	// bot's owners (commands.ownerAllowFrom), for channels.pairing.list.
	CommandOwnerConfigured bool
}

// Store is the part of the state store the gateway uses.
type Store interface {
	store.Devices
	store.ChannelAccess
	// ListSessions returns up to limit sessions, most recently updated
	// first.
	ListSessions(ctx context.Context, limit int) ([]core.SessionEntry, error)
	// GetSession returns one session's entry.
	GetSession(ctx context.Context, key core.SessionKey) (core.SessionEntry, bool, error)
}

// ConfigService reads and changes the configuration for the config.*
// methods. The daemon implements it (the gateway cannot import the config
// package, which imports the gateway's settings). Results are sent to the
// client as they are; an error that is a *protocol.ErrorShape is sent as
// is, any other as INVALID_REQUEST with its text, so an error must name
// what was wrong and never contain a secret.
type ConfigService interface {
	// Get returns the configuration with secrets redacted, its file path
	// and a hash for optimistic concurrency (baseHash).
	Get(ctx context.Context) (any, error)
	// Schema returns the configuration's JSON Schema.
	Schema(ctx context.Context) (any, error)
	// Set validates raw (a whole YAML or JSON document) and, when the file
	// still has baseHash (empty skips the check), writes it atomically and
	// applies what can change without a restart.
	Set(ctx context.Context, raw, baseHash string) (any, error)
	// Patch applies a JSON merge patch (RFC 7396) to the configuration,
	// then validates, writes and applies it as Set does.
	Patch(ctx context.Context, patch json.RawMessage, baseHash string) (any, error)
}

// AgentInfo describes one agent for agents.list and agent.identity.get.
type AgentInfo struct {
	// ID is the agent id.
	ID string `json:"id"`
	// Name is the agent's display name.
	Name string `json:"name,omitempty"`
	// Emoji is the agent's emoji, if any.
	Emoji string `json:"emoji,omitempty"`
	// Avatar is an avatar URL or path, if any.
	Avatar string `json:"avatar,omitempty"`
}

// ModelInfo describes one model for models.list.
type ModelInfo struct {
	// ID is "<provider>/<model>".
	ID string `json:"id"`
	// Name is the model's display name.
	Name string `json:"name"`
	// Provider is the provider id.
	Provider string `json:"provider"`
	// ContextWindow is the context size in tokens, if known.
	ContextWindow int `json:"contextWindow,omitempty"`
	// Reasoning reports a model that can think.
	Reasoning bool `json:"reasoning,omitempty"`
}

// ChannelStatus is one bridge account for channels.status.
type ChannelStatus struct {
	// Channel is the bridge name ("telegram", …).
	Channel string `json:"channel"`
	// Label is the channel's display name.
	Label string `json:"label,omitempty"`
	// AccountID names the bot account.
	AccountID string `json:"accountId"`
	// State is the bridge's connection state: "starting", "connected",
	// "transient-disconnect", "conflict", "bad-credentials", "logged-out",
	// "failed" or "stopped".
	State string `json:"state"`
	// StateSince is when State was entered, in Unix ms.
	StateSince int64 `json:"stateSince,omitempty"`
	// Configured reports that the account has credentials.
	Configured bool `json:"configured"`
	// Running reports that the bridge is started.
	Running bool `json:"running"`
	// Connected reports a live platform connection.
	Connected bool `json:"connected"`
	// LastError is the last failure, without secrets, in full: the
	// detail behind LastErrorSummary.
	LastError string `json:"lastError,omitempty"`
	// LastErrorSummary says LastError in a few words a person reads
	// ("cannot reach proxy.example:443", "token refused", "rate
	// limited"), naming the host the bridge actually used. A
	// Switchboard member; OpenClaw's clients read lastError.
	LastErrorSummary string `json:"lastErrorSummary,omitempty"`
	// Restarts counts the times the bridge was started again after a
	// failure (OpenClaw's reconnectAttempts).
	Restarts int `json:"reconnectAttempts"`
	// RetryAt is when the bridge next tries to connect, in Unix ms: the
	// next restart, or the bridge's own next attempt after a failure;
	// absent when none is due.
	RetryAt int64 `json:"retryAt,omitempty"`
	// LastInboundAt is the last message received, in Unix ms.
	LastInboundAt int64 `json:"lastInboundAt,omitempty"`
	// LastOutboundAt is the last message sent, in Unix ms.
	LastOutboundAt int64 `json:"lastOutboundAt,omitempty"`
}

// Attach gives the gateway its backend. Call it before Start; calling it
// again replaces the backend for later requests.
func (s *Server) Attach(b Backend) { s.backend.Store(&b) }

func (s *Server) defaultAgentID() string {
	if b := s.backend.Load(); b != nil && len(b.Agents) > 0 {
		return b.Agents[0].ID
	}
	return core.DefaultAgentID
}
