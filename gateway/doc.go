// Package gateway is Switchboard's control plane: one port that serves HTTP
// (/healthz, /readyz, /metrics, and / for the web chat page) and the
// WebSocket protocol, versions 3 and 4, that web chat, CLIs and OpenClaw's
// apps speak (seed 001, openclaw-facts §1).
//
// A connection starts with connect.challenge; its first request must be a
// valid connect, which is checked in OpenClaw's order (params, protocol
// range, role, browser origin, shared secret with per-address and global
// rate limits, device identity, device token, pairing) and answered with
// hello-ok or an error and a close code. After that every request is authorised by role and
// scope (package protocol's policy table) before its handler runs; unknown
// methods are errors, never silence.
//
// The server observes the dispatcher's runs (queue.Observer) and turns them
// into chat and agent events (package events), broadcast without ever
// blocking: each connection has an outbound queue bounded in bytes, and a
// client that falls behind loses droppable events and is then disconnected
// as a slow consumer.
//
// Nothing a client can hold is unbounded (limits.go): connections on the
// port, in total (derived from the open-file limit, so the bridges and the
// store keep descriptors) and per client address, with idle keep-alives
// evicted and a reserve that keeps /healthz answering at the cap;
// unauthenticated sockets, per address and in total; the failed-auth
// budget, per address and over all addresses (package auth); a frame
// header announcing too much, refused before its bytes arrive, and the
// bytes of large messages decoded at once (frameguard.go). Behind a
// reverse proxy listed in gateway.trustedProxies, the client's address
// comes from X-Forwarded-For (proxy.go).
//
// Security defaults: the listener binds to loopback; a token is always
// required unless auth is none, which only loopback allows; the WebSocket
// upgrade is refused (421) unless its Host is a name DNS rebinding cannot
// take over (hostAllowed); secrets never travel in URLs and never reach a
// log line.
package gateway
