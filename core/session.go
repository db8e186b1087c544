package core

import "context"

// SessionEntry is what Switchboard remembers about one session besides its
// transcript: which transcript file is current, when it was last used, token
// totals, and the settings and flags the next turn needs.
type SessionEntry struct {
	// Key is the session key.
	Key SessionKey `json:"key"`
	// AgentID is the agent the session belongs to.
	AgentID string `json:"agentId"`
	// SessionID names the current transcript file
	// (agents/<agentId>/sessions/<sessionId>.jsonl). /new and /reset start a
	// new one and keep the old file.
	SessionID string `json:"sessionId"`
	// CreatedAt is when SessionID was started, in Unix ms.
	CreatedAt int64 `json:"createdAt"`
	// UpdatedAt is when the session last had a turn, in Unix ms. A
	// heartbeat-only turn does not move it.
	UpdatedAt int64 `json:"updatedAt"`
	// Usage totals every model call of the current SessionID.
	Usage Usage `json:"usage"`
	// ContextTokens is the prompt size of the last model call, the best
	// estimate of how full the context window is.
	ContextTokens int64 `json:"contextTokens,omitempty"`
	// Model is the "<provider>/<model>" that answered last.
	Model string `json:"model,omitempty"`
	// ThinkingLevel is the session's thinking level override, if any.
	ThinkingLevel string `json:"thinkingLevel,omitempty"`
	// Label is a human name for the session.
	Label string `json:"label,omitempty"`
	// LastRoute is where the session's last inbound came from; heartbeat
	// target "last" delivers there.
	LastRoute *Route `json:"lastRoute,omitempty"`
	// AbortedLastRun is set when the user aborted the last turn; the next
	// prompt carries a hint and clears it.
	AbortedLastRun bool `json:"abortedLastRun,omitempty"`
	// CompactionCount counts compactions of the current transcript.
	CompactionCount int `json:"compactionCount,omitempty"`
}

// SessionIndex stores SessionEntry values by key. The store package
// implements it; the agent runner and the gateway read and write through it.
type SessionIndex interface {
	// GetSession returns the entry for key, and false if there is none.
	GetSession(ctx context.Context, key SessionKey) (SessionEntry, bool, error)
	// PutSession creates or replaces the entry for e.Key.
	PutSession(ctx context.Context, e SessionEntry) error
	// ListSessions returns entries, most recently updated first, at most
	// limit of them (0 means no limit).
	ListSessions(ctx context.Context, limit int) ([]SessionEntry, error)
	// DeleteSession removes the entry for key; its transcripts stay on disk.
	DeleteSession(ctx context.Context, key SessionKey) error
}
