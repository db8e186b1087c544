package tools

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// Names of the built-in tools, for configuration checks.
var BuiltinNames = []string{
	"cron", "edit", "exec", "ls", "message", "process", "read",
	"sessions_history", "sessions_list", "web_fetch", "write",
}

// Groups are names that stand for several tools in tools.allow,
// tools.deny and policy rules.
var Groups = map[string][]string{
	"group:fs":         {"read", "write", "edit", "ls"},
	"group:runtime":    {"exec", "process"},
	"group:web":        {"web_fetch"},
	"group:sessions":   {"sessions_list", "sessions_history"},
	"group:messaging":  {"message"},
	"group:automation": {"cron"},
}

// ExpandNames replaces group names with their tools and checks every name
// is a built-in tool, a group or "*"; the error names the first unknown
// one and lists what is known.
func ExpandNames(names []string) ([]string, error) {
	var out []string
	for _, n := range names {
		n = strings.TrimSpace(strings.ToLower(n))
		switch {
		case n == "*":
			out = append(out, n)
		case Groups[n] != nil:
			out = append(out, Groups[n]...)
		case slices.Contains(BuiltinNames, n):
			out = append(out, n)
		default:
			groups := make([]string, 0, len(Groups))
			for g := range Groups {
				groups = append(groups, g)
			}
			sort.Strings(groups)
			return nil, fmt.Errorf("unknown tool %q; tools are %s, groups %s, or *", n,
				strings.Join(BuiltinNames, ", "), strings.Join(groups, ", "))
		}
	}
	return out, nil
}

// PolicyRule is one before_tool_call rule of tools.policies. It applies to
// a call when each of its non-empty match lists holds the call's value;
// then a tool in Deny is blocked, and when Allow is set a tool not in it is
// blocked. Every rule that applies is checked: any one can block.
type PolicyRule struct {
	// Agents limits the rule to these agent ids; empty means every agent.
	Agents []string `json:"agents,omitempty"`
	// Channels limits the rule to turns from these channels (telegram,
	// slack, discord, whatsapp, webchat); empty means every channel.
	Channels []string `json:"channels,omitempty"`
	// ChatTypes limits the rule to these chat types (direct, group,
	// channel); empty means every chat type.
	ChatTypes []core.ChatType `json:"chatTypes,omitempty"`
	// Allow, when set, is the only tools the rule lets run: names, groups
	// (group:fs, group:runtime, group:web, group:sessions, group:messaging,
	// group:automation) or "*".
	Allow []string `json:"allow,omitempty"`
	// Deny is the tools the rule blocks: names, groups or "*".
	Deny []string `json:"deny,omitempty"`
	// Reason is shown to the model when the rule blocks a call; empty
	// means one naming the rule's match.
	Reason string `json:"reason,omitempty"`
}

// Validate checks the tool names and chat types.
func (r PolicyRule) Validate() error {
	if _, err := ExpandNames(r.Allow); err != nil {
		return core.FieldErrorf("allow", err.Error())
	}
	if _, err := ExpandNames(r.Deny); err != nil {
		return core.FieldErrorf("deny", err.Error())
	}
	for i, t := range r.ChatTypes {
		if _, err := core.ParseChatType(string(t)); err != nil {
			return core.FieldErrorf(fmt.Sprintf("chatTypes[%d]", i), err.Error())
		}
	}
	if len(r.Allow) == 0 && len(r.Deny) == 0 {
		return core.FieldErrorf("", "a policy rule needs allow or deny")
	}
	return nil
}

// Policy is the before_tool_call policy built from tools.policies.
type Policy struct {
	rules []compiledRule
}

type compiledRule struct {
	PolicyRule
	allow, deny []string
}

// NewPolicy compiles rules (expanding groups); the error names the rule.
func NewPolicy(rules []PolicyRule) (*Policy, error) {
	p := &Policy{}
	for i, r := range rules {
		if err := r.Validate(); err != nil {
			return nil, fmt.Errorf("tools.policies[%d]: %w", i, err)
		}
		c := compiledRule{PolicyRule: r}
		c.allow, _ = ExpandNames(r.Allow)
		c.deny, _ = ExpandNames(r.Deny)
		c.ChatTypes = slices.Clone(r.ChatTypes)
		c.Agents = make([]string, len(r.Agents))
		for j, a := range r.Agents {
			c.Agents[j] = core.NormalizeAgentID(a)
		}
		for j, t := range r.ChatTypes {
			c.ChatTypes[j], _ = core.ParseChatType(string(t))
		}
		p.rules = append(p.rules, c)
	}
	return p, nil
}

// Decide applies the rules to call.
func (p *Policy) Decide(call Call) Decision {
	if p == nil {
		return Decision{}
	}
	for _, r := range p.rules {
		if !r.matches(call) {
			continue
		}
		listed := func(names []string) bool {
			return slices.Contains(names, "*") || slices.Contains(names, call.Name)
		}
		if listed(r.deny) || (len(r.allow) > 0 && !listed(r.allow)) {
			return Decision{Block: true, Reason: r.reason(call)}
		}
	}
	return Decision{}
}

// Hook returns the policy as a before_tool_call hook.
func (p *Policy) Hook() BeforeToolCall {
	return func(_ context.Context, call *Call) Decision { return p.Decide(*call) }
}

func (r compiledRule) matches(call Call) bool {
	if len(r.Agents) > 0 && !slices.Contains(r.Agents, core.NormalizeAgentID(call.AgentID)) {
		return false
	}
	if len(r.Channels) > 0 && !slices.ContainsFunc(r.Channels, func(c string) bool { return strings.EqualFold(c, string(call.Route.Channel)) }) {
		return false
	}
	if len(r.ChatTypes) > 0 && !slices.Contains(r.ChatTypes, call.ChatType) {
		return false
	}
	return true
}

func (r compiledRule) reason(call Call) string {
	if r.Reason != "" {
		return "Tool blocked by policy: " + r.Reason
	}
	var where []string
	if len(r.Agents) > 0 {
		where = append(where, "agent "+call.AgentID)
	}
	if len(r.Channels) > 0 {
		where = append(where, "channel "+string(call.Route.Channel))
	}
	if len(r.ChatTypes) > 0 {
		where = append(where, string(call.ChatType)+" chats")
	}
	if len(where) == 0 {
		return "Tool blocked by policy: " + call.Name + " is not allowed"
	}
	return "Tool blocked by policy: " + call.Name + " is not allowed for " + strings.Join(where, ", ")
}
