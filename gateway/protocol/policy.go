package protocol

import (
	"slices"
	"strings"
)

// Roles a connection may hold (src/gateway/role-policy.ts).
const (
	// RoleOperator is a human-facing client: UIs, CLIs, web chat, backends.
	RoleOperator = "operator"
	// RoleNode is a device that executes commands for the gateway.
	RoleNode = "node"
)

// Operator scopes (openclaw-facts §1.8, src/gateway/operator-scopes.ts).
const (
	// ScopeAdmin passes every scope check.
	ScopeAdmin = "operator.admin"
	// ScopeRead allows read-only methods and read-guarded events.
	ScopeRead = "operator.read"
	// ScopeWrite allows write methods and also satisfies ScopeRead.
	ScopeWrite = "operator.write"
	// ScopeApprovals allows exec/plugin approval methods and events.
	ScopeApprovals = "operator.approvals"
	// ScopePairing allows device and node pairing methods and events.
	ScopePairing = "operator.pairing"
	// ScopeTalkSecrets allows reading Talk provider secrets.
	ScopeTalkSecrets = "operator.talk.secrets"
	// ScopeTalk is v4's scope for Talk sessions.
	ScopeTalk = "operator.talk"
)

// Requirement is what a method demands of its caller. The zero value is
// RequireAdmin, so anything unclassified is denied to non-admins.
type Requirement int

const (
	// RequireAdmin needs ScopeAdmin.
	RequireAdmin Requirement = iota
	// RequireRead needs ScopeRead or ScopeWrite.
	RequireRead
	// RequireWrite needs ScopeWrite.
	RequireWrite
	// RequireApprovals needs ScopeApprovals.
	RequireApprovals
	// RequirePairing needs ScopePairing.
	RequirePairing
	// RequireNode needs role RoleNode (and no scope).
	RequireNode
)

// Scope returns the operator scope a requirement names, or "" for
// RequireNode.
func (r Requirement) Scope() string {
	switch r {
	case RequireRead:
		return ScopeRead
	case RequireWrite:
		return ScopeWrite
	case RequireApprovals:
		return ScopeApprovals
	case RequirePairing:
		return ScopePairing
	case RequireNode:
		return ""
	}
	return ScopeAdmin
}

// String returns a short name: admin, read, write, approvals, pairing or
// node.
func (r Requirement) String() string {
	switch r {
	case RequireRead:
		return "read"
	case RequireWrite:
		return "write"
	case RequireApprovals:
		return "approvals"
	case RequirePairing:
		return "pairing"
	case RequireNode:
		return "node"
	}
	return "admin"
}

// reservedAdminPrefixes are namespaces that need admin unless methodPolicy
// names the method (src/shared/gateway-method-policy.ts; OpenClaw
// 2026.9.6's resolveScopedMethod reads its core table first, so config.get
// and config.schema are read methods there).
var reservedAdminPrefixes = []string{"config.", "exec.approvals.", "wizard.", "update."}

