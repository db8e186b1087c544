package protocol

// BaseMethods is OpenClaw v3's advertised method list (BASE_METHODS in
// src/gateway/server-methods-list.ts, openclaw-facts §1.13), in its order.
// It is reference material: the server advertises only the methods it
// implements, and some callable methods (sessions.get, poll, push.test, …)
// are never advertised.
var BaseMethods = []string{
	// Health and status.
	"health", "doctor.memory.status", "doctor.memory.dreamDiary",
	"doctor.memory.backfillDreamDiary", "doctor.memory.resetDreamDiary",
	"doctor.memory.resetGroundedShortTerm", "doctor.memory.repairDreamingArtifacts",
	"doctor.memory.dedupeDreamDiary", "logs.tail", "channels.status", "channels.logout", "status",
	"usage.status", "usage.cost",
	// TTS.
	"tts.status", "tts.providers", "tts.enable", "tts.disable", "tts.convert", "tts.setProvider",
	// Config.
	"config.get", "config.set", "config.apply", "config.patch", "config.schema", "config.schema.lookup",
	// Approvals.
	"exec.approvals.get", "exec.approvals.set", "exec.approvals.node.get", "exec.approvals.node.set",
	"exec.approval.get", "exec.approval.list", "exec.approval.request", "exec.approval.waitDecision",
	"exec.approval.resolve", "plugin.approval.list", "plugin.approval.request",
	"plugin.approval.waitDecision", "plugin.approval.resolve",
	// Wizard and talk.
	"wizard.start", "wizard.next", "wizard.cancel", "wizard.status", "talk.config", "talk.speak",
	"talk.mode",
	// Agents, tools and skills.
	"commands.list", "models.list", "tools.catalog", "tools.effective", "agents.list",
	"agents.create", "agents.update", "agents.delete", "agents.files.list", "agents.files.get",
	"agents.files.set", "skills.status", "skills.search", "skills.detail", "skills.bins",
	"skills.install", "skills.update", "update.run", "voicewake.get", "voicewake.set",
	"secrets.reload", "secrets.resolve",
	// Sessions.
	"sessions.list", "sessions.subscribe", "sessions.unsubscribe", "sessions.messages.subscribe",
	"sessions.messages.unsubscribe", "sessions.preview", "sessions.compaction.list",
	"sessions.compaction.get", "sessions.compaction.branch", "sessions.compaction.restore",
	"sessions.create", "sessions.send", "sessions.abort", "sessions.patch", "sessions.reset",
	"sessions.delete", "sessions.compact",
	// Heartbeat.
	"last-heartbeat", "set-heartbeats", "wake",
	// Pairing and nodes.
	"node.pair.request", "node.pair.list", "node.pair.approve", "node.pair.reject",
	"node.pair.verify", "device.pair.list", "device.pair.approve", "device.pair.reject",
	"device.pair.remove", "device.token.rotate", "device.token.revoke", "node.rename", "node.list",
	"node.describe", "node.pending.drain", "node.pending.enqueue", "node.invoke",
	"node.pending.pull", "node.pending.ack", "node.invoke.result", "node.event",
	"node.canvas.capability.refresh",
	// Cron.
	"cron.list", "cron.status", "cron.add", "cron.update", "cron.remove", "cron.run", "cron.runs",
	// Messaging and agent.
	"gateway.identity.get", "system-presence", "system-event", "message.action", "send", "agent",
	"agent.identity.get", "agent.wait",
	// Chat.
	"chat.history", "chat.abort", "chat.send",
}

// GatewayEvents is OpenClaw v3's advertised event list (GATEWAY_EVENTS,
// openclaw-facts §1.13), in its order. Like BaseMethods it is reference
// material for what the server may advertise.
var GatewayEvents = []string{
	"connect.challenge", "agent", "chat", "session.message", "session.tool", "sessions.changed",
	"presence", "tick", "talk.mode", "shutdown", "health", "heartbeat", "cron",
	"node.pair.requested", "node.pair.resolved", "node.invoke.request",
	"device.pair.requested", "device.pair.resolved", "voicewake.changed",
	"exec.approval.requested", "exec.approval.resolved", "plugin.approval.requested",
	"plugin.approval.resolved",
	"update.available",
}

// Event names the gateway itself emits.
const (
	// EventConnectChallenge is sent on socket open with ChallengePayload.
	EventConnectChallenge = "connect.challenge"
	// EventTick is sent every TickIntervalMs with TickPayload.
	EventTick = "tick"
	// EventShutdown is sent before the server closes with ShutdownPayload.
	EventShutdown = "shutdown"
	// EventPresence carries presence changes.
	EventPresence = "presence"
	// EventHealth carries the health snapshot.
	EventHealth = "health"
)
