// Package prompt assembles what the model reads on each turn (seed 004
// phase A): the system prompt, which is stable for a session and never
// holds a byte of channel text, and the user prompt, in which every
// channel-supplied string sits in a labelled untrusted slot.
//
// The user prompt is built by Body, top to bottom:
//
//	System: [<ts>] …                  queued system events (Switchboard's own,
//	System (untrusted): …             or marked untrusted)
//	Note: The previous agent run …    abort hint
//	[Thread history - for context]    thread context, new sessions only
//	Conversation info (untrusted metadata):
//	```json                           untrusted metadata blocks (JSON, escaped,
//	{…}                               capped, one line per name)
//	```
//	[media attached: …]               media note and reply hint
//	<the user's message>              the raw body slot
//	Untrusted context (metadata, …):  further channel context
//
// Text in the raw slots (the message, thread context, untrusted context
// lines) is neutralised line by line: a line that would read as one of the
// markers above, a heading, a metadata label or an envelope, in any
// spelling (look-alike letters, invisible characters, Markdown decoration),
// gets a leading backslash, and role tags and chat-template tokens anywhere
// in it ("[System]", "<|im_start|>", "</untrusted>") have their brackets
// turned into parentheses, so that only Switchboard can write such a line.
//
// The package does no IO except System, which reads the workspace's
// context files through an fs.FS.
package prompt
