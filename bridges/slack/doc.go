// Package slack will be the Slack bridge (github.com/slack-go/slack):
// Socket Mode by default, the Events API over HTTP as an option. So far it
// holds the request signature check of the HTTP mode (VerifySignature).
package slack
