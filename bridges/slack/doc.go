// Package slack is the Slack bridge, on github.com/slack-go/slack.
//
// Events arrive over Socket Mode (app token xapp-…; auth.test with the bot
// token first) or, with HTTPOptions (channels.slack.mode: http), over
// HTTP: each request's signature is checked (VerifySignature),
// url_verification is answered, and the handling of an event is bounded
// so Slack gets its answer before its 3 s timeout. Either way a delivery
// is acknowledged only after the sink took its message, with the event_id
// as the durable dedupe key, so a retry is processed like a first attempt
// and the journal drops it if the first got through.
//
// Start keeps the bridges contract through outages (bridge.go,
// socket.go): a failed auth.test (Slack unreachable, 5xx, rate limited,
// no answer within 30 s) and a failed Socket Mode connection are reported
// as StateTransientDisconnect and retried after Options.Backoff (1 s
// doubling to 60 s, jittered; a longer Retry-After wins); a connection
// that stayed up a minute starts the backoff over. slack-go reopens a
// dropped connection at once by itself; a failed attempt ends its run,
// and the bridge paces the next. Only a token Slack refuses (invalid_auth,
// not_authed, account_inactive, token_revoked…: StateBadCredentials) or
// an HTTP listener that cannot be bound or later breaks (StateFailed)
// ends Start early, with an error.
//
// Messages are normalized into bridges.Inbound (inbound.go): DMs by user
// under dmScope, group DMs as groups, channels as channels, true thread
// replies with ":thread:<thread_ts>"; app_mention answers a mention and
// the plain message event of the same mention is skipped; the bot's own
// and other bots' messages, joins and other subtypes are ignored. Slack's
// <@U…>, <#C…|name>, <!here> and <url|label> tokens become plain text
// (inbound_text.go). Files a message carries are downloaded with the bot
// token into MediaDir, capped at MaxMediaBytes; one that cannot be
// fetched is described to the model instead (files.go). An edit or
// deletion becomes a system event for the conversation's session when the
// sink takes them (bridges.SystemEventSink), without the message's text
// (notice.go).
//
// Deliver (deliver.go) posts mrkdwn chunks (8000 by default) in the
// route's thread, then uploads the reply's files with
// files.getUploadURLExternal and files.completeUploadExternal, each piece
// once with the ledger. Rate limits are kept per Web API method (pace.go):
// a 429 holds that method, for every caller, until its Retry-After. The ack
// reaction goes through reactions.add. `switchboard run` starts the
// bridge from channels.slack.
package slack
