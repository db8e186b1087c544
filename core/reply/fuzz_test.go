package reply

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// FuzzStripHeartbeatToken checks that stripping never panics, that its
// message-mode result is a fixed point, and that the result never grows.
func FuzzStripHeartbeatToken(f *testing.F) {
	for _, s := range []string{
		"", "HEARTBEAT_OK", "HEARTBEAT_OK 🦞", "**HEARTBEAT_OK**", "<b>HEARTBEAT_OK</b>",
		"I should not respond HEARTBEAT_OK.", "_HEARTBEAT_OK_ x HEARTBEAT_OK",
		"hello HEARTBEAT_OK there", "&nbsp;HEARTBEAT_OK&nbsp;", "HEARTBEAT_OK\xff\xfe",
		"<a<b>HEARTBEAT_OK", "`HEARTBEAT_OK` ``HEARTBEAT_OK``",
	} {
		f.Add(s, false, 0)
	}
	f.Fuzz(func(t *testing.T, text string, heartbeat bool, ack int) {
		mode := ModeMessage
		if heartbeat {
			mode = ModeHeartbeat
		}
		res := StripHeartbeatToken(text, mode, ack%1000)
		if res.ShouldSkip && res.Text != "" {
			t.Fatalf("skip with text %q", res.Text)
		}
		if len(res.Text) > len(text) {
			t.Fatalf("text grew: %q -> %q", text, res.Text)
		}
		msg := StripHeartbeatToken(text, ModeMessage, 0)
		again := StripHeartbeatToken(msg.Text, ModeMessage, 0)
		if msg.Text != "" && again.Text != msg.Text {
			t.Fatalf("not idempotent: %q -> %q -> %q", text, msg.Text, again.Text)
		}
	})
}

// FuzzBuild checks that Build never panics and never delivers a bare
// token.
func FuzzBuild(f *testing.F) {
	for _, s := range []string{"NO_REPLY", "[[reply_to_current]] hi", "MEDIA:/tmp/a.png\nNO_REPLY", "HEARTBEAT_OK", "NO_REPLYhi", "[[reply_to: x]]"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, text string, heartbeat bool) {
		for _, p := range Build(assistant(text), Options{Heartbeat: heartbeat}) {
			if IsSilent(p.Text) || strings.TrimSpace(p.Text) == HeartbeatToken {
				t.Fatalf("delivered a token: %q from %q", p.Text, text)
			}
			if p.Text == "" && p.MediaURL == "" {
				t.Fatalf("empty payload from %q", text)
			}
		}
		_ = Build(&core.AssistantMessage{StopReason: core.StopReasonError, ErrorMessage: text}, Options{})
	})
}