// methodPolicy classifies every core method Switchboard knows: openclaw-facts
// §1.8's table extended from src/gateway/method-scopes.ts to the
// BASE_METHODS of §1.13 and the callable-but-unadvertised methods.
var methodPolicy = map[string]Requirement{
	// Node-only methods.
	"node.invoke.result":             RequireNode,
	"node.event":                     RequireNode,
	"node.pending.drain":             RequireNode,
	"node.pending.pull":              RequireNode,
	"node.pending.ack":               RequireNode,
	"node.canvas.capability.refresh": RequireNode,
	"skills.bins":                    RequireNode,

	// Approvals.
	"exec.approval.get":            RequireApprovals,
	"exec.approval.list":           RequireApprovals,
	"exec.approval.request":        RequireApprovals,
	"exec.approval.waitDecision":   RequireApprovals,
	"exec.approval.resolve":        RequireApprovals,
	"plugin.approval.list":         RequireApprovals,
	"plugin.approval.request":      RequireApprovals,
	"plugin.approval.waitDecision": RequireApprovals,
	"plugin.approval.resolve":      RequireApprovals,

	// Pairing.
	"node.pair.request":   RequirePairing,
	"node.pair.list":      RequirePairing,
	"node.pair.approve":   RequirePairing,
	"node.pair.reject":    RequirePairing,
	"node.pair.verify":    RequirePairing,
	"device.pair.list":    RequirePairing,
	"device.pair.approve": RequirePairing,
	"device.pair.reject":  RequirePairing,
	"device.pair.remove":  RequirePairing,
	"device.token.rotate": RequirePairing,
	"device.token.revoke": RequirePairing,
	"node.rename":         RequirePairing,
	// Switchboard: chat platforms' DM pairing codes.
	"pairing.list":    RequirePairing,
	"pairing.approve": RequirePairing,
	"pairing.reject":  RequirePairing,
	// OpenClaw 2026.9.6's names for the same (approve is "dynamic" there:
	// pairing, or admin to bootstrap a command owner, which is
	// configuration here).
	"channels.pairing.list":    RequirePairing,
	"channels.pairing.approve": RequirePairing,
	"channels.pairing.dismiss": RequirePairing,

	// Read.
	"health":                        RequireRead,
	"doctor.memory.status":          RequireRead,
	"doctor.memory.dreamDiary":      RequireRead,
	"logs.tail":                     RequireRead,
	"channels.status":               RequireRead,
	"status":                        RequireRead,
	"usage.status":                  RequireRead,
	"usage.cost":                    RequireRead,
	"tts.status":                    RequireRead,
	"tts.providers":                 RequireRead,
	"commands.list":                 RequireRead,
	"models.list":                   RequireRead,
	"models.authStatus":             RequireRead,
	"tools.catalog":                 RequireRead,
	"tools.effective":               RequireRead,
	"agents.list":                   RequireRead,
	"agent.identity.get":            RequireRead,
	"assistant.media.get":           RequireRead,
	"skills.status":                 RequireRead,
	"skills.search":                 RequireRead,
	"skills.detail":                 RequireRead,
	"voicewake.get":                 RequireRead,
	"sessions.list":                 RequireRead,
	"sessions.get":                  RequireRead,
	"sessions.preview":              RequireRead,
	"config.get":                    RequireRead,
	"config.schema":                 RequireRead,
	"config.schema.lookup":          RequireRead,
	"sessions.describe":             RequireRead,
	"chat.startup":                  RequireRead,
	"sessions.resolve":              RequireRead,
	"sessions.compaction.list":      RequireRead,
	"sessions.compaction.get":       RequireRead,
	"sessions.subscribe":            RequireRead,
	"sessions.unsubscribe":          RequireRead,
	"sessions.messages.subscribe":   RequireRead,
	"sessions.messages.unsubscribe": RequireRead,
	"sessions.usage":                RequireRead,
	"sessions.usage.timeseries":     RequireRead,
	"sessions.usage.logs":           RequireRead,
	"cron.list":                     RequireRead,
	"cron.status":                   RequireRead,
	"cron.runs":                     RequireRead,
	"gateway.identity.get":          RequireRead,
	"system-presence":               RequireRead,
	"last-heartbeat":                RequireRead,
	"node.list":                     RequireRead,
	"node.describe":                 RequireRead,
	"chat.history":                  RequireRead,
	"talk.config":                   RequireRead,
	"agents.files.list":             RequireRead,
	"agents.files.get":              RequireRead,

	// Write.
	"message.action":                        RequireWrite,
	"send":                                  RequireWrite,
	"poll":                                  RequireWrite,
	"agent":                                 RequireWrite,
	"agent.wait":                            RequireWrite,
	"wake":                                  RequireWrite,
	"talk.mode":                             RequireWrite,
	"talk.speak":                            RequireWrite,
	"tts.enable":                            RequireWrite,
	"tts.disable":                           RequireWrite,
	"tts.convert":                           RequireWrite,
	"tts.setProvider":                       RequireWrite,
	"voicewake.set":                         RequireWrite,
	"node.invoke":                           RequireWrite,
	"node.pending.enqueue":                  RequireWrite,
	"chat.send":                             RequireWrite,
	"chat.abort":                            RequireWrite,
	"sessions.create":                       RequireWrite,
	"sessions.send":                         RequireWrite,
	"sessions.steer":                        RequireWrite,
	"sessions.abort":                        RequireWrite,
	"sessions.compaction.branch":            RequireWrite,
	"doctor.memory.backfillDreamDiary":      RequireWrite,
	"doctor.memory.resetDreamDiary":         RequireWrite,
	"doctor.memory.resetGroundedShortTerm":  RequireWrite,
	"doctor.memory.repairDreamingArtifacts": RequireWrite,
	"doctor.memory.dedupeDreamDiary":        RequireWrite,
	"push.test":                             RequireWrite,

	// Admin (listed so Classified reports them; unlisted methods are admin
	// anyway).
	"chat.inject":      RequireAdmin,
	"channels.logout":  RequireAdmin,
	"agents.create":    RequireAdmin,
	"agents.update":    RequireAdmin,
	"agents.delete":    RequireAdmin,
	"agents.files.set": RequireAdmin,
	"skills.install":   RequireAdmin,
	"skills.update":    RequireAdmin,
	"secrets.reload":   RequireAdmin,
	"secrets.resolve":  RequireAdmin,
	"cron.add":         RequireAdmin,
	"cron.update":      RequireAdmin,
	"cron.remove":      RequireAdmin,
	"cron.run":         RequireAdmin,
	// OpenClaw 2026.9.6 decides sessions.patch by its members: label,
	// thinkingLevel and the like need write. Those are the only members
	// Switchboard's sessions.patch takes.
	"sessions.patch":              RequireWrite,
	"sessions.reset":              RequireAdmin,
	"sessions.delete":             RequireAdmin,
	"sessions.compact":            RequireAdmin,
	"sessions.compaction.restore": RequireAdmin,
	"connect":                     RequireAdmin,
	"web.login.start":             RequireAdmin,
	"web.login.wait":              RequireAdmin,
	"set-heartbeats":              RequireAdmin,
	"system-event":                RequireAdmin,
}

