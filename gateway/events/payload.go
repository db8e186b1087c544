package events

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// The gateway event names a Run produces (openclaw-facts §1.11, §1.12).
const (
	// EventChat is the "chat" event: the assistant's reply as a cumulative
	// text snapshot.
	EventChat = "chat"
	// EventAgent is the "agent" event: the run's fine-grained streams.
	EventAgent = "agent"
)

// The states of a chat event (openclaw-facts §1.11).
const (
	// StateDelta is a streamed snapshot of the reply so far.
	StateDelta = "delta"
	// StateFinal ends a run that completed.
	StateFinal = "final"
	// StateAborted ends a run that was stopped.
	StateAborted = "aborted"
	// StateError ends a run that failed.
	StateError = "error"
)

// The error kinds a chat error event may carry (openclaw-facts §1.11);
// anything else is reported as ErrorKindUnknown.
const (
	// ErrorKindRefusal means the model declined to answer.
	ErrorKindRefusal = "refusal"
	// ErrorKindTimeout means the model call or the run took too long.
	ErrorKindTimeout = "timeout"
	// ErrorKindRateLimit means the provider is rate-limiting us.
	ErrorKindRateLimit = "rate_limit"
	// ErrorKindContextLength means the conversation is too long for the model.
	ErrorKindContextLength = "context_length"
	// ErrorKindUnknown is any other failure.
	ErrorKindUnknown = "unknown"
)

// The agent event streams a Run produces (openclaw-facts §1.12).
const (
	// StreamLifecycle carries the run's start, end and error.
	StreamLifecycle = "lifecycle"
	// StreamAssistant carries the reply text and, as Switchboard's
	// structured-stream extension, message and block boundaries.
	StreamAssistant = "assistant"
	// StreamThinking carries the model's reasoning text.
	StreamThinking = "thinking"
	// StreamTool carries tool execution: start, update, result.
	StreamTool = "tool"
	// StreamCompaction carries history compaction start and end.
	StreamCompaction = "compaction"
)

// The data.phase values of Switchboard's structured-stream extension (see
// the package documentation).
const (
	// PhaseMessageStart opens one model response (one messageId).
	PhaseMessageStart = "message_start"
	// PhaseMessageStop closes a model response.
	PhaseMessageStop = "message_stop"
	// PhaseBlockStart opens a content block of a response.
	PhaseBlockStart = "block_start"
	// PhaseDelta appends to a content block.
	PhaseDelta = "delta"
	// PhaseBlockStop closes a content block.
	PhaseBlockStop = "block_stop"
)

// The data.blockType values of the structured-stream extension, the
// seed-000 content block types.
const (
	// BlockText is reply text.
	BlockText = "text"
	// BlockThinking is the model's reasoning.
	BlockThinking = "thinking"
	// BlockToolCall is a tool call the model makes.
	BlockToolCall = "toolCall"
)

// Out is one event to send. Exactly one of Chat and Agent is set, as Event
// says. The Run keeps no reference to what it returns; the caller may
// change it (re-address a chat event to another run id, override a
// stopReason) before sending.
type Out struct {
	// Event is EventChat or EventAgent.
	Event string
	// Chat is the payload of a chat event.
	Chat *ChatEvent
	// Agent is the payload of an agent event.
	Agent *AgentEvent
	// DropIfSlow marks an event a slow client may miss (openclaw-facts
	// §1.9): chat deltas, which the next snapshot supersedes. Final, aborted
	// and error events are never dropped; a client that cannot take them is
	// disconnected instead.
	DropIfSlow bool
	// ToolStream marks an event about tool calls: it goes only to clients
	// that sent the "tool-events" capability and started or subscribed to
	// the run (openclaw-facts §1.12). Tool-stream events, and the
	// structured-stream toolCall block events, are marked.
	ToolStream bool
	// Structured marks the structured stream: the assistant and thinking
	// streams (each response's message and block events and their
	// deltas). It goes only to clients that sent the "structured-stream"
	// capability; OpenClaw's clients read the reply from chat events and
	// never ask for it. A toolCall block event is both Structured and
	// ToolStream and needs both.
	Structured bool
}

// ChatMessage is the message of a chat event: the assistant's text so far.
type ChatMessage struct {
	// Role is always "assistant".
	Role string `json:"role"`
	// Content is one text block.
	Content []ChatContent `json:"content"`
	// Timestamp is when the event was made, in Unix milliseconds.
	Timestamp int64 `json:"timestamp"`
}

// ChatContent is one block of a ChatMessage.
type ChatContent struct {
	// Type is "text".
	Type string `json:"type"`
	// Text is the cumulative text.
	Text string `json:"text"`
}

// Text returns the message's text, "" for a nil message.
func (m *ChatMessage) Text() string {
	if m == nil || len(m.Content) == 0 {
		return ""
	}
	return m.Content[0].Text
}

