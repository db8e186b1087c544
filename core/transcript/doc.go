// Package transcript will store session transcripts as JSONL files, one
// AgentMessage per line (seed 000 §6), with crash repair on open and history
// sanitation before each model call.
//
// Until the agent core lands this package is intentionally empty.
package transcript