// ScopeOf returns what method requires of its caller, and whether the
// method is classified. The core table decides first, as in OpenClaw
// 2026.9.6; any other method of a reserved namespace (config.*,
// exec.approvals.*, wizard.*, update.*) is RequireAdmin; an unclassified
// method is RequireAdmin with false (default-deny).
func ScopeOf(method string) (Requirement, bool) {
	if r, ok := methodPolicy[method]; ok {
		return r, true
	}
	for _, prefix := range reservedAdminPrefixes {
		if strings.HasPrefix(method, prefix) {
			return RequireAdmin, true
		}
	}
	return RequireAdmin, false
}

// Classified reports whether method has an explicit policy; the server's
// registry test fails on a handler for an unclassified method.
func Classified(method string) bool {
	_, ok := ScopeOf(method)
	return ok
}

// Authorize decides whether a connection with role and scopes may call
// method, in OpenClaw's order (openclaw-facts §1.8):
//
//  1. "health" is always allowed;
//  2. node-only methods need role node, every other method role operator
//     (else INVALID_REQUEST "unauthorized role: <role>");
//  3. a node is then allowed;
//  4. ScopeAdmin passes everything;
//  5. a read method is satisfied by ScopeRead or ScopeWrite, anything else
//     by its own scope; unclassified methods need ScopeAdmin.
//
// A missing scope is INVALID_REQUEST "missing scope: <scope>" for v3 and
// FORBIDDEN with MissingScopeDetails for v4. It returns nil when allowed.
func Authorize(role string, scopes []string, method string, protocol int) *ErrorShape {
	if method == "health" {
		return nil
	}
	if role != RoleOperator && role != RoleNode {
		return UnauthorizedRole(role)
	}
	required, _ := ScopeOf(method)
	if (required == RequireNode) != (role == RoleNode) {
		return UnauthorizedRole(role)
	}
	if role == RoleNode || slices.Contains(scopes, ScopeAdmin) {
		return nil
	}
	if required == RequireRead && slices.Contains(scopes, ScopeWrite) {
		return nil
	}
	if scope := required.Scope(); !slices.Contains(scopes, scope) {
		return MissingScope(scope, protocol)
	}
	return nil
}

