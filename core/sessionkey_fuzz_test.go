package core_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// referenceNormalize is the normal form spelled out the slow way: trim,
// lowercase, drop empty ":" segments (OpenClaw's split(":").filter(Boolean)),
// until nothing changes.
func referenceNormalize(s string) string {
	for {
		parts := strings.Split(strings.ToLower(strings.TrimSpace(s)), ":")
		parts = slices.DeleteFunc(parts, func(p string) bool { return p == "" })
		n := strings.Join(parts, ":")
		if n == s {
			return n
		}
		s = n
	}
}

// referenceAccepts is OpenClaw's parseAgentSessionKey acceptance rule on the
// normal form, plus the literal global key.
func referenceAccepts(n string) bool {
	if n == "global" {
		return true
	}
	parts := strings.Split(n, ":")
	return len(parts) >= 3 && parts[0] == "agent" && strings.TrimSpace(parts[1]) != ""
}

func FuzzParseSessionKey(f *testing.F) {
	for _, row := range channelRows() {
		f.Add(string(row.want))
	}
	for _, s := range []string{
		"", "global", " GLOBAL: ", "agent:", "agent:main", "foo:bar", "agent::main", "agent: :main",
		"agent:main:x: :", "agent:main:cron:job:run:r1", "agent:main:subagent:a:subagent:b",
		"agent:main:telegram:thread:direct:x", "agent:main:main:thread:direct:x",
		"agent:main:matrix:channel:!Room:Example.org:thread:$Event",
		"agent:main:telegram:group:-100:topic:1:thread:2", "Agent:Ünï:Ä:direct:İ",
		"agent:main:\xff\xfe:direct:x", "agent:main:x:\u00a0:",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := referenceNormalize(s)
		p, err := core.ParseSessionKey(s)
		if accepts := referenceAccepts(want); (err == nil) != accepts {
			t.Fatalf("ParseSessionKey(%q) error = %v; OpenClaw accepts it: %v", s, err, accepts)
		}
		if err != nil {
			if !errors.Is(err, core.ErrInvalidSessionKey) {
				t.Fatalf("ParseSessionKey(%q) error %v does not wrap ErrInvalidSessionKey", s, err)
			}
			return
		}
		key := p.Key()
		if string(key) != want {
			t.Fatalf("ParseSessionKey(%q).Key() = %q, want the normalized input %q (parsed %+v)", s, key, want, p)
		}
		again, err := core.ParseSessionKey(string(key))
		if err != nil || again != p {
			t.Fatalf("ParseSessionKey(%q) = %+v, %v; want %+v", key, again, err, p)
		}
		if p.Kind == core.SessionKindGlobal {
			return
		}
		if full := "agent:" + p.AgentID + ":" + p.Rest; full != want {
			t.Fatalf("agent:%s:%s != %q", p.AgentID, p.Rest, want)
		}
		if got := strings.Count(want, ":subagent:"); p.SubagentDepth != got {
			t.Fatalf("SubagentDepth = %d, want %d", p.SubagentDepth, got)
		}
		if p.Kind == core.SessionKindSubagent && !strings.HasPrefix(p.Rest, "subagent:") {
			t.Fatalf("subagent kind for rest %q", p.Rest)
		}
		if p.ThreadID != "" {
			parent := p.ParentKey()
			if string(parent)+":thread:"+p.ThreadID != want {
				t.Fatalf("ParentKey() = %q and ThreadID %q do not make %q", parent, p.ThreadID, want)
			}
			if _, err := core.ParseSessionKey(string(parent)); err != nil {
				t.Fatalf("ParentKey() = %q does not parse: %v", parent, err)
			}
		} else if p.ParentKey() != "" {
			t.Fatalf("ParentKey() = %q without a thread", p.ParentKey())
		}
	})
}

var (
	fuzzKinds  = []core.ChatType{core.ChatDirect, core.ChatGroup, core.ChatChannel, "", "DM", "Room"}
	fuzzScopes = []core.DMScope{core.DMScopeMain, core.DMScopePerPeer, core.DMScopePerChannelPeer, core.DMScopePerAccountChannelPeer, ""}
)

const (
	linkNone = iota
	linkRaw
	linkScoped
	linkModes
)

