package bridges

import (
	"context"

	"github.com/switchboardhq/switchboard/core"
)

// MessageID is a platform's id of one message; see core.MessageID.
type MessageID = core.MessageID

// Bridge is the contract every chat-platform adapter implements. The
// required part is small; capabilities a platform may lack (typing,
// reactions, edits, logout, login, webhooks) are separate interfaces found
// by type assertion.
//
// A Bridge is built by its package's constructor from its configuration,
// then started once. It must be safe for concurrent use: Deliver and Status
// are called from other goroutines while Start runs.
type Bridge interface {
	// Name is the channel name, the Route.Channel of everything the bridge
	// receives and sends: "telegram", "slack", "discord", "whatsapp".
	Name() string
	// AccountID names the bot account ("default" for a single one).
	AccountID() string
	// Start connects to the platform and hands each inbound message to
	// sink until ctx ends, then returns nil after releasing everything it
	// started. It reports connection states through sink.State. It never
	// returns early on a transient failure (network errors, rate limits, a
	// platform outage): it backs off and tries again. It returns an error
	// only when it cannot run at all (a terminal state such as bad
	// credentials, reported through State before returning), and the
	// caller does not restart it.
	Start(ctx context.Context, sink Sink) error
	// Deliver sends one outbound message (one reply payload: text and
	// media) to out.Route, chunking and converting markup as the platform
	// needs. It returns the platform ids of what it sent, in order. When
	// out.Ledger is set it records each chunk there and skips chunks the
	// ledger already has, so delivering the same Outbound again after a
	// crash sends only what is missing.
	Deliver(ctx context.Context, out Outbound) (Receipt, error)
	// Status reports the connection state and its last error.
	Status() Status
}

// Sink receives what a running bridge produces. The gate (Gate) implements
// it in the daemon; tests may implement it directly.
type Sink interface {
	// Submit takes one normalized inbound message. It returns after the
	// message is durably journaled, refused by policy, or recognised as a
	// duplicate; only then may the bridge acknowledge it to the platform
	// (commit the Telegram offset, answer Slack's HTTP request). An error
	// means nothing was accepted: the bridge must not acknowledge, so the
	// platform redelivers. Deliver may be called for the message's chat
	// before Submit returns (a pairing code, or a turn that finished
	// first): a platform protocol must allow a reply before the
	// acknowledgement.
	Submit(ctx context.Context, msg Inbound) error
	// State reports a connection state change, with the error that caused
	// it (nil for starting, connected and stopped).
	State(state State, err error)
}

// Inbound is one platform message as a bridge hands it to the Sink: the
// normalized message plus what gating needs to know about it.
type Inbound struct {
	// Message is the normalized message. Its SessionKey, Route, ChatType,
	// Sender, MessageID, WasMentioned, Group and ReplyTo must be set as the
	// platform tells them.
	Message *core.Inbound
	// DedupeKey identifies the platform delivery durably, e.g.
	// "telegram:<botId>:update:<update_id>"; a second Submit with the
	// same key is accepted as a duplicate and not answered again. Empty
	// means channel + message id.
	DedupeKey string
	// CanDetectMention reports that the platform tells mentions apart (a
	// native mention entity, or configured mention patterns), so mention
	// gating applies.
	CanDetectMention bool
	// ImplicitMention is set when the message counts as a mention without
	// naming the bot: a reply to the bot, a quote of the bot, a message in
	// a thread the bot takes part in.
	ImplicitMention bool
	// IsControlCommand marks a bot command (/new, /stop, /status...) that
	// may bypass mention gating in a group when it mentions no one.
	IsControlCommand bool
	// GroupID is the group or channel the message was written in, as the
	// groups allowlist names it ("" in a direct chat).
	GroupID string
	// GroupParents are further ids the group may be configured under,
	// tried in order when groups has no entry for GroupID (a Discord
	// thread's parent channel, then "guild:<guild id>").
	GroupParents []string
	// HistoryKey is the group's history buffer key
	// (core.GroupHistoryKey); empty in a direct chat.
	HistoryKey string
}

// Outbound is one message to send.
type Outbound struct {
	// Route is the chat, account and thread.
	Route core.Route
	// SessionKey is the session the message belongs to, if any.
	SessionKey core.SessionKey
	// Text is markdown as the model wrote it; the bridge converts it.
	Text string
	// MediaURLs are files to attach (http(s) URLs or paths under the
	// state directory's media folder).
	MediaURLs []string
	// ReplyToMessageID asks for a native reply to that platform message
	// ("" for none); the bridge applies its replyToMode.
	ReplyToMessageID MessageID
	// Silent asks for a notification-free send where the platform has one.
	Silent bool
	// Ledger, when set, makes delivery idempotent (see Bridge.Deliver).
	Ledger Ledger
	// LedgerKey identifies this Outbound in the ledger, e.g. the run id
	// and reply index; chunks are recorded as LedgerKey + chunk number.
	LedgerKey string
}

// Receipt lists the platform ids of what Deliver sent, in order.
type Receipt struct {
	// MessageIDs are the platform message ids, one per chunk or media.
	MessageIDs []MessageID
}

// Ledger records what has been sent, so a delivery repeated after a crash
// sends only what is missing. The store implements it.
type Ledger interface {
	// Sent returns the platform message id recorded for key, if any.
	Sent(ctx context.Context, key string) (messageID string, ok bool, err error)
	// Record stores the platform message id sent for key.
	Record(ctx context.Context, key, messageID string) error
}

// SendOnce sends one piece of an Outbound through send, unless the
// outbound's ledger already records key's piece as sent, in which case the
// recorded id comes back and nothing is sent. A piece sent is recorded
// (even if ctx has ended), so a delivery repeated after a crash sends only
// what is missing. piece numbers the piece within the Outbound ("0",
// "m1"...); without a ledger or key, SendOnce just sends.
func SendOnce(ctx context.Context, out Outbound, piece string, send func() (MessageID, error)) (MessageID, error) {
	key := ""
	if out.Ledger != nil && out.LedgerKey != "" {
		key = out.LedgerKey + ":" + piece
		if sent, ok, err := out.Ledger.Sent(ctx, key); err != nil {
			return "", err
		} else if ok {
			return MessageID(sent), nil
		}
	}
	id, err := send()
	if err != nil {
		return "", err
	}
	if key != "" {
		if err := out.Ledger.Record(context.WithoutCancel(ctx), key, string(id)); err != nil {
			return id, err
		}
	}
	return id, nil
}
