package core_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/core"
)

// channelRow is one example of §2.4 of the OpenClaw facts: a conversation on
// a real channel, the key OpenClaw gives it, and that key taken apart.
type channelRow struct {
	name   string
	params core.PeerKeyParams
	topic  string // passed to WithTopic after building
	thread string // passed to WithThread after that
	want   core.SessionKey
	parsed core.ParsedSessionKey
	parent core.SessionKey // ParentKey of parsed
}

func channelRows() []channelRow {
	const (
		slackUser   = "U0123ABCD"
		discordUser = "123456789012345678"
	)
	rows := []channelRow{
		{
			name:   "telegram DM, dmScope main",
			params: core.PeerKeyParams{AgentID: "main", Channel: "telegram", Kind: core.ChatDirect, PeerID: "123456789"},
			want:   "agent:main:main",
			parsed: core.ParsedSessionKey{AgentID: "main", Rest: "main", Kind: core.SessionKindMain},
		},
		{
			name:   "telegram DM, per-channel-peer",
			params: core.PeerKeyParams{AgentID: "main", Channel: "telegram", Kind: core.ChatDirect, PeerID: "123456789", DMScope: core.DMScopePerChannelPeer},
			want:   "agent:main:telegram:direct:123456789",
			parsed: core.ParsedSessionKey{AgentID: "main", Rest: "telegram:direct:123456789", Kind: core.SessionKindDirect, Channel: "telegram", PeerID: "123456789"},
		},
		{
			name:   "telegram DM topic, per-account-channel-peer",
			params: core.PeerKeyParams{AgentID: "main", Channel: "telegram", AccountID: "personal", Kind: core.ChatDirect, PeerID: "12345", DMScope: core.DMScopePerAccountChannelPeer},
			thread: "12345:99",
			want:   "agent:main:telegram:personal:direct:12345:thread:12345:99",
			parsed: core.ParsedSessionKey{
				AgentID: "main", Rest: "telegram:personal:direct:12345:thread:12345:99", Kind: core.SessionKindDirect,
				Channel: "telegram", AccountID: "personal", PeerID: "12345", ThreadID: "12345:99",
			},
			parent: "agent:main:telegram:personal:direct:12345",
		},
		{
			name:   "telegram DM topic, dmScope main keeps the suffix",
			params: core.PeerKeyParams{AgentID: "main", Channel: "telegram", Kind: core.ChatDirect, PeerID: "12345"},
			thread: "12345:99",
			want:   "agent:main:main:thread:12345:99",
			parsed: core.ParsedSessionKey{AgentID: "main", Rest: "main:thread:12345:99", Kind: core.SessionKindMain, ThreadID: "12345:99"},
			parent: "agent:main:main",
		},
		{
			name:   "telegram supergroup",
			params: core.PeerKeyParams{AgentID: "main", Channel: "telegram", Kind: core.ChatGroup, PeerID: "-1001234567890"},
			want:   "agent:main:telegram:group:-1001234567890",
			parsed: core.ParsedSessionKey{AgentID: "main", Rest: "telegram:group:-1001234567890", Kind: core.SessionKindGroup, Channel: "telegram", PeerID: "-1001234567890"},
		},
		{
			name:   "telegram forum topic",
			params: core.PeerKeyParams{AgentID: "main", Channel: "telegram", Kind: core.ChatGroup, PeerID: "-1001234567890"},
			topic:  "42",
			want:   "agent:main:telegram:group:-1001234567890:topic:42",
			parsed: core.ParsedSessionKey{
				AgentID: "main", Rest: "telegram:group:-1001234567890:topic:42", Kind: core.SessionKindGroup,
				Channel: "telegram", PeerID: "-1001234567890", TopicID: "42",
			},
		},
		{
			name:   "telegram forum topic as OpenClaw's peer id",
			params: core.PeerKeyParams{AgentID: "main", Channel: "telegram", Kind: core.ChatGroup, PeerID: "-1001234567890:topic:42"},
			want:   "agent:main:telegram:group:-1001234567890:topic:42",
			parsed: core.ParsedSessionKey{
				AgentID: "main", Rest: "telegram:group:-1001234567890:topic:42", Kind: core.SessionKindGroup,
				Channel: "telegram", PeerID: "-1001234567890", TopicID: "42",
			},
		},
		{
			name:   "slack group DM (mpim)",
			params: core.PeerKeyParams{AgentID: "main", Channel: "slack", Kind: core.ChatGroup, PeerID: "G0ABC123"},
			want:   "agent:main:slack:group:g0abc123",
			parsed: core.ParsedSessionKey{AgentID: "main", Rest: "slack:group:g0abc123", Kind: core.SessionKindGroup, Channel: "slack", PeerID: "g0abc123"},
		},
		{
			name:   "slack channel",
			params: core.PeerKeyParams{AgentID: "main", Channel: "slack", Kind: core.ChatChannel, PeerID: "C123"},
			want:   "agent:main:slack:channel:c123",
			parsed: core.ParsedSessionKey{AgentID: "main", Rest: "slack:channel:c123", Kind: core.SessionKindChannel, Channel: "slack", PeerID: "c123"},
		},
		{
			name:   "slack thread reply",
			params: core.PeerKeyParams{AgentID: "main", Channel: "slack", Kind: core.ChatChannel, PeerID: "C123"},
			thread: "1712345678.123456",
			want:   "agent:main:slack:channel:c123:thread:1712345678.123456",
			parsed: core.ParsedSessionKey{
				AgentID: "main", Rest: "slack:channel:c123:thread:1712345678.123456", Kind: core.SessionKindChannel,
				Channel: "slack", PeerID: "c123", ThreadID: "1712345678.123456",
			},
			parent: "agent:main:slack:channel:c123",
		},
		{
			name:   "slack DM auto-threaded under dmScope main",
			params: core.PeerKeyParams{AgentID: "main", Channel: "slack", Kind: core.ChatDirect, PeerID: slackUser},
			thread: "1712345678.123456",
			want:   "agent:main:main:thread:1712345678.123456",
			parsed: core.ParsedSessionKey{AgentID: "main", Rest: "main:thread:1712345678.123456", Kind: core.SessionKindMain, ThreadID: "1712345678.123456"},
			parent: "agent:main:main",
		},
		{
			name:   "discord guild channel",
			params: core.PeerKeyParams{AgentID: "main", Channel: "discord", Kind: core.ChatChannel, PeerID: "123456"},
			want:   "agent:main:discord:channel:123456",
			parsed: core.ParsedSessionKey{AgentID: "main", Rest: "discord:channel:123456", Kind: core.SessionKindChannel, Channel: "discord", PeerID: "123456"},
		},
		{
			name:   "discord group DM",
			params: core.PeerKeyParams{AgentID: "main", Channel: "discord", Kind: core.ChatGroup, PeerID: "555666"},
			want:   "agent:main:discord:group:555666",
			parsed: core.ParsedSessionKey{AgentID: "main", Rest: "discord:group:555666", Kind: core.SessionKindGroup, Channel: "discord", PeerID: "555666"},
		},
		{
			name:   "discord thread keyed by its own channel id",
			params: core.PeerKeyParams{AgentID: "main", Channel: "discord", Kind: core.ChatChannel, PeerID: "thread-1"},
			want:   "agent:main:discord:channel:thread-1",
			parsed: core.ParsedSessionKey{AgentID: "main", Rest: "discord:channel:thread-1", Kind: core.SessionKindChannel, Channel: "discord", PeerID: "thread-1"},
		},
		{
			name:   "discord thread 987654",
			params: core.PeerKeyParams{AgentID: "main", Channel: "discord", Kind: core.ChatChannel, PeerID: "987654"},
			want:   "agent:main:discord:channel:987654",
			parsed: core.ParsedSessionKey{AgentID: "main", Rest: "discord:channel:987654", Kind: core.SessionKindChannel, Channel: "discord", PeerID: "987654"},
		},
		{
			name:   "whatsapp DM, per-channel-peer",
			params: core.PeerKeyParams{AgentID: "main", Channel: "whatsapp", Kind: core.ChatDirect, PeerID: "+15551234567", DMScope: core.DMScopePerChannelPeer},
			want:   "agent:main:whatsapp:direct:+15551234567",
			parsed: core.ParsedSessionKey{AgentID: "main", Rest: "whatsapp:direct:+15551234567", Kind: core.SessionKindDirect, Channel: "whatsapp", PeerID: "+15551234567"},
		},
		{
			name:   "whatsapp group",
			params: core.PeerKeyParams{AgentID: "main", Channel: "whatsapp", Kind: core.ChatGroup, PeerID: "120363403215116621@g.us"},
			want:   "agent:main:whatsapp:group:120363403215116621@g.us",
			parsed: core.ParsedSessionKey{AgentID: "main", Rest: "whatsapp:group:120363403215116621@g.us", Kind: core.SessionKindGroup, Channel: "whatsapp", PeerID: "120363403215116621@g.us"},
		},
	}
	// Slack and Discord DMs follow dmScope.
	for _, dm := range []struct{ channel, user string }{{"slack", slackUser}, {"discord", discordUser}} {
		peer := strings.ToLower(dm.user)
		base := core.PeerKeyParams{AgentID: "main", Channel: dm.channel, AccountID: "Work", Kind: core.ChatDirect, PeerID: dm.user}
		for _, s := range []struct {
			scope  core.DMScope
			want   string
			parsed core.ParsedSessionKey
		}{
			{core.DMScopeMain, "agent:main:main", core.ParsedSessionKey{Rest: "main", Kind: core.SessionKindMain}},
			{core.DMScopePerPeer, "agent:main:direct:" + peer, core.ParsedSessionKey{Kind: core.SessionKindDirect, PeerID: peer}},
			{core.DMScopePerChannelPeer, "agent:main:" + dm.channel + ":direct:" + peer, core.ParsedSessionKey{Kind: core.SessionKindDirect, Channel: dm.channel, PeerID: peer}},
			{core.DMScopePerAccountChannelPeer, "agent:main:" + dm.channel + ":work:direct:" + peer, core.ParsedSessionKey{Kind: core.SessionKindDirect, Channel: dm.channel, AccountID: "work", PeerID: peer}},
		} {
			p := base
			p.DMScope = s.scope
			parsed := s.parsed
			parsed.AgentID = "main"
			parsed.Rest = strings.TrimPrefix(s.want, "agent:main:")
			rows = append(rows, channelRow{
				name:   dm.channel + " DM, dmScope " + string(s.scope),
				params: p,
				want:   core.SessionKey(s.want),
				parsed: parsed,
			})
		}
	}
	return rows
}

