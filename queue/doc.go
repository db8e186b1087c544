// Package queue is the dispatcher: the only path by which an agent turn
// runs. Bridges, the gateway's chat.send and the scheduler hand it
// core.Inbound messages; it journals each one durably before the platform is
// acknowledged, runs at most one turn per session key, and decides what a
// message does when its session is already busy. The rules are OpenClaw's
// (openclaw-facts §3 and §6.4), so a bot behaves the same under either.
//
// # Modes
//
// A message for a session with no running turn runs now. While a turn runs
// (Decide), a heartbeat is dropped and a user message follows the session's
// Mode:
//
//   - collect (the default) queues it; when the session is free, everything
//     queued runs as one turn whose prompt lists the messages in order
//     (CollectPrompt). Messages for different destinations (CrossChannel)
//     are answered one by one instead, so every reply goes where its
//     message came from.
//   - followup queues it; each queued message runs as a turn of its own.
//   - steer hands it to the running turn, which reads it after its current
//     tool call, when the turn is streaming; otherwise it is queued as
//     followup does.
//   - steer-backlog steers it and also queues it.
//   - interrupt aborts the running turn and runs the message now.
//
// A queue drains once it has been quiet for the debounce: each new message
// restarts the wait, so a burst is answered together.
//
// # Settings
//
// Resolve picks the mode, debounce, cap and drop policy for a message: an
// inline "/queue …" directive in the message, then the session's stored
// setting (set by a message that is nothing but a directive), then the
// configuration (Config, messages.queue, with per-channel mode and
// debounce), then the defaults: collect, 1000 ms, 20, summarize.
// ParseDirective reads the directive; Directive.Describe words the reply to
// a standalone one.
//
// # A full queue
//
// A session's queue holds Cap messages. When another arrives (ApplyDrop),
// drop policy new refuses it; old drops the oldest silently; summarize drops
// the oldest but keeps a summary line of each (Overflow), which the next
// turn sees: inside the collect prompt, or in the other modes as a turn of
// its own (OverflowPrompt). Summary lines are channel text made into one
// harmless line (SummaryLine).
//
// # Redeliveries
//
// A platform may deliver a message twice. Besides the store's durable
// dedupe, the dispatcher remembers recently queued messages for five
// minutes (RecentIDs, keyed by DedupeKey) and ignores a second copy. The
// durable dedupe keys live as long as their journal entries, which the
// dispatcher never deletes: the store's maintenance job
// (store.Maintenance) prunes finished entries after a day.
//
// # System events
//
// Producers (cron jobs, channel notices, the gateway's system-event and
// wake methods) queue short notes for a session (SystemEvents). They are
// kept in memory only, at most 20 per session without consecutive
// repeats, and the session's next turn drains them into its prompt as
// "System:" lines (core/prompt.FormatSystemEvents).
package queue
