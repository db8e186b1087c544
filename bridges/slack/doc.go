// Package slack is the Slack bridge, on github.com/slack-go/slack.
//
// So far: Socket Mode (app token xapp-…; auth.test with the bot token
// first, invalid_auth and account_inactive terminal), events normalized
// into bridges.Inbound (DMs by user under dmScope, group DMs as groups,
// channels as channels, true thread replies with ":thread:<thread_ts>";
// app_mention answers a mention, the plain message event of the same
// mention is skipped; the bot's and other bots' messages, edits and
// deletions are ignored), each envelope acked only after the sink took
// its message, the event_id as the durable dedupe key; delivery as mrkdwn
// chunks (8000 by default) in the route's thread, waiting out 429
// Retry-After, with the ledger; the ack reaction through reactions.add.
// With HTTPOptions (channels.slack.mode: http) events arrive over HTTP
// instead: each request's signature is checked (VerifySignature),
// url_verification is answered, and an event is answered 200 only after
// the sink took it. `switchboard run` starts the bridge from
// channels.slack. Not yet: files.
package slack
