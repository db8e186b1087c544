// Package auth owns the gateway's credential checks, as OpenClaw's clients
// expect them (openclaw-facts §1.4, §1.6, §1.14): Ed25519 device identity
// (ids, the v3 and v2 signed payloads, and the ordered checks of a device
// proof), the per-address rate limiter for failed attempts, constant-time
// shared-secret comparison, token generation and weak-token rejection, and
// the details object of a failed connect with OpenClaw's messages.
//
// Everything here is pure: no IO, no goroutines, and every time-dependent
// function takes the current time as an argument. RateLimiter is the one
// stateful type; it is safe for concurrent use and its memory is bounded.
// Wire shapes (error codes, detail codes, connect params) are package
// gateway/protocol.
package auth
