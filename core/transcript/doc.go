// Package transcript stores session transcripts and turns them into the
// history a model is sent.
//
// # Files
//
// A transcript is a JSONL file, one message per line in core's JSON (seed
// 000 §6), at <stateDir>/agents/<agentId>/sessions/<sessionId>.jsonl (see
// Path). It is append-only: Append adds lines at the end, and compaction
// appends a core.CompactionSummaryMessage instead of rewriting anything.
// Heartbeat turns are appended like any other and filtered out when the
// context is built (FilterHeartbeatPairs).
//
// Writes: each message is encoded as one compact line and checked by
// decoding it again; a message that cannot be serialized makes Append fail
// before anything is written. The lines of one Append go to the file in a
// single write call on a descriptor opened with O_APPEND, so a crash tears
// at most the last line.
//
// Durability (fsync policy): Append fsyncs the file before it returns, once
// per call, so a batch of messages (a completed assistant message with its
// tool results, say) costs one fsync and is durable when Append returns
// nil. A failed write is cut back off the file; a failed fsync makes the
// File refuse further appends until it is opened again, because after a
// failed fsync nobody knows what reached the disk. Repairs on open
// (truncating a torn tail, adding a missing newline) are fsynced too, the
// backup they make first is fsynced before the original is touched, and
// creating a transcript fsyncs the directories that got a new entry.
// Options.NoSync turns every fsync off, for tests and benchmarks only.
//
// # Crash repair on open
//
// Open loads the file and repairs what a crash or a foreign writer can
// leave (reliability §2.8 and test matrix rows 5 and 18), without ever
// losing history:
//
//   - A torn last line (no trailing newline and not a message) is dropped:
//     the file is first copied to <file>.bak-<unix ms>, then truncated to
//     the end of the line before it, and a warning is logged.
//   - A corrupt line anywhere else (the first one included: there is no
//     header to trust or replace) is skipped, counted in
//     LoadReport.SkippedLines and left in the file untouched.
//   - A line whose strings hold raw control characters, including a raw
//     line break that splits one message over several lines (OpenClaw
//     #69846), is loaded by escaping them, and left in the file as it is.
//   - A valid last line without a trailing newline gets one.
//   - Lines of an unknown role are kept as core.RawMessage.
//   - Blank lines, CRLF line ends and a byte order mark before the first line
//     are ignored.
//
// The file is never rewritten from what was parsed: the only changes are
// cutting off a torn tail after the backup and adding a final newline.
// Lines of any length are read (a chunk buffer grows to hold a line of
// several megabytes), and long files are decoded on several cores.
//
// # History
//
// The history functions are pure: they take and return []core.Message,
// never modify their input, and copy a message before changing it.
// ContextMessages applies the latest compaction and keeps the messages a
// model is sent; DropThinking, RepairToolPairing, FilterHeartbeatPairs,
// LimitHistoryTurns, HideOrphanTrailingUser, MergeConsecutive and Prune
// each do one step of seed 004's phase C and D; Pipeline runs them in
// order. SplitForCompaction picks the cut for a compaction, and
// EstimateTokens is the 4-characters-per-token estimate they share.
package transcript