func FuzzBuildSessionKey(f *testing.F) {
	for _, row := range channelRows() {
		p := row.params
		f.Add(p.AgentID, p.Channel, p.AccountID, p.PeerID, row.thread,
			uint8(slices.Index(fuzzKinds, p.Kind)), uint8(slices.Index(fuzzScopes, p.DMScope)), uint8(linkNone), "")
	}
	f.Add("ops", "telegram", "", "111", "", uint8(0), uint8(2), uint8(linkScoped), "Alice")
	f.Add("ops", "whatsapp", "", "+1555", "", uint8(0), uint8(1), uint8(linkRaw), "bob")
	f.Add("main", "main", "thread", "p", "", uint8(0), uint8(3), uint8(linkNone), "")
	f.Add("main", "direct", "group", "direct", "thread", uint8(0), uint8(3), uint8(linkNone), "")
	f.Add("main", "cron", "run", "x", "", uint8(0), uint8(3), uint8(linkNone), "")
	f.Add("", "", "", "", "", uint8(1), uint8(0), uint8(linkNone), "")
	f.Fuzz(func(t *testing.T, agent, channel, account, peer, thread string, kindSel, scopeSel, linkSel uint8, canonical string) {
		p := core.PeerKeyParams{
			AgentID:   agent,
			Channel:   channel,
			AccountID: account,
			Kind:      fuzzKinds[int(kindSel)%len(fuzzKinds)],
			PeerID:    peer,
			DMScope:   fuzzScopes[int(scopeSel)%len(fuzzScopes)],
		}
		switch linkSel % linkModes {
		case linkRaw:
			p.IdentityLinks = core.IdentityLinks{canonical: {strings.TrimSpace(peer)}}
		case linkScoped:
			p.IdentityLinks = core.IdentityLinks{canonical: {strings.TrimSpace(channel) + ":" + strings.TrimSpace(peer)}}
		}
		key := core.BuildPeerSessionKey(p).WithThread(thread)
		parsed, err := core.ParseSessionKey(string(key))
		if err != nil {
			t.Fatalf("BuildPeerSessionKey(%+v) = %q does not parse: %v", p, key, err)
		}
		if parsed.Key() != key {
			t.Fatalf("BuildPeerSessionKey(%+v) = %q is not in normal form (%q)", p, key, parsed.Key())
		}

		want, ok := expectedParse(p, canonical, linkSel%linkModes, thread)
		if !ok {
			return
		}
		if parsed != want {
			t.Fatalf("BuildPeerSessionKey(%+v) = %q parses to\n%+v\nwant\n%+v", p, key, parsed, want)
		}
	})
}

// expectedParse predicts what the built key parses to from the inputs alone.
// It declines (ok false) when a part holds a colon, which may legitimately
// move the boundaries between parts, for an unknown kind, and for the two
// ambiguous keys classifyBase documents: a channel named "subagent" (OpenClaw
// reads it as a subagent key) and channel "main" with account "thread" (read
// as a thread of the main session).
func expectedParse(p core.PeerKeyParams, canonical string, link uint8, thread string) (core.ParsedSessionKey, bool) {
	lower := func(s string) string { return strings.ToLower(strings.TrimSpace(s)) }
	orUnknown := func(s string) string {
		if s == "" {
			return "unknown"
		}
		return s
	}
	want := core.ParsedSessionKey{AgentID: core.NormalizeAgentID(p.AgentID)}
	channel := orUnknown(lower(p.Channel))
	kind := p.Kind
	if kind == "" || strings.EqualFold(string(kind), "dm") {
		kind = core.ChatDirect
	}
	switch kind {
	case core.ChatGroup, core.ChatChannel:
		want.Kind = core.SessionKind(kind)
		want.Channel = channel
		want.PeerID = orUnknown(lower(p.PeerID))
	case core.ChatDirect:
		peer := lower(p.PeerID)
		scope := p.DMScope
		if scope == "" {
			scope = core.DMScopeMain
		}
		if scope != core.DMScopeMain && peer != "" && strings.TrimSpace(canonical) != "" &&
			(link == linkRaw || link == linkScoped && strings.TrimSpace(p.Channel) != "") {
			peer = lower(canonical)
		}
		want.PeerID = peer
		want.Kind = core.SessionKindDirect
		switch {
		case scope == core.DMScopeMain || peer == "":
			want = core.ParsedSessionKey{AgentID: want.AgentID, Kind: core.SessionKindMain}
		case scope == core.DMScopePerChannelPeer:
			want.Channel = channel
		case scope == core.DMScopePerAccountChannelPeer:
			want.Channel = channel
			want.AccountID = core.NormalizeAccountID(p.AccountID)
		}
	default:
		return want, false
	}
	if th := lower(thread); th != "" {
		want.ThreadID = th
	}
	for _, part := range []string{want.Channel, want.AccountID, want.PeerID, want.ThreadID} {
		if strings.Contains(part, ":") {
			return want, false
		}
	}
	if want.Channel == "subagent" || want.Channel == "main" && want.AccountID == "thread" {
		return want, false
	}
	rest := strings.TrimPrefix(string(want.Key()), "agent:"+want.AgentID+":")
	want.Rest = rest
	return want, true
}
