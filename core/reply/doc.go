// Package reply turns the model's final answer into the payloads a bridge
// delivers (openclaw-facts §5.2, §6.2, §7.5): silent replies (NO_REPLY) and
// heartbeat acks (HEARTBEAT_OK) are dropped, the tokens are stripped from
// mixed text, reply tags ([[reply_to_current]], [[reply_to:<id>]]) and
// MEDIA: lines become payload fields, a failed run becomes a short error
// reply.
//
// Everything here is a pure function of its input, except StreamFilter,
// which holds the state of one streamed reply and is not safe for
// concurrent use.
package reply
