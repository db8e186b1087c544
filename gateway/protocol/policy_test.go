package protocol

import (
	"encoding/json"
	"slices"
	"testing"
)

// The core chat methods of openclaw-facts §1.8, copied from its table.
var (
	factsRead = []string{
		"chat.history", "sessions.list", "sessions.get", "sessions.preview", "sessions.resolve",
		"sessions.subscribe", "sessions.unsubscribe", "sessions.messages.subscribe",
		"sessions.messages.unsubscribe", "sessions.usage", "sessions.usage.timeseries",
		"sessions.usage.logs", "cron.list", "cron.status", "cron.runs", "system-presence",
		"last-heartbeat", "status", "health", "channels.status", "models.list", "agents.list",
		"node.list", "node.describe",
	}
	factsWrite = []string{
		"chat.send", "chat.abort", "agent", "agent.wait", "send", "poll", "wake", "message.action",
		"sessions.create", "sessions.send", "sessions.steer", "sessions.abort", "node.invoke",
		"sessions.patch", // label and thinkingLevel: write in OpenClaw 2026.9.6
	}
	factsAdmin = []string{
		"chat.inject", "sessions.reset", "sessions.delete", "sessions.compact",
		"cron.add", "cron.update", "cron.remove", "cron.run", "set-heartbeats", "system-event",
		"channels.logout", "agents.create", "agents.update", "agents.delete", "web.login.start",
		"web.login.wait", "secrets.reload", "secrets.resolve",
	}
	factsNode = []string{
		"node.invoke.result", "node.event", "node.pending.drain", "node.pending.pull",
		"node.pending.ack", "node.canvas.capability.refresh", "skills.bins",
	}
)

func TestScopeOfFactsTable(t *testing.T) {
	check := func(methods []string, want Requirement) {
		t.Helper()
		for _, m := range methods {
			got, ok := ScopeOf(m)
			if !ok || got != want {
				t.Errorf("ScopeOf(%q) = %v, %v; want %v, true", m, got, ok, want)
			}
		}
	}
	check(factsRead, RequireRead)
	check(factsWrite, RequireWrite)
	check(factsAdmin, RequireAdmin)
	check(factsNode, RequireNode)
	check([]string{"exec.approval.request", "exec.approval.resolve", "plugin.approval.list"}, RequireApprovals)
	check([]string{"device.pair.approve", "device.token.rotate", "node.pair.approve", "node.rename"}, RequirePairing)
}

// Reserved namespaces are admin unless the core table names the method:
// OpenClaw 2026.9.6 reads its table first, and lists config.get,
// config.schema and config.schema.lookup as read (its CLI asks only for
// operator.read when it calls config.get).
func TestScopeOfReservedPrefixes(t *testing.T) {
	for _, m := range []string{"config.get", "config.schema", "config.schema.lookup"} {
		if got, ok := ScopeOf(m); !ok || got != RequireRead {
			t.Errorf("ScopeOf(%q) = %v, %v; want read, true", m, got, ok)
		}
	}
	for _, m := range []string{
		"config.patch", "config.set", "config.apply", "config.new.thing",
		"exec.approvals.set", "exec.approvals.node.get", "wizard.start", "update.run", "update.anything",
	} {
		got, ok := ScopeOf(m)
		if !ok || got != RequireAdmin {
			t.Errorf("ScopeOf(%q) = %v, %v; want admin, true", m, got, ok)
		}
	}
	// Not a reserved prefix: "exec.approval." (singular) is the approvals scope.
	if got, _ := ScopeOf("exec.approval.get"); got != RequireApprovals {
		t.Errorf("exec.approval.get = %v", got)
	}
}

func TestEveryBaseMethodIsClassified(t *testing.T) {
	for _, m := range BaseMethods {
		if !Classified(m) {
			t.Errorf("BaseMethods entry %q is unclassified", m)
		}
	}
	if len(BaseMethods) != len(uniq(BaseMethods)) {
		t.Error("BaseMethods has duplicates")
	}
	if len(GatewayEvents) != 24 || len(GatewayEvents) != len(uniq(GatewayEvents)) {
		t.Errorf("GatewayEvents has %d entries", len(GatewayEvents))
	}
}

