package core

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// SessionKey names one conversation bucket: the transcript, queue and
// settings an agent keeps for it. Keys have the form "agent:<agentId>:<rest>"
// (for example "agent:main:telegram:group:-1001234567890"), or are the literal
// GlobalSessionKey when session.scope is global. They are compatible with
// OpenClaw's, so an OpenClaw session store can be read as is.
//
// Keys are compared as strings, so they are kept in one normal form:
// trimmed, lowercase, no empty ":" segments. Every builder in this package
// returns that form, the same string ParseSessionKey(k).Key() returns; the
// one exception is ResolveRequestSessionKey given a malformed "agent:" key.
type SessionKey string

// String returns the key as text.
func (k SessionKey) String() string { return string(k) }

const (
	// DefaultAgentID is the agent that handles a message when no binding
	// picks another, and the id an empty or unusable agent id normalizes to.
	DefaultAgentID = "main"
	// DefaultAccountID is the account id an empty or unusable channel account
	// id normalizes to.
	DefaultAccountID = "default"
	// MainKey is the last segment of an agent's main session key. OpenClaw's
	// session.mainKey setting is legacy: the runtime always uses "main".
	MainKey = "main"
	// GlobalSessionKey is the one key every conversation shares when
	// session.scope is global.
	GlobalSessionKey SessionKey = "global"
	// MaxSessionKeyLength is the longest session key, in characters, a
	// client may pass to the gateway's chat.send.
	MaxSessionKeyLength = 512
)

// Session-key vocabulary. The segment names are OpenClaw's.
const (
	keyPrefix      = "agent"
	segDirect      = "direct"
	segCron        = "cron"
	segRun         = "run"
	segSubagent    = "subagent"
	threadMarker   = ":thread:"
	topicMarker    = ":topic:"
	subagentMarker = ":subagent:"
	unknownSegment = "unknown"
	maxIDLength    = 64
)

// ErrInvalidSessionKey is wrapped by every error ParseSessionKey returns.
var ErrInvalidSessionKey = errors.New("invalid session key")

// IsValidAgentID reports whether s, once trimmed, is already a usable agent
// id: an ASCII letter or digit followed by at most 63 letters, digits, "_"
// or "-", in any case.
func IsValidAgentID(s string) bool {
	return isValidID(strings.TrimSpace(s))
}

// NormalizeAgentID turns s into an agent id that is safe in a session key, a
// path and a shell: a valid id is lowercased; otherwise, after lowercasing,
// each run of other characters becomes "-", leading and trailing dashes are
// removed and the result is cut to 64 bytes. An id that ends up empty is
// DefaultAgentID.
func NormalizeAgentID(s string) string {
	return normalizeID(s, DefaultAgentID)
}

// NormalizeAccountID normalizes a channel account id by the same rule as
// NormalizeAgentID; an id that ends up empty is DefaultAccountID.
func NormalizeAccountID(s string) string {
	return normalizeID(s, DefaultAccountID)
}

func normalizeID(s, fallback string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return fallback
	}
	if isValidID(s) {
		return strings.ToLower(s)
	}
	lower := strings.ToLower(s)
	b := make([]byte, 0, len(lower))
	inRun := false
	for i := 0; i < len(lower); i++ {
		c := lower[i]
		if isIDByte(c) {
			b, inRun = append(b, c), false
			continue
		}
		// A run of other bytes (a multi-byte rune is such a run) becomes
		// one dash.
		if !inRun {
			b, inRun = append(b, '-'), true
		}
	}
	out := strings.Trim(string(b), "-")
	// Cut after trimming, as OpenClaw does; the cut may leave a trailing dash.
	if len(out) > maxIDLength {
		out = out[:maxIDLength]
	}
	if out == "" {
		return fallback
	}
	return out
}

