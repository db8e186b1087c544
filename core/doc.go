// Package core holds what every other Switchboard package speaks: the message
// model of seed 000 (messages, content blocks, usage, stream and agent events,
// reply payloads), session keys, and the agent configuration. Later it also
// holds the agent loop.
//
// core imports no other Switchboard package. Types here are the framework's
// public API: an embedding program builds and reads them directly.
package core
