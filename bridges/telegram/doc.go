// Package telegram is the Telegram bridge, on github.com/go-telegram/bot.
//
// Inbound: updates are normalized into bridges.Inbound (normalize.go):
// direct chats keyed by the sender under session.dmScope, private-chat
// topics as threads, groups as "telegram:group:<chatId>", forum topics
// with ":topic:<id>" (a message without a thread id in a forum is in the
// General topic, 1); mentions from mention and text_mention entities
// (offsets in UTF-16 code units) and "/cmd@bot" commands, replies to the
// bot as implicit mentions; edits, channel posts, service messages and
// bots' messages are not answered. The update id is the durable dedupe
// key.
package telegram