func TestChannelExamples(t *testing.T) {
	for _, tc := range channelRows() {
		t.Run(tc.name, func(t *testing.T) {
			got := core.BuildPeerSessionKey(tc.params).WithTopic(tc.topic).WithThread(tc.thread)
			if got != tc.want {
				t.Fatalf("built %q, want %q", got, tc.want)
			}
			p, err := core.ParseSessionKey(string(tc.want))
			if err != nil {
				t.Fatalf("ParseSessionKey(%q): %v", tc.want, err)
			}
			if p != tc.parsed {
				t.Errorf("ParseSessionKey(%q)\n got %+v\nwant %+v", tc.want, p, tc.parsed)
			}
			if p.Key() != tc.want {
				t.Errorf("Key() = %q, want %q", p.Key(), tc.want)
			}
			if p.ParentKey() != tc.parent {
				t.Errorf("ParentKey() = %q, want %q", p.ParentKey(), tc.parent)
			}
			if got := tc.want.AgentID(); got != "main" {
				t.Errorf("AgentID() = %q, want main", got)
			}
		})
	}
}

func TestNormalizeAgentID(t *testing.T) {
	long := strings.Repeat("a", 70)
	for _, tc := range []struct {
		in, want string
		valid    bool
	}{
		{"main", "main", true},
		{"  Ops  ", "ops", true},
		{"Research_Bot-2", "research_bot-2", true},
		{"9lives", "9lives", true},
		{strings.Repeat("x", 64), strings.Repeat("x", 64), true},
		{"", "main", false},
		{"   ", "main", false},
		{"My Agent!", "my-agent", false},
		{"a  b", "a-b", false},
		{"a!?b", "a-b", false},
		{"a-!b", "a--b", false},
		{"--x--", "x", false},
		{"-x", "x", false},
		{"_x", "_x", false},
		{"agent:main", "agent-main", false},
		{"Ünïcode", "n-code", false},
		{"日本", "main", false},
		{"!!!", "main", false},
		{long, strings.Repeat("a", 64), false},
		// Cut after trimming, so a dash can end the result.
		{strings.Repeat("a", 63) + " b", strings.Repeat("a", 63) + "-", false},
	} {
		if got := core.NormalizeAgentID(tc.in); got != tc.want {
			t.Errorf("NormalizeAgentID(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := core.IsValidAgentID(tc.in); got != tc.valid {
			t.Errorf("IsValidAgentID(%q) = %v, want %v", tc.in, got, tc.valid)
		}
	}
}

func TestNormalizeAccountID(t *testing.T) {
	for in, want := range map[string]string{
		"":            "default",
		"  ":          "default",
		"Personal":    "personal",
		"work bot":    "work-bot",
		"::":          "default",
		"_prod":       "_prod",
		"bot@example": "bot-example",
	} {
		if got := core.NormalizeAccountID(in); got != want {
			t.Errorf("NormalizeAccountID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBuildPeerSessionKeyDM(t *testing.T) {
	links := core.IdentityLinks{
		"alice": {"telegram:111", "+15550001111"},
		" Bob ": {"  DISCORD:222  "},
	}
	for _, tc := range []struct {
		name string
		p    core.PeerKeyParams
		want core.SessionKey
	}{
		{"zero scope is main", core.PeerKeyParams{Channel: "telegram", PeerID: "1"}, "agent:main:main"},
		{"main", core.PeerKeyParams{AgentID: "ops", Channel: "telegram", PeerID: "1", DMScope: core.DMScopeMain}, "agent:ops:main"},
		{"per-peer", core.PeerKeyParams{Channel: "telegram", PeerID: " 1 ", DMScope: core.DMScopePerPeer}, "agent:main:direct:1"},
		{"per-channel-peer", core.PeerKeyParams{Channel: " Telegram ", PeerID: "1", DMScope: core.DMScopePerChannelPeer}, "agent:main:telegram:direct:1"},
		{"per-account-channel-peer", core.PeerKeyParams{Channel: "telegram", AccountID: "Bot Two", PeerID: "1", DMScope: core.DMScopePerAccountChannelPeer}, "agent:main:telegram:bot-two:direct:1"},
		{"per-account-channel-peer default account", core.PeerKeyParams{Channel: "telegram", PeerID: "1", DMScope: core.DMScopePerAccountChannelPeer}, "agent:main:telegram:default:direct:1"},
		{"empty channel is unknown", core.PeerKeyParams{PeerID: "1", DMScope: core.DMScopePerChannelPeer}, "agent:main:unknown:direct:1"},
		{"empty peer falls back to main (per-peer)", core.PeerKeyParams{Channel: "telegram", DMScope: core.DMScopePerPeer}, "agent:main:main"},
		{"blank peer falls back to main (per-account)", core.PeerKeyParams{Channel: "telegram", PeerID: "  ", DMScope: core.DMScopePerAccountChannelPeer}, "agent:main:main"},
		{"dm alias", core.PeerKeyParams{Channel: "telegram", Kind: "DM", PeerID: "1", DMScope: core.DMScopePerPeer}, "agent:main:direct:1"},
		{"scope spelled in upper case", core.PeerKeyParams{Channel: "telegram", PeerID: "1", DMScope: "PER-PEER"}, "agent:main:direct:1"},
		{"unknown scope is main", core.PeerKeyParams{Channel: "telegram", PeerID: "1", DMScope: "per-galaxy"}, "agent:main:main"},
		{"agent id normalized", core.PeerKeyParams{AgentID: "My Agent", Channel: "telegram", PeerID: "1", DMScope: core.DMScopePerPeer}, "agent:my-agent:direct:1"},
		{"link by channel-scoped id", core.PeerKeyParams{Channel: "Telegram", PeerID: "111", DMScope: core.DMScopePerChannelPeer, IdentityLinks: links}, "agent:main:telegram:direct:alice"},
		{"link by raw id", core.PeerKeyParams{Channel: "whatsapp", PeerID: "+15550001111", DMScope: core.DMScopePerPeer, IdentityLinks: links}, "agent:main:direct:alice"},
		{"link ids trimmed and case-folded, canonical lowercased", core.PeerKeyParams{Channel: "discord", PeerID: "222", DMScope: core.DMScopePerPeer, IdentityLinks: links}, "agent:main:direct:bob"},
		{"channel-scoped id needs its channel", core.PeerKeyParams{Channel: "discord", PeerID: "111", DMScope: core.DMScopePerPeer, IdentityLinks: links}, "agent:main:direct:111"},
		{"links ignored under main", core.PeerKeyParams{Channel: "telegram", PeerID: "111", DMScope: core.DMScopeMain, IdentityLinks: links}, "agent:main:main"},
		{"unlinked peer kept", core.PeerKeyParams{Channel: "telegram", PeerID: "999", DMScope: core.DMScopePerAccountChannelPeer, IdentityLinks: links}, "agent:main:telegram:default:direct:999"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := core.BuildPeerSessionKey(tc.p); got != tc.want {
				t.Errorf("BuildPeerSessionKey(%+v) = %q, want %q", tc.p, got, tc.want)
			}
		})
	}
}

func TestIdentityLinksResolveIsDeterministic(t *testing.T) {
	links := core.IdentityLinks{"zed": {"+1555"}, "amy": {"+1555"}, "mia": {"+1555"}, "  ": {"+1555"}}
	for range 50 {
		if got, ok := links.Resolve("whatsapp", "+1555"); !ok || got != "amy" {
			t.Fatalf("Resolve = %q, %v; want amy, true", got, ok)
		}
	}
	if _, ok := links.Resolve("whatsapp", ""); ok {
		t.Error("Resolve matched an empty peer")
	}
	if _, ok := core.IdentityLinks(nil).Resolve("whatsapp", "+1555"); ok {
		t.Error("nil links matched")
	}
}

func TestBuildPeerSessionKeyGroups(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    core.PeerKeyParams
		want core.SessionKey
	}{
		{"group", core.PeerKeyParams{AgentID: "ops", Channel: "telegram", Kind: core.ChatGroup, PeerID: "-100"}, "agent:ops:telegram:group:-100"},
		{"channel lowercased", core.PeerKeyParams{Channel: "Slack", Kind: core.ChatChannel, PeerID: "C0ABC"}, "agent:main:slack:channel:c0abc"},
		{"dmScope does not apply", core.PeerKeyParams{Channel: "slack", Kind: core.ChatChannel, PeerID: "C1", DMScope: core.DMScopeMain}, "agent:main:slack:channel:c1"},
		{"empty channel", core.PeerKeyParams{Kind: core.ChatGroup, PeerID: "g"}, "agent:main:unknown:group:g"},
		{"empty peer", core.PeerKeyParams{Channel: "discord", Kind: core.ChatChannel, PeerID: " "}, "agent:main:discord:channel:unknown"},
		{"kind case-insensitive", core.PeerKeyParams{Channel: "discord", Kind: " Group ", PeerID: "1"}, "agent:main:discord:group:1"},
		{"unknown kind kept, lowercased", core.PeerKeyParams{Channel: "discord", Kind: "Forum", PeerID: "1"}, "agent:main:discord:forum:1"},
		{"identity links ignored", core.PeerKeyParams{Channel: "slack", Kind: core.ChatGroup, PeerID: "g1", DMScope: core.DMScopePerPeer, IdentityLinks: core.IdentityLinks{"x": {"g1"}}}, "agent:main:slack:group:g1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := core.BuildPeerSessionKey(tc.p); got != tc.want {
				t.Errorf("BuildPeerSessionKey(%+v) = %q, want %q", tc.p, got, tc.want)
			}
		})
	}
}

