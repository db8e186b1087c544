package prompt

import (
	"strings"
	"testing"
)

func TestStripForDisplay(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "hello there", "hello there"},
		{"multiline kept", "line one\n\nline two", "line one\n\nline two"},
		{"blocks removed",
			LabelConversationInfo + "\n```json\n{\n  \"timestamp\": \"Sat 2026-11-21 09:27 UTC\"\n}\n```\n\n" +
				LabelSender + "\n```json\n{\"id\": \"u1\"}\n```\n\nwhat is up?",
			"what is up?"},
		{"system lines kept", "System: [2026-11-21 09:00] cron fired\n\n" + LabelSender + "\n```json\n{}\n```\n\nhi", "System: [2026-11-21 09:00] cron fired\n\nhi"},
		{"untrusted context cut", "hi\n\n" + UntrustedContextHeader + "\nsomething", "hi"},
		{"label without fence kept", LabelSender + "\nnot a block", LabelSender + "\nnot a block"},
		{"unclosed fence kept", LabelSender + "\n```json\n{", LabelSender + "\n```json\n{"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := StripForDisplay(tc.in); got != tc.want {
				t.Errorf("StripForDisplay(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestStripForDisplayUndoesBody: what Body builds around a user's message
// with metadata is taken off again, leaving the message.
func TestStripForDisplayUndoesBody(t *testing.T) {
	in := seedGroup()
	in.UntrustedContext = []string{"forwarded from a channel"}
	body := Body(in, State{}).Text
	if !strings.Contains(body, LabelSender) {
		t.Fatalf("Body made no sender block; the test does not test anything:\n%s", body)
	}
	got := StripForDisplay(body)
	if !strings.HasSuffix(got, in.Body) || strings.Contains(got, "untrusted") || strings.Contains(got, "```") {
		t.Errorf("StripForDisplay(Body) = %q, want the message without metadata\nbody:\n%s", got, body)
	}
}

func FuzzStripForDisplay(f *testing.F) {
	f.Add("hello")
	f.Add(LabelSender + "\n```json\n{\"id\": \"1\"}\n```\n\nhi")
	f.Add(LabelSender + "\n```json\n{")
	f.Add("hi\n\n" + UntrustedContextHeader + "\nx")
	f.Fuzz(func(t *testing.T, s string) {
		got := StripForDisplay(s)
		if len(got) > len(s) {
			t.Fatalf("StripForDisplay grew the text: %q → %q", s, got)
		}
		if !strings.Contains(s, "(untrusted") && !strings.Contains(s, UntrustedContextHeader) && got != s {
			t.Fatalf("StripForDisplay changed text without metadata: %q → %q", s, got)
		}
	})
}
