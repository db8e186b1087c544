// Package gateway is Switchboard's control plane: one port that serves HTTP
// (/healthz, /readyz, /metrics, and / for the web chat page) and the
// WebSocket protocol, versions 3 and 4, that web chat, CLIs and OpenClaw's
// apps speak (seed 001, openclaw-facts §1).
//
// A connection starts with connect.challenge; its first request must be a
// valid connect, which is checked in OpenClaw's order (params, protocol
// range, role, browser origin, shared secret with a per-address rate limit,
// device identity, device token, pairing) and answered with hello-ok or an
// error and a close code. After that every request is authorised by role and
// scope (package protocol's policy table) before its handler runs; unknown
// methods are errors, never silence.
//
// The server observes the dispatcher's runs (queue.Observer) and turns them
// into chat and agent events (package events), broadcast without ever
// blocking: each connection has an outbound queue bounded in bytes, and a
// client that falls behind loses droppable events and is then disconnected
// as a slow consumer.
//
// Security defaults: the listener binds to loopback; a token is always
// required unless auth is none, which only loopback allows; secrets never
// travel in URLs and never reach a log line.
package gateway