func TestWithThreadAndTopic(t *testing.T) {
	const base core.SessionKey = "agent:main:slack:channel:c1"
	for _, tc := range []struct {
		name string
		got  core.SessionKey
		want core.SessionKey
	}{
		{"thread lowercased and trimmed", base.WithThread("  ABC.Def "), base + ":thread:abc.def"},
		{"empty thread", base.WithThread(""), base},
		{"blank thread", base.WithThread("   "), base},
		{"topic", core.SessionKey("agent:main:telegram:group:-100").WithTopic("7"), "agent:main:telegram:group:-100:topic:7"},
		{"empty topic", base.WithTopic(""), base},
		{"topic then thread", core.SessionKey("agent:main:telegram:group:-100").WithTopic("7").WithThread("9"), "agent:main:telegram:group:-100:topic:7:thread:9"},
		{"base normalized", core.SessionKey(" Agent:Main::X ").WithThread("T"), "agent:main:x:thread:t"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}

func TestSpecialKeys(t *testing.T) {
	for _, tc := range []struct {
		name   string
		key    core.SessionKey
		want   core.SessionKey
		parsed core.ParsedSessionKey
	}{
		{
			name:   "main",
			key:    core.MainSessionKey(" OPS "),
			want:   "agent:ops:main",
			parsed: core.ParsedSessionKey{AgentID: "ops", Rest: "main", Kind: core.SessionKindMain},
		},
		{
			name:   "main of empty agent",
			key:    core.MainSessionKey(""),
			want:   "agent:main:main",
			parsed: core.ParsedSessionKey{AgentID: "main", Rest: "main", Kind: core.SessionKindMain},
		},
		{
			name:   "cron",
			key:    core.CronSessionKey("main", "Daily-Digest"),
			want:   "agent:main:cron:daily-digest",
			parsed: core.ParsedSessionKey{AgentID: "main", Rest: "cron:daily-digest", Kind: core.SessionKindCron, CronJobID: "daily-digest"},
		},
		{
			name: "cron run",
			key:  core.CronRunSessionKey("ops", "job1", "9F1C"),
			want: "agent:ops:cron:job1:run:9f1c",
			parsed: core.ParsedSessionKey{
				AgentID: "ops", Rest: "cron:job1:run:9f1c", Kind: core.SessionKindCronRun, CronJobID: "job1", CronRunID: "9f1c",
			},
		},
		{
			name:   "cron with empty job",
			key:    core.CronSessionKey("main", " "),
			want:   "agent:main:cron:unknown",
			parsed: core.ParsedSessionKey{AgentID: "main", Rest: "cron:unknown", Kind: core.SessionKindCron, CronJobID: "unknown"},
		},
		{
			name:   "subagent of main session",
			key:    core.SubagentSessionKey("agent:ops:telegram:group:-100", "C1"),
			want:   "agent:ops:subagent:c1",
			parsed: core.ParsedSessionKey{AgentID: "ops", Rest: "subagent:c1", Kind: core.SessionKindSubagent, SubagentDepth: 1},
		},
		{
			name:   "subagent of subagent",
			key:    core.SubagentSessionKey("agent:ops:subagent:c1", "c2"),
			want:   "agent:ops:subagent:c1:subagent:c2",
			parsed: core.ParsedSessionKey{AgentID: "ops", Rest: "subagent:c1:subagent:c2", Kind: core.SessionKindSubagent, SubagentDepth: 2},
		},
		{
			name:   "depth three",
			key:    core.SubagentSessionKey(core.SubagentSessionKey(core.SubagentSessionKey("agent:main:main", "a"), "b"), "c"),
			want:   "agent:main:subagent:a:subagent:b:subagent:c",
			parsed: core.ParsedSessionKey{AgentID: "main", Rest: "subagent:a:subagent:b:subagent:c", Kind: core.SessionKindSubagent, SubagentDepth: 3},
		},
		{
			name:   "subagent of a non-agent key",
			key:    core.SubagentSessionKey("global", ""),
			want:   "agent:main:subagent:unknown",
			parsed: core.ParsedSessionKey{AgentID: "main", Rest: "subagent:unknown", Kind: core.SessionKindSubagent, SubagentDepth: 1},
		},
		{
			name:   "global",
			key:    core.GlobalSessionKey,
			want:   "global",
			parsed: core.ParsedSessionKey{Kind: core.SessionKindGlobal},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.key != tc.want {
				t.Fatalf("built %q, want %q", tc.key, tc.want)
			}
			p, err := core.ParseSessionKey(string(tc.key))
			if err != nil {
				t.Fatal(err)
			}
			if p != tc.parsed {
				t.Errorf("ParseSessionKey(%q)\n got %+v\nwant %+v", tc.key, p, tc.parsed)
			}
			if p.Key() != tc.want {
				t.Errorf("Key() = %q, want %q", p.Key(), tc.want)
			}
		})
	}
}

func TestParseSessionKey(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want core.ParsedSessionKey
	}{
		{" Agent:MAIN:Telegram:Group:-100 ", core.ParsedSessionKey{AgentID: "main", Rest: "telegram:group:-100", Kind: core.SessionKindGroup, Channel: "telegram", PeerID: "-100"}},
		{"agent:main::telegram::direct:1:", core.ParsedSessionKey{AgentID: "main", Rest: "telegram:direct:1", Kind: core.SessionKindDirect, Channel: "telegram", PeerID: "1"}},
		{"GLOBAL", core.ParsedSessionKey{Kind: core.SessionKindGlobal}},
		{":global:", core.ParsedSessionKey{Kind: core.SessionKindGlobal}},
		{"agent:main:global", core.ParsedSessionKey{AgentID: "main", Rest: "global", Kind: core.SessionKindOther}},
		{"agent:main:direct:1", core.ParsedSessionKey{AgentID: "main", Rest: "direct:1", Kind: core.SessionKindDirect, PeerID: "1"}},
		// A peer may hold colons (Matrix room ids).
		{"agent:main:matrix:channel:!room:example.org", core.ParsedSessionKey{AgentID: "main", Rest: "matrix:channel:!room:example.org", Kind: core.SessionKindChannel, Channel: "matrix", PeerID: "!room:example.org"}},
		{"agent:main:direct:a:b", core.ParsedSessionKey{AgentID: "main", Rest: "direct:a:b", Kind: core.SessionKindDirect, PeerID: "a:b"}},
		// Parts named like the vocabulary still parse back to themselves.
		{"agent:main:direct:direct:x", core.ParsedSessionKey{AgentID: "main", Rest: "direct:direct:x", Kind: core.SessionKindDirect, Channel: "direct", PeerID: "x"}},
		{"agent:main:direct:group:x", core.ParsedSessionKey{AgentID: "main", Rest: "direct:group:x", Kind: core.SessionKindGroup, Channel: "direct", PeerID: "x"}},
		{"agent:main:cron:group:x", core.ParsedSessionKey{AgentID: "main", Rest: "cron:group:x", Kind: core.SessionKindGroup, Channel: "cron", PeerID: "x"}},
		{"agent:main:telegram:thread:direct:x", core.ParsedSessionKey{AgentID: "main", Rest: "telegram:thread:direct:x", Kind: core.SessionKindDirect, Channel: "telegram", AccountID: "thread", PeerID: "x"}},
		{"agent:main:telegram:thread:direct:x:thread:y", core.ParsedSessionKey{AgentID: "main", Rest: "telegram:thread:direct:x:thread:y", Kind: core.SessionKindDirect, Channel: "telegram", AccountID: "thread", PeerID: "x", ThreadID: "y"}},
		// The thread suffix is split at the last marker.
		{"agent:main:slack:channel:c1:thread:a:thread:b", core.ParsedSessionKey{AgentID: "main", Rest: "slack:channel:c1:thread:a:thread:b", Kind: core.SessionKindChannel, Channel: "slack", PeerID: "c1:thread:a", ThreadID: "b"}},
		{"agent:main:cron:j:thread:t", core.ParsedSessionKey{AgentID: "main", Rest: "cron:j:thread:t", Kind: core.SessionKindCron, CronJobID: "j", ThreadID: "t"}},
		{"agent:main:subagent:x:thread:t", core.ParsedSessionKey{AgentID: "main", Rest: "subagent:x:thread:t", Kind: core.SessionKindSubagent, ThreadID: "t", SubagentDepth: 1}},
		{"agent:main:subagent:thread:t", core.ParsedSessionKey{AgentID: "main", Rest: "subagent:thread:t", Kind: core.SessionKindSubagent, SubagentDepth: 1}},
		// Other keys keep Rest verbatim, thread suffix reported.
		{"agent:main:dashboard:abc", core.ParsedSessionKey{AgentID: "main", Rest: "dashboard:abc", Kind: core.SessionKindOther}},
		{"agent:main:acp:abc:thread:7", core.ParsedSessionKey{AgentID: "main", Rest: "acp:abc:thread:7", Kind: core.SessionKindOther, ThreadID: "7"}},
		{"agent:main:x", core.ParsedSessionKey{AgentID: "main", Rest: "x", Kind: core.SessionKindOther}},
		{"agent:main:subagent", core.ParsedSessionKey{AgentID: "main", Rest: "subagent", Kind: core.SessionKindOther}},
		{"agent:main:cron", core.ParsedSessionKey{AgentID: "main", Rest: "cron", Kind: core.SessionKindOther}},
		{"agent:main:cron:j:run:r:x", core.ParsedSessionKey{AgentID: "main", Rest: "cron:j:run:r:x", Kind: core.SessionKindOther}},
		{"agent:main:cron:j:other", core.ParsedSessionKey{AgentID: "main", Rest: "cron:j:other", Kind: core.SessionKindOther}},
		{"agent:main:main:extra", core.ParsedSessionKey{AgentID: "main", Rest: "main:extra", Kind: core.SessionKindOther}},
		{"agent:main:direct", core.ParsedSessionKey{AgentID: "main", Rest: "direct", Kind: core.SessionKindOther}},
		{"agent:main:thread:x", core.ParsedSessionKey{AgentID: "main", Rest: "thread:x", Kind: core.SessionKindOther}},
		// Depth counts ":subagent:" anywhere, as getSubagentDepth does.
		{"agent:main:foo:subagent:x", core.ParsedSessionKey{AgentID: "main", Rest: "foo:subagent:x", Kind: core.SessionKindOther, SubagentDepth: 1}},
		// The agent id is kept as written; SessionKey.AgentID normalizes it.
		{"agent:My Agent:main", core.ParsedSessionKey{AgentID: "my agent", Rest: "main", Kind: core.SessionKindMain}},
		// Dropping a segment can expose white space, which is trimmed too.
		{"agent:main:x: :", core.ParsedSessionKey{AgentID: "main", Rest: "x", Kind: core.SessionKindOther}},
	} {
		p, err := core.ParseSessionKey(tc.in)
		if err != nil {
			t.Errorf("ParseSessionKey(%q): %v", tc.in, err)
			continue
		}
		if p != tc.want {
			t.Errorf("ParseSessionKey(%q)\n got %+v\nwant %+v", tc.in, p, tc.want)
		}
		if again, err := core.ParseSessionKey(string(p.Key())); err != nil || again != p {
			t.Errorf("ParseSessionKey(%q.Key() = %q) = %+v, %v; want %+v", tc.in, p.Key(), again, err, p)
		}
	}
}

