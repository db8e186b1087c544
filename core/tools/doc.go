// Package tools will hold the tool registry, the tool hooks (before, after and
// persist) and the built-in tools.
//
// Until the agent core lands this package is intentionally empty.
package tools
