package core

// The statuses of a ToolEnvelope (seed 002 §8).
const (
	// EnvelopeStatusError means the tool failed or its input was wrong.
	EnvelopeStatusError = "error"
	// EnvelopeStatusBlocked means a before_tool_call hook refused the call.
	EnvelopeStatusBlocked = "blocked"
	// EnvelopeStatusPending means the call was handed to a client-hosted
	// tool.
	EnvelopeStatusPending = "pending"
)

// ToolEnvelope is the JSON object a tool result's text carries when the
// tool did not produce its own output (seed 002 §8): the model reads the
// status and the reason and can correct itself, for example by retrying
// with the missing argument. Status is always written; the other members
// only when set.
type ToolEnvelope struct {
	Status string `json:"status"`
	// Tool is the name of the tool that was called.
	Tool string `json:"tool,omitempty"`
	// Error is the human-readable failure of an "error" envelope.
	Error string `json:"error,omitempty"`
	// Reason is why a hook blocked a "blocked" envelope's call.
	Reason string `json:"reason,omitempty"`
	// Message explains a "pending" envelope.
	Message string `json:"message,omitempty"`
}

// ErrorEnvelope returns the envelope of a failed call of tool (seed 002
// §8.1).
func ErrorEnvelope(tool, msg string) ToolEnvelope {
	return ToolEnvelope{Status: EnvelopeStatusError, Tool: tool, Error: msg}
}

// BlockedEnvelope returns the envelope of a call of tool that a hook
// refused (seed 002 §8.2).
func BlockedEnvelope(tool, reason string) ToolEnvelope {
	return ToolEnvelope{Status: EnvelopeStatusBlocked, Tool: tool, Reason: reason}
}

// PendingEnvelope returns the envelope of a call of tool handed to the
// client (seed 002 §8.3).
func PendingEnvelope(tool, msg string) ToolEnvelope {
	return ToolEnvelope{Status: EnvelopeStatusPending, Tool: tool, Message: msg}
}

// String returns the envelope as compact JSON with the members in the
// seed's order and no HTML escaping, the exact text of an error tool
// result (seed 000 §3.3): {"status":"error","tool":"exec","error":"command
// required"}.
func (e ToolEnvelope) String() string {
	b := make([]byte, 0, 64+len(e.Tool)+len(e.Error)+len(e.Reason)+len(e.Message))
	b = append(b, `{"status":`...)
	b = appendJSONString(b, e.Status)
	for _, m := range [...]struct{ name, v string }{
		{"tool", e.Tool},
		{"error", e.Error},
		{"reason", e.Reason},
		{"message", e.Message},
	} {
		if m.v == "" {
			continue
		}
		b = append(b, `,"`...)
		b = append(b, m.name...)
		b = append(b, `":`...)
		b = appendJSONString(b, m.v)
	}
	return string(append(b, '}'))
}