func TestParseSessionKeyMalformed(t *testing.T) {
	for _, tc := range []struct{ in, reason string }{
		{"", "empty"},
		{"   ", "empty"},
		{":::", "empty"},
		{"agent", "agent id is missing"},
		{"agent:", "agent id is missing"},
		{"agent:main", "nothing follows"},
		{"agent::main", "nothing follows"},
		{"agent:main:", "nothing follows"},
		{"agent:main: ", "nothing follows"},
		{"agent: :main", "agent id is missing"},
		{"foo:bar", `does not start with "agent:"`},
		{"main", `does not start with "agent:"`},
		{"agents:main:main", `does not start with "agent:"`},
		{"global:x", `does not start with "agent:"`},
		{"subagent:x", `does not start with "agent:"`},
		{strings.Repeat("z", 300), `does not start with "agent:"`},
		{strings.Repeat("é", 150), `does not start with "agent:"`},
	} {
		_, err := core.ParseSessionKey(tc.in)
		if !errors.Is(err, core.ErrInvalidSessionKey) {
			t.Errorf("ParseSessionKey(%q) error = %v, want ErrInvalidSessionKey", tc.in, err)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, tc.reason) || !strings.Contains(msg, "agent:<agentId>:<rest>") {
			t.Errorf("ParseSessionKey(%q) error %q lacks %q or the expected form", tc.in, msg, tc.reason)
		}
		if len(msg) > 200 || !utf8.ValidString(msg) {
			t.Errorf("ParseSessionKey(%q) error %q: the input should be truncated at a character boundary", tc.in, msg)
		}
	}
}