func isValidID(s string) bool {
	if s == "" || len(s) > maxIDLength || !isAlnum(lowerASCII(s[0])) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isIDByte(lowerASCII(s[i])) {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool  { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
func isIDByte(c byte) bool { return isAlnum(c) || c == '_' || c == '-' }

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// DMScope decides how direct messages are grouped into sessions
// (session.dmScope).
type DMScope string

// The DM scopes.
const (
	// DMScopeMain puts every direct message, from anyone on any channel, in
	// the agent's main session. It is the default.
	DMScopeMain DMScope = "main"
	// DMScopePerPeer gives each sender one session across all channels.
	DMScopePerPeer DMScope = "per-peer"
	// DMScopePerChannelPeer gives each sender one session per channel.
	DMScopePerChannelPeer DMScope = "per-channel-peer"
	// DMScopePerAccountChannelPeer gives each sender one session per channel
	// account, for several bots on the same channel.
	DMScopePerAccountChannelPeer DMScope = "per-account-channel-peer"
)

var dmScopes = []DMScope{DMScopeMain, DMScopePerPeer, DMScopePerChannelPeer, DMScopePerAccountChannelPeer}

// EnumValues lists the accepted DM scopes, for the JSON Schema.
func (DMScope) EnumValues() []string { return enumStrings(dmScopes) }

// UnmarshalText accepts a DM scope in any case and stores its canonical
// spelling. Empty text leaves the zero value, which means DMScopeMain.
func (s *DMScope) UnmarshalText(b []byte) error {
	return unmarshalEnum(s, dmScopes, "dmScope", b)
}

// effective returns the scope BuildPeerSessionKey applies: the canonical
// spelling, or DMScopeMain for the zero value and unknown values, which is
// what OpenClaw does with a scope it does not recognise.
func (s DMScope) effective() DMScope {
	for _, v := range dmScopes {
		if s == v || strings.EqualFold(strings.TrimSpace(string(s)), string(v)) {
			return v
		}
	}
	return DMScopeMain
}

// SessionScope decides whether senders get sessions of their own at all
// (session.scope).
type SessionScope string

// The session scopes.
const (
	// SessionScopePerSender keys sessions by agent, chat and (per dmScope)
	// sender. It is the default.
	SessionScopePerSender SessionScope = "per-sender"
	// SessionScopeGlobal puts every conversation in the single session
	// GlobalSessionKey.
	SessionScopeGlobal SessionScope = "global"
)

var sessionScopes = []SessionScope{SessionScopePerSender, SessionScopeGlobal}

// EnumValues lists the accepted session scopes, for the JSON Schema.
func (SessionScope) EnumValues() []string { return enumStrings(sessionScopes) }

// UnmarshalText accepts a session scope in any case and stores its canonical
// spelling. Empty text leaves the zero value, which means
// SessionScopePerSender.
func (s *SessionScope) UnmarshalText(b []byte) error {
	return unmarshalEnum(s, sessionScopes, "scope", b)
}

func enumStrings[T ~string](values []T) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}

func unmarshalEnum[T ~string](dst *T, values []T, name string, b []byte) error {
	text := strings.TrimSpace(string(b))
	if text == "" {
		*dst = ""
		return nil
	}
	for _, v := range values {
		if strings.EqualFold(text, string(v)) {
			*dst = v
			return nil
		}
	}
	return fmt.Errorf("%s %q is not one of %s", name, string(b), strings.Join(enumStrings(values), ", "))
}

// IdentityLinks maps a canonical person name to the ids that person has on
// various channels, either bare ("+15551234567") or channel-scoped
// ("telegram:123456789"). With any DM scope but main, a direct message from
// a linked id is filed under the canonical name, so one person keeps one
// session across channels.
type IdentityLinks map[string][]string

// Resolve returns the canonical name linked to peerID on channel, matching
// each listed id (trimmed, case-insensitively) against the bare peer id and
// against "<channel>:<peerId>". If the id is listed under several names, the
// alphabetically first name wins, so the answer never depends on map order.
func (l IdentityLinks) Resolve(channel, peerID string) (string, bool) {
	peer := strings.ToLower(strings.TrimSpace(peerID))
	if len(l) == 0 || peer == "" {
		return "", false
	}
	ch := strings.ToLower(strings.TrimSpace(channel))
	best, found := "", false
	for name, ids := range l {
		name = strings.TrimSpace(name)
		if name == "" || found && name >= best {
			continue
		}
		for _, id := range ids {
			id = strings.ToLower(strings.TrimSpace(id))
			if id == peer || ch != "" && len(id) == len(ch)+1+len(peer) &&
				id[len(ch)] == ':' && strings.HasPrefix(id, ch) && strings.HasSuffix(id, peer) {
				best, found = name, true
				break
			}
		}
	}
	return best, found
}

// SessionConfig is the `session:` section of the configuration: how
// conversations are grouped into sessions.
type SessionConfig struct {
	// DMScope decides which direct messages share a session. "main" (the
	// default) puts every DM, from anyone on any channel, in the agent's main
	// session; "per-peer" gives each sender one session across channels;
	// "per-channel-peer" one session per sender and channel; and
	// "per-account-channel-peer" one per sender, channel and bot account.
	// Use anything but "main" when more than one person can DM the bot, or
	// they will read each other's conversation.
	DMScope DMScope `json:"dmScope,omitempty"`
	// Scope is "per-sender" (the default): each chat, and each DM sender as
	// dmScope says, has its own session. "global" puts every conversation
	// of every agent in one shared session.
	Scope SessionScope `json:"scope,omitempty"`
	// IdentityLinks merges one person's DMs across channels: each key is a
	// canonical name and its value lists that person's ids, bare
	// ("+15551234567") or prefixed with the channel ("telegram:123456789").
	// A DM from a listed id uses the canonical name as its peer in the
	// session key. Ignored when dmScope is "main". Default: no links.
	IdentityLinks IdentityLinks `json:"identityLinks,omitempty"`
}

// DefaultSessionConfig returns the session settings used when the
// configuration does not say otherwise.
func DefaultSessionConfig() SessionConfig {
	return SessionConfig{DMScope: DMScopeMain, Scope: SessionScopePerSender}
}

// Validate reports unknown scopes, blank identity-link names or ids, and an
// id listed under two names.
func (c SessionConfig) Validate() error {
	var errs []error
	if c.DMScope != "" && !slices.Contains(dmScopes, c.DMScope) {
		errs = append(errs, FieldErrorf("dmScope", fmt.Sprintf("%q is not one of ", string(c.DMScope)), strings.Join(enumStrings(dmScopes), ", ")))
	}
	if c.Scope != "" && !slices.Contains(sessionScopes, c.Scope) {
		errs = append(errs, FieldErrorf("scope", fmt.Sprintf("%q is not one of ", string(c.Scope)), strings.Join(enumStrings(sessionScopes), ", ")))
	}
	owner := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(c.IdentityLinks)) {
		path := "identityLinks." + name
		if strings.TrimSpace(name) == "" {
			errs = append(errs, FieldErrorf(path, "the canonical name is blank; use the person's name, for example \"alice\""))
			continue
		}
		for i, id := range c.IdentityLinks[name] {
			idPath := fmt.Sprintf("%s[%d]", path, i)
			norm := strings.ToLower(strings.TrimSpace(id))
			if norm == "" {
				errs = append(errs, FieldErrorf(idPath, "blank id; write a channel-scoped id like \"telegram:123456789\" or a bare one like \"+15551234567\""))
				continue
			}
			if other, ok := owner[norm]; ok && other != name {
				errs = append(errs, FieldErrorf(idPath, fmt.Sprintf("%q is also linked to %q; list each id under one name only", id, other)))
				continue
			}
			owner[norm] = name
		}
	}
	return errors.Join(errs...)
}

// MainSessionKey returns the agent's main session key, "agent:<agentId>:main".
// The agent id is normalized with NormalizeAgentID.
func MainSessionKey(agentID string) SessionKey {
	return joinKey(NormalizeAgentID(agentID), MainKey)
}

// PeerKeyParams describes the conversation BuildPeerSessionKey keys.
type PeerKeyParams struct {
	// AgentID is the agent routing chose; normalized with NormalizeAgentID.
	AgentID string
	// Channel is the channel id ("telegram", "slack"); empty becomes
	// "unknown".
	Channel string
	// AccountID is the channel account (bot) the message came in on; used
	// only by DMScopePerAccountChannelPeer, normalized with
	// NormalizeAccountID.
	AccountID string
	// Kind is the chat type; the zero value means ChatDirect.
	Kind ChatType
	// PeerID is the sender's id for a direct chat and the chat's id for a
	// group or channel.
	PeerID string
	// DMScope groups direct chats; the zero value means DMScopeMain.
	DMScope DMScope
	// IdentityLinks maps peers to canonical names; used for direct chats
	// when DMScope is not main.
	IdentityLinks IdentityLinks
}

// BuildPeerSessionKey returns the session key for a conversation, as
// OpenClaw's buildAgentPeerSessionKey does. A direct chat is keyed by
// p.DMScope:
//
//	main                      agent:<agentId>:main
//	per-peer                  agent:<agentId>:direct:<peerId>
//	per-channel-peer          agent:<agentId>:<channel>:direct:<peerId>
//	per-account-channel-peer  agent:<agentId>:<channel>:<accountId>:direct:<peerId>
//
// where a peer listed in p.IdentityLinks is replaced by its canonical name,
// and an empty peer falls back to the main key. A group or channel is keyed
// "agent:<agentId>:<channel>:<group|channel>:<peerId>", an empty peer
// becoming "unknown". Every part is lowercased.
func BuildPeerSessionKey(p PeerKeyParams) SessionKey {
	agentID := NormalizeAgentID(p.AgentID)
	channel := orUnknown(strings.ToLower(strings.TrimSpace(p.Channel)))
	kind := p.Kind.keyKind()
	if kind != ChatDirect {
		peer := strings.ToLower(orUnknown(strings.TrimSpace(p.PeerID)))
		return joinKey(agentID, channel, string(kind), peer)
	}
	scope := p.DMScope.effective()
	if scope == DMScopeMain {
		return joinKey(agentID, MainKey)
	}
	peer := strings.TrimSpace(p.PeerID)
	if name, ok := p.IdentityLinks.Resolve(p.Channel, peer); ok {
		peer = name
	}
	peer = strings.ToLower(peer)
	switch {
	case peer == "":
		return joinKey(agentID, MainKey)
	case scope == DMScopePerAccountChannelPeer:
		return joinKey(agentID, channel, NormalizeAccountID(p.AccountID), segDirect, peer)
	case scope == DMScopePerChannelPeer:
		return joinKey(agentID, channel, segDirect, peer)
	default:
		return joinKey(agentID, segDirect, peer)
	}
}

// WithThread returns the key of a thread inside the conversation k, k plus
// ":thread:<threadId>" with the id trimmed and lowercased. An empty id
// returns k unchanged. Use it where OpenClaw's resolveThreadSessionKeys
// appends a suffix (Slack thread replies, Telegram DM topics); Discord
// threads are keyed by their own channel id instead.
func (k SessionKey) WithThread(threadID string) SessionKey {
	return k.withSuffix(threadMarker, threadID)
}

// WithTopic returns the key of a Telegram forum topic inside the group k, k
// plus ":topic:<topicId>". An empty id returns k unchanged; callers decide
// whether a message without a topic belongs to the General topic (id 1).
// Add the topic before any thread suffix; ParseSessionKey reads everything
// after ":thread:" as the thread id.
func (k SessionKey) WithTopic(topicID string) SessionKey {
	return k.withSuffix(topicMarker, topicID)
}

func (k SessionKey) withSuffix(marker, id string) SessionKey {
	id = strings.TrimSpace(id)
	if id == "" {
		return k
	}
	return SessionKey(normalizeKey(normalizeKey(string(k)) + marker + strings.ToLower(id)))
}

// CronSessionKey returns the session key a cron job runs in,
// "agent:<agentId>:cron:<jobId>". An empty job id becomes "unknown".
func CronSessionKey(agentID, jobID string) SessionKey {
	return joinKey(NormalizeAgentID(agentID), segCron, lowerOrUnknown(jobID))
}

// CronRunSessionKey returns the session key of one isolated run of a cron
// job, "agent:<agentId>:cron:<jobId>:run:<runId>"; such sessions are reaped
// after the run. Empty ids become "unknown".
func CronRunSessionKey(agentID, jobID, runID string) SessionKey {
	return joinKey(NormalizeAgentID(agentID), segCron, lowerOrUnknown(jobID), segRun, lowerOrUnknown(runID))
}

// SubagentSessionKey returns the session key of a subagent spawned from
// parent. A subagent of a subagent nests ("<parent>:subagent:<childId>", so
// its depth grows by one); any other parent gives
// "agent:<parent's agentId>:subagent:<childId>". A parent that is not an
// agent key counts as DefaultAgentID's. An empty child id becomes "unknown".
func SubagentSessionKey(parent SessionKey, childID string) SessionKey {
	child := lowerOrUnknown(childID)
	n := normalizeKey(string(parent))
	if agentID, rest, ok := splitAgentKey(n); ok {
		if strings.HasPrefix(rest, segSubagent+":") {
			return SessionKey(normalizeKey(n + subagentMarker + child))
		}
		return joinKey(NormalizeAgentID(agentID), segSubagent, child)
	}
	return joinKey(DefaultAgentID, segSubagent, child)
}

// GroupHistoryKey returns the key of the buffer that remembers recent group
// messages the agent was not asked to answer,
// "<channel>:<accountId>:<group|channel>:<peerId>". It is not a session key:
// the buffer is per bot account even when sessions are not. Empty channel
// and peer ids become "unknown"; the account id is normalized.
func GroupHistoryKey(channel, accountID string, kind ChatType, peerID string) string {
	return strings.Join([]string{
		lowerOrUnknown(channel),
		NormalizeAccountID(accountID),
		string(kind.keyKind()),
		lowerOrUnknown(peerID),
	}, ":")
}

// ResolveRequestSessionKey turns the session key a client sent (for
// example to chat.send) into a store key, as OpenClaw's
// toAgentStoreSessionKey does: empty or "main" is agentID's main session; a
// valid agent key is used in normal form; another string starting with
// "agent:" is only lowercased; anything else is taken as the rest of a key
// of agentID, "agent:<agentId>:<raw>", lowercased.
func ResolveRequestSessionKey(agentID, raw string) SessionKey {
	n := normalizeKey(raw)
	if n == "" || n == MainKey {
		return MainSessionKey(agentID)
	}
	if _, _, ok := splitAgentKey(n); ok {
		return SessionKey(n)
	}
	if lowered := strings.ToLower(strings.TrimSpace(raw)); strings.HasPrefix(lowered, keyPrefix+":") {
		return SessionKey(lowered)
	}
	return joinKey(NormalizeAgentID(agentID), n)
}

// AgentID returns the normalized id of the agent that owns k, or
// DefaultAgentID when k is not an agent key (the global key included), as
// OpenClaw's resolveAgentIdFromSessionKey does.
func (k SessionKey) AgentID() string {
	agentID, _, ok := splitAgentKey(normalizeKey(string(k)))
	if !ok {
		return DefaultAgentID
	}
	return NormalizeAgentID(agentID)
}

// SessionKind classifies a parsed session key.
type SessionKind string

// The session kinds ParseSessionKey tells apart.
const (
	// SessionKindMain is an agent's main session, "agent:<id>:main".
	SessionKindMain SessionKind = "main"
	// SessionKindDirect is a direct chat under a dmScope other than main.
	SessionKindDirect SessionKind = "direct"
	// SessionKindGroup is a group chat.
	SessionKindGroup SessionKind = "group"
	// SessionKindChannel is a channel (room) chat.
	SessionKindChannel SessionKind = "channel"
	// SessionKindCron is a cron job's session, "agent:<id>:cron:<jobId>".
	SessionKindCron SessionKind = "cron"
	// SessionKindCronRun is one isolated cron run,
	// "agent:<id>:cron:<jobId>:run:<runId>".
	SessionKindCronRun SessionKind = "cron-run"
	// SessionKindSubagent is a subagent's session, "agent:<id>:subagent:…".
	SessionKindSubagent SessionKind = "subagent"
	// SessionKindGlobal is GlobalSessionKey.
	SessionKindGlobal SessionKind = "global"
	// SessionKindOther is any other agent key, for example one made by a
	// client through ResolveRequestSessionKey.
	SessionKindOther SessionKind = "other"
)

// ParsedSessionKey is a session key taken apart. Fields that do not apply to
// the key's Kind are empty.
type ParsedSessionKey struct {
	// AgentID is the agent segment as written (lowercased, not normalized;
	// SessionKey.AgentID normalizes it). Empty for the global key.
	AgentID string
	// Rest is everything after "agent:<agentId>:", thread suffix included.
	Rest string
	// Kind classifies Rest.
	Kind SessionKind
	// Channel is the channel id of a direct (per-channel-peer and
	// per-account-channel-peer), group or channel key.
	Channel string
	// AccountID is the account of a per-account-channel-peer direct key.
	AccountID string
	// PeerID is the peer of a direct, group or channel key. For a Telegram
	// forum topic it is the group's chat id; OpenClaw's peer id is then
	// PeerID + ":topic:" + TopicID.
	PeerID string
	// TopicID is the Telegram forum topic of a group or channel key.
	TopicID string
	// ThreadID is what follows the last ":thread:" in Rest, for a key made
	// by WithThread. It may contain colons ("12345:99" for a Telegram DM
	// topic).
	ThreadID string
	// CronJobID is the job of a cron or cron-run key.
	CronJobID string
	// CronRunID is the run of a cron-run key.
	CronRunID string
	// SubagentDepth counts the ":subagent:" segments in the key: 1 for a
	// subagent of a top-level session, 2 for its subagent, and so on.
	SubagentDepth int
}

// ParseSessionKey takes a session key apart. It trims and lowercases s and
// drops empty ":" segments, as OpenClaw does, then requires
// "agent:<agentId>:<rest>" or the literal "global"; any other input gives an
// error wrapping ErrInvalidSessionKey. Rest is classified as
//
//	main                                   SessionKindMain
//	direct:<peer>                          SessionKindDirect (per-peer)
//	<channel>:direct:<peer>                SessionKindDirect (per-channel-peer)
//	<channel>:<account>:direct:<peer>      SessionKindDirect (per-account-channel-peer)
//	<channel>:group:<peer>[:topic:<id>]    SessionKindGroup
//	<channel>:channel:<peer>[:topic:<id>]  SessionKindChannel
//	cron:<job>                             SessionKindCron
//	cron:<job>:run:<run>                   SessionKindCronRun
//	subagent:…                             SessionKindSubagent
//
// each optionally followed by ":thread:<threadId>" (split at the last
// marker, so a thread id may contain colons), and anything else is
// SessionKindOther. The parts always rebuild the normalized input: p.Key()
// equals it and parsing p.Key() gives p again. A key whose parts would not
// rebuild it exactly is SessionKindOther.
func ParseSessionKey(s string) (ParsedSessionKey, error) {
	n := normalizeKey(s)
	if n == string(GlobalSessionKey) {
		return ParsedSessionKey{Kind: SessionKindGlobal}, nil
	}
	agentID, rest, ok := splitAgentKey(n)
	if !ok {
		return ParsedSessionKey{}, invalidKeyError(s, n)
	}
	p := classify(agentID, rest)
	p.SubagentDepth = strings.Count(n, subagentMarker)
	if !p.rebuilds(n) {
		p = otherKey(agentID, rest)
		p.SubagentDepth = strings.Count(n, subagentMarker)
	}
	return p, nil
}

func invalidKeyError(s, n string) error {
	var reason string
	head, tail, _ := strings.Cut(n, ":")
	switch {
	case n == "":
		reason = "it is empty"
	case head != keyPrefix:
		reason = `it does not start with "agent:"`
	case strings.TrimSpace(strings.SplitN(tail, ":", 2)[0]) == "":
		reason = "the agent id is missing"
	default:
		reason = "nothing follows the agent id"
	}
	return fmt.Errorf("%w %q: %s; want agent:<agentId>:<rest> or global", ErrInvalidSessionKey, truncateForError(s), reason)
}

func truncateForError(s string) string {
	const limit = 80
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// classify recognises the structured shapes of rest. A thread suffix is split
// at the last ":thread:" (OpenClaw's parseThreadSessionSuffix) when what
// precedes it has a shape of its own; otherwise the whole rest is tried, so
// an account named "thread" still parses.
func classify(agentID, rest string) ParsedSessionKey {
	if base, thread, ok := splitThread(rest); ok {
		if p, ok := classifyBase(agentID, base); ok {
			p.Rest = rest
			p.ThreadID = thread
			return p
		}
	}
	if p, ok := classifyBase(agentID, rest); ok {
		return p
	}
	return otherKey(agentID, rest)
}

// otherKey is an agent key without structure. It still reports a thread
// suffix, so ParentKey works for it as OpenClaw's
// resolveThreadParentSessionKey does.
func otherKey(agentID, rest string) ParsedSessionKey {
	p := ParsedSessionKey{AgentID: agentID, Rest: rest, Kind: SessionKindOther}
	if _, thread, ok := splitThread(rest); ok {
		p.ThreadID = thread
	}
	return p
}

// splitThread splits rest at its last ":thread:". It refuses a split whose
// parent key would not be in normal form, because white space ends the base
// ("agent:main:x :thread:y" would have parent "agent:main:x ").
func splitThread(rest string) (base, thread string, ok bool) {
	i := strings.LastIndex(rest, threadMarker)
	if i <= 0 {
		return "", "", false
	}
	base = rest[:i]
	if strings.TrimRightFunc(base, unicode.IsSpace) != base {
		return "", "", false
	}
	return base, rest[i+len(threadMarker):], true
}

// classifyBase recognises a rest without thread suffix. The order settles
// ambiguous keys: the subagent prefix and the exact cron shapes first
// (OpenClaw's isSubagentSessionKey and isCronSessionKey look only at the
// prefix), then the longest direct shape, then group and channel, then per-peer direct. With colon-free parts
// every key BuildPeerSessionKey makes parses back to its parts, except two
// that no real channel produces: a channel named "subagent", and channel
// "main" with account "thread", whose "agent:<id>:main:thread:direct:<peer>"
// reads as a thread of the main session.
func classifyBase(agentID, base string) (ParsedSessionKey, bool) {
	p := ParsedSessionKey{AgentID: agentID, Rest: base}
	if base == MainKey {
		p.Kind = SessionKindMain
		return p, true
	}
	s0, r1, ok1 := strings.Cut(base, ":")
	if !ok1 {
		return p, false
	}
	if s0 == segSubagent {
		p.Kind = SessionKindSubagent
		return p, true
	}
	s1, r2, ok2 := strings.Cut(r1, ":")
	if s0 == segCron {
		if !ok2 {
			p.Kind, p.CronJobID = SessionKindCron, r1
			return p, true
		}
		if s2, run, ok3 := strings.Cut(r2, ":"); ok3 && s2 == segRun && !strings.Contains(run, ":") {
			p.Kind, p.CronJobID, p.CronRunID = SessionKindCronRun, s1, run
			return p, true
		}
	}
	if ok2 {
		if s2, r3, ok3 := strings.Cut(r2, ":"); ok3 && s2 == segDirect {
			p.Kind, p.Channel, p.AccountID, p.PeerID = SessionKindDirect, s0, s1, r3
			return p, true
		}
		switch s1 {
		case segDirect:
			p.Kind, p.Channel, p.PeerID = SessionKindDirect, s0, r2
			return p, true
		case string(ChatGroup), string(ChatChannel):
			p.Kind, p.Channel, p.PeerID = SessionKind(s1), s0, r2
			if i := strings.Index(r2, topicMarker); i > 0 {
				p.PeerID, p.TopicID = r2[:i], r2[i+len(topicMarker):]
			}
			return p, true
		}
	}
	if s0 == segDirect {
		p.Kind, p.PeerID = SessionKindDirect, r1
		return p, true
	}
	return p, false
}

// Key rebuilds the session key from p's parts; for a value returned by
// ParseSessionKey it is the normalized input. Subagent and other keys are
// rebuilt from AgentID and Rest. The zero value gives "".
func (p ParsedSessionKey) Key() SessionKey {
	var buf [128]byte
	return SessionKey(p.appendKey(buf[:0]))
}

// ParentKey returns the key of the conversation a thread belongs to, p's key
// without its ":thread:<threadId>" suffix, or "" when p has no thread.
func (p ParsedSessionKey) ParentKey() SessionKey {
	if p.ThreadID == "" {
		return ""
	}
	return SessionKey(strings.TrimSuffix(string(p.Key()), threadMarker+p.ThreadID))
}

// rebuilds reports whether p.Key() == n, without allocating for keys of
// ordinary length.
func (p ParsedSessionKey) rebuilds(n string) bool {
	var buf [128]byte
	return string(p.appendKey(buf[:0])) == n
}

func (p ParsedSessionKey) appendKey(b []byte) []byte {
	if p.Kind == "" {
		return b
	}
	if p.Kind == SessionKindGlobal {
		return append(b, GlobalSessionKey...)
	}
	b = append(b, keyPrefix+":"...)
	b = append(b, p.AgentID...)
	b = append(b, ':')
	switch p.Kind {
	case SessionKindMain:
		b = append(b, MainKey...)
	case SessionKindDirect:
		if p.Channel != "" {
			b = append(append(b, p.Channel...), ':')
			if p.AccountID != "" {
				b = append(append(b, p.AccountID...), ':')
			}
		}
		b = append(append(b, segDirect+":"...), p.PeerID...)
	case SessionKindGroup, SessionKindChannel:
		b = append(append(b, p.Channel...), ':')
		b = append(append(b, p.Kind...), ':')
		b = append(b, p.PeerID...)
		if p.TopicID != "" {
			b = append(append(b, topicMarker...), p.TopicID...)
		}
	case SessionKindCron, SessionKindCronRun:
		b = append(append(b, segCron+":"...), p.CronJobID...)
		if p.Kind == SessionKindCronRun {
			b = append(append(b, ":"+segRun+":"...), p.CronRunID...)
		}
	default:
		return append(b, p.Rest...)
	}
	if p.ThreadID != "" {
		b = append(append(b, threadMarker...), p.ThreadID...)
	}
	return b
}

// splitAgentKey splits a normalized key "agent:<agentId>:<rest>", as
// OpenClaw's parseAgentSessionKey does: the agent id must not be blank and
// rest must not be empty.
func splitAgentKey(n string) (agentID, rest string, ok bool) {
	head, tail, ok := strings.Cut(n, ":")
	if !ok || head != keyPrefix {
		return "", "", false
	}
	agentID, rest, ok = strings.Cut(tail, ":")
	if !ok || rest == "" || strings.TrimSpace(agentID) == "" {
		return "", "", false
	}
	return agentID, rest, true
}

// normalizeKey returns s in normal form: lowercased, trimmed, with empty ":"
// segments dropped. Doing that once is not enough, since dropping a segment
// can expose white space at either end ("agent:main:x: :" becomes
// "agent:main:x"); the stable result is s lowercased, with colons and white
// space trimmed from both ends and each run of colons made one.
func normalizeKey(s string) string {
	s = strings.TrimFunc(strings.ToLower(s), isColonOrSpace)
	if !strings.Contains(s, "::") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == ':' && i > 0 && s[i-1] == ':' {
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}

func isColonOrSpace(r rune) bool { return r == ':' || unicode.IsSpace(r) }

// joinKey builds "agent:<parts joined by ':'>" in normal form. Callers pass
// a normalized agent id first.
func joinKey(parts ...string) SessionKey {
	size := len(keyPrefix)
	for _, p := range parts {
		size += 1 + len(p)
	}
	var b strings.Builder
	b.Grow(size)
	b.WriteString(keyPrefix)
	for _, p := range parts {
		b.WriteByte(':')
		b.WriteString(p)
	}
	return SessionKey(normalizeKey(b.String()))
}

func orUnknown(s string) string {
	if s == "" {
		return unknownSegment
	}
	return s
}

func lowerOrUnknown(s string) string {
	return orUnknown(strings.ToLower(strings.TrimSpace(s)))
}
