// Package linebridge is a complete, small Switchboard bridge written
// against the bridge contract alone (packages bridges, bridges/markup and
// core), as an example of adding a platform. Its "platform" is a
// line-based TCP chat: the bridge listens on an address, each TCP
// connection is one person in a direct chat, each line they send is a
// message, and the bot's replies come back as lines on the same
// connection. docs/BRIDGES.md walks through it file by file.
//
// # The protocol
//
// Lines are UTF-8, end in "\n" (a "\r" before it is dropped) and are at
// most MaxLineBytes long. A client sends:
//
//	HELLO <name>   first: who is talking (1 to 32 letters, digits, '.', '_'
//	               or '-'; any case). The name is the sender id that
//	               allowFrom lists, in lower case.
//	<text>         a message. Blank lines are ignored.
//
// and the bridge answers:
//
//	WELCOME <chat> the connection's chat id, e.g. "5f2c91aa-1": the
//	               Route.To of the conversation; "line:<chat>" is its
//	               target for the message tool and the gateway's send.
//	OK <n>         the n-th message (counting from 1) was taken: journaled,
//	               refused by the access policy, or a duplicate. Do not
//	               send it again.
//	ERR <n> <why>  the n-th message was not taken; send it again.
//	ERR <why>      a protocol error; the bridge closes the connection.
//	MSG <line>     one line of a reply, converted from markdown to plain
//	               text.
//	END <id>       the end of one reply message (a long reply is several),
//	               with its message id "<chat>/<n>".
//	TYPING         the bot is writing a reply (bridges.Typer).
//
// Replies are not ordered with acknowledgements: a reply (or the access
// policy's pairing message) may come before the OK of the message it
// answers.
//
// The bridge believes the name a client gives: anyone who can connect can
// claim any name. Keep it on a loopback address (the default) or behind
// something that authenticates.
//
// # How it maps to the contract
//
//   - config.go: Config, the channels.line section, embeds bridges.Common
//     and adds enabled and listen; it is a bridges.Section.
//   - descriptor.go: Descriptor registers the bridge: channel "line", New
//     from a section and a bridges.Env, how targets are written (ParseChat,
//     TargetHelp), and that every chat is direct (IsDirect).
//   - inbound.go: a pure function from one line to bridges.Inbound: the
//     session key from core.BuildPeerSessionKey, the route, the sender and
//     a dedupe key.
//   - bridge.go: Start listens, reports StateConnected once it does,
//     accepts connections, backs off and retries when listening or
//     accepting fails, and closes everything when ctx ends.
//   - conn.go: one connection: the HELLO handshake, then each line is
//     handed to the sink and acknowledged (OK) only once Submit returned.
//   - outbound.go: Deliver renders markdown with markup.RenderChunks and
//     writes each chunk's lines to the connection of Route.To; Typing is the
//     optional bridges.Typer capability.
//
// Route.To names a connection, and connection ids are not reused, not
// even across restarts (each starts with a random 32-bit prefix New
// chooses): a reply redelivered from the journal after its connection
// closed fails (ErrUnknownChat) instead of reaching whoever connected
// next.
package linebridge
