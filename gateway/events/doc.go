// Package events translates one agent run into the gateway's "chat" and
// "agent" event payloads, wire-compatible with OpenClaw's clients
// (openclaw-facts §1.11, §1.12, §1.15, §5.2; OpenClaw's
// src/gateway/server-chat.ts). It is pure: no IO, no goroutines, no timers.
// The WebSocket server feeds a Run the dispatcher's observer callbacks and
// broadcasts what comes back; time comes from an injected clock, and a chat
// delta held back by the throttle is released by Flush at NextFlush.
//
// # Agent events
//
// Every agent event is {runId, seq, stream, ts, sessionKey, data}; seq
// counts the run's agent events from 1 without gaps. The streams:
//
//	lifecycle  {phase:"start", startedAt, kind}
//	           {phase:"end", startedAt, endedAt, stopReason?}
//	           {phase:"end", startedAt, endedAt, aborted:true, stopReason}
//	           {phase:"error", startedAt, endedAt, error, errorKind}
//	assistant  text: {phase:"delta", messageId, contentIndex, blockType:"text", delta}
//	           plus the structure events below
//	thinking   {phase:"delta", messageId, contentIndex, blockType:"thinking", delta}
//	tool       {phase:"start", name, toolCallId, args, messageId, contentIndex}
//	           {phase:"update", name, toolCallId, partialResult, messageId, contentIndex}
//	           {phase:"result", name, toolCallId, isError, result, messageId, contentIndex}
//	compaction {phase:"start", reason, tokensBefore}
//	           {phase:"end", reason, tokensBefore, tokensAfter, completed, error?}
//
// Deltas are held for the chat throttle: a run sends the first delta at
// once and then at most one agent delta (per block) and one chat delta
// per Options.Throttle, so a model that streams twenty tokens in a
// millisecond costs a client two of each, not twenty. A held delta is
// sent before any other event of the run (every event that takes a seq
// sends it first), so a block's deltas still come before its block_stop
// and a response's before a tool starts.
//
// A delta carries what it adds to its block, never the text so far:
// OpenClaw's classic assistant event also repeats the response's text in
// text, which makes a reply of N bytes cost each client O(N²) bytes
// (issue 22). OpenClaw's clients do not read it (its TUI renders chat
// events, its Control UI takes assistant events as a sign of activity);
// the whole text is the chat event's. Reasoning is on the thinking stream,
// where OpenClaw sends it, so it never reaches a client that appends every
// assistant delta to the reply.
//
// # Structured-stream extension
//
// Switchboard adds, inside data where OpenClaw clients ignore what they do
// not know, the structure of each model response (seed 003), so a client
// can render text + tool call + text in order:
//
//	{phase:"message_start", messageId, model?}
//	{phase:"block_start", messageId, contentIndex, blockType, toolName?, toolCallId?}
//	{phase:"delta", messageId, contentIndex, blockType, ...}
//	{phase:"block_stop", messageId, contentIndex, blockType, toolName?, toolCallId?}
//	{phase:"message_stop", messageId, stopReason?, errorMessage?}
//
// The rules:
//
//   - messageId names one model response: runId + ":" + n, n counting the
//     run's responses from 1. A run with tools has several.
//   - contentIndex is the block's index in the response's content, as the
//     model numbered it; blockType is "text", "thinking" or "toolCall".
//   - All five are on the assistant stream, except thinking deltas (on the
//     thinking stream). Text and thinking deltas carry delta; toolCall
//     deltas argsDelta, a
//     fragment of the arguments' JSON (never delta, so it cannot be taken
//     for reply text).
//   - Tool-stream events carry the messageId and contentIndex of their
//     call's toolCall block.
//   - A text block starts with its first visible text: a leading NO_REPLY
//     is held back (reply.StreamFilter), so a silent reply produces no text
//     block at all. Text the filter had already let through and that turns
//     out silent ("no_reply" streamed in lower case) is taken back with a
//     text delta {text:"", delta:"", replace:true}: the response's text is
//     now text.
//   - toolCall block events are marked Out.ToolStream, like the tool
//     stream: tool details go only to clients that asked for them.
//   - The assistant and thinking streams are marked Out.Structured: they go
//     only to clients with the "structured-stream" capability (the web
//     chat page). OpenClaw's clients do not read them (its TUI renders
//     chat events; its Control UI takes an assistant event as a sign of
//     activity, which the chat delta also gives), so a client without the
//     capability is sent a run's lifecycle, chat and tool events only.
//
// # Chat events
//
// Chat events carry the cumulative text of the whole run, as OpenClaw's
// chat buffer does: the visible text of all model responses so far, one
// paragraph ("\n\n") per response, with inline directive tags removed
// ({runId, sessionKey, seq, state, message:{role:"assistant",
// content:[{type:"text", text}], timestamp}}). Deltas are throttled to one
// per Options.Throttle (150 ms) and, since each repeats the whole text,
// to a byte budget linear in the text (see withinBudget): a long reply's
// deltas grow sparser, and the bytes a client is sent for it stay O(N).
// Text that grew since the last delta is flushed as one extra delta before
// a tool starts and before the final.
// Heartbeat runs stream no chat deltas (OpenClaw hides heartbeat output
// from interactive chat). The final's message is what the chat receives,
// the text of the run's replies (agent.Result.Replies, built from the last
// response), absent for a silent reply or a heartbeat ack; clients reload
// history on final, where the earlier responses are. A chat event's seq is
// the seq of the agent event it goes with: a delta the text delta's (or,
// for a flush, the tool start's), the terminal event the lifecycle end's,
// which is the last seq before it plus one. MarshalFor writes the members
// of each state for protocol 3 or 4.
package events