// ChatEvent is the payload of a chat event (openclaw-facts §1.11, §1.15).
// Which members are written depends on State and on the client's protocol;
// see MarshalFor.
type ChatEvent struct {
	// RunID is the run the event belongs to.
	RunID string
	// SessionKey is the run's session.
	SessionKey string
	// Seq is the seq of the run's agent event this chat event goes with.
	Seq int64
	// State is StateDelta, StateFinal, StateAborted or StateError.
	State string
	// Message is the cumulative assistant text; nil for a silent final
	// (NO_REPLY, a heartbeat ack), an aborted run with no text, or an error.
	Message *ChatMessage
	// DeltaText is what a delta adds to the previous delta's text, or the
	// whole text when Replace is set. Written to protocol 4 clients only.
	// A client that missed a delta (DropIfSlow) resynchronises from
	// Message, which is always the whole snapshot.
	DeltaText string
	// Replace reports a delta whose text is not an extension of the previous
	// delta's: the client must replace what it shows. Written to protocol 4
	// clients only.
	Replace bool
	// ErrorMessage says what failed (error events).
	ErrorMessage string
	// ErrorKind classifies the failure (error events): one of the
	// ErrorKind constants.
	ErrorKind string
	// Usage is the run's token usage (final and error events), nil when
	// unknown.
	Usage any
	// StopReason is why the model stopped, when known.
	StopReason string
}

// chatWire is the JSON form of a ChatEvent; members left zero are omitted.
type chatWire struct {
	RunID        string       `json:"runId"`
	SessionKey   string       `json:"sessionKey"`
	Seq          int64        `json:"seq"`
	State        string       `json:"state"`
	Message      *ChatMessage `json:"message,omitempty"`
	DeltaText    *string      `json:"deltaText,omitempty"`
	Replace      bool         `json:"replace,omitempty"`
	ErrorMessage string       `json:"errorMessage,omitempty"`
	ErrorKind    string       `json:"errorKind,omitempty"`
	Usage        any          `json:"usage,omitempty"`
	StopReason   string       `json:"stopReason,omitempty"`
}

// LatestProtocol is the newest gateway protocol version MarshalFor knows.
const LatestProtocol = 4

// MarshalFor encodes the event for a client that negotiated protocol.
//
// Each state writes only the members its schema allows (OpenClaw's
// ChatDeltaEventSchema and siblings forbid additional properties): a delta
// writes message and usage; a final message, usage and stopReason; an
// aborted event message and stopReason; an error message, errorMessage,
// errorKind, usage and stopReason. Empty members are left out.
//
// Protocol 3 and older never get deltaText or replace. Protocol 4 and newer
// get deltaText on every delta (the member is required there, so it is
// written even when empty) and replace:true on a delta that is not a
// prefix-extension of the previous one.
func (c ChatEvent) MarshalFor(protocol int) ([]byte, error) {
	w := chatWire{RunID: c.RunID, SessionKey: c.SessionKey, Seq: c.Seq, State: c.State, Message: c.Message}
	switch c.State {
	case StateDelta:
		w.Usage = c.Usage
		if protocol >= 4 {
			dt := c.DeltaText
			w.DeltaText = &dt
			w.Replace = c.Replace
		}
	case StateFinal:
		w.Usage, w.StopReason = c.Usage, c.StopReason
	case StateAborted:
		w.StopReason = c.StopReason
	case StateError:
		w.ErrorMessage, w.ErrorKind, w.Usage, w.StopReason = c.ErrorMessage, c.ErrorKind, c.Usage, c.StopReason
	default:
		return nil, fmt.Errorf("events: chat event: unknown state %q", c.State)
	}
	return encodeJSON(w)
}

// MarshalJSON encodes the event for the newest protocol (MarshalFor with
// LatestProtocol); a server that speaks to older clients calls MarshalFor.
func (c ChatEvent) MarshalJSON() ([]byte, error) { return c.MarshalFor(LatestProtocol) }

// encodeJSON marshals v without escaping <, > and &, which reply text is
// full of, and without the encoder's trailing newline.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// AgentEvent is the payload of an agent event (openclaw-facts §1.12).
type AgentEvent struct {
	// RunID is the run the event belongs to.
	RunID string `json:"runId"`
	// Seq numbers the run's agent events, strictly increasing from 1.
	Seq int64 `json:"seq"`
	// Stream is one of the Stream constants.
	Stream string `json:"stream"`
	// TS is when the event was made, in Unix milliseconds.
	TS int64 `json:"ts"`
	// SessionKey is the run's session.
	SessionKey string `json:"sessionKey,omitempty"`
	// Data is the stream-specific body; never nil.
	Data map[string]any `json:"data"`
}

// StripToolResults returns out without the result and partialResult of a
// tool-stream event, for clients that did not ask for full verbose output
// (OpenClaw strips them unless the session's verbose level is "full").
// Other events come back unchanged. The original is not modified.
func StripToolResults(out Out) Out {
	a := out.Agent
	if a == nil || a.Stream != StreamTool {
		return out
	}
	_, hasResult := a.Data["result"]
	_, hasPartial := a.Data["partialResult"]
	if !hasResult && !hasPartial {
		return out
	}
	stripped := *a
	stripped.Data = make(map[string]any, len(a.Data))
	for k, v := range a.Data {
		if k != "result" && k != "partialResult" {
			stripped.Data[k] = v
		}
	}
	out.Agent = &stripped
	return out
}
