package prompt

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// thinkLevels maps the words that may open a message to the thinking level
// they select (seed 004 step 8; OpenClaw's normalizeThinkLevel). Only the
// level names and OpenClaw's unmistakable aliases are listed: its other
// aliases ("on", "off", "max", "think", "harder", "ultra", "mid", "min",
// "auto") are ordinary words that start ordinary messages.
var thinkLevels = map[string]string{
	"low":          "low",
	"thinkhard":    "low",
	"think-hard":   "low",
	"think_hard":   "low",
	"medium":       "medium",
	"thinkharder":  "medium",
	"think-harder": "medium",
	"high":         "high",
	"ultrathink":   "high",
	"thinkhardest": "high",
	"xhigh":        "xhigh",
	"x-high":       "xhigh",
	"x_high":       "xhigh",
	"extrahigh":    "xhigh",
	"extra-high":   "xhigh",
	"extra_high":   "xhigh",
}

// ExtractThinkLevel reads a thinking-level directive from the first word of
// body ("high what changed?"). It returns the level ("low", "medium",
// "high" or "xhigh") and body without the word and the white space after
// it, or "" and body unchanged. Unlike OpenClaw, the rest of the message
// keeps its line breaks.
func ExtractThinkLevel(body string) (level, rest string) {
	trimmed := strings.TrimLeftFunc(body, unicode.IsSpace)
	end := strings.IndexFunc(trimmed, unicode.IsSpace)
	if end < 0 {
		end = len(trimmed)
	}
	word := trimmed[:end]
	if word == "" || len(word) > len("thinkhardest") || !utf8.ValidString(word) {
		return "", body
	}
	level, ok := thinkLevels[strings.ToLower(word)]
	if !ok {
		return "", body
	}
	return level, strings.TrimLeftFunc(trimmed[end:], unicode.IsSpace)
}
