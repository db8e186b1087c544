// Package arch holds no code: its tests keep the architecture of
// docs/ARCHITECTURE.md true. layering_test.go checks every import of one
// package of this module by another against a table of allowed edges, each
// with its reason, and that the bridge contract, the adapters and their
// platform fakes stay free of the daemon (the dispatcher, the store, the
// agent, the model clients). platforms_test.go checks that no platform's name
// drives logic outside its bridge's folder.
package arch