func uniq(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return slices.Compact(c)
}

func TestUnclassifiedMethodIsAdmin(t *testing.T) {
	for _, m := range []string{"", "brand.new", "chat", "chat.send.extra", "CHAT.SEND"} {
		got, ok := ScopeOf(m)
		if ok || got != RequireAdmin {
			t.Errorf("ScopeOf(%q) = %v, %v; want admin, false", m, got, ok)
		}
		if Classified(m) {
			t.Errorf("Classified(%q)", m)
		}
	}
}

func TestRequirementNames(t *testing.T) {
	tests := []struct {
		r     Requirement
		scope string
		name  string
	}{
		{RequireAdmin, ScopeAdmin, "admin"},
		{RequireRead, ScopeRead, "read"},
		{RequireWrite, ScopeWrite, "write"},
		{RequireApprovals, ScopeApprovals, "approvals"},
		{RequirePairing, ScopePairing, "pairing"},
		{RequireNode, "", "node"},
	}
	for _, tt := range tests {
		if tt.r.Scope() != tt.scope || tt.r.String() != tt.name {
			t.Errorf("%d: %q %q", tt.r, tt.r.Scope(), tt.r.String())
		}
	}
	var zero Requirement
	if zero != RequireAdmin {
		t.Error("zero Requirement must be admin (default-deny)")
	}
}

