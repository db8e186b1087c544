package core

import (
	"context"
	"strings"
)

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
	// Origin says where the session's chat is, for naming it to people;
	// nil until its first turn.
	Origin *SessionOrigin `json:"origin,omitempty"`
	// Earlier lists the session's transcripts before /new or /reset
	// started the current one, oldest first, at most MaxEarlier; their
	// files stay on disk either way.
	Earlier []EarlierTranscript `json:"earlier,omitempty"`
}

// MaxEarlier bounds SessionEntry.Earlier; older transcripts are dropped
// from the list (not from disk).
const MaxEarlier = 20

// EarlierTranscript is one of a session's transcripts before a reset.
type EarlierTranscript struct {
	// SessionID names the transcript.
	SessionID string `json:"sessionId"`
	// CreatedAt and EndedAt bound it, in Unix ms.
	CreatedAt int64 `json:"createdAt"`
	EndedAt   int64 `json:"endedAt"`
	// Title is the first words of its first message (untrusted, shown
	// only), when known.
	Title string `json:"title,omitempty"`
}

// Retired returns the Earlier list of the entry that replaces old at now:
// old's list with old's current transcript appended, at most MaxEarlier.
func Retired(old SessionEntry, now int64) []EarlierTranscript {
	if old.SessionID == "" {
		return old.Earlier
	}
	t := EarlierTranscript{SessionID: old.SessionID, CreatedAt: old.CreatedAt, EndedAt: now}
	if old.Origin != nil {
		t.Title = old.Origin.Title
	}
	out := append(append(make([]EarlierTranscript, 0, len(old.Earlier)+1), old.Earlier...), t)
	if len(out) > MaxEarlier {
		out = out[len(out)-MaxEarlier:]
	}
	return out
}

// The kinds of a SessionOrigin.
const (
	OriginDirect  = "direct"
	OriginGroup   = "group"
	OriginChannel = "channel"
	OriginWebchat = "webchat"
	OriginCron    = "cron"
)

// maxOriginRunes bounds each text of a SessionOrigin: they name a session
// in a list, and come from platforms.
const maxOriginRunes = 80

// SessionOrigin describes the chat a session belongs to, so a session
// list can name it the way its people know it. Kind and Channel are
// Switchboard's; the texts come from the platform (a display name, a group
// title) or the user's first message, are untrusted, only ever shown, and
// at most 80 runes each.
type SessionOrigin struct {
	// Kind is one of the Origin* kinds.
	Kind string `json:"kind"`
	// Channel is the bridge (or "webchat") the chat is on.
	Channel string `json:"channel,omitempty"`
	// Peer is the other person's display name in a direct chat.
	Peer string `json:"peer,omitempty"`
	// Subject is the group's title; Room the channel within a space
	// ("#general"); Space the workspace or server.
	Subject string `json:"subject,omitempty"`
	Room    string `json:"room,omitempty"`
	Space   string `json:"space,omitempty"`
	// Thread names the thread or topic, when the platform has a name.
	Thread string `json:"thread,omitempty"`
	// Title is the start of the session's first user message, for chats
	// with no other name (web chat).
	Title string `json:"title,omitempty"`
}

// OriginOf returns the origin of a session from a person's inbound
// message, keeping prev's Title (the first message's words). It returns
// nil for input no person wrote.
func OriginOf(in *Inbound, prev *SessionOrigin) *SessionOrigin {
	if in.EffectiveKind() == InboundCron {
		return &SessionOrigin{Kind: OriginCron}
	}
	if in.EffectiveKind() != InboundUser {
		return prev
	}
	o := &SessionOrigin{Channel: string(in.Route.Channel), Thread: clipRunes(in.ThreadLabel, maxOriginRunes)}
	switch {
	case in.Route.Channel == WebchatChannel:
		o.Kind = OriginWebchat
	case in.ChatType == ChatGroup:
		o.Kind = OriginGroup
	case in.ChatType == ChatChannel:
		o.Kind = OriginChannel
	default:
		o.Kind = OriginDirect
		o.Peer = clipRunes(in.Sender.Name, maxOriginRunes)
	}
	if g := in.Group; g != nil && o.Kind != OriginDirect {
		o.Subject, o.Room, o.Space = clipRunes(g.Subject, maxOriginRunes), clipRunes(g.Channel, maxOriginRunes), clipRunes(g.Space, maxOriginRunes)
	}
	switch body := strings.Join(strings.Fields(in.Body), " "); {
	case prev != nil && prev.Title != "":
		o.Title = prev.Title
	case !strings.HasPrefix(body, "/"): // a command ("/new") names nothing
		o.Title = clipRunes(body, maxOriginRunes)
	}
	return o
}

// clipRunes cuts s to at most n runes, ending a cut one with "…".
func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
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
