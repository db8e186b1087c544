package transcript

import (
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// LimitHistoryTurns keeps the last n user turns: the last n user messages
// and everything after the first of them, as OpenClaw's limitHistoryTurns
// does (seed 004 phase C step 5). What is cut off may leave tool results
// without their call, so run RepairToolPairing after it. n <= 0 means no
// limit.
func LimitHistoryTurns(msgs []core.Message, n int) []core.Message {
	start := limitStart(msgs, n)
	out := make([]core.Message, len(msgs)-start)
	copy(out, msgs[start:])
	return out
}

// limitStart returns the index LimitHistoryTurns keeps from.
func limitStart(msgs []core.Message, n int) int {
	if n <= 0 {
		return 0
	}
	users := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := msgs[i]; m != nil && m.Role() == core.RoleUser {
			users++
			if users == n {
				return i
			}
		}
	}
	return 0
}

// HistoryLimits are the configured history limits in user turns, keyed by
// channel id ("telegram", "slack", ...), mirroring OpenClaw's
// channels.<ch>.dmHistoryLimit, channels.<ch>.dms.<userId>.historyLimit
// and channels.<ch>.historyLimit. A missing entry or 0 means no limit.
type HistoryLimits struct {
	// DM is channels.<ch>.dmHistoryLimit, for direct-message sessions.
	DM map[string]int
	// DMPerUser is channels.<ch>.dms.<userId>.historyLimit: a per-user
	// override of DM. An entry, even 0, wins over DM.
	DMPerUser map[string]map[string]int
	// Group is channels.<ch>.historyLimit, for group and channel sessions.
	Group map[string]int
}

// HistoryLimitForKey returns the history limit for the session key, as
// OpenClaw's getHistoryLimitFromSessionKey does (openclaw-facts §4.3). A
// direct key with a channel (per-channel-peer, per-account-channel-peer,
// and the legacy "<channel>:dm:<peer>") uses DMPerUser for its peer, the
// user id with any ":thread:"/":topic:" suffix removed, then DM; a group or
// channel key uses Group. Keys without a channel (the main key, per-peer
// direct keys, cron and subagent keys) and keys that do not parse have no
// limit. Channel and user ids are matched exactly first, then ignoring
// case, because session keys are lowercased while configured ids (a Slack
// "U123ABC") may not be. Negative limits count as 0, no limit.
func HistoryLimitForKey(key core.SessionKey, limits HistoryLimits) int {
	p, err := core.ParseSessionKey(string(key))
	if err != nil {
		return 0
	}
	kind, channel, user := p.Kind, p.Channel, p.PeerID
	if kind == core.SessionKindOther {
		// OpenClaw still reads the legacy "<channel>:dm:<peer>" shape.
		if ch, rest, ok := strings.Cut(p.Rest, ":dm:"); ok && ch != "" && !strings.Contains(ch, ":") {
			kind, channel, user = core.SessionKindDirect, ch, rest
			if i := strings.Index(user, ":thread:"); i >= 0 {
				user = user[:i]
			}
		}
	}
	if channel == "" {
		return 0
	}
	var limit int
	switch kind {
	case core.SessionKindDirect:
		if i := strings.Index(user, ":topic:"); i >= 0 {
			user = user[:i]
		}
		if users, ok := lookupFold(limits.DMPerUser, channel); ok {
			if v, ok := lookupFold(users, user); ok {
				return max(v, 0)
			}
		}
		limit, _ = lookupFold(limits.DM, channel)
	case core.SessionKindGroup, core.SessionKindChannel:
		limit, _ = lookupFold(limits.Group, channel)
	}
	return max(limit, 0)
}

// lookupFold looks key up exactly, then ignoring case; of several keys
// that differ only in case, the smallest wins, so the answer does not
// depend on map order.
func lookupFold[V any](m map[string]V, key string) (V, bool) {
	if v, ok := m[key]; ok {
		return v, true
	}
	var (
		best  string
		found bool
		v     V
	)
	for k, kv := range m {
		if strings.EqualFold(k, key) && (!found || k < best) {
			best, found, v = k, true, kv
		}
	}
	return v, found
}
