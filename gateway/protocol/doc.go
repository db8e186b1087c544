// Package protocol owns the wire format of the gateway's WebSocket protocol,
// versions 3 and 4, as OpenClaw's clients speak it (openclaw-facts §1): the
// req/res/event frames and their strict decoding, the connect params and
// their validation with OpenClaw's error wording, protocol negotiation, the
// hello-ok payload for each version, error and close codes, and the role and
// scope policy that decides which methods a connection may call and which
// events it may receive.
//
// Everything here is pure: no IO, no goroutines, no clocks. The gateway
// server (package gateway) owns sockets, sessions and timing and calls into
// this package to decide what to send. Credentials and device signatures are
// package gateway/auth.
//
// Where OpenClaw's v3 and v4 differ, functions take the negotiated protocol
// version and produce the shape that version's clients expect; see
// HelloOk.MarshalFor, Authorize and EventAllowed.
package protocol