func TestAuthorize(t *testing.T) {
	read := []string{ScopeRead}
	write := []string{ScopeWrite}
	admin := []string{ScopeAdmin}
	tests := []struct {
		name   string
		role   string
		scopes []string
		method string
		want   string // "" = allowed; else the v3 error JSON
	}{
		{"health needs nothing", RoleOperator, nil, "health", ""},
		{"health even for an unknown role", "guest", nil, "health", ""},
		{"read method with read", RoleOperator, read, "chat.history", ""},
		{"read method with write", RoleOperator, write, "chat.history", ""},
		{"read method without scopes", RoleOperator, nil, "chat.history",
			`{"code":"INVALID_REQUEST","message":"missing scope: operator.read"}`},
		{"write method with read", RoleOperator, read, "chat.send",
			`{"code":"INVALID_REQUEST","message":"missing scope: operator.write"}`},
		{"write method with write", RoleOperator, write, "chat.send", ""},
		{"admin method with read and write", RoleOperator, []string{ScopeRead, ScopeWrite}, "chat.inject",
			`{"code":"INVALID_REQUEST","message":"missing scope: operator.admin"}`},
		{"admin passes admin methods", RoleOperator, admin, "sessions.patch", ""},
		{"admin passes unclassified methods", RoleOperator, admin, "brand.new", ""},
		{"admin passes approvals", RoleOperator, admin, "exec.approval.resolve", ""},
		{"approvals need approvals, not write", RoleOperator, write, "exec.approval.resolve",
			`{"code":"INVALID_REQUEST","message":"missing scope: operator.approvals"}`},
		{"approvals scope", RoleOperator, []string{ScopeApprovals}, "exec.approval.resolve", ""},
		{"pairing scope", RoleOperator, []string{ScopePairing}, "device.pair.approve", ""},
		{"pairing needs pairing", RoleOperator, write, "device.pair.approve",
			`{"code":"INVALID_REQUEST","message":"missing scope: operator.pairing"}`},
		{"unclassified denied to write", RoleOperator, write, "brand.new",
			`{"code":"INVALID_REQUEST","message":"missing scope: operator.admin"}`},
		{"config.get is a read method", RoleOperator, read, "config.get", ""},
		{"reserved config.patch denied to write", RoleOperator, write, "config.patch",
			`{"code":"INVALID_REQUEST","message":"missing scope: operator.admin"}`},
		{"node calls a node method", RoleNode, nil, "node.event", ""},
		{"node cannot call operator methods", RoleNode, admin, "chat.send",
			`{"code":"INVALID_REQUEST","message":"unauthorized role: node"}`},
		{"operator cannot call node methods, even admin", RoleOperator, admin, "node.invoke.result",
			`{"code":"INVALID_REQUEST","message":"unauthorized role: operator"}`},
		{"unknown role", "admin", admin, "chat.send",
			`{"code":"INVALID_REQUEST","message":"unauthorized role: admin"}`},
		{"empty role fails closed", "", admin, "chat.send",
			`{"code":"INVALID_REQUEST","message":"unauthorized role: "}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Authorize(tt.role, tt.scopes, tt.method, ProtocolV3)
			if tt.want == "" {
				if got != nil {
					t.Fatalf("denied: %v", got)
				}
				return
			}
			b, _ := json.Marshal(got)
			if string(b) != tt.want {
				t.Errorf("got  %s\nwant %s", b, tt.want)
			}
		})
	}
}

func TestAuthorizeV4MissingScope(t *testing.T) {
	got := Authorize(RoleOperator, []string{ScopeRead}, "chat.send", ProtocolV4)
	b, _ := json.Marshal(got)
	want := `{"code":"FORBIDDEN","message":"missing scope: operator.write","details":{"code":"MISSING_SCOPE","missingScope":"operator.write","requiredScopes":["operator.write"]}}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	// Role errors keep their v3 shape in v4.
	b, _ = json.Marshal(Authorize(RoleNode, nil, "chat.send", ProtocolV4))
	if want := `{"code":"INVALID_REQUEST","message":"unauthorized role: node"}`; string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

// Exhaustive over every known method, both roles and every subset of the
// scopes: v3 and v4 agree on allow/deny, nothing but health reaches a node
// outside the node methods, and no scope set without admin opens an admin
// method (the A3 registry-matrix test).
func TestAuthorizeMatrix(t *testing.T) {
	methods := append(slices.Clone(BaseMethods), "sessions.get", "sessions.steer", "poll", "push.test",
		"web.login.start", "config.secret.thing", "brand.new")
	all := []string{ScopeAdmin, ScopeRead, ScopeWrite, ScopeApprovals, ScopePairing, ScopeTalkSecrets, ScopeTalk}
	for _, method := range methods {
		required, _ := ScopeOf(method)
		for _, role := range []string{RoleOperator, RoleNode} {
			for mask := 0; mask < 1<<len(all); mask++ {
				var scopes []string
				for i, s := range all {
					if mask&(1<<i) != 0 {
						scopes = append(scopes, s)
					}
				}
				v3 := Authorize(role, scopes, method, ProtocolV3)
				v4 := Authorize(role, scopes, method, ProtocolV4)
				if (v3 == nil) != (v4 == nil) {
					t.Fatalf("%s %s %v: v3 %v, v4 %v", method, role, scopes, v3, v4)
				}
				allowed := v3 == nil
				hasAdmin := slices.Contains(scopes, ScopeAdmin)
				switch {
				case method == "health":
					if !allowed {
						t.Fatalf("health denied to %s %v", role, scopes)
					}
				case role == RoleNode:
					if allowed != (required == RequireNode) {
						t.Fatalf("node %v calling %s: allowed=%v", scopes, method, allowed)
					}
				case required == RequireNode:
					if allowed {
						t.Fatalf("operator %v calling node method %s", scopes, method)
					}
				case required == RequireAdmin:
					if allowed != hasAdmin {
						t.Fatalf("operator %v calling admin method %s: allowed=%v", scopes, method, allowed)
					}
				case hasAdmin && !allowed:
					t.Fatalf("admin denied %s", method)
				}
			}
		}
	}
}

// The event rule is the same on both protocol versions (issue 22, finding
// 6): OpenClaw's April v3 code let chat and agent through unguarded, so a
// client whose scopes were cleared read every chat.
func TestEventAllowed(t *testing.T) {
	tests := []struct {
		event  string
		role   string
		scopes []string
		want   bool
	}{
		{"tick", RoleOperator, nil, true},
		{"tick", RoleNode, nil, true},
		{"connect.challenge", RoleNode, nil, true},
		{"presence", RoleOperator, nil, true},
		{"presence", RoleNode, nil, true},
		{"shutdown", RoleNode, nil, true},
		{"chat", RoleOperator, nil, false},
		{"chat", RoleOperator, []string{}, false},
		{"chat", RoleOperator, []string{ScopeRead}, true},
		{"chat", RoleOperator, []string{ScopeWrite}, true},
		{"chat", RoleOperator, []string{ScopeAdmin}, true},
		{"chat", RoleOperator, []string{ScopePairing, ScopeApprovals}, false},
		{"chat", RoleNode, []string{ScopeRead}, false},
		{"agent", RoleOperator, nil, false},
		{"agent", RoleOperator, []string{ScopeApprovals}, false},
		{"agent", RoleOperator, []string{ScopeAdmin}, true},
		{"session.tool", RoleOperator, []string{ScopeRead}, true},
		{"session.tool", RoleOperator, []string{ScopePairing}, false},
		{"session.tool", RoleNode, []string{ScopeRead}, false},
		{"session.message", RoleOperator, nil, false},
		{"session.message", RoleOperator, []string{ScopeWrite}, true},
		{"sessions.changed", RoleOperator, nil, false},
		{"sessions.changed", RoleOperator, []string{ScopeRead}, true},
		{"heartbeat", RoleOperator, nil, false},
		{"cron", RoleOperator, []string{ScopeRead}, true},
		{"exec.approval.requested", RoleOperator, nil, false},
		{"exec.approval.requested", RoleOperator, []string{ScopeApprovals}, true},
		{"exec.approval.requested", RoleOperator, []string{ScopeAdmin}, true},
		{"exec.approval.requested", RoleOperator, []string{ScopeWrite}, false},
		{"exec.approval.requested", RoleOperator, []string{ScopeRead}, false},
		{"exec.approval.requested", RoleNode, []string{ScopeApprovals}, false},
		{"plugin.approval.resolved", RoleOperator, []string{ScopeApprovals}, true},
		{"device.pair.requested", RoleOperator, []string{ScopePairing}, true},
		{"device.pair.requested", RoleOperator, []string{ScopeRead}, false},
		{"device.pair.resolved", RoleOperator, []string{ScopePairing}, true},
		{"node.pair.resolved", RoleOperator, []string{ScopePairing}, true},
		{"node.pair.resolved", RoleNode, []string{ScopeAdmin}, false},
		{"node.invoke.request", RoleNode, nil, true},
		{"node.invoke.request", RoleOperator, []string{ScopeAdmin}, false},
		{"some.future.event", RoleOperator, []string{ScopeAdmin}, false}, // fail closed
		{"exec.approval.", RoleOperator, []string{ScopeRead}, false},
		{"", RoleOperator, []string{ScopeAdmin}, false},
	}
	for _, v := range []int{ProtocolV3, ProtocolV4} {
		for _, tt := range tests {
			if got := EventAllowed(tt.event, tt.role, tt.scopes, v); got != tt.want {
				t.Errorf("v%d EventAllowed(%q, %q, %v) = %v, want %v", v, tt.event, tt.role, tt.scopes, got, tt.want)
			}
		}
	}
	// Every advertised event is known to the table.
	for _, ev := range GatewayEvents {
		if !EventAllowed(ev, RoleOperator, []string{ScopeAdmin}, ProtocolV4) && !EventAllowed(ev, RoleNode, nil, ProtocolV4) {
			t.Errorf("the table drops advertised event %q for everyone", ev)
		}
	}
}
