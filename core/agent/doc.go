// Package agent runs agent turns: the brain between the dispatcher and the
// model. One Run takes one inbound message through
//
//   - session resolution (the sessions index; /new and /reset start a new
//     transcript and keep the old one),
//   - prompt assembly (core/prompt: the byte-stable system prompt with the
//     trusted metadata block, the user message with its untrusted blocks),
//   - history (core/transcript: load with crash repair, context selection,
//     sanitation, history limits, pruning, compaction),
//   - the model ⇄ tool loop of seed 002 (core/llm streaming with retries and
//     fallbacks, core/tools execution in parallel), with steering at tool
//     boundaries and abort through the context,
//   - transcript append (seed 000 §6) and reply assembly (core/reply).
//
// It emits seed-000 AgentEvents in order. Nothing else calls the model: the
// queue dispatcher is the only caller of Run, and it guarantees one run per
// session at a time (Run also refuses a second one).
package agent