// eventRule is the policy of one event name or family.
type eventRule struct {
	// open events go to every connection.
	open bool
	// nodeOnly events go only to nodes.
	nodeOnly bool
	// scope is the operator scope a guarded event needs.
	scope string
}

// eventRules is the event policy of both protocol versions: chat, agent and
// tool frames need read, and only the events listed here are delivered at
// all (fail closed). Families end with ".".
//
// OpenClaw's April v3 code guarded only approvals, pairing and session
// events, so a v3 token client without a device (its scopes cleared, §1.4
// step 7) still read every chat (issue 22, finding 6). Its shipped code
// (2026.9.6, src/gateway/server-broadcast-scopes.ts EVENT_SCOPE_GUARDS,
// checked by hasEventScope) has one table for every client, whatever its
// protocol, and drops unlisted events; this follows it.
var eventRules = map[string]eventRule{
	"connect.challenge":   {open: true},
	"tick":                {open: true},
	"presence":            {open: true},
	"health":              {open: true},
	"shutdown":            {open: true},
	"voicewake.changed":   {open: true},
	"node.invoke.request": {nodeOnly: true},
	"chat":                {scope: ScopeRead},
	"agent":               {scope: ScopeRead},
	"session.message":     {scope: ScopeRead},
	"session.tool":        {scope: ScopeRead},
	"sessions.changed":    {scope: ScopeRead},
	"heartbeat":           {scope: ScopeRead},
	"cron":                {scope: ScopeRead},
	"talk.mode":           {scope: ScopeRead},
	"update.available":    {scope: ScopeRead},
	"config.changed":      {scope: ScopeRead},
	"exec.approval.":      {scope: ScopeApprovals},
	"plugin.approval.":    {scope: ScopeApprovals},
	"device.pair.":        {scope: ScopePairing},
	"node.pair.":          {scope: ScopePairing},
}

// EventAllowed decides whether a broadcast event may be sent to a
// connection (openclaw-facts §1.9): open events go to everyone, guarded
// ones only to operators with the scope, ScopeAdmin passes every guard and
// ScopeWrite satisfies ScopeRead; an event not in the table is never sent.
//
// The rule is the same for protocol 3 and 4, as in OpenClaw's shipped code:
// chat, agent, session and tool events need ScopeRead on both, so a client
// whose scopes were cleared reads no conversation. The protocol version
// therefore does not change the answer; the parameter stays so the hub's
// call need not know that.
func EventAllowed(event string, role string, scopes []string, protocol int) bool {
	rule, known := lookupEvent(eventRules, event)
	if !known {
		return false
	}
	switch {
	case rule.open:
		return true
	case rule.nodeOnly:
		return role == RoleNode
	case role != RoleOperator:
		return false
	case slices.Contains(scopes, ScopeAdmin):
		return true
	case rule.scope == ScopeRead && slices.Contains(scopes, ScopeWrite):
		return true
	}
	return slices.Contains(scopes, rule.scope)
}

// lookupEvent finds an event by exact name or by a family prefix ending in
// ".".
func lookupEvent(table map[string]eventRule, event string) (eventRule, bool) {
	if v, ok := table[event]; ok {
		return v, true
	}
	for key, v := range table {
		if strings.HasSuffix(key, ".") && strings.HasPrefix(event, key) && len(event) > len(key) {
			return v, true
		}
	}
	return eventRule{}, false
}
