// Package bridges will hold the contract every chat-platform adapter implements
// (Telegram, Slack, Discord, WhatsApp) and the pieces they share: gating of
// direct messages and groups, chunking, markup conversion and reply routing.
//
// The adapters live in sub-packages (bridges/telegram, bridges/slack, ...). A
// bridge converts platform events into core.Inbound values and delivers
// core.ReplyPayload values back; platform types never leave the adapter.
//
// The contract arrives with the Telegram bridge; until then this package is
// intentionally empty.
package bridges