func TestParsedSessionKeyZero(t *testing.T) {
	var p core.ParsedSessionKey
	if p.Key() != "" || p.ParentKey() != "" {
		t.Errorf("zero value: Key() = %q, ParentKey() = %q; want empty", p.Key(), p.ParentKey())
	}
}

func TestSessionKeyAgentID(t *testing.T) {
	for key, want := range map[core.SessionKey]string{
		"agent:ops:main":          "ops",
		"Agent:OPS:telegram:x":    "ops",
		"agent:my agent:main":     "my-agent",
		"global":                  "main",
		"agent:main":              "main",
		"something-else":          "main",
		"":                        "main",
		"agent:research:subagent": "research",
	} {
		if got := key.AgentID(); got != want {
			t.Errorf("SessionKey(%q).AgentID() = %q, want %q", key, got, want)
		}
	}
}

func TestResolveRequestSessionKey(t *testing.T) {
	for _, tc := range []struct {
		agent, raw string
		want       core.SessionKey
	}{
		{"ops", "", "agent:ops:main"},
		{"ops", "  ", "agent:ops:main"},
		{"ops", "MAIN", "agent:ops:main"},
		{"Ops Team", "main", "agent:ops-team:main"},
		{"ops", "agent:research:Telegram:direct:1", "agent:research:telegram:direct:1"},
		{"ops", " Agent:Main::X: ", "agent:main:x"},
		{"ops", "agent:main", "agent:main"},
		{"ops", "Agent:", "agent:"},
		{"ops", "agent", "agent:ops:agent"},
		{"ops", "Dashboard:Tab1", "agent:ops:dashboard:tab1"},
		{"ops", "global", "agent:ops:global"},
		{"", "my-session", "agent:main:my-session"},
	} {
		if got := core.ResolveRequestSessionKey(tc.agent, tc.raw); got != tc.want {
			t.Errorf("ResolveRequestSessionKey(%q, %q) = %q, want %q", tc.agent, tc.raw, got, tc.want)
		}
	}
}

