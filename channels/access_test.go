package channels

import (
	"testing"

	"github.com/switchboardhq/switchboard/bridges"

	"github.com/switchboardhq/switchboard/core"
)

func ptr[T any](v T) *T { return &v }

func dm(sender string) bridges.Inbound {
	return bridges.Inbound{Message: &core.Inbound{ChatType: core.ChatDirect, Sender: core.Sender{ID: sender, Username: "ada"}}}
}

func group(id, sender string, mentioned bool) bridges.Inbound {
	return bridges.Inbound{
		Message:          &core.Inbound{ChatType: core.ChatGroup, Sender: core.Sender{ID: sender}, WasMentioned: mentioned},
		GroupID:          id,
		CanDetectMention: true,
	}
}

func TestDecide(t *testing.T) {
	implicit := group("-100", "7", false)
	implicit.ImplicitMention = true
	command := group("-100", "7", false)
	command.IsControlCommand = true
	noDetect := group("-100", "7", false)
	noDetect.CanDetectMention = false

	allGroups := map[string]bridges.GroupRule{"*": {}}
	thread := group("555", "7", false)
	thread.GroupParents = []string{"444", "guild:1"}
	for _, tc := range []struct {
		name     string
		access   bridges.Access
		msg      bridges.Inbound
		approved bool
		want     Verdict
		reason   string
	}{
		{"dm default is pairing", bridges.Access{}, dm("1"), false, Pair, "sender-unknown"},
		{"dm pairing approved", bridges.Access{}, dm("1"), true, Accept, "dm-allowed"},
		{"dm pairing allowFrom", bridges.Access{AllowFrom: []string{"1"}}, dm("1"), false, Accept, "dm-allowed"},
		{"dm allowFrom with channel prefix", bridges.Access{AllowFrom: []string{"telegram:1"}}, dm("1"), false, Accept, "dm-allowed"},
		{"dm allowFrom by @username", bridges.Access{AllowFrom: []string{"@Ada"}}, dm("1"), false, Accept, "dm-allowed"},
		{"dm allowlist unknown ignored", bridges.Access{DMPolicy: bridges.DMAllowlist, AllowFrom: []string{"2"}}, dm("1"), false, Ignore, "sender-not-allowed"},
		{"dm allowlist approved by pairing", bridges.Access{DMPolicy: bridges.DMAllowlist, AllowFrom: []string{"2"}}, dm("1"), true, Accept, "dm-allowed"},
		{"dm open", bridges.Access{DMPolicy: bridges.DMOpen, AllowFrom: []string{"*"}}, dm("1"), false, Accept, "dm-open"},
		{"dm disabled", bridges.Access{DMPolicy: bridges.DMDisabled, AllowFrom: []string{"1"}}, dm("1"), true, Ignore, "dm-disabled"},

		{"group default allowlist empty", bridges.Access{}, group("-100", "7", true), false, Ignore, "group-not-allowed"},
		{"group listed, mentioned", bridges.Access{Groups: map[string]bridges.GroupRule{"-100": {}}}, group("-100", "7", true), false, Accept, "group-allowed"},
		{"group star allows all", bridges.Access{Groups: allGroups}, group("-5", "7", true), false, Accept, "group-allowed"},
		{"group not mentioned is skipped", bridges.Access{Groups: allGroups}, group("-100", "7", false), false, Skip, "no-mention"},
		{"group reply to bot counts", bridges.Access{Groups: allGroups}, implicit, false, Accept, "group-allowed"},
		{"group bare command bypasses", bridges.Access{Groups: allGroups}, command, false, Accept, "group-allowed"},
		{"group mention undetectable", bridges.Access{Groups: allGroups}, noDetect, false, Accept, "group-allowed"},
		{"group requireMention false", bridges.Access{Groups: map[string]bridges.GroupRule{"-100": {RequireMention: ptr(false)}}}, group("-100", "7", false), false, Accept, "group-allowed"},
		{"group rule beats star", bridges.Access{Groups: map[string]bridges.GroupRule{"*": {RequireMention: ptr(false)}, "-100": {RequireMention: ptr(true)}}}, group("-100", "7", false), false, Skip, "no-mention"},
		{"group star requireMention false", bridges.Access{Groups: map[string]bridges.GroupRule{"*": {RequireMention: ptr(false)}}}, group("-9", "7", false), false, Accept, "group-allowed"},
		{"thread under a listed parent", bridges.Access{Groups: map[string]bridges.GroupRule{"444": {RequireMention: ptr(false)}}}, thread, false, Accept, "group-allowed"},
		{"thread under a listed guild", bridges.Access{Groups: map[string]bridges.GroupRule{"guild:1": {RequireMention: ptr(false)}}}, thread, false, Accept, "group-allowed"},
		{"thread's own rule beats its parent", bridges.Access{Groups: map[string]bridges.GroupRule{"555": {}, "444": {RequireMention: ptr(false)}}}, thread, false, Skip, "no-mention"},
		{"thread under an unlisted parent", bridges.Access{Groups: map[string]bridges.GroupRule{"guild:2": {}}}, thread, false, Ignore, "group-not-allowed"},
		{"group open", bridges.Access{GroupPolicy: bridges.GroupOpen}, group("-9", "7", true), false, Accept, "group-allowed"},
		{"group disabled", bridges.Access{GroupPolicy: bridges.GroupDisabled, Groups: allGroups}, group("-100", "7", true), false, Ignore, "groups-disabled"},
		{"group sender allowlist", bridges.Access{Groups: allGroups, GroupAllowFrom: []string{"8"}}, group("-100", "7", true), false, Ignore, "sender-not-allowed"},
		{"group own allowFrom wins", bridges.Access{Groups: map[string]bridges.GroupRule{"-100": {AllowFrom: []string{"7"}}}, GroupAllowFrom: []string{"8"}}, group("-100", "7", true), false, Accept, "group-allowed"},
		{"group pairing approval does not count", bridges.Access{Groups: allGroups, GroupAllowFrom: []string{"8"}}, group("-100", "7", true), true, Ignore, "sender-not-allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Decide(tc.access, tc.msg, tc.approved)
			if got.Verdict != tc.want || got.Reason != tc.reason {
				t.Errorf("Decide = %+v, want verdict %d reason %q", got, tc.want, tc.reason)
			}
		})
	}
}

func TestAccessValidate(t *testing.T) {
	if err := (bridges.Access{DMPolicy: bridges.DMOpen}).Validate(); err == nil {
		t.Error(`dmPolicy open without "*" accepted`)
	}
	if err := (bridges.Access{DMPolicy: bridges.DMAllowlist}).Validate(); err == nil {
		t.Error("dmPolicy allowlist with no allowFrom accepted")
	}
	if err := (bridges.Access{DMPolicy: bridges.DMOpen, AllowFrom: []string{"*"}}).Validate(); err != nil {
		t.Error(err)
	}
	var p bridges.DMPolicy
	if err := p.UnmarshalText([]byte("Allowlist")); err != nil || p != bridges.DMAllowlist {
		t.Errorf("UnmarshalText(Allowlist) = %q, %v", p, err)
	}
	if err := p.UnmarshalText([]byte("everyone")); err == nil {
		t.Error("unknown policy accepted")
	}
}
