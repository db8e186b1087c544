package slack

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestInboundText(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "hello there", "hello there"},
		{"bot mention removed", "<@UBOT> what is up?", "what is up?"},
		{"labelled bot mention removed", "hi <@UBOT|switchboard>", "hi"},
		{"user mention", "ask <@U123> about it", "ask @U123 about it"},
		{"labelled user mention", "ask <@U123|ada>", "ask @ada"},
		{"label with an at sign", "ask <@U123|@ada>", "ask @ada"},
		{"channel with name", "see <#C123|general>", "see #general"},
		{"channel without name", "see <#C123>", "see #C123"},
		{"here", "<!here> lunch", "@here lunch"},
		{"channel broadcast", "<!channel>", "@channel"},
		{"everyone", "<!everyone> hi", "@everyone hi"},
		{"user group", "cc <!subteam^S1|@team>", "cc @team"},
		{"user group without label", "cc <!subteam^S1>", "cc @subteam"},
		{"date with fallback", "due <!date^1392734382^{date_num}|2014-02-18>", "due 2014-02-18"},
		{"link with label", "read <https://x.example/a?b=1&amp;c=2|the docs>", "read the docs (https://x.example/a?b=1&c=2)"},
		{"bare link", "go to <https://x.example>", "go to https://x.example"},
		{"link labelled with itself", "<https://x.example|x.example>", "https://x.example"},
		{"mailto", "mail <mailto:a@b.example|a@b.example>", "mail a@b.example"},
		{"mailto without label", "mail <mailto:a@b.example>", "mail a@b.example"},
		{"entities", "1 &lt; 2 &amp;&amp; 3 &gt; 2", "1 < 2 && 3 > 2"},
		{"escaped entity stays escaped", "&amp;lt;b&amp;gt;", "&lt;b&gt;"},
		{"escaped token is text", "&lt;@U123&gt;", "<@U123>"},
		{"unclosed bracket kept", "a <b and <@U1> c", "a <b and @U1 c"},
		{"label with entities", "<https://x.example|a &amp; b>", "a & b (https://x.example)"},
		{"only the bot mention", "<@UBOT>", ""},
		{"empty", "", ""},
		{"non-ascii", "héllo <@U1|zoë> ✓", "héllo @zoë ✓"},
	} {
		if got := inboundText(tc.in, "UBOT"); got != tc.want {
			t.Errorf("%s: inboundText(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

// wellFormed reports that every "<" of s opens a token closed by ">"
// before the next "<", as in the text Slack sends.
func wellFormed(s string) bool {
	open := false
	for _, c := range []byte(s) {
		switch c {
		case '<':
			if open {
				return false
			}
			open = true
		case '>':
			open = false
		}
	}
	return !open
}

func FuzzInboundText(f *testing.F) {
	for _, s := range []string{
		"<@UBOT> hi", "<@U1|ada> <#C1|general> <!here>", "<!subteam^S1|@team>", "<https://x|y>",
		"<mailto:a@b|a@b>", "&amp;lt;", "<<@U1>>", "<", ">", "<|>", "<@>", "<!>", "<#>", "<mailto:>",
		"a <b <@U1>", "\xff<@U1>", "<tel:+1|call>",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := inboundText(in, "UBOT")
		if utf8.ValidString(in) && !utf8.ValidString(out) {
			t.Fatalf("inboundText(%q) = %q is not UTF-8", in, out)
		}
		// Without entities, a well-formed text's tokens are all rendered:
		// no "<" (so no "<@" token) can survive.
		if wellFormed(in) && !strings.Contains(in, "&") && strings.Contains(out, "<") {
			t.Fatalf("inboundText(%q) = %q kept a token", in, out)
		}
		if strings.Contains(out, "<@UBOT>") && !strings.Contains(in, "&") {
			t.Fatalf("inboundText(%q) = %q kept the bot's mention", in, out)
		}
	})
}
