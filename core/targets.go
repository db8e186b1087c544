package core

// Targets knows how each channel's chats are addressed: the delivery
// targets users and the model write ("telegram:-1001234567890:topic:42",
// "slack:channel:C0123"), and which chats are direct. The bridges' registry
// implements it from what each bridge declares, so no package outside a
// bridge needs its platform's rules. Implementations do no IO and are safe
// for concurrent use.
type Targets interface {
	// ParseTarget reads "<channel>[#<accountId>]:<chat>" into a route. It
	// fails, naming the channels it knows, for a channel no bridge
	// provides.
	ParseTarget(target string) (Route, error)
	// Resolve builds the route to chat on channel (and accountID, ""
	// for the default account), with chat written as in a target's chat
	// part; configuration that names channel and chat apart (heartbeat
	// target and to, a cron job's announce) goes through it.
	Resolve(channel, accountID, chat string) (Route, error)
	// IsDirect reports whether route is a direct chat with one person, as
	// far as its channel can tell from the chat id.
	IsDirect(route Route) bool
}
