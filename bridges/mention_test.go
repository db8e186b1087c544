package bridges

import "testing"

func TestMentions(t *testing.T) {
	m, err := NewMentions([]string{`\bhey switch(board)?\b`, "", `@?jarvis`})
	if err != nil {
		t.Fatal(err)
	}
	for text, want := range map[string]bool{
		"Hey Switchboard, lunch?": true, "hey switch": true, "ask JARVIS": true, "switchboards are old": false, "hello": false,
	} {
		if m.Match(text) != want {
			t.Errorf("Match(%q) = %v", text, !want)
		}
	}
	if !m.Configured() || (Mentions{}).Configured() || (Mentions{}).Match("anything") {
		t.Error("Configured/zero value wrong")
	}
	for _, bad := range []string{`(a+)+`, `(x*)*y`, `(?:ab{2,})+`, `[`, string(make([]byte, 300))} {
		if _, err := NewMentions([]string{bad}); err == nil {
			t.Errorf("pattern %.30q accepted", bad)
		}
	}
}
