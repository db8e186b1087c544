package heartbeat

// Status is the outcome of one heartbeat (openclaw-facts §6.1).
type Status string

// The statuses.
const (
	// StatusSent: an alert was delivered to the target.
	StatusSent Status = "sent"
	// StatusOkEmpty: the model answered nothing.
	StatusOkEmpty Status = "ok-empty"
	// StatusOkToken: the model acknowledged (HEARTBEAT_OK, or a short
	// remainder within ackMaxChars).
	StatusOkToken Status = "ok-token"
	// StatusSkipped: the heartbeat did not run, or its alert was not
	// delivered; Reason says why.
	StatusSkipped Status = "skipped"
	// StatusFailed: the turn failed; Reason holds the error.
	StatusFailed Status = "failed"
)

// Skip reasons (openclaw-facts §6.1) and the delivery reasons of a
// skipped alert.
const (
	ReasonDisabled         = "disabled"
	ReasonQuietHours       = "quiet-hours"
	ReasonRequestsInFlight = "requests-in-flight"
	ReasonEmptyFile        = "empty-heartbeat-file"
	ReasonNoTasksDue       = "no-tasks-due"
	ReasonAlertsDisabled   = "alerts-disabled"
	ReasonDuplicate        = "duplicate"
	ReasonDMBlocked        = "dm-blocked"
	ReasonNoTarget         = "no-target"
	ReasonAlertsHidden     = "alerts-hidden"
)

// Indicator types of an event when useIndicator is on.
const (
	IndicatorOk    = "ok"
	IndicatorAlert = "alert"
	IndicatorError = "error"
)

// Event is the heartbeat gateway event's payload (OpenClaw's
// heartbeat-events.ts shape plus agentId, sessionKey and trigger).
type Event struct {
	// TS is when the heartbeat finished, in Unix ms.
	TS int64 `json:"ts"`
	// Status is the outcome.
	Status Status `json:"status"`
	// To is the chat the alert went (or would have gone) to.
	To string `json:"to,omitempty"`
	// AccountID is the bot account of the target.
	AccountID string `json:"accountId,omitempty"`
	// Preview is the start of the alert text.
	Preview string `json:"preview,omitempty"`
	// DurationMs is how long the turn took.
	DurationMs int64 `json:"durationMs,omitempty"`
	// HasMedia reports an alert with attachments.
	HasMedia bool `json:"hasMedia,omitempty"`
	// Reason says why a heartbeat was skipped or failed.
	Reason string `json:"reason,omitempty"`
	// Channel is the target's channel.
	Channel string `json:"channel,omitempty"`
	// Silent reports an outcome nobody was told about in a chat.
	Silent bool `json:"silent,omitempty"`
	// IndicatorType is ok, alert or error, when useIndicator is on.
	IndicatorType string `json:"indicatorType,omitempty"`
	// AgentID is the agent whose heartbeat it was.
	AgentID string `json:"agentId,omitempty"`
	// SessionKey is the session the heartbeat ran in.
	SessionKey string `json:"sessionKey,omitempty"`
	// Trigger is what started it: "interval", "wake", "manual" or
	// "cron:<jobId>".
	Trigger string `json:"trigger,omitempty"`
}

// previewChars bounds Event.Preview.
const previewChars = 200

// preview returns the start of text for an event.
func preview(text string) string {
	r := []rune(text)
	if len(r) <= previewChars {
		return text
	}
	return string(r[:previewChars]) + "…"
}
