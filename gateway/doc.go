// Package gateway is Switchboard's control plane: one port that serves HTTP
// (/healthz, /readyz, later /metrics and the web chat page) and, with the
// gateway issue, the WebSocket protocol v3/v4 that web chat, CLIs and apps
// speak (seed 001).
//
// Security defaults: the listener binds to loopback unless configured
// otherwise; secrets never travel in URLs.
package gateway
