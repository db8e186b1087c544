package markup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzSeeds are markdown inputs that reach every construct and the edge
// cases found so far; f.Add runs them as unit tests.
var fuzzSeeds = []string{
	"",
	"**bold** *italic* _u_ __b__ ~~s~~ ||sp|| `code` [l](https://x.io) <https://a.b> https://c.d/e_(f).",
	"# h1\n## h2 ##\nSetext\n===\n\n---\n\n> q\n>> qq\n> ```\n> x\n",
	"- a\n  - b\n    1. c\n- d\n\n1) e\n2) f\n\n    indented code",
	"```go\nfunc main() {}\n```\n~~~\nunclosed",
	"| a | b |\n|:-|-:|\n| `x|y` | c \\| d |\n| only |",
	"***x*** *foo**bar**baz* **a *b* c** __init__ snake_case_name",
	"[a [b](https://b.io) c](https://a.io) ![img](https://i.io/x.png) [](https://e.io) [x](<y z>)",
	"<@U123> <#C1|gen> <!here> <me@x.io> <javascript:alert(1)> [x](javascript:alert(1))",
	"a < b > c & d \"q\" \\* \\_ \\[ \\\\ \\\nline  \nbreak",
	"*a **b* c** `` ` `` ``` ``",
	"\xff\xfe\x00\r\n\r**x\r\n",
	strings.Repeat(">", 100) + " deep",
	strings.Repeat("- ", 50) + "deep list",
	strings.Repeat("[", 200) + strings.Repeat("](", 100),
	strings.Repeat("*a ", 100) + strings.Repeat("b* ", 100),
	"😀👍🏽👨\u200d👩\u200d👧 e\u0301 ❤\ufe0f " + strings.Repeat("😀", 20),
}

func addSeeds(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	if md, err := os.ReadFile(filepath.Join("testdata", "answer.md")); err == nil {
		f.Add(string(md))
	}
}

// FuzzParse checks that parsing and rendering any input for every target
// neither panics nor produces invalid UTF-8.
func FuzzParse(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, md string) {
		doc := Parse(md)
		for _, target := range []Target{Plain, Telegram, Slack, Discord, WhatsApp} {
			out := Render(doc, target)
			if !utf8.ValidString(out) {
				t.Fatalf("%v output is not valid UTF-8: %q", target, out)
			}
		}
	})
}

// FuzzTelegramHTML checks that the Telegram HTML of any input is valid Bot
// API HTML (balanced, allowed tags and attributes only, entities
// complete), and stays valid and within the limit when chunked.
func FuzzTelegramHTML(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, md string) {
		html := TelegramHTML(md)
		if err := validateTelegramHTML(html); err != nil {
			t.Fatalf("TelegramHTML(%q) = %q: %v", md, html, err)
		}
		for _, limit := range []int{MinLimit, 64} {
			for _, c := range ChunkText(html, Telegram.ChunkOptions(limit, ModeLength)) {
				if n := UTF16.Len(c); n > limit {
					t.Fatalf("chunk of %d units over %d: %q", n, limit, c)
				}
				if err := validateTelegramHTML(c); err != nil {
					t.Fatalf("chunk %q of %q: %v", c, html, err)
				}
			}
		}
	})
}

// FuzzChunk checks that chunking any text with any options never panics,
// keeps every chunk within the limit and not blank, loses or reorders no
// visible text, and keeps valid HTML valid.
func FuzzChunk(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, 16, uint8(0))
		f.Add(TelegramHTML(s), 40, uint8(0x0c))    // HTML, UTF-16
		f.Add(SlackMrkdwn(s), 20, uint8(0x03))     // Slack, newline mode
		f.Add(DiscordMarkdown(s), 30, uint8(0x41)) // 5 lines at most, newline mode
	}
	f.Add("```\n"+codeLines(10)+"```", 50, uint8(0x40))
	f.Add(strings.Repeat("😀", 30), 17, uint8(0x08))
	// flags: bit 0 the mode, bits 1-2 the syntax, bits 3-4 the unit, bit 6
	// a cap of 5 lines.
	f.Fuzz(func(t *testing.T, text string, limit int, flags uint8) {
		o := ChunkOptions{
			Limit:  limit % 300,
			Mode:   Mode(flags & 1),
			Syntax: Syntax((flags >> 1 & 3) % 3),
			Unit:   Unit((flags >> 3 & 3) % 3),
		}
		if flags&0x40 != 0 {
			o.MaxLines = 5
		}
		checkChunks(t, text, o)
		if o.Syntax == SyntaxHTML {
			checkChunks(t, TelegramHTML(text), o)
		}
	})
}
