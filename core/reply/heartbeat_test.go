package reply

import (
	"strings"
	"testing"
)

// Every stripHeartbeatToken case of OpenClaw's
// src/auto-reply/heartbeat.test.ts. Two cases found in one fork
// ("preserves multi-sentence response after HEARTBEAT_OK in heartbeat
// mode") contradict openclaw-facts §6.2 (a remainder within ackMaxChars is
// an ack) and are not ported.
func TestStripHeartbeatToken(t *testing.T) {
	skipped := StripResult{ShouldSkip: true, DidStrip: true}
	long := strings.Repeat("A", DefaultAckMaxChars+1)
	cases := []struct {
		name string
		text string
		mode Mode
		want StripResult
	}{
		{"empty", "", ModeHeartbeat, StripResult{ShouldSkip: true}},
		{"blank", "  ", ModeHeartbeat, StripResult{ShouldSkip: true}},
		{"token only", HeartbeatToken, ModeHeartbeat, skipped},
		{"small junk after", "HEARTBEAT_OK 🦞", ModeHeartbeat, skipped},
		{"small junk before", "🦞 " + HeartbeatToken, ModeHeartbeat, skipped},
		{"short remainder", "ALERT " + HeartbeatToken, ModeHeartbeat, skipped},
		{"long remainder is kept", long + " " + HeartbeatToken, ModeHeartbeat, StripResult{Text: long, DidStrip: true}},
		{"edge start in message mode", HeartbeatToken + " hello", ModeMessage, StripResult{Text: "hello", DidStrip: true}},
		{"edge end in message mode", "hello " + HeartbeatToken, ModeMessage, StripResult{Text: "hello", DidStrip: true}},
		{"middle is untouched", "hello " + HeartbeatToken + " there", ModeMessage, StripResult{Text: "hello HEARTBEAT_OK there"}},
		{"HTML-wrapped", "<b>" + HeartbeatToken + "</b>", ModeHeartbeat, skipped},
		{"markdown-wrapped", "**" + HeartbeatToken + "**", ModeHeartbeat, skipped},
		{"markup-wrapped with trailing content", "<code>" + HeartbeatToken + "</code> all good", ModeMessage, StripResult{Text: "all good", DidStrip: true}},
		{"trailing dot", HeartbeatToken + ".", ModeHeartbeat, skipped},
		{"trailing bangs", HeartbeatToken + "!!!", ModeHeartbeat, skipped},
		{"trailing dashes", HeartbeatToken + "---", ModeHeartbeat, skipped},
		{"sentence-ending token keeps punctuation", "I should not respond " + HeartbeatToken + ".", ModeMessage, StripResult{Text: "I should not respond.", DidStrip: true}},
		{"sentence-ending token with emphasis in heartbeat mode", "There is nothing todo, so i should respond with " + HeartbeatToken + " !!!", ModeHeartbeat, skipped},
		{"punctuation before the token stays", "All clear. " + HeartbeatToken, ModeMessage, StripResult{Text: "All clear.", DidStrip: true}},
		// Beyond the upstream file.
		{"no token", "  just text  ", ModeHeartbeat, StripResult{Text: "just text"}},
		{"nbsp and tags", "&nbsp;<i>HEARTBEAT_OK</i>&NBSP;", ModeHeartbeat, skipped},
		{"repeated tokens", "HEARTBEAT_OK HEARTBEAT_OK", ModeMessage, StripResult{ShouldSkip: true, DidStrip: true}},
		{"leading token before marks", HeartbeatToken + ".....", ModeMessage, StripResult{Text: ".....", DidStrip: true}},
		{"five trailing marks are not punctuation", "ok " + HeartbeatToken + ".....", ModeMessage, StripResult{Text: "ok HEARTBEAT_OK....."}},
		{"two emoji are four units", "ok " + HeartbeatToken + "🦞🦞", ModeMessage, StripResult{Text: "ok🦞🦞", DidStrip: true}},
		{"three emoji are six units", "ok " + HeartbeatToken + "🦞🦞🦞", ModeMessage, StripResult{Text: "ok HEARTBEAT_OK🦞🦞🦞"}},
		{"lower case is not the token", "heartbeat_ok", ModeHeartbeat, StripResult{Text: "heartbeat_ok"}},
		{"white space collapses", "HEARTBEAT_OK\n\nline one\n\n  line two", ModeMessage, StripResult{Text: "line one line two", DidStrip: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := StripHeartbeatToken(tc.text, tc.mode, 0); got != tc.want {
				t.Errorf("StripHeartbeatToken(%q) = %+v, want %+v", tc.text, got, tc.want)
			}
		})
	}
}

func TestStripHeartbeatTokenAckMaxChars(t *testing.T) {
	text := "HEARTBEAT_OK " + strings.Repeat("x", 20)
	if got := StripHeartbeatToken(text, ModeHeartbeat, 20); !got.ShouldSkip {
		t.Errorf("20 chars within 20: %+v", got)
	}
	if got := StripHeartbeatToken(text, ModeHeartbeat, 19); got.ShouldSkip || got.Text != strings.Repeat("x", 20) {
		t.Errorf("20 chars over 19: %+v", got)
	}
	if got := StripHeartbeatToken(text, ModeHeartbeat, -1); got.ShouldSkip {
		t.Errorf("negative threshold means zero: %+v", got)
	}
	if got := StripHeartbeatToken("HEARTBEAT_OK", ModeHeartbeat, -1); !got.ShouldSkip {
		t.Errorf("a bare token is always an ack: %+v", got)
	}
	if got := StripHeartbeatToken(text, ModeMessage, 1000); got.ShouldSkip {
		t.Errorf("message mode never treats a remainder as an ack: %+v", got)
	}
}

func TestStripHeartbeatTokenFixedPoint(t *testing.T) {
	// One OpenClaw pass leaves "_HEARTBEAT_OK_ x"; a second would strip
	// the wrapped token. The result must already be the fixed point.
	got := StripHeartbeatToken("_HEARTBEAT_OK_ x HEARTBEAT_OK", ModeMessage, 0)
	again := StripHeartbeatToken(got.Text, ModeMessage, 0)
	if again.Text != got.Text {
		t.Errorf("not a fixed point: %q then %q", got.Text, again.Text)
	}
}
