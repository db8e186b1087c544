// Package bridges is the contract between Switchboard and a chat-platform
// adapter (Telegram, Slack, Discord, WhatsApp, or one of your own), and the
// small helpers adapters share: connection states and their Tracker,
// reconnect Backoff, mention patterns, media download and upload limits,
// idempotent sends (SendOnce), and the configuration vocabulary every
// channel section uses (Common, Access, ReplyToMode). Markup conversion and
// chunking are in bridges/markup. The adapters live in sub-packages
// (bridges/telegram, ...); a platform's types never leave its adapter, and
// its name appears nowhere else.
//
// This package imports nothing of the daemon: not the dispatcher, the
// store, the agent or the model clients. What runs bridges in the daemon (access
// gating, pairing, the group history buffer, the reply router, typing, the
// supervisor) is package channels.
//
// # The contract
//
// A bridge implements Bridge:
//
//	Name() string                      the channel: its configuration key under channels:
//	AccountID() string                 the bot account, "default" for one
//	Start(ctx, sink) error             run until ctx ends
//	Deliver(ctx, Outbound) (Receipt, error)
//	Status() Status                    state, last error, last activity
//
// and, where the platform allows, the optional capabilities, found by type
// assertion: Typer (typing indicator), Reactor (ack reaction), Editor
// (replace a sent message), Logouter (unlink), LoginFlow (QR or phone
// code linking), WebhookHandler (platform events over HTTP). Each adapter
// asserts what it implements at compile time:
//
//	var (
//		_ bridges.Bridge = (*Bridge)(nil)
//		_ bridges.Typer  = (*Bridge)(nil)
//	)
//
// A bridge package describes itself with a Descriptor: its channel name and
// label, how to build it from its configuration section (a Section, which
// embeds Common) and an Env, and the platform knowledge the rest of
// Switchboard asks about without running it: how a delivery target is
// written, which chats are direct. A Registry of descriptors is what the
// daemon loops over; it holds no global state.
//
// # Inbound: normalize, hand to the sink, then acknowledge
//
// For every platform message the bridge builds a core.Inbound: SessionKey
// (core.BuildPeerSessionKey and the §2.4 rules of openclaw-facts), Route
// (channel, account, chat id, thread), ChatType, Sender, MessageID,
// Timestamp, Body, WasMentioned (native mentions and mention patterns),
// ReplyTo, Group, Media. Channel text only ever goes into the untrusted
// fields; the prompt builder puts it in untrusted positions. The bridge
// wraps it in an Inbound with what gating needs (GroupID,
// CanDetectMention, ImplicitMention for replies to the bot,
// IsControlCommand, HistoryKey from core.GroupHistoryKey) and a DedupeKey
// naming the platform delivery durably (for Telegram the update id).
//
// Sink.Submit returns once the message is durably journaled, refused by
// policy, or recognised as a duplicate. Only then does the bridge
// acknowledge it to the platform (commit the Telegram offset, answer
// Slack's request). When Submit fails the bridge does not acknowledge, so
// the platform delivers again and nothing accepted is lost; the DedupeKey
// makes the second delivery harmless.
//
// # State and reconnects
//
// Start reports states through Sink.State; a Tracker keeps them for
// Status. Transient failures (network errors, 5xx, rate limits, a
// conflict with another poller) back off with Backoff (exponential with
// jitter, capped) and keep the bridge running; the state says what is
// happening and LastError why. Terminal states (bad credentials, logged
// out, a ban) stop reconnecting: Start reports the state and returns its
// error, and the owner must act. The supervisor in package channels
// restarts a Start that returned without a terminal state, with its own
// backoff, so a bridge that gives up early still comes back; a bridge
// never takes the process down.
//
// # Outbound
//
// Deliver sends one Outbound (one reply: markdown text and media) to its
// Route, converting markdown with bridges/markup, chunking to the
// platform's limit without splitting code fences or style spans, threading
// per the channel's replyToMode, and honouring rate limits (Retry-After,
// retry_after). With a Ledger it records each chunk's platform id under
// LedgerKey and skips chunks already recorded, so a delivery repeated after
// a crash sends exactly what is missing.
package bridges
