package prompt

import (
	"strings"
	"time"
)

// SystemEvent is one queued system event drained into the next prompt
// (openclaw-facts §6.4): a cron result, a channel notice, a subagent
// completion.
type SystemEvent struct {
	// Text is the event; several lines become several "System:" lines.
	Text string
	// TS is when the event happened, in Unix ms; zero means now.
	TS int64
	// Trusted marks an event Switchboard produced itself. The zero value is
	// untrusted: its lines read "System (untrusted): …" and its text is
	// neutralised like channel text. OpenClaw defaults to trusted; failing
	// closed is the safer zero value for a Go struct.
	Trusted bool
	// FromOwner reports an untrusted event the owner sent (through the
	// gateway); the prompt still labels it untrusted. The dispatcher uses
	// it to decide whether the turn stays the owner's.
	FromOwner bool
}

// FormatSystemEvents renders events as OpenClaw's
// drainFormattedSystemEventBlock does: each event's first line is
// "System: [<ts>] text" and each further line "System: text" (prefix
// "System (untrusted)" for untrusted events), heartbeat noise is dropped,
// and "Node:" status lines lose their "· last input …" part. now supplies
// the time of events without TS (nil means time.Now); loc is the display
// zone (nil means local). It returns "" when nothing is left.
func FormatSystemEvents(events []SystemEvent, now func() time.Time, loc *time.Location) string {
	var b strings.Builder
	for _, ev := range events {
		text, ok := compactSystemEvent(stripNUL(normalizeNewlines(ev.Text)))
		if !ok {
			continue
		}
		prefix := "System (untrusted): "
		if ev.Trusted {
			prefix = "System: "
		} else {
			text = neutralizeRaw(text)
		}
		var at time.Time
		switch {
		case ev.TS != 0:
			at = time.UnixMilli(ev.TS)
		case now != nil:
			at = now()
		default:
			at = time.Now()
		}
		for i, line := range strings.Split(text, "\n") {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(prefix)
			if i == 0 {
				b.WriteByte('[')
				b.WriteString(formatEventTime(at, loc))
				b.WriteString("] ")
			}
			b.WriteString(line)
		}
	}
	return b.String()
}

// compactSystemEvent drops heartbeat noise and trims node status lines
// (OpenClaw src/auto-reply/reply/session-system-events.ts).
func compactSystemEvent(text string) (string, bool) {
	trimmed := jsTrim(text)
	if trimmed == "" {
		return "", false
	}
	lower := strings.ToLower(trimmed)
	if strings.Contains(lower, "reason periodic") ||
		strings.HasPrefix(lower, "read heartbeat.md") ||
		strings.Contains(lower, "heartbeat poll") ||
		strings.Contains(lower, "heartbeat wake") {
		return "", false
	}
	if strings.HasPrefix(trimmed, "Node:") {
		trimmed = jsTrim(removeLastInput(trimmed))
	}
	return trimmed, true
}

// removeLastInput removes the first " · last input …" segment (up to the
// next "·"), as the regex / · last input [^·]+/i does.
func removeLastInput(s string) string {
	const marker = " · last input "
	i := indexFold(s, marker)
	if i < 0 {
		return s
	}
	rest := s[i+len(marker):]
	j := strings.Index(rest, "·")
	if j == 0 {
		return s // [^·]+ needs at least one character
	}
	if j < 0 {
		return s[:i]
	}
	return s[:i] + rest[j:]
}

// indexFold is strings.Index ignoring ASCII case, with offsets into s.
func indexFold(s, substr string) int {
	for i := 0; i+len(substr) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(substr)], substr) {
			return i
		}
	}
	return -1
}
