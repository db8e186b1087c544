package tools_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/tools"
	"github.com/switchboardhq/switchboard/core/tools/toolstest"
)

// TestPolicyTable runs calls through an executor whose before_tool_call
// hook is the policy of tools.policies and checks which are blocked, with
// the seed-002 §8.2 envelope, and that a blocked tool never runs.
func TestPolicyTable(t *testing.T) {
	rules := []tools.PolicyRule{
		{ChatTypes: []core.ChatType{"group", "channel"}, Deny: []string{"group:runtime", "group:fs"}},
		{Channels: []string{"whatsapp"}, Allow: []string{"message", "web_fetch"}, Reason: "WhatsApp chats only send and fetch"},
		{Agents: []string{"main"}, Channels: []string{"discord"}, ChatTypes: []core.ChatType{"dm"}, Deny: []string{"*"}},
	}
	p, err := tools.NewPolicy(rules)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, tool, channel string
		chat                core.ChatType
		agent               string
		blocked             string // "" = runs; else a substring of the reason
	}{
		{"telegram dm read", "read", "telegram", core.ChatDirect, "main", ""},
		{"telegram group read", "read", "telegram", core.ChatGroup, "main", "read is not allowed for group chats"},
		{"slack channel exec", "exec", "slack", core.ChatChannel, "main", "exec is not allowed for channel chats"},
		{"slack channel message", "message", "slack", core.ChatChannel, "main", ""},
		{"telegram group process", "process", "telegram", core.ChatGroup, "main", "process is not allowed"},
		{"whatsapp dm message", "message", "whatsapp", core.ChatDirect, "main", ""},
		{"whatsapp dm web_fetch", "web_fetch", "whatsapp", core.ChatDirect, "main", ""},
		{"whatsapp dm cron", "cron", "whatsapp", core.ChatDirect, "main", "WhatsApp chats only send and fetch"},
		{"whatsapp group write", "write", "whatsapp", core.ChatGroup, "main", "not allowed for group chats"},
		{"discord dm anything", "sessions_list", "discord", core.ChatDirect, "main", "agent main, channel discord, direct chats"},
		{"discord dm other agent", "sessions_list", "discord", core.ChatDirect, "work", ""},
		{"discord group ls", "ls", "discord", core.ChatGroup, "main", "not allowed for group chats"},
		{"heartbeat turn exec", "exec", "telegram", "", "main", ""},
		{"channel case-insensitive", "cron", "WhatsApp", core.ChatDirect, "main", "only send and fetch"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fn := toolstest.Text(tc.tool, "ran")
			reg := tools.NewRegistry()
			reg.MustRegister(fn)
			ex := &tools.Executor{Registry: reg, Hooks: tools.Hooks{Before: []tools.BeforeToolCall{p.Hook()}}}
			msg := ex.Run(context.Background(), tools.Call{
				ID: "c1", Name: tc.tool, AgentID: tc.agent,
				Route: core.Route{Channel: core.ChannelName(tc.channel), To: "x"}, ChatType: tc.chat,
			}, nil)
			text := msg.Content.Text()
			if tc.blocked == "" {
				if msg.IsError || fn.Calls() != 1 || text != "ran" {
					t.Fatalf("want the tool to run; got isError=%v calls=%d %q", msg.IsError, fn.Calls(), text)
				}
				return
			}
			if fn.Calls() != 0 {
				t.Fatalf("blocked tool ran %d times", fn.Calls())
			}
			if !msg.IsError || !strings.Contains(text, `"status":"blocked"`) || !strings.Contains(text, `"tool":"`+tc.tool+`"`) ||
				!strings.Contains(text, "Tool blocked by policy: ") || !strings.Contains(text, tc.blocked) {
				t.Fatalf("want a blocked envelope mentioning %q; got %s", tc.blocked, text)
			}
		})
	}
}

// Agent ids in rules are normalized like the call's: a rule for "Work"
// applies to agent "work" (a deny that never matched would fail open).
func TestPolicyAgentIDsAreNormalized(t *testing.T) {
	p, err := tools.NewPolicy([]tools.PolicyRule{{Agents: []string{"Work"}, Deny: []string{"web_fetch"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Decide(tools.Call{Name: "web_fetch", AgentID: "work"}).Block {
		t.Fatal("the rule for agent Work did not apply to agent work")
	}
}

// TestPolicyValidation names what is wrong in a bad rule.
func TestPolicyValidation(t *testing.T) {
	for _, tc := range []struct {
		rule tools.PolicyRule
		want string
	}{
		{tools.PolicyRule{Deny: []string{"exce"}}, `tools.policies[0]: deny: unknown tool "exce"`},
		{tools.PolicyRule{Allow: []string{"group:nope"}}, `allow: unknown tool "group:nope"`},
		{tools.PolicyRule{ChatTypes: []core.ChatType{"room"}, Deny: []string{"exec"}}, `chatTypes[0]: unknown chat type "room"`},
		{tools.PolicyRule{Channels: []string{"slack"}}, "needs allow or deny"},
	} {
		_, err := tools.NewPolicy([]tools.PolicyRule{tc.rule})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("rule %+v: want error containing %q, got %v", tc.rule, tc.want, err)
		}
	}
}

// TestToolBlockedError checks that a tool refusing with tools.Blocked gets
// the blocked envelope and after hooks see ErrBlocked.
func TestToolBlockedError(t *testing.T) {
	reg := tools.NewRegistry()
	reg.MustRegister(toolstest.NewFunc("exec", "", func(context.Context, tools.Call, func(tools.Result)) (tools.Result, error) {
		return tools.Result{}, tools.Blocked("approval denied")
	}))
	var hookErr error
	ex := &tools.Executor{Registry: reg, Hooks: tools.Hooks{After: []tools.AfterToolCall{
		func(_ context.Context, _ tools.Call, _ tools.Result, err error) { hookErr = err },
	}}}
	msg := ex.Run(context.Background(), tools.Call{ID: "c", Name: "exec"}, nil)
	if got, want := msg.Content.Text(), `{"status":"blocked","tool":"exec","reason":"approval denied"}`; got != want || !msg.IsError {
		t.Fatalf("got %s (isError %v), want %s", got, msg.IsError, want)
	}
	if !strings.Contains(hookErr.Error(), "approval denied") || !isBlocked(hookErr) {
		t.Fatalf("after hook err = %v, want one wrapping ErrBlocked", hookErr)
	}
}

func isBlocked(err error) bool {
	var b *tools.BlockedError
	return errors.As(err, &b) && errors.Is(err, tools.ErrBlocked)
}
