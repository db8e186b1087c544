package core

import (
	"encoding/json"
	"fmt"
)

// RoleCompactionSummary is the role of a CompactionSummaryMessage.
const RoleCompactionSummary = "compactionSummary"

// CompactionSummaryMessage records a compaction in a transcript. Transcripts
// are append-only: compaction never rewrites earlier lines; it appends this
// entry, and context building then uses the summary in place of the messages
// before FirstKeptIndex. It is a custom agent message (seed 000 §1), never
// sent to a model as is.
type CompactionSummaryMessage struct {
	// Summary is the model-written summary of the compacted messages.
	Summary string `json:"summary"`
	// TokensBefore is the estimated context size before compaction.
	TokensBefore int64 `json:"tokensBefore"`
	// FirstKeptIndex is the transcript index (0-based line among messages)
	// of the first message kept verbatim after the summary. Messages from
	// there up to this entry, and everything after it, stay in context.
	FirstKeptIndex int `json:"firstKeptIndex"`
	// Timestamp is when the compaction happened, in Unix milliseconds.
	Timestamp int64 `json:"timestamp"`
}

// Role returns "compactionSummary".
func (*CompactionSummaryMessage) Role() string { return RoleCompactionSummary }

type compactionJSON struct {
	Role string `json:"role"`
	CompactionSummaryMessage
}

// MarshalJSON writes the entry with "role" first.
func (m *CompactionSummaryMessage) MarshalJSON() ([]byte, error) {
	return json.Marshal(compactionJSON{Role: RoleCompactionSummary, CompactionSummaryMessage: *m})
}

// UnmarshalJSON reads an entry written by MarshalJSON.
func (m *CompactionSummaryMessage) UnmarshalJSON(data []byte) error {
	type plain CompactionSummaryMessage // without methods, so no recursion
	var v struct {
		Role string `json:"role"`
		plain
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return decodeErr("compactionSummary message", err)
	}
	if v.Role != RoleCompactionSummary {
		return decodeErr("compactionSummary message", fmt.Errorf("role is %q", v.Role))
	}
	*m = CompactionSummaryMessage(v.plain)
	return nil
}
