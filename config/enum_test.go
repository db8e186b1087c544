package config

import (
	"strings"
	"testing"
)

// TestFinding9EnumDidYouMean checks that a wrong enumeration value leads
// with the likely intended value when one is close, and that a type with
// many accepted spellings (queue modes have fifteen) lists its canonical
// values and only counts the other spellings.
func TestFinding9EnumDidYouMean(t *testing.T) {
	tests := []struct {
		name      string
		src       string
		path      string
		line, col int
		words     []string
		not       []string
	}{
		{
			name: "close to a value",
			src:  "gateway:\n  bind: loopbak\n",
			path: "gateway.bind", line: 2, col: 9,
			words: []string{`got "loopbak"; did you mean "loopback"?`, "one of loopback, lan, custom"},
		},
		{
			name: "close to a value of a long list",
			src:  "messages:\n  queue:\n    mode: colect\n",
			path: "messages.queue.mode", line: 3, col: 11,
			words: []string{`got "colect"; did you mean "collect"?`, "one of steer, followup, collect, steer-backlog, interrupt"},
			not:   []string{"abort", "steer_backlog", "coalesce"},
		},
		{
			name: "close to an alias suggests the value it stands for",
			src:  "messages:\n  queue:\n    mode: folowups\n",
			path: "messages.queue.mode", line: 3, col: 11,
			words: []string{`did you mean "followup"?`},
			not:   []string{"abort"},
		},
		{
			name: "nothing close in a long list",
			src:  "messages:\n  queue:\n    mode: banana\n",
			path: "messages.queue.mode", line: 3, col: 11,
			words: []string{`must be one of steer, followup, collect, steer-backlog, interrupt (got "banana")`, "10 other spellings", "switchboard config schema"},
			not:   []string{"did you mean", "abort", "steer_backlog"},
		},
		{
			name: "nothing close in a short list",
			src:  "channels:\n  telegram:\n    dmPolicy: whoever\n",
			path: "channels.telegram.dmPolicy", line: 3, col: 15,
			words: []string{`must be one of pairing, allowlist, open, disabled (got "whoever")`},
			not:   []string{"did you mean", "other spellings"},
		},
		{
			name: "a typo in a channel policy",
			src:  "channels:\n  telegram:\n    dmPolicy: pairng\n",
			path: "channels.telegram.dmPolicy", line: 3, col: 15,
			words: []string{`did you mean "pairing"?`, "one of pairing, allowlist, open, disabled"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			es := parseErrors(t, tt.src, env())
			var found bool
			for _, e := range es {
				if e.Path != tt.path {
					continue
				}
				found = true
				if e.Line != tt.line || e.Column != tt.col {
					t.Errorf("at %d:%d, want %d:%d", e.Line, e.Column, tt.line, tt.col)
				}
				for _, w := range tt.words {
					if !strings.Contains(e.Message, w) {
						t.Errorf("message %q does not say %q", e.Message, w)
					}
				}
				for _, w := range tt.not {
					if strings.Contains(e.Message, w) {
						t.Errorf("message %q says %q", e.Message, w)
					}
				}
			}
			if !found {
				t.Fatalf("no problem at %s: %v", tt.path, es)
			}
		})
	}
}
