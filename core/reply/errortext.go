package reply

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// The user-facing texts of failed runs (OpenClaw's formatAssistantErrorText
// and sanitizeUserFacingText in src/agents/pi-embedded-helpers/errors.ts).
const (
	unknownErrorText    = "LLM request failed with an unknown error."
	contextOverflowText = "Context overflow: prompt too large for the model. Try again with less input or a larger-context model."
	roleOrderingText    = "Message ordering conflict - please try again. If this persists, use /new to start a fresh session."
	overloadedText      = "The AI service is temporarily overloaded. Please try again in a moment."
	timeoutText         = "LLM request timed out."
	maxErrorChars       = 600
)

var (
	roleOrderingRE   = regexp.MustCompile(`(?i)incorrect role information|roles must alternate|400.*role|"message".*role.*information`)
	invalidRequestRE = regexp.MustCompile(`"type":"invalid_request_error".*?"message":"([^"]+)"`)
	rateLimitRE      = regexp.MustCompile(`rate[_ ]limit|too many requests|429`)
)

// AssistantErrorText turns a provider error message into the text a user
// sees: known failures (context overflow, message ordering, rejected
// request, overload and rate limits, timeouts) get a fixed explanation,
// anything else is shown cut to 600 characters.
func AssistantErrorText(raw string) string {
	raw = jsTrim(raw)
	if raw == "" {
		return unknownErrorText
	}
	lower := strings.ToLower(raw)
	switch {
	case isContextOverflow(lower):
		return contextOverflowText
	case roleOrderingRE.MatchString(raw):
		return roleOrderingText
	}
	if m := invalidRequestRE.FindStringSubmatch(raw); m != nil {
		return "LLM request rejected: " + m[1]
	}
	switch {
	case strings.Contains(lower, "overloaded"), rateLimitRE.MatchString(lower),
		strings.Contains(lower, "exceeded your current quota"), strings.Contains(lower, "resource_exhausted"):
		return overloadedText
	case strings.Contains(lower, "timed out"), strings.Contains(lower, "timeout"),
		strings.Contains(lower, "deadline exceeded"):
		return timeoutText
	}
	return truncateChars(raw, maxErrorChars)
}

// isContextOverflow recognises the providers' "prompt too long" errors.
func isContextOverflow(lower string) bool {
	for _, s := range []string{
		"context_length_exceeded", "context length exceeded", "maximum context length",
		"prompt is too long", "prompt too long", "exceeds the context window",
		"context window exceeded", "request_too_large", "too many tokens",
	} {
		if strings.Contains(lower, s) {
			return true
		}
	}
	return false
}

// ToolErrorText is the fallback reply when a run ends with nothing to say
// after a tool failed (openclaw-facts §7.5): "⚠️ 🛠️ <tool> failed: <error>"
// as OpenClaw words it (buildEmbeddedRunPayloads), with "tool" when the
// name is unknown and the error cut to 600 characters.
func ToolErrorText(tool, err string) string {
	tool = jsTrim(tool)
	if tool == "" {
		tool = "tool"
	}
	text := "⚠️ 🛠️ " + tool + " failed"
	if err = jsTrim(err); err != "" {
		text += ": " + truncateChars(err, maxErrorChars)
	}
	return text
}

// truncateChars cuts s to n characters, ending with "…" when cut.
func truncateChars(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for off := range s {
		if i == n {
			return s[:off] + "…"
		}
		i++
	}
	return s
}
