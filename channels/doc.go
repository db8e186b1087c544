// Package channels runs bridges inside the daemon: everything between a
// bridge (package bridges and its adapters) and the dispatcher that is the
// same for every platform.
//
//   - Supervisor builds each configured bridge from its Descriptor, starts
//     it, restarts a Start that returned on a non-terminal failure with
//     capped, jittered backoff, parks it on a terminal state, stops and
//     starts one bridge on demand, and keeps the one state every surface
//     shows (/readyz, channels.status, the web page, /metrics).
//   - Gate is the Sink a bridge runs with: it applies the channel's Access
//     policy (Decide), answers unknown direct senders with a pairing code,
//     keeps group messages that did not address the bot in GroupHistory,
//     and hands accepted messages to the dispatcher.
//   - Router delivers the dispatcher's replies to the bridge that owns
//     their channel and account, with threading, prefixes and the outbound
//     ledger; Typing shows typing indicators while runs go; MessageTool is
//     the agent's message tool.
//
// # Gating
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
package channels
