package reply

import (
	"strings"
	"testing"
)

func TestStreamFilter(t *testing.T) {
	cases := []struct {
		name    string
		deltas  []string
		shown   []string // what each Push returns
		rest    string   // what Finish returns
		silent  bool
		visible string
	}{
		{
			name:    "ordinary reply flows through",
			deltas:  []string{"Hel", "lo ", "there"},
			shown:   []string{"Hel", "lo ", "there"},
			visible: "Hello there",
		},
		{
			name:   "silent token is never shown",
			deltas: []string{"NO", "_RE", "PLY"},
			shown:  []string{"", "", ""},
			silent: true,
		},
		{
			name:   "a bare NO fragment is silent at the end",
			deltas: []string{"NO"},
			shown:  []string{""},
			silent: true,
		},
		{
			name:    "NO then more text is released",
			deltas:  []string{"NO", "PE, that won't work"},
			shown:   []string{"", "NOPE, that won't work"},
			visible: "NOPE, that won't work",
		},
		{
			name:    "natural No is not held",
			deltas:  []string{"No", ", thanks"},
			shown:   []string{"No", ", thanks"},
			visible: "No, thanks",
		},
		{
			name:    "glued token is dropped",
			deltas:  []string{"NO_REPLY", "Hello"},
			shown:   []string{"", "Hello"},
			visible: "Hello",
		},
		{
			name:    "token then separate words are shown as written",
			deltas:  []string{"NO_REPLY ", "but why"},
			shown:   []string{"", "NO_REPLY but why"},
			visible: "NO_REPLY but why",
		},
		{
			name:   "token and white space is silent",
			deltas: []string{"  NO_REPLY", "\n"},
			shown:  []string{"", ""},
			silent: true,
		},
		{
			name:    "leading white space waits for text",
			deltas:  []string{"\n", " ", "Hi"},
			shown:   []string{"", "", "\n Hi"},
			visible: "\n Hi",
		},
		{
			name:    "held text that stops being a prefix at the end",
			deltas:  []string{"NO_RE"},
			shown:   []string{""},
			silent:  true,
			visible: "",
		},
		{
			name:    "trailing token is not held",
			deltas:  []string{"Done.", " NO_REPLY"},
			shown:   []string{"Done.", " NO_REPLY"},
			visible: "Done. NO_REPLY",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var f StreamFilter
			for i, d := range tc.deltas {
				if got := f.Push(d); got != tc.shown[i] {
					t.Errorf("Push(%q) = %q, want %q", d, got, tc.shown[i])
				}
			}
			rest, silent := f.Finish()
			if rest != tc.rest || silent != tc.silent {
				t.Errorf("Finish = %q, %v; want %q, %v", rest, silent, tc.rest, tc.silent)
			}
			if f.Visible() != tc.visible {
				t.Errorf("Visible = %q, want %q", f.Visible(), tc.visible)
			}
		})
	}
}

func TestStreamFilterFinishReleasesHeldText(t *testing.T) {
	var f StreamFilter
	if got := f.Push("  "); got != "" || !f.Holding() {
		t.Fatalf("white space: %q, holding %v", got, f.Holding())
	}
	rest, silent := f.Finish()
	if rest != "" || !silent {
		t.Errorf("blank stream: %q, %v", rest, silent)
	}
}

// TestStreamFilterAgreesWithBuild streams every split of some replies and
// checks that what was shown matches what Build sends: silent replies show
// nothing, others end up showing the full text.
func TestStreamFilterAgreesWithBuild(t *testing.T) {
	for _, text := range []string{"NO_REPLY", "NO_REPLYHello", "Hello", "NOPE", "no_reply", " NO_REPLY "} {
		for cut := 0; cut <= len(text); cut++ {
			var f StreamFilter
			f.Push(text[:cut])
			f.Push(text[cut:])
			_, silent := f.Finish()
			built := Build(assistant(text), Options{})
			if silent != (built == nil) {
				t.Errorf("%q cut at %d: filter silent %v, Build %#v", text, cut, silent, built)
			}
			if silent {
				continue
			}
			if strings.TrimSpace(f.Visible()) != built[0].Text {
				t.Errorf("%q cut at %d: showed %q, Build sends %q", text, cut, f.Visible(), built[0].Text)
			}
		}
	}
}
