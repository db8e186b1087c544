package bridges

import (
	"context"
	"errors"
	"net/http"

	"github.com/switchboardhq/switchboard/core"
)

// Typer is a bridge that can show a typing indicator. Typing shows it
// once; the platform clears it after a few seconds, so callers refresh it
// (see TypingLoop).
type Typer interface {
	Typing(ctx context.Context, route core.Route) error
}

// TypingStopper is a Typer whose indicator stays up until cleared
// (WhatsApp's "composing" presence): StopTyping is called when the run
// ends.
type TypingStopper interface {
	StopTyping(ctx context.Context, route core.Route) error
}

// Reactor is a bridge that can react to a message with an emoji (the ack
// reaction).
type Reactor interface {
	React(ctx context.Context, route core.Route, messageID MessageID, emoji string) error
}

// Editor is a bridge that can replace the text of a message it sent
// (preview streaming).
type Editor interface {
	Edit(ctx context.Context, route core.Route, messageID MessageID, text string) error
}

// Logouter is a bridge that can unlink its account (WhatsApp) or forget
// its session. It is what channels.logout calls.
type Logouter interface {
	Logout(ctx context.Context) error
}

// LoginFlow is a bridge whose account is linked interactively (a QR code
// or a pairing code on the phone) rather than configured with a token. Its
// methods work whether or not Start runs: a linking started while the
// bridge is stopped is kept by the store the bridge owns, and the host
// starts the bridge again once it is linked.
type LoginFlow interface {
	// LoginStart begins linking and returns what to show the user (a QR
	// code's payload, or a phone pairing code). It returns an error that
	// wraps ErrAlreadyLinked when an account is linked; log it out first.
	// The linking it begins outlives ctx; a second LoginStart replaces it.
	LoginStart(ctx context.Context, phone string) (LoginChallenge, error)
	// LoginWait blocks until the account is linked, the challenge is
	// replaced (a new QR code: returned with the error ErrLoginRefresh),
	// or ctx ends (its error; the linking goes on for the next call).
	LoginWait(ctx context.Context) (LoginChallenge, error)
	// LinkedAccount names the linked account (a phone number), linked
	// false when none is. It reads the bridge's own store.
	LinkedAccount(ctx context.Context) (account string, linked bool, err error)
}

// LoginChallenge is what a user must scan or type to link an account.
type LoginChallenge struct {
	// QR is the payload to encode as a QR code, if any.
	QR string
	// PairingCode is the code to type on the phone, if any.
	PairingCode string
	// Instructions tell a person where on the phone the QR code is
	// scanned or the pairing code typed, in the platform's own words.
	Instructions string
	// Linked reports that linking finished; the challenge is spent.
	Linked bool
	// Account names the linked account once Linked (a phone number).
	Account string
}

// ErrLoginRefresh comes back from LoginFlow.LoginWait with a new
// challenge that replaces the previous one (a fresh QR code).
var ErrLoginRefresh = errors.New("a new code replaces the previous one")

// ErrAlreadyLinked is wrapped by LoginFlow.LoginStart's error when an
// account is linked already: log it out first (Logouter).
var ErrAlreadyLinked = errors.New("an account is already linked")

// WebhookHandler is a bridge that receives platform events over HTTP
// (Telegram webhooks, Slack's Events API). The daemon mounts Handler at
// WebhookPath on the listener the bridge's configuration names.
type WebhookHandler interface {
	WebhookPath() string
	http.Handler
}

// SystemEventSink is a Sink that also takes platform notices that are not
// messages to answer (an edited or deleted message) as system events for
// the session's next turn. Bridges find it by type assertion and skip the
// notice when the sink lacks it.
type SystemEventSink interface {
	// SystemEvent queues text for msg's session, after the same access
	// policy as Submit. contextKey names what the notice is about.
	SystemEvent(ctx context.Context, msg Inbound, text, contextKey string) error
}

// NoticeSink is a Sink that also takes the bridge's own notices (not
// platform text: "WhatsApp connected as +1555…") for an agent's main
// session, as trusted system events. Bridges find it by type assertion.
type NoticeSink interface {
	Notice(ctx context.Context, agentID, text, contextKey string) error
}
