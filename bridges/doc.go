// Package bridges holds the contract every chat-platform adapter implements
// (Telegram, Slack, Discord, WhatsApp) and the pieces they share: access
// gating of direct messages and groups with DM pairing codes, the group
// history buffer, connection states and reconnect backoff. Markup
// conversion and chunking are in bridges/markup. The adapters live in
// sub-packages (bridges/telegram, ...); a platform's types never leave its
// adapter.
//
// # The contract
//
// A bridge implements Bridge:
//
//	Name() string                      the channel: "telegram", "slack", ...
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
// # Gating
//
// In the daemon the sink is a Gate, configured by the channel's Access:
//
//   - direct chats: dmPolicy pairing (default) | allowlist | open |
//     disabled, with allowFrom. Under pairing an unknown sender gets a code
//     (8 characters of PairingAlphabet, valid for PairingTTL, at most
//     MaxPendingPairingCodes per channel and account, sent once) and the
//     message is dropped; `switchboard pairing approve <channel> <code>`
//     approves the sender for good (the store keeps codes and approvals).
//   - groups: groupPolicy allowlist (default; groups by id or "*") | open |
//     disabled, groupAllowFrom and per-group allowFrom, requireMention
//     (default true) per group or under "*". A message that does not
//     address the bot, where the platform can tell, is skipped but kept in
//     the group's GroupHistory (50 per group, 1000 groups, LRU); the next
//     accepted message of the group carries the newest 20 as untrusted
//     history, and the buffer is cleared.
//
// # State and reconnects
//
// Start reports states through Sink.State; a Tracker keeps them for
// Status. Transient failures (network errors, 5xx, rate limits, a
// conflict with another poller) back off with Backoff (exponential with
// jitter, capped) and keep the bridge running; the state says what is
// happening and LastError why. Terminal states (bad credentials, logged
// out) stop reconnecting: Start reports the state and returns its error,
// and the owner must act. A bridge never takes the process down.
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
