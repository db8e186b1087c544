package markup

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the testdata/*.golden files")

// renderCase is one golden rendering: markdown in, platform text out.
type renderCase struct {
	name, md, want string
}

// runRenderCases checks render against cases; Telegram output is also
// validated as Bot API HTML.
func runRenderCases(t *testing.T, target Target, cases []renderCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Render(Parse(tc.md), target)
			if got != tc.want {
				t.Errorf("%v(%q)\n got: %q\nwant: %q", target, tc.md, got, tc.want)
			}
			if target == Telegram {
				if err := validateTelegramHTML(got); err != nil {
					t.Errorf("invalid Telegram HTML %q: %v", got, err)
				}
			}
		})
	}
}

func TestTelegramHTML(t *testing.T) {
	runRenderCases(t, Telegram, []renderCase{
		{"bold", "**a** and __b__", "<b>a</b> and <b>b</b>"},
		{"italic", "*a* _b_ snake_case_name", "<i>a</i> <i>b</i> snake_case_name"},
		{"strike", "~~x~~ in ~5 min", "<s>x</s> in ~5 min"},
		{"nested styles", "***x*** **a *b* c**", "<b><i>x</i></b> <b>a <i>b</i> c</b>"},
		{"unmatched delimiters", "2 * 3 * 4 and **open", "2 * 3 * 4 and **open"},
		{"inline code escaped", "`a < b && c`", "<code>a &lt; b &amp;&amp; c</code>"},
		{"code drops outer style", "**see `x` now**", "<b>see </b><code>x</code><b> now</b>"},
		{"code span double ticks", "``a ` b``", "<code>a ` b</code>"},
		{"fence with language", "```go\nfmt.Println(\"<x>\")\n```",
			`<pre><code class="language-go">fmt.Println("&lt;x&gt;")</code></pre>`},
		{"fence without language", "```\na & b\n\n  c\n```", "<pre>a &amp; b\n\n  c</pre>"},
		{"tilde fence", "~~~python\nx = 1\n~~~", `<pre><code class="language-python">x = 1</code></pre>`},
		{"unclosed fence", "```\ncode", "<pre>code</pre>"},
		{"fence language sanitized", "```c\"><b>\nx\n```", `<pre><code class="language-cb">x</code></pre>`},
		{"indented code", "    x < 1", "<pre>x &lt; 1</pre>"},
		{"link", `[docs](https://example.com/a?b=1&c="d")`,
			`<a href="https://example.com/a?b=1&amp;c=&quot;d&quot;">docs</a>`},
		{"link with styled label", "[**bold** link](https://x.io)", `<a href="https://x.io"><b>bold</b> link</a>`},
		{"bold link", "**[x](https://x.io)**", `<b><a href="https://x.io">x</a></b>`},
		{"code in link is plain", "[`cmd`](https://x.io)", `<a href="https://x.io">cmd</a>`},
		{"link title ignored", `[a](https://x.io "title")`, `<a href="https://x.io">a</a>`},
		{"javascript link", "[click](javascript:alert(1))", "click"},
		{"file link", "[f](file:///etc/passwd)", "f"},
		{"relative link", "[rel](/path)", "rel"},
		{"data link", "[d](data:text/html,<b>x</b>)", "d"},
		{"tg link", "[me](tg://user?id=42)", `<a href="tg://user?id=42">me</a>`},
		{"mailto link", "[mail](mailto:a@b.c)", `<a href="mailto:a@b.c">mail</a>`},
		{"email autolink", "<me@example.com>", `<a href="mailto:me@example.com">me@example.com</a>`},
		{"url autolink", "<https://x.io/a>", `<a href="https://x.io/a">https://x.io/a</a>`},
		{"bare url", "see https://example.com/a_b.", `see <a href="https://example.com/a_b">https://example.com/a_b</a>.`},
		{"bare url in parens", "(https://x.io/a_(b))", `(<a href="https://x.io/a_(b)">https://x.io/a_(b)</a>)`},
		{"bare url in bold", "**https://x.io**", `<b><a href="https://x.io">https://x.io</a></b>`},
		{"image", "![alt](https://x.io/a.png)", `<a href="https://x.io/a.png">alt</a>`},
		{"nested link", "[a [b](https://b.io) c](https://a.io)",
			`[a <a href="https://b.io">b</a> c](<a href="https://a.io">https://a.io</a>)`},
		{"heading", "## Title *x*", "<b>Title <i>x</i></b>"},
		{"heading closing hashes", "# Title ##", "<b>Title</b>"},
		{"setext heading", "Title\n=====\n\nbody", "<b>Title</b>\n\nbody"},
		{"not a heading", "#hashtag", "#hashtag"},
		{"bullets", "- a\n- b\n  - c\n* d", "• a\n• b\n  • c\n• d"},
		{"ordered", "3. a\n4. b", "3. a\n4. b"},
		{"ordered with nested", "1. a\n  - b\n2. c", "1. a\n   • b\n2. c"},
		{"list after text", "Steps:\n1. a\n2. b", "Steps:\n\n1. a\n2. b"},
		{"list item paragraphs", "- a\n\n  more\n- b", "• a\n  more\n• b"},
		{"list item code", "- a\n  ```\n  x\n  ```", "• a\n<pre>x</pre>"},
		{"lazy continuation", "- a\nb", "• a\n  b"},
		{"quote", "> a **b**\n> c", "<blockquote>a <b>b</b>\nc</blockquote>"},
		{"nested quote flattened", "> a\n>> b", "<blockquote>a\n\nb</blockquote>"},
		{"quote with code", "> ```\n> x\n> ```", "<blockquote><pre>x</pre></blockquote>"},
		{"table", "| a | b |\n|---|--:|\n| 1 | 22 |", "<pre>a |  b\n--|---\n1 | 22</pre>"},
		{"table escaped", "| x |\n|---|\n| a<b |", "<pre>x\n---\na&lt;b</pre>"},
		{"table pipes", "| a | b |\n|-|-|\n| `x|y` | c \\| d |", "<pre>a   | b\n----|------\nx|y | c | d</pre>"},
		{"table short row", "| a | b |\n|-|:-:|\n| 1 |", "<pre>a | b\n--|--\n1 |</pre>"},
		{"escaping", `a < b > c & d "q"`, `a &lt; b &gt; c &amp; d "q"`},
		{"raw html is text", "<script>x</script>", "&lt;script&gt;x&lt;/script&gt;"},
		{"spoiler", "||secret||", "<tg-spoiler>secret</tg-spoiler>"},
		{"single pipes", "a | b || c", "a | b || c"},
		{"backslash escapes", `\*not\* \_x\_ \[y\]`, "*not* _x_ [y]"},
		{"hard breaks", "a  \nb\\\nc\nd", "a\nb\nc\nd"},
		{"rule", "a\n\n---\n\nb", "a\n\n" + ruleLine + "\n\nb"},
		{"slack token is text", "<@U123> <!here>", "&lt;@U123&gt; &lt;!here&gt;"},
		{"blank", " \n\n\t\n", ""},
		{"crlf", "**a**\r\nb\r\n\r\nc", "<b>a</b>\nb\n\nc"},
		{"invalid utf8", "a\xffb", "a\uFFFDb"},
	})
}

func TestPlainText(t *testing.T) {
	runRenderCases(t, Plain, []renderCase{
		{"styles dropped", "**a** _b_ ~~c~~ `d` ||e||", "a b c d e"},
		{"link", "[docs](https://x.io)", "docs (https://x.io)"},
		{"bare url", "https://x.io", "https://x.io"},
		{"email", "<me@x.io>", "me@x.io"},
		{"unsafe link", "[click](javascript:alert(1))", "click"},
		{"heading", "# Title\ntext", "Title\n\ntext"},
		{"lists", "- a\n  1. b", "• a\n  1. b"},
		{"quote", "> a\n>\n> b", "> a\n>\n> b"},
		{"code block", "```go\nx < 1\n```", "x < 1"},
		{"table", "| a | b |\n|---|---|\n| 1 | 2 |", "a | b\n--|--\n1 | 2"},
		{"no escaping", "a < b & c", "a < b & c"},
	})
}

func TestSlackMrkdwn(t *testing.T) {
	runRenderCases(t, Slack, []renderCase{
		{"styles", "**a** *b* ~~c~~ `d`", "*a* _b_ ~c~ `d`"},
		{"bold italic", "***x***", "*_x_*"},
		{"link", "[docs](https://x.io/?a=1&b=2)", "<https://x.io/?a=1&amp;b=2|docs>"},
		{"link label escaped", "[a > b](https://x.io)", "<https://x.io|a &gt; b>"},
		{"link url pipe", "[a](https://x.io/a|b)", "<https://x.io/a%7Cb|a>"},
		{"bold link", "**[a](https://x.io)**", "*<https://x.io|a>*"},
		{"bare url", "see https://x.io.", "see <https://x.io>."},
		{"email", "<me@x.io>", "<mailto:me@x.io|me@x.io>"},
		{"unsafe link", "[x](javascript:alert(1))", "x"},
		{"tokens kept", "hi <@U123ABC>, see <#C024BE91L|general> <!here> <!channel> & <b>",
			"hi <@U123ABC>, see <#C024BE91L|general> <!here> <!channel> &amp; &lt;b&gt;"},
		{"subteam and date", "<!subteam^S0123|@team> <!date^1392734382^{date}|Feb 18>",
			"<!subteam^S0123|@team> <!date^1392734382^{date}|Feb 18>"},
		{"fake tokens escaped", "<@foo> <!nope> <#>", "&lt;@foo&gt; &lt;!nope&gt; &lt;#&gt;"},
		{"code escaped", "`a<b`", "`a&lt;b`"},
		{"heading", "# Hi *there*", "*Hi _there_*"},
		{"fence", "```go\nx := 1 < 2\n```", "```\nx := 1 &lt; 2\n```"},
		{"fence in code", "````\n```\n````", "```\n``\u200b`\n```"},
		{"bold across lines", "**a\nb**", "*a*\n*b*"},
		{"separate spans", "**a** **b** ~~c~~ ~~d~~", "*a* *b* ~c~ ~d~"},
		{"unflanked", "**a **b", "**a **b"},
		{"quote", "> a\n> b", "> a\n> b"},
		{"spoiler dropped", "||x||", "x"},
		{"list", "- a\n- *b*", "• a\n• _b_"},
		{"table", "| a | b |\n|---|---|\n| x&y | 2 |", "```\na   | b\n----|--\nx&amp;y | 2\n```"},
	})
}

func TestWhatsAppText(t *testing.T) {
	runRenderCases(t, WhatsApp, []renderCase{
		{"styles", "**a** __b__ *c* ~~d~~ `e`", "*a* *b* _c_ ~d~ `e`"},
		{"link", "[docs](https://x.io)", "docs (https://x.io)"},
		{"bare url", "https://x.io", "https://x.io"},
		{"email", "<me@x.io>", "me@x.io"},
		{"unsafe link", "[x](javascript:alert(1))", "x"},
		{"fence", "```py\nprint(1)\n```", "```\nprint(1)\n```"},
		{"heading", "## Title", "*Title*"},
		{"no escaping", "a < b & c", "a < b & c"},
		{"quote", "> q", "> q"},
		{"spoiler dropped", "||x||", "x"},
		{"table", "| Name | Age | City |\n|---|---|---|\n| Ann | 30 | Oslo |\n| Bob | 4 | |",
			"*Ann*\n• Age: 30\n• City: Oslo\n\n*Bob*\n• Age: 4"},
		{"one column table", "| Item |\n|---|\n| a |\n| b |", "• a\n• b"},
		{"header only table", "| a | b |\n|---|---|", "• a\n• b"},
		{"styles per line", "*a\nb*", "_a_\n_b_"},
	})
}

func TestDiscordMarkdown(t *testing.T) {
	runRenderCases(t, Discord, []renderCase{
		{"styles", "**a** *b* ~~c~~ `d` ||e||", "**a** _b_ ~~c~~ `d` ||e||"},
		{"code with backticks", "`` a`b ``", "``a`b``"},
		{"headings", "# A\n\n### C\n\n#### B", "# A\n\n### C\n\n**B**"},
		{"link", "[docs](https://x.io/a_(b))", "[docs](https://x.io/a_%28b%29)"},
		{"link label brackets", "[a \\[1\\]](https://x.io)", `[a \[1\]](https://x.io)`},
		{"bare url", "https://x.io/a_(b)", "https://x.io/a_(b)"},
		{"unsafe link", "[x](javascript:alert(1))", "x"},
		{"escapes only what would format", `2 * 3, a\*b, snake_case, \_x\_, ~5, a\~\~b`,
			`2 * 3, a\*b, snake_case, \_x\_, ~5, a\~\~b`},
		{"line start escapes", "\\# not heading\n\\> not quote", "\\# not heading\n\\> not quote"},
		{"fence keeps language", "```go\nx\n```", "```go\nx\n```"},
		{"lists", "- a\n  - b\n1. c", "- a\n  - b\n\n1. c"},
		{"nested quote flattened", "> a\n>> b", "> a\n>\n> b"},
		{"table", "| a | b |\n|---|---|\n| 1 | 2 |", "```\na | b\n--|--\n1 | 2\n```"},
		{"mentions pass", "<@123> <#456> <:emoji:789>", "<@123> <#456> <:emoji:789>"},
	})
}

func TestHTMLToPlain(t *testing.T) {
	for _, tc := range []struct{ html, want string }{
		{"<b>a</b> &amp; <i>b</i>", "a & b"},
		{`<a href="https://x.io/?a=1&amp;b=2">docs</a>`, "docs (https://x.io/?a=1&b=2)"},
		{`<a href="https://x.io">https://x.io</a>`, "https://x.io"},
		{`<a href="mailto:a@b.c">a@b.c</a>`, "a@b.c"},
		{`<pre><code class="language-go">x &lt; 1</code></pre>`, "x < 1"},
		{"&#128512; &#x1F600; &quot;", "😀 😀 \""},
		{"a < b", "a < b"},
	} {
		if got := HTMLToPlain(tc.html); got != tc.want {
			t.Errorf("HTMLToPlain(%q) = %q, want %q", tc.html, got, tc.want)
		}
	}
}

func TestParse(t *testing.T) {
	doc := Parse("# H\n\npara **b**\n\n- x\n  - y\n\n> q\n\n```go\ncode\n```\n\n| a |\n|:-:|\n| 1 |\n\n***")
	kinds := []BlockKind{Heading, Paragraph, List, Quote, CodeBlock, Table, Rule}
	if len(doc.Blocks) != len(kinds) {
		t.Fatalf("got %d blocks, want %d: %+v", len(doc.Blocks), len(kinds), doc.Blocks)
	}
	for k, b := range doc.Blocks {
		if b.Kind != kinds[k] {
			t.Errorf("block %d is %v, want %v", k, b.Kind, kinds[k])
		}
	}
	if got := doc.Blocks[1].Inlines; len(got) != 2 || got[1] != (Inline{Text: "b", Style: Bold}) {
		t.Errorf("paragraph runs = %+v", got)
	}
	if l := doc.Blocks[2]; len(l.Items) != 1 || len(l.Items[0].Blocks) != 2 || l.Items[0].Blocks[1].Kind != List {
		t.Errorf("list = %+v, want one item with a nested list", l)
	}
	if c := doc.Blocks[4]; c.Lang != "go" || c.Code != "code" {
		t.Errorf("code block = %+v", c)
	}
	if tb := doc.Blocks[5]; len(tb.Rows) != 1 || tb.Align[0] != AlignCenter {
		t.Errorf("table = %+v", tb)
	}
}

func TestParseInlineRuns(t *testing.T) {
	for _, tc := range []struct {
		md   string
		want []Inline
	}{
		{"a **b** c", []Inline{{Text: "a "}, {Text: "b", Style: Bold}, {Text: " c"}}},
		{"*a **b** c*", []Inline{{Text: "a ", Style: Italic}, {Text: "b", Style: Italic | Bold}, {Text: " c", Style: Italic}}},
		{"*foo**bar**baz*", []Inline{{Text: "foo", Style: Italic}, {Text: "bar", Style: Italic | Bold}, {Text: "baz", Style: Italic}}},
		{"__init__ x_y_z", []Inline{{Text: "init", Style: Bold}, {Text: " x_y_z"}}},
		{"~~a~~ ~~~b~~~", []Inline{{Text: "a", Style: Strike}, {Text: " ~~~b~~~"}}},
		{"[a](https://x.io)b", []Inline{{Text: "a", Link: "https://x.io"}, {Text: "b"}}},
		{"[](https://x.io)", []Inline{{Text: "https://x.io", Link: "https://x.io"}}},
		{"[a](<https://x.io/a b>)", []Inline{{Text: "a", Link: "https://x.io/a b"}}},
		{"[a]", []Inline{{Text: "[a]"}}},
		{"`*x*`", []Inline{{Text: "*x*", Style: Code}}},
		{"*`x`*", []Inline{{Text: "x", Style: Italic | Code}}},
		{"<@U1_a_> _x_", []Inline{{Text: "<@U1_a_> "}, {Text: "x", Style: Italic}}},
	} {
		doc := Parse(tc.md)
		if len(doc.Blocks) != 1 {
			t.Errorf("Parse(%q): %d blocks", tc.md, len(doc.Blocks))
			continue
		}
		got := doc.Blocks[0].Inlines
		if len(got) != len(tc.want) {
			t.Errorf("Parse(%q) runs = %+v, want %+v", tc.md, got, tc.want)
			continue
		}
		for k := range got {
			if got[k] != tc.want[k] {
				t.Errorf("Parse(%q) runs = %+v, want %+v", tc.md, got, tc.want)
				break
			}
		}
	}
}

// TestGoldenAnswer renders a typical LLM answer for every target and
// compares with testdata/answer.<target>.golden (go test -update rewrites
// them).
func TestGoldenAnswer(t *testing.T) {
	md, err := os.ReadFile(filepath.Join("testdata", "answer.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []Target{Plain, Telegram, Slack, Discord, WhatsApp} {
		t.Run(target.String(), func(t *testing.T) {
			got := Render(Parse(string(md)), target) + "\n"
			path := filepath.Join("testdata", "answer."+target.String()+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("%s differs from the golden file (go test -update rewrites it):\n%s", target, got)
			}
			if target == Telegram {
				if err := validateTelegramHTML(got); err != nil {
					t.Error(err)
				}
			}
		})
	}
}
