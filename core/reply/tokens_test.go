package reply

import "testing"

// Cases from OpenClaw's src/auto-reply/tokens.test.ts. The
// "reasoning-wrapped silent replies (#66701)" cases are left out: that
// heuristic came after openclaw-facts' reference version and is not part
// of §5.2.

func TestIsSilent(t *testing.T) {
	cases := []struct {
		text string
		want bool
	}{
		// returns true for exact token
		{"NO_REPLY", true},
		// returns true for token with surrounding whitespace
		{"  NO_REPLY  ", true},
		{"\nNO_REPLY\n", true},
		// returns true for mixed-case token
		{"no_reply", true},
		{"  No_RePlY  ", true},
		// returns false for undefined/empty
		{"", false},
		// returns false for substantive text ending with token (#19537)
		{"Here is a helpful response.\n\nNO_REPLY", false},
		// returns false for substantive text starting with token
		{"NO_REPLY but here is more content", false},
		// returns false for token embedded in text
		{"Please NO_REPLY to this", false},
		// the JSON envelope (openclaw-facts §5.2)
		{`{"action":"NO_REPLY"}`, true},
		{` { "action" : " NO_REPLY " } `, true},
		{`{"action":"NO_REPLY","reason":"x"}`, false},
		{`{"action":"no_reply"}`, false},
		{`{"action":["NO_REPLY"]}`, false},
		{`{"action":"NO_REPLY"`, false},
		{`["NO_REPLY"]`, false},
		// JavaScript white space around the token
		{"\u00a0NO_REPLY\ufeff", true},
		{"NO_REPLY.", false},
	}
	for _, tc := range cases {
		if got := IsSilent(tc.text); got != tc.want {
			t.Errorf("IsSilent(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

func TestStripTrailingToken(t *testing.T) {
	cases := []struct{ text, want string }{
		// strips token from end of text
		{"Done.\n\nNO_REPLY", "Done."},
		// does not strip token from start of text
		{"NO_REPLY 👍", "NO_REPLY 👍"},
		// strips token with emoji (#30916)
		{"😄 NO_REPLY", "😄"},
		// does not strip embedded token suffix without whitespace delimiter
		{"interject.NO_REPLY", "interject.NO_REPLY"},
		// strips only trailing occurrence
		{"NO_REPLY ok NO_REPLY", "NO_REPLY ok"},
		// returns empty string when only token remains
		{"NO_REPLY", ""},
		{"  NO_REPLY  ", ""},
		// strips token preceded by bold markdown formatting
		{"**NO_REPLY", ""},
		{"some text **NO_REPLY", "some text"},
		{"reasoning**NO_REPLY", "reasoning"},
		// any case, as the regex's i flag
		{"done no_reply", "done"},
	}
	for _, tc := range cases {
		got, _ := stripTrailingToken(tc.text)
		if got != tc.want && !(got == tc.text && tc.want == tc.text) {
			t.Errorf("stripTrailingToken(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestStripSilent(t *testing.T) {
	cases := []struct {
		text, want string
		stripped   bool
	}{
		{"NO_REPLYThe user is saying", "The user is saying", true}, // strips glued leading token text
		{"NO_REPLY NO_REPLYhello", "hello", true},
		{"no_replyHello", "Hello", true},
		{"NO_REPLY: explanation", "NO_REPLY: explanation", false},
		{"NO_REPLY -- nope", "NO_REPLY -- nope", false},
		{"😄 NO_REPLY", "😄", true},
		{"hello NO_REPLY there", "hello NO_REPLY there", false}, // the middle is kept
		{"NO_REPLYhello NO_REPLY", "hello", true},
		{"NO_REPLY", "", true},
		{"plain", "plain", false},
	}
	for _, tc := range cases {
		got, stripped := StripSilent(tc.text)
		if got != tc.want || stripped != tc.stripped {
			t.Errorf("StripSilent(%q) = %q, %v; want %q, %v", tc.text, got, stripped, tc.want, tc.stripped)
		}
	}
}

func TestStartsWithGluedToken(t *testing.T) {
	// matches leading glued silent tokens case-insensitively
	for _, s := range []string{"NO_REPLYThe user is saying", "No_RePlYThe user is saying", "no_replyThe user is saying", "NO_REPLY NO_REPLY9"} {
		if !startsWithGluedToken(s) {
			t.Errorf("startsWithGluedToken(%q) = false", s)
		}
	}
	// rejects separated substantive prefixes and exact-token-only text
	for _, s := range []string{"NO_REPLY -- nope", "NO_REPLY: explanation", "NO_REPLY—note", "NO_REPLY", "  NO_REPLY  "} {
		if startsWithGluedToken(s) {
			t.Errorf("startsWithGluedToken(%q) = true", s)
		}
	}
}

func TestIsSilentPrefix(t *testing.T) {
	cases := []struct {
		text string
		want bool
	}{
		// matches uppercase token lead fragments
		{"NO", true},
		{"NO_", true},
		{"NO_RE", true},
		{"NO_REPLY", true},
		{"  NO_RE", true},
		// rejects ambiguous natural-language prefixes
		{"N", false},
		{"No", false},
		{"no", false},
		{"Hello", false},
		// rejects non-prefixes and mixed characters
		{"NO_X", false},
		{"NO_REPLY more", false},
		{"NO-", false},
		{"NOPE", false},
		{"", false},
	}
	for _, tc := range cases {
		if got := IsSilentPrefix(tc.text); got != tc.want {
			t.Errorf("IsSilentPrefix(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}
