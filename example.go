// Package switchboard holds what the binary carries from the top of the
// repository: the example configuration that documents every key, so
// `switchboard config example` and `switchboard init` work for users who
// installed with `go install` and have no clone.
package switchboard

import _ "embed"

// ExampleConfig is config.yaml.example: every configuration key with its
// default and documentation, the echo model selected so it runs without
// keys.
//
//go:embed config.yaml.example
var ExampleConfig string
