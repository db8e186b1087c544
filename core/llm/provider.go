package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// Provider streams one model response. Implementations: Anthropic
// (anthropic-messages), OpenAI-compatible chat completions
// (openai-completions) and Echo.
type Provider interface {
	// Stream sends req and delivers the response as seed-000
	// AssistantMessageEvents through emit, in order, on the calling
	// goroutine: start, then for each content block its _start, _delta...
	// and _end events, then done, or error instead of done.
	//
	// The Partial, Message and Error fields of emitted events point at the
	// message being built; emit must not retain or modify them after it
	// returns (copy what it needs).
	//
	// Stream always returns the final message. On failure the message has
	// StopReason error (or aborted when ctx was cancelled), ErrorMessage set
	// and whatever content streamed before the failure, and the error is an
	// *Error saying whether a retry can help.
	Stream(ctx context.Context, req *Request, emit func(core.AssistantMessageEvent)) (*core.AssistantMessage, error)
}

// Request is one model call.
type Request struct {
	// Model is the model to call: its provider id, limits and prices.
	Model ModelConfig
	// System is the system prompt.
	System string
	// Messages is the conversation: history, then the new user message, then
	// any tool results of this turn.
	Messages []core.Message
	// Tools are the tools the model may call.
	Tools []ToolSpec
	// MaxTokens caps the response; zero means Model.MaxTokens, else a
	// provider default.
	MaxTokens int
	// Thinking asks for extended reasoning where the model supports it.
	Thinking ThinkingLevel
}

// ToolSpec describes a tool to the model.
type ToolSpec struct {
	// Name is the tool name the model calls it by.
	Name string `json:"name"`
	// Description tells the model what the tool does and when to use it.
	Description string `json:"description"`
	// Parameters is the JSON Schema of the tool's arguments object.
	Parameters json.RawMessage `json:"parameters"`
}

// ThinkingLevel is how much extended reasoning to ask for.
type ThinkingLevel string

// The thinking levels, as OpenClaw names them.
const (
	ThinkingOff     ThinkingLevel = "off"
	ThinkingMinimal ThinkingLevel = "minimal"
	ThinkingLow     ThinkingLevel = "low"
	ThinkingMedium  ThinkingLevel = "medium"
	ThinkingHigh    ThinkingLevel = "high"
	ThinkingXHigh   ThinkingLevel = "xhigh"
)

// ParseThinkingLevel reads a thinking level, accepting OpenClaw's aliases
// ("think", "on" → low; "ultra", "max" → xhigh; "none" → off). ok is false for
// anything else.
func ParseThinkingLevel(s string) (ThinkingLevel, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "off", "none":
		return ThinkingOff, true
	case "minimal", "min":
		return ThinkingMinimal, true
	case "low", "on", "think":
		return ThinkingLow, true
	case "medium", "med":
		return ThinkingMedium, true
	case "high":
		return ThinkingHigh, true
	case "xhigh", "ultra", "max":
		return ThinkingXHigh, true
	}
	return "", false
}

// ErrorKind classifies a failed model call, as the gateway's chat error
// event reports it.
type ErrorKind string

// The error kinds.
const (
	ErrorRateLimit     ErrorKind = "rate_limit"
	ErrorContextLength ErrorKind = "context_length"
	ErrorTimeout       ErrorKind = "timeout"
	ErrorRefusal       ErrorKind = "refusal"
	ErrorUnknown       ErrorKind = "unknown"
)

// Error is a failed model call.
type Error struct {
	// Kind classifies the failure.
	Kind ErrorKind
	// Retryable reports that the same request may succeed later: rate
	// limits, overload, server errors, dropped connections.
	Retryable bool
	// RetryAfter is the delay the provider asked for (Retry-After), if any.
	RetryAfter time.Duration
	// StatusCode is the HTTP status, if the failure was an HTTP response.
	StatusCode int
	// Provider and Model name the model that failed.
	Provider, Model string
	// Message is the provider's explanation, safe to show a user: it never
	// contains the API key.
	Message string
	// Err is the underlying error, if any.
	Err error
}

// Error returns "<provider>/<model>: <message>".
func (e *Error) Error() string {
	var b strings.Builder
	if e.Provider != "" {
		fmt.Fprintf(&b, "%s/%s: ", e.Provider, e.Model)
	}
	b.WriteString(e.Message)
	if e.Message == "" && e.Err != nil {
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// AsError returns err as an *Error, wrapping any other error as a
// non-retryable ErrorUnknown.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	kind := ErrorUnknown
	if errors.Is(err, context.DeadlineExceeded) {
		kind = ErrorTimeout
	}
	return &Error{Kind: kind, Message: err.Error(), Err: err}
}
