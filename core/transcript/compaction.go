package transcript

import (
	"github.com/switchboardhq/switchboard/core"
)

// SplitForCompaction chooses where to compact a transcript, as pi's
// findCutPoint does: walking back from the end, it adds up EstimateTokens
// of each message until keepRecentTokens is reached, and cuts at the
// nearest valid point at or after that message (or, when there is none,
// the nearest before it). A valid cut point is a user or assistant message
// such that no tool call before it has its result after it: a tool call is
// never separated from its results, and recent never starts with a tool
// result. recent keeps at least the last valid cut point's messages unless
// keepRecentTokens <= 0, which summarises everything.
//
// msgs is the transcript as loaded (File.Messages), so that firstKeptIndex
// indexes it and is ready for core.CompactionSummaryMessage.FirstKeptIndex.
// When the transcript was compacted before, the cut is never placed before
// the latest entry's FirstKeptIndex, and older starts with the previous
// summary (as ContextMessages sends it) so that the new summary carries it
// forward. older and recent hold only messages a model is sent (see
// ContextMessages). older is empty when there is nothing new to summarise;
// the agent then skips the compaction.
//
// The agent has a model summarise older and appends a
// CompactionSummaryMessage with FirstKeptIndex firstKeptIndex; from then
// on, ContextMessages sends the summary and recent (and what follows).
func SplitForCompaction(msgs []core.Message, keepRecentTokens int) (older, recent []core.Message, firstKeptIndex int) {
	var entry *core.CompactionSummaryMessage
	start := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		if e, ok := msgs[i].(*core.CompactionSummaryMessage); ok && e != nil {
			entry = e
			start = min(max(e.FirstKeptIndex, 0), i)
			break
		}
	}
	valid := cutPoints(msgs, start)

	cut := start
	if keepRecentTokens <= 0 {
		cut = len(msgs)
	} else {
		acc := 0
		for i := len(msgs) - 1; i >= start; i-- {
			acc += messageTokens(msgs[i])
			if acc < keepRecentTokens {
				continue
			}
			cut = -1
			for j := i; j < len(msgs); j++ {
				if valid[j-start] {
					cut = j
					break
				}
			}
			if cut < 0 {
				cut = start
				for j := i - 1; j > start; j-- {
					if valid[j-start] {
						cut = j
						break
					}
				}
			}
			break
		}
	}

	recent = appendModelMessages(nil, msgs[cut:])
	if cut == start {
		return nil, recent, cut
	}
	if entry != nil {
		older = append(older, compactionSummaryUser(entry))
	}
	older = appendModelMessages(older, msgs[start:cut])
	return older, recent, cut
}

// cutPoints reports, for each index from start on, whether the transcript
// may be cut there: a user or assistant message that no tool call before
// it has a result after.
func cutPoints(msgs []core.Message, start int) []bool {
	n := len(msgs) - start
	// crossing[j] > 0 when a call before start+j has its result at or
	// after start+j: a difference array over the spans (call, result].
	crossing := make([]int, n+1)
	lastCall := map[string]int{}
	for i := start; i < len(msgs); i++ {
		switch m := msgs[i].(type) {
		case *core.AssistantMessage:
			if m == nil {
				continue
			}
			for _, c := range m.ToolCalls() {
				lastCall[c.ID] = i
			}
		case *core.ToolResultMessage:
			if m == nil {
				continue
			}
			if a, ok := lastCall[m.ToolCallID]; ok {
				crossing[a+1-start]++
				crossing[i+1-start]--
			}
		}
	}
	valid := make([]bool, n)
	open := 0
	for j := range n {
		open += crossing[j]
		switch m := msgs[start+j].(type) {
		case *core.UserMessage:
			valid[j] = m != nil && open == 0
		case *core.AssistantMessage:
			valid[j] = m != nil && open == 0
		}
	}
	return valid
}
