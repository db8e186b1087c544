// Package prompt will assemble the prompt body of each turn (seed 004 phase
// A): the trusted system prompt and the untrusted, labelled metadata blocks
// that carry channel-supplied text.
//
// Until the agent core lands this package is intentionally empty.
package prompt
