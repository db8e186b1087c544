package core

import "encoding/json"

// The kinds of InputProvenance (OpenClaw's INPUT_PROVENANCE_KIND_VALUES).
const (
	// ProvenanceExternalUser is a person's message; it is the meaning of a
	// user message without provenance, so it is never written.
	ProvenanceExternalUser = "external_user"
	// ProvenanceInterSession is a message another session sent.
	ProvenanceInterSession = "inter_session"
	// ProvenanceInternalSystem is a prompt Switchboard wrote: a heartbeat
	// poll, a cron job's prompt, the prompt that opens a session after
	// /new or /reset, or a turn of its own.
	ProvenanceInternalSystem = "internal_system"
)

// The sources of an internal_system InputProvenance: what wrote the
// prompt. Source is Switchboard's member; OpenClaw's readers ignore it.
const (
	ProvenanceSourceHeartbeat = "heartbeat"
	ProvenanceSourceCron      = "cron"
	ProvenanceSourceReset     = "reset"
	ProvenanceSourceSystem    = "system"
)

// InputProvenance says where a user message came from when a person did
// not type it (OpenClaw's transcript member "provenance"), so a chat page
// shows it as a system note and never as the user's words.
type InputProvenance struct {
	// Kind is one of the Provenance* kinds.
	Kind string `json:"kind"`
	// Source is one of the ProvenanceSource* values, for internal_system.
	Source string `json:"source,omitempty"`
	// The rest are OpenClaw's members, kept when a transcript is
	// rewritten.
	OriginSessionID    string `json:"originSessionId,omitempty"`
	SourceSessionKey   string `json:"sourceSessionKey,omitempty"`
	SourceChannel      string `json:"sourceChannel,omitempty"`
	SourceTool         string `json:"sourceTool,omitempty"`
	SourceRole         string `json:"sourceRole,omitempty"`
	SourcePromptPrefix string `json:"sourcePromptPrefix,omitempty"`
	JobID              string `json:"jobId,omitempty"`
	RunID              string `json:"runId,omitempty"`
}

// SystemProvenance returns the provenance of a prompt Switchboard wrote,
// from source.
func SystemProvenance(source string) *InputProvenance {
	return &InputProvenance{Kind: ProvenanceInternalSystem, Source: source}
}

// readProvenance decodes a "provenance" member; null means none.
func readProvenance(v []byte) (*InputProvenance, error) {
	if isJSONNull(v) {
		return nil, nil
	}
	var p InputProvenance
	if err := json.Unmarshal(v, &p); err != nil {
		return nil, err
	}
	return &p, nil
}