func TestGroupHistoryKey(t *testing.T) {
	for _, tc := range []struct {
		channel, account string
		kind             core.ChatType
		peer, want       string
	}{
		{"telegram", "", core.ChatGroup, "-100", "telegram:default:group:-100"},
		{" Slack ", "Work", core.ChatChannel, "C1", "slack:work:channel:c1"},
		{"", "", core.ChatGroup, "", "unknown:default:group:unknown"},
	} {
		if got := core.GroupHistoryKey(tc.channel, tc.account, tc.kind, tc.peer); got != tc.want {
			t.Errorf("GroupHistoryKey(%q, %q, %q, %q) = %q, want %q", tc.channel, tc.account, tc.kind, tc.peer, got, tc.want)
		}
	}
}

func TestParseChatType(t *testing.T) {
	for in, want := range map[string]core.ChatType{
		"direct": core.ChatDirect, " DM ": core.ChatDirect, "Group": core.ChatGroup, "channel": core.ChatChannel,
	} {
		got, err := core.ParseChatType(in)
		if err != nil || got != want {
			t.Errorf("ParseChatType(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "thread", "dms"} {
		_, err := core.ParseChatType(in)
		if err == nil {
			t.Errorf("ParseChatType(%q) succeeded", in)
			continue
		}
		for _, part := range []string{"%q", "direct", "dm", "group", "channel"} {
			if part == "%q" {
				part = `"` + in + `"`
			}
			if !strings.Contains(err.Error(), part) {
				t.Errorf("ParseChatType(%q) error %q does not mention %s", in, err, part)
			}
		}
	}
	if got := core.ChatType("").EnumValues(); strings.Join(got, ",") != "direct,group,channel,dm" {
		t.Errorf("ChatType.EnumValues() = %v", got)
	}
	var v struct{ Kind core.ChatType }
	if err := json.Unmarshal([]byte(`{"Kind":"DM"}`), &v); err != nil || v.Kind != core.ChatDirect {
		t.Errorf("unmarshal DM = %q, %v", v.Kind, err)
	}
	if err := json.Unmarshal([]byte(`{"Kind":"room"}`), &v); err == nil {
		t.Error("unmarshal room succeeded")
	}
}

func TestSessionConfigJSON(t *testing.T) {
	var c core.SessionConfig
	err := json.Unmarshal([]byte(`{"dmScope":"Per-Channel-Peer","scope":"GLOBAL","identityLinks":{"alice":["telegram:1"]}}`), &c)
	if err != nil {
		t.Fatal(err)
	}
	if c.DMScope != core.DMScopePerChannelPeer || c.Scope != core.SessionScopeGlobal || c.IdentityLinks["alice"][0] != "telegram:1" {
		t.Errorf("decoded %+v", c)
	}
	for _, bad := range []string{`{"dmScope":"per-user"}`, `{"scope":"per-peer"}`} {
		err := json.Unmarshal([]byte(bad), &c)
		if err == nil || !strings.Contains(err.Error(), "is not one of") {
			t.Errorf("unmarshal %s: error %v, want a list of allowed values", bad, err)
		}
	}
	if got := (core.DMScope("")).EnumValues(); strings.Join(got, ",") != "main,per-peer,per-channel-peer,per-account-channel-peer" {
		t.Errorf("DMScope.EnumValues() = %v", got)
	}
	if got := (core.SessionScope("")).EnumValues(); strings.Join(got, ",") != "per-sender,global" {
		t.Errorf("SessionScope.EnumValues() = %v", got)
	}
	var s core.DMScope = core.DMScopePerPeer
	if err := s.UnmarshalText([]byte(" ")); err != nil || s != "" {
		t.Errorf("UnmarshalText(blank) = %q, %v; want the zero value", s, err)
	}
	d := core.DefaultSessionConfig()
	if d.DMScope != core.DMScopeMain || d.Scope != core.SessionScopePerSender || d.IdentityLinks != nil {
		t.Errorf("DefaultSessionConfig() = %+v", d)
	}
	out, err := json.Marshal(core.SessionConfig{})
	if err != nil || string(out) != "{}" {
		t.Errorf("zero config marshals to %s, %v", out, err)
	}
}

func TestSessionConfigValidate(t *testing.T) {
	if err := core.DefaultSessionConfig().Validate(); err != nil {
		t.Errorf("default config: %v", err)
	}
	if err := (core.SessionConfig{}).Validate(); err != nil {
		t.Errorf("zero config: %v", err)
	}
	c := core.SessionConfig{
		DMScope: "per-user",
		Scope:   "everyone",
		IdentityLinks: core.IdentityLinks{
			"alice": {"telegram:1", " "},
			"bob":   {"TELEGRAM:1"},
			" ":     {"x"},
		},
	}
	err := c.Validate()
	if err == nil {
		t.Fatal("Validate accepted a broken config")
	}
	for _, want := range []string{
		`dmScope: "per-user" is not one of`,
		`scope: "everyone" is not one of`,
		`identityLinks.alice[1]: blank id`,
		`identityLinks.bob[0]: "TELEGRAM:1" is also linked to "alice"`,
		`canonical name is blank`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate error lacks %q:\n%v", want, err)
		}
	}
}

// TestLowercaseIsStable checks what the normal form relies on: lowercasing a
// rune twice changes nothing, and neither makes nor removes white space, so
// lowercasing and trimming commute and normalizing twice changes nothing.
func TestLowercaseIsStable(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		l := unicode.ToLower(r)
		if unicode.ToLower(l) != l {
			t.Errorf("ToLower(%U) = %U is not stable", r, l)
		}
		if unicode.IsSpace(l) != unicode.IsSpace(r) {
			t.Errorf("ToLower(%U) = %U changes white space", r, l)
		}
	}
}

func BenchmarkParseSessionKey(b *testing.B) {
	keys := []string{
		"agent:main:main",
		"agent:main:telegram:personal:direct:12345:thread:12345:99",
		"agent:main:telegram:group:-1001234567890:topic:42",
		"agent:main:slack:channel:c123:thread:1712345678.123456",
		"Agent:Main:Discord:Channel:123456",
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := core.ParseSessionKey(keys[i%len(keys)]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBuildPeerSessionKey(b *testing.B) {
	params := []core.PeerKeyParams{
		{AgentID: "main", Channel: "telegram", AccountID: "personal", Kind: core.ChatDirect, PeerID: "12345", DMScope: core.DMScopePerAccountChannelPeer},
		{AgentID: "main", Channel: "slack", Kind: core.ChatChannel, PeerID: "C123"},
		{AgentID: "main", Channel: "whatsapp", Kind: core.ChatDirect, PeerID: "+15551234567", DMScope: core.DMScopePerPeer,
			IdentityLinks: core.IdentityLinks{"alice": {"telegram:1", "+15551234567"}, "bob": {"discord:2"}}},
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if core.BuildPeerSessionKey(params[i%len(params)]) == "" {
			b.Fatal("empty key")
		}
	}
}
