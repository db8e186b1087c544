package transcript

import (
	"github.com/switchboardhq/switchboard/core"
)

// PipelineOptions selects the optional steps of Pipeline. The zero value
// runs only the steps every provider needs: context selection, tool
// pairing repair and the orphaned-prompt check.
type PipelineOptions struct {
	// DropThinking removes every thinking block (DropThinking), for
	// providers that reject thinking they did not produce.
	DropThinking bool
	// DropUnsignedThinking removes thinking blocks without a signature
	// (DropUnsignedThinking), for Anthropic. DropThinking wins when both
	// are set.
	DropUnsignedThinking bool
	// HistoryLimit keeps the last this many user turns
	// (LimitHistoryTurns); HistoryLimitForKey computes it from the session
	// key. 0 means no limit.
	HistoryLimit int
	// StrictAlternation merges consecutive user messages
	// (MergeConsecutive), for providers that need user and assistant turns
	// to alternate.
	StrictAlternation bool
	// IsHeartbeatPrompt and IsHeartbeatAck enable FilterHeartbeatPairs
	// (see its predicates); both must be set.
	IsHeartbeatPrompt func(text string) bool
	// IsHeartbeatAck is FilterHeartbeatPairs' isAck.
	IsHeartbeatAck func(text string) bool
	// Prune enables Prune with these options; nil leaves tool results
	// whole.
	Prune *PruneOptions
}

// PipelineReport counts what Pipeline changed, for logs and metrics.
type PipelineReport struct {
	// In is the number of messages passed in, Context the number
	// ContextMessages selected from them, Out the number returned.
	In, Context, Out int
	// ThinkingBlocksDropped and ThinkingMessagesDropped count the thinking
	// blocks removed and the assistant messages that were only thinking.
	ThinkingBlocksDropped, ThinkingMessagesDropped int
	// SyntheticResults, OrphanResults and DuplicateResults count the tool
	// results RepairToolPairing inserted, and the orphaned and duplicate
	// ones it dropped, over both of its runs. MovedResults counts results
	// moved before a message that had come between them and their call;
	// DuplicateCalls counts repeated tool-call ids removed.
	SyntheticResults, OrphanResults, DuplicateResults, MovedResults, DuplicateCalls int
	// HeartbeatPairs counts the heartbeat exchanges filtered out.
	HeartbeatPairs int
	// LimitedMessages counts the messages cut off by HistoryLimit.
	LimitedMessages int
	// HiddenTrailingUsers counts the orphaned trailing user messages
	// hidden.
	HiddenTrailingUsers int
	// MergedMessages counts the user messages merged into the one before.
	MergedMessages int
	// SoftTrimmed and HardCleared count the tool results Prune trimmed and
	// cleared.
	SoftTrimmed, HardCleared int
	// TokensOut estimates the returned context (EstimateTokens).
	TokensOut int
}

// Pipeline turns a loaded transcript into the history sent to the model,
// running seed 004's phase C steps 3 to 8 and phase D in this order:
//
//  1. ContextMessages (compaction summary, model messages only);
//  2. DropThinking or DropUnsignedThinking, when set;
//  3. RepairToolPairing;
//  4. FilterHeartbeatPairs, when both predicates are set;
//  5. LimitHistoryTurns, when HistoryLimit > 0;
//  6. RepairToolPairing again, since the limit can orphan tool results;
//  7. HideOrphanTrailingUser;
//  8. MergeConsecutive, when StrictAlternation;
//  9. Prune, when set.
//
// Heartbeat pairs are filtered before the history limit, as OpenClaw's
// runEmbeddedAttempt does (filterHeartbeatPairs, then limitHistoryTurns),
// so heartbeat acks do not use up the user turns the limit keeps. Merging
// comes after every step that removes messages, since each of them can
// leave two user messages side by side, so the output alternates whenever
// StrictAlternation is set. Call Pipeline on the history before the new
// prompt is added (see HideOrphanTrailingUser); the agent calls Prune again
// before each later model call of the turn. The output's tool pairing
// always passes CheckToolPairing.
func Pipeline(msgs []core.Message, opts PipelineOptions) ([]core.Message, PipelineReport) {
	rep := PipelineReport{In: len(msgs)}
	out := ContextMessages(msgs)
	rep.Context = len(out)

	if opts.DropThinking || opts.DropUnsignedThinking {
		var st thinkingStats
		out, st = dropThinking(out, !opts.DropThinking)
		rep.ThinkingBlocksDropped, rep.ThinkingMessagesDropped = st.blocks, st.messages
	}
	pair := func() {
		var st pairingStats
		out, st = repairToolPairing(out)
		rep.SyntheticResults += st.synthetic
		rep.OrphanResults += st.orphans
		rep.DuplicateResults += st.duplicates
		rep.MovedResults += st.moved
		rep.DuplicateCalls += st.duplicateCalls
	}
	pair()
	out, rep.HeartbeatPairs = filterHeartbeatPairs(out, opts.IsHeartbeatPrompt, opts.IsHeartbeatAck)
	if opts.HistoryLimit > 0 {
		start := limitStart(out, opts.HistoryLimit)
		rep.LimitedMessages = start
		out = out[start:]
		pair()
	}
	n := len(out)
	out, _ = HideOrphanTrailingUser(out)
	rep.HiddenTrailingUsers = n - len(out)
	if opts.StrictAlternation {
		out, rep.MergedMessages = mergeConsecutive(out)
	}
	if opts.Prune != nil {
		var st pruneStats
		out, st = prune(out, *opts.Prune)
		rep.SoftTrimmed, rep.HardCleared = st.trimmed, st.cleared
		rep.TokensOut = st.tokensAfter
	} else {
		rep.TokensOut = EstimateTokens(out)
	}
	rep.Out = len(out)
	return out, rep
}
