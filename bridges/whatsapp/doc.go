// Package whatsapp is the WhatsApp bridge, on go.mau.fi/whatsmeow: the
// bot is a linked device (a WhatsApp Web companion) of a phone's account.
//
// # Linking and credentials
//
// The device's keys live in a whatsmeow sqlstore on modernc.org/sqlite
// (no cgo) at <stateDir>/whatsapp/device.db (OpenStore). StartLink pairs
// a new device by QR code (RenderQR draws it in a terminal, QRDataURL
// for the web page) or by a phone-number pairing code; the bridge's
// LoginStart/LoginWait expose the same flow to the gateway
// (web.login.start, web.login.wait). Credentials are deleted only by an
// explicit logout (Bridge.Logout, LogoutStore), or by whatsmeow when
// WhatsApp reports the device removed; restarts, updates and reconnects
// never touch them (reliability-security §2.6).
//
// # Connection states
//
// Connected and KeepAliveRestored are connected. Disconnected, stream
// errors, WhatsApp's own 500/503 connect failures and keepalives failing
// for over three minutes are transient: the bridge reconnects with
// jittered, capped backoff (whatsmeow's own auto-reconnect is off). A
// logout, a stream replaced by another client, a temporary ban, an
// outdated client and any other connect failure are terminal: the state
// (logged-out or failed) carries a readable reason, nothing reconnects,
// and Start waits for a new link (or its context) rather than returning,
// so linking from the web page revives the bridge without a restart.
//
// # Inbound
//
// Text, extended text and captions; images, video, audio, documents and
// stickers downloaded into the media folder up to the size cap (larger
// ones are described instead). A quoted reply becomes core.Inbound.ReplyTo
// and is appended to the body as "[Replying to <sender> id:<id>]\n<body>\n
// [/Replying]" (openclaw-facts §4.2). A group message mentions the bot
// when ContextInfo's mentioned JIDs name the linked account (by phone
// number or LID), when it matches a mention pattern, or implicitly when it
// replies to the bot. The bot's own messages, status updates and channel
// posts are ignored; edits become untrusted system events without their
// text. Session keys (§2.4): a direct chat by the sender's E.164 (a LID is
// resolved through the store's LID map or the alternate JID WhatsApp
// sends), a group by its JID. A message is journaled before whatsmeow
// acks it (SynchronousAck): when the journal fails the ack is withheld and
// WhatsApp delivers it again.
//
// # Outbound
//
// Markdown becomes WhatsApp's markup (markup.WhatsApp: *bold*, _italic_,
// ~strike~, code kept, tables as bullet lists) in chunks of at most 4000
// characters; the first quotes the message replied to when replyToMode
// asks; attachments are uploaded (image, video, audio, else document).
// "Typing…" is the composing presence, cleared with paused when the run
// ends. Read receipts are optional (sendReadReceipts). On the first
// connection the agent's main session gets the notice "WhatsApp connected
// as +…".
//
// # Tests
//
// Client is the seam: *whatsmeow.Client satisfies it, and tests use
// whatsapptest's fake, which injects real whatsmeow events and records
// sends. No test dials WhatsApp.
package whatsapp
