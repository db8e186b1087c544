package bridges

import (
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

func ptr[T any](v T) *T { return &v }

func dm(sender string) Inbound {
	return Inbound{Message: &core.Inbound{ChatType: core.ChatDirect, Sender: core.Sender{ID: sender, Username: "ada"}}}
}

func group(id, sender string, mentioned bool) Inbound {
	return Inbound{
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

	allGroups := map[string]GroupRule{"*": {}}
	thread := group("555", "7", false)
	thread.GroupParents = []string{"444", "guild:1"}
	for _, tc := range []struct {
		name     string
		access   Access
		msg      Inbound
		approved bool
		want     Verdict
		reason   string
	}{
		{"dm default is pairing", Access{}, dm("1"), false, Pair, "sender-unknown"},
		{"dm pairing approved", Access{}, dm("1"), true, Accept, "dm-allowed"},
		{"dm pairing allowFrom", Access{AllowFrom: []string{"1"}}, dm("1"), false, Accept, "dm-allowed"},
		{"dm allowFrom with channel prefix", Access{AllowFrom: []string{"telegram:1"}}, dm("1"), false, Accept, "dm-allowed"},
		{"dm allowFrom by @username", Access{AllowFrom: []string{"@Ada"}}, dm("1"), false, Accept, "dm-allowed"},
		{"dm allowlist unknown ignored", Access{DMPolicy: DMAllowlist, AllowFrom: []string{"2"}}, dm("1"), false, Ignore, "sender-not-allowed"},
		{"dm allowlist approved by pairing", Access{DMPolicy: DMAllowlist, AllowFrom: []string{"2"}}, dm("1"), true, Accept, "dm-allowed"},
		{"dm open", Access{DMPolicy: DMOpen, AllowFrom: []string{"*"}}, dm("1"), false, Accept, "dm-open"},
		{"dm disabled", Access{DMPolicy: DMDisabled, AllowFrom: []string{"1"}}, dm("1"), true, Ignore, "dm-disabled"},

		{"group default allowlist empty", Access{}, group("-100", "7", true), false, Ignore, "group-not-allowed"},
		{"group listed, mentioned", Access{Groups: map[string]GroupRule{"-100": {}}}, group("-100", "7", true), false, Accept, "group-allowed"},
		{"group star allows all", Access{Groups: allGroups}, group("-5", "7", true), false, Accept, "group-allowed"},
		{"group not mentioned is skipped", Access{Groups: allGroups}, group("-100", "7", false), false, Skip, "no-mention"},
		{"group reply to bot counts", Access{Groups: allGroups}, implicit, false, Accept, "group-allowed"},
		{"group bare command bypasses", Access{Groups: allGroups}, command, false, Accept, "group-allowed"},
		{"group mention undetectable", Access{Groups: allGroups}, noDetect, false, Accept, "group-allowed"},
		{"group requireMention false", Access{Groups: map[string]GroupRule{"-100": {RequireMention: ptr(false)}}}, group("-100", "7", false), false, Accept, "group-allowed"},
		{"group rule beats star", Access{Groups: map[string]GroupRule{"*": {RequireMention: ptr(false)}, "-100": {RequireMention: ptr(true)}}}, group("-100", "7", false), false, Skip, "no-mention"},
		{"group star requireMention false", Access{Groups: map[string]GroupRule{"*": {RequireMention: ptr(false)}}}, group("-9", "7", false), false, Accept, "group-allowed"},
		{"thread under a listed parent", Access{Groups: map[string]GroupRule{"444": {RequireMention: ptr(false)}}}, thread, false, Accept, "group-allowed"},
		{"thread under a listed guild", Access{Groups: map[string]GroupRule{"guild:1": {RequireMention: ptr(false)}}}, thread, false, Accept, "group-allowed"},
		{"thread's own rule beats its parent", Access{Groups: map[string]GroupRule{"555": {}, "444": {RequireMention: ptr(false)}}}, thread, false, Skip, "no-mention"},
		{"thread under an unlisted parent", Access{Groups: map[string]GroupRule{"guild:2": {}}}, thread, false, Ignore, "group-not-allowed"},
		{"group open", Access{GroupPolicy: GroupOpen}, group("-9", "7", true), false, Accept, "group-allowed"},
		{"group disabled", Access{GroupPolicy: GroupDisabled, Groups: allGroups}, group("-100", "7", true), false, Ignore, "groups-disabled"},
		{"group sender allowlist", Access{Groups: allGroups, GroupAllowFrom: []string{"8"}}, group("-100", "7", true), false, Ignore, "sender-not-allowed"},
		{"group own allowFrom wins", Access{Groups: map[string]GroupRule{"-100": {AllowFrom: []string{"7"}}}, GroupAllowFrom: []string{"8"}}, group("-100", "7", true), false, Accept, "group-allowed"},
		{"group pairing approval does not count", Access{Groups: allGroups, GroupAllowFrom: []string{"8"}}, group("-100", "7", true), true, Ignore, "sender-not-allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.access.Decide(tc.msg, tc.approved)
			if got.Verdict != tc.want || got.Reason != tc.reason {
				t.Errorf("Decide = %+v, want verdict %d reason %q", got, tc.want, tc.reason)
			}
		})
	}
}

func TestAccessValidate(t *testing.T) {
	if err := (Access{DMPolicy: DMOpen}).Validate(); err == nil {
		t.Error(`dmPolicy open without "*" accepted`)
	}
	if err := (Access{DMPolicy: DMAllowlist}).Validate(); err == nil {
		t.Error("dmPolicy allowlist with no allowFrom accepted")
	}
	if err := (Access{DMPolicy: DMOpen, AllowFrom: []string{"*"}}).Validate(); err != nil {
		t.Error(err)
	}
	var p DMPolicy
	if err := p.UnmarshalText([]byte("Allowlist")); err != nil || p != DMAllowlist {
		t.Errorf("UnmarshalText(Allowlist) = %q, %v", p, err)
	}
	if err := p.UnmarshalText([]byte("everyone")); err == nil {
		t.Error("unknown policy accepted")
	}
}
