package markup

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkChunks checks the properties every chunking must have: each chunk
// within the limit, valid UTF-8 (for valid input), not blank, valid HTML
// when the input is valid Telegram HTML, and each chunk the reopened
// markup + a slice of the input + the closing markup, the slices in order
// with only whitespace between them, so that the chunks without the
// inserted markup read together are the input.
func checkChunks(t testing.TB, text string, o ChunkOptions) []string {
	t.Helper()
	chunks := ChunkText(text, o)
	limit := o.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = max(limit, MinLimit)
	validHTML := o.Syntax == SyntaxHTML && validateTelegramHTML(text) == nil
	anyDegraded := false
	for k, c := range chunks {
		if n := o.Unit.Len(c); n > limit {
			t.Fatalf("chunk %d is %d long, limit %d: %q", k, n, limit, c)
		}
		if utf8.ValidString(text) && !utf8.ValidString(c) {
			t.Fatalf("chunk %d is not valid UTF-8: %q", k, c)
		}
		if blank(c, o.Syntax) {
			t.Fatalf("chunk %d is blank: %q", k, c)
		}
		if validHTML {
			if err := validateTelegramHTML(c); err != nil {
				t.Fatalf("chunk %d is not valid HTML: %v\n%q", k, err, c)
			}
		}
	}
	c := newChunker(text, o)
	pieces := c.run()
	if len(pieces) != len(chunks) {
		t.Fatalf("%d pieces, %d chunks", len(pieces), len(chunks))
	}
	prevEnd := 0
	for k, p := range pieces {
		if p.start < prevEnd {
			t.Fatalf("piece %d starts at %d, before the previous end %d", k, p.start, prevEnd)
		}
		if gap := text[prevEnd:p.start]; !blank(gap, o.Syntax) {
			t.Fatalf("text between pieces %d and %d is not blank: %q", k-1, k, gap)
		}
		if p.degraded {
			anyDegraded = true
		} else if got := p.prefix + text[p.start:p.end] + p.suffix; got != chunks[k] {
			t.Fatalf("piece %d = %q, chunk %q", k, got, chunks[k])
		}
		prevEnd = p.end
	}
	if rest := text[prevEnd:]; !blank(rest, o.Syntax) && !anyDegraded {
		t.Fatalf("text after the last piece is not blank: %q", rest)
	}
	if !anyDegraded {
		var content strings.Builder
		for _, p := range pieces {
			content.WriteString(shown(text[p.start:p.end], o.Syntax))
		}
		got, want := content.String(), shown(text, o.Syntax)
		if got != want {
			t.Fatalf("chunks without the reopened markup differ from the text:\n got %q\nwant %q", got, want)
		}
	}
	if validHTML && !anyDegraded {
		var all strings.Builder
		for _, c := range chunks {
			all.WriteString(HTMLToPlain(c))
		}
		if got, want := shown(all.String(), SyntaxMarkdown), shown(HTMLToPlain(text), SyntaxMarkdown); got != want && !strings.Contains(text, "<a ") {
			t.Fatalf("plain text of the chunks differs:\n got %q\nwant %q", got, want)
		}
	}
	return chunks
}

// blank reports whether s shows nothing: only whitespace, controls and
// format characters, and for HTML tags.
func blank(s string, syntax Syntax) bool {
	return shown(s, syntax) == ""
}

// shown is what a reader sees of s: for HTML without the tags, and without
// whitespace, controls and format characters.
func shown(s string, syntax Syntax) string {
	if syntax == SyntaxHTML {
		s = stripTags(s)
	}
	return strings.Map(func(r rune) rune {
		if invisible(r) {
			return -1
		}
		return r
	}, s)
}

// codeLines returns n numbered lines of code, each ending in "\n".
func codeLines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "print('line %02d of the example')\n", i)
	}
	return b.String()
}

func TestChunkFitsUnchanged(t *testing.T) {
	text := "Hello **world**.\n\nSecond paragraph."
	got := Chunk(text, 4000, ModeLength)
	if len(got) != 1 || got[0] != text {
		t.Fatalf("Chunk = %q, want the text unchanged", got)
	}
	for _, blank := range []string{"", "  \n\n\t", "\n"} {
		if got := Chunk(blank, 100, ModeLength); len(got) != 0 {
			t.Errorf("Chunk(%q) = %q, want no chunks", blank, got)
		}
	}
	if got := Chunk("\n\n  indented\n\n", 100, ModeLength); len(got) != 1 || got[0] != "  indented" {
		t.Errorf("leading blank lines and trailing space: got %q", got)
	}
}

func TestChunkFenceReopened(t *testing.T) {
	text := "Intro text.\n\n```python\n" + codeLines(30) + "```\n\nOutro text."
	o := ChunkOptions{Limit: 300}
	chunks := checkChunks(t, text, o)
	if len(chunks) < 4 {
		t.Fatalf("got %d chunks, want the code split: %q", len(chunks), chunks)
	}
	inCode := 0
	for k, c := range chunks {
		if fences := findFences(c); len(fences) > 0 {
			inCode++
			for _, f := range fences {
				if f.closeEnd == len(c) && !strings.HasSuffix(c, "```") {
					t.Errorf("chunk %d leaves a fence open: %q", k, c)
				}
				if f.open != "```python" {
					t.Errorf("chunk %d reopens the fence as %q, want ```python", k, f.open)
				}
			}
		}
		if k > 0 && k < len(chunks)-1 && !strings.HasPrefix(c, "```python\nprint") {
			t.Errorf("chunk %d does not start by reopening the fence: %q", k, c)
		}
		if strings.Count(c, "```")%2 != 0 {
			t.Errorf("chunk %d has unbalanced fences: %q", k, c)
		}
	}
	if !strings.HasPrefix(chunks[0], "Intro text.") || !strings.HasSuffix(chunks[len(chunks)-1], "Outro text.") {
		t.Errorf("chunks out of order: %q", chunks)
	}
}

func TestChunkFenceSplitsAtLines(t *testing.T) {
	text := "```\n" + codeLines(20) + "```"
	for _, c := range checkChunks(t, text, ChunkOptions{Limit: 200}) {
		for _, l := range strings.Split(c, "\n") {
			if l != "```" && !strings.HasPrefix(l, "print('line ") {
				t.Errorf("a code line was split: %q in %q", l, c)
			}
		}
	}
}

func TestChunkLongCodeLine(t *testing.T) {
	text := "```js\n" + strings.Repeat("x", 500) + "\n```"
	chunks := checkChunks(t, text, ChunkOptions{Limit: 120})
	for k, c := range chunks {
		if !strings.HasPrefix(c, "```js\n") || !strings.HasSuffix(c, "\n```") {
			t.Errorf("chunk %d is not a closed fence: %q", k, c)
		}
	}
}

func TestChunkUnclosedFence(t *testing.T) {
	text := "```\n" + codeLines(20)
	chunks := checkChunks(t, text, ChunkOptions{Limit: 200})
	for k, c := range chunks[:len(chunks)-1] {
		if !strings.HasSuffix(c, "\n```") {
			t.Errorf("chunk %d does not close the fence: %q", k, c)
		}
	}
}

func TestChunkPreferences(t *testing.T) {
	for _, tc := range []struct {
		name  string
		text  string
		limit int
		want  []string
	}{
		{"paragraph over line", "aaaa aaaa aaaa aaaa\n\nbbbb\nbbbb bbbb", 30,
			[]string{"aaaa aaaa aaaa aaaa", "bbbb\nbbbb bbbb"}},
		{"early paragraph loses to a late line", "aaaa aaaa aaaa\n\nbbbb bbbb\nbbbb bbbb bbbb", 30,
			[]string{"aaaa aaaa aaaa\n\nbbbb bbbb", "bbbb bbbb bbbb"}},
		{"line over sentence", "aaaa. aaaa aaaa\nbbbb. bbbb bbbb bbbb", 25,
			[]string{"aaaa. aaaa aaaa", "bbbb. bbbb bbbb bbbb"}},
		{"sentence over space", "aaaa aaaa aaaa. bbbb bbbb bbbb bbbb", 25,
			[]string{"aaaa aaaa aaaa.", "bbbb bbbb bbbb bbbb"}},
		{"sentence with quote", `he said "stop." then he went on and on`, 25,
			[]string{`he said "stop."`, "then he went on and on"}},
		{"space", "aaaa bbbb cccc dddd eeee ffff", 20,
			[]string{"aaaa bbbb cccc dddd", "eeee ffff"}},
		{"early paragraph loses to a late space", "aa\n\nbbbb cccc dddd eeee ffff gggg", 20,
			[]string{"aa\n\nbbbb cccc dddd", "eeee ffff gggg"}},
		{"hard split", strings.Repeat("x", 40), 16,
			[]string{strings.Repeat("x", 16), strings.Repeat("x", 16), strings.Repeat("x", 8)}},
		{"indentation kept", "aaaa aaaa aaaa aaaa\n    bbbb", 20,
			[]string{"aaaa aaaa aaaa aaaa", "    bbbb"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := checkChunks(t, tc.text, ChunkOptions{Limit: tc.limit})
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("Chunk(%q, %d)\n got %q\nwant %q", tc.text, tc.limit, got, tc.want)
			}
		})
	}
}

func TestChunkNewlineMode(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		o    ChunkOptions
		want []string
	}{
		{"paragraphs", "p1 a\n\np2 b\nstill p2\n\n\np3", ChunkOptions{Limit: 100, Mode: ModeNewline},
			[]string{"p1 a", "p2 b\nstill p2", "p3"}},
		{"not inside a fence", "p1\n\n```\na\n\nb\n```\n\np3", ChunkOptions{Limit: 100, Mode: ModeNewline},
			[]string{"p1", "```\na\n\nb\n```", "p3"}},
		{"long paragraph at lines", "aaaa aaaa aaaa\nbbbb bbbb bbbb bbbb bbbb\ncc", ChunkOptions{Limit: 30, Mode: ModeNewline},
			[]string{"aaaa aaaa aaaa", "bbbb bbbb bbbb bbbb bbbb\ncc"}},
		{"html top level only", "<b>a</b>\n\n<blockquote>x\n\ny</blockquote>\n\nz",
			ChunkOptions{Limit: 100, Mode: ModeNewline, Syntax: SyntaxHTML},
			[]string{"<b>a</b>", "<blockquote>x\n\ny</blockquote>", "z"}},
		{"length mode keeps them", "p1 a\n\np2 b\n\np3", ChunkOptions{Limit: 100},
			[]string{"p1 a\n\np2 b\n\np3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := checkChunks(t, tc.text, tc.o)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestChunkHTML(t *testing.T) {
	o := ChunkOptions{Limit: 60, Syntax: SyntaxHTML}
	t.Run("tags reopened", func(t *testing.T) {
		text := "<b>" + strings.Repeat("bold words ", 20) + "</b> tail"
		chunks := checkChunks(t, text, o)
		for k, c := range chunks[:len(chunks)-1] {
			if !strings.HasPrefix(c, "<b>") || !strings.HasSuffix(c, "</b>") {
				t.Errorf("chunk %d: %q", k, c)
			}
		}
	})
	t.Run("link reopened", func(t *testing.T) {
		text := `see <a href="https://x.io/?a=1&amp;b=2">` + strings.Repeat("label ", 20) + "</a>."
		for k, c := range checkChunks(t, text, ChunkOptions{Limit: 80, Syntax: SyntaxHTML}) {
			if k > 0 && !strings.HasPrefix(c, `<a href="https://x.io/?a=1&amp;b=2">`) {
				t.Errorf("chunk %d does not reopen the link: %q", k, c)
			}
		}
	})
	t.Run("entities and tags whole", func(t *testing.T) {
		text := strings.Repeat("a &amp; <b>b</b> &lt;c&gt; <i>i</i> ", 40)
		for _, limit := range []int{16, 17, 23, 31, 60} {
			checkChunks(t, text, ChunkOptions{Limit: limit, Syntax: SyntaxHTML})
		}
	})
	t.Run("pre split at lines", func(t *testing.T) {
		text := TelegramHTML("```go\n" + codeLines(20) + "```")
		for k, c := range checkChunks(t, text, ChunkOptions{Limit: 200, Syntax: SyntaxHTML, Unit: UTF16}) {
			if !strings.HasPrefix(c, `<pre><code class="language-go">print('line `) || !strings.HasSuffix(c, "')</code></pre>") {
				t.Errorf("chunk %d: %q", k, c)
			}
		}
	})
	t.Run("no empty elements", func(t *testing.T) {
		text := "<b>" + strings.Repeat("x", 30) + " </b>" + strings.Repeat("y", 30)
		for k, c := range checkChunks(t, text, ChunkOptions{Limit: 40, Syntax: SyntaxHTML}) {
			if strings.Contains(c, "<b></b>") || strings.Contains(c, "<b> </b>") {
				t.Errorf("chunk %d has an empty element: %q", k, c)
			}
		}
	})
	t.Run("huge tag degrades", func(t *testing.T) {
		text := `<a href="https://x.io/` + strings.Repeat("p", 100) + `">label words here</a> after`
		chunks := ChunkText(text, ChunkOptions{Limit: 60, Syntax: SyntaxHTML})
		joined := strings.Join(chunks, " ")
		if !strings.Contains(joined, "label words here") || !strings.Contains(joined, "after") {
			t.Errorf("text lost: %q", chunks)
		}
		checkChunks(t, text, ChunkOptions{Limit: 60, Syntax: SyntaxHTML})
	})
}

func TestChunkSlackTokens(t *testing.T) {
	text := strings.Repeat("hey <@U123ABC> see <https://x.io/a|the docs> &amp; more ", 10)
	for _, c := range checkChunks(t, text, ChunkOptions{Limit: 50, Syntax: SyntaxSlack}) {
		if strings.Count(c, "<") != strings.Count(c, ">") {
			t.Errorf("a token was split: %q", c)
		}
		if strings.Count(c, "&") != strings.Count(c, "&amp;") {
			t.Errorf("an entity was split: %q", c)
		}
	}
}

func TestChunkUnits(t *testing.T) {
	emoji := strings.Repeat("😀", 3000) // 3000 runes, 6000 UTF-16 units
	if got := ChunkText(emoji, ChunkOptions{Limit: 4000}); len(got) != 1 {
		t.Errorf("runes: %d chunks, want 1", len(got))
	}
	got := checkChunks(t, emoji, ChunkOptions{Limit: 4000, Unit: UTF16})
	if len(got) != 2 || UTF16.Len(got[0]) != 4000 {
		t.Errorf("UTF-16: %d chunks, first %d units; want 2, 4000", len(got), UTF16.Len(got[0]))
	}
	odd := checkChunks(t, "a"+emoji[:40], ChunkOptions{Limit: 16, Unit: UTF16})
	for _, c := range odd {
		if !utf8.ValidString(c) {
			t.Errorf("split inside a surrogate pair: %q", c)
		}
	}
	bytes := checkChunks(t, strings.Repeat("é", 50), ChunkOptions{Limit: 17, Unit: Bytes})
	for _, c := range bytes[:len(bytes)-1] {
		if len(c) != 16 {
			t.Errorf("bytes: chunk %q, want 8 characters", c)
		}
	}
	if n := UTF16.Len("a😀é\xff"); n != 5 {
		t.Errorf(`UTF16.Len("a😀é\xff") = %d, want 5`, n)
	}
}

func TestChunkGraphemes(t *testing.T) {
	for _, g := range []string{"👍🏽", "👨\u200d👩\u200d👧", "e\u0301", "❤\ufe0f"} {
		text := strings.Repeat(g, 40)
		for k, c := range checkChunks(t, text, ChunkOptions{Limit: 16}) {
			if !strings.HasPrefix(c, g) || strings.Count(c, g)*len(g) != len(c) {
				t.Errorf("%q: chunk %d splits a character: %q", g, k, c)
			}
		}
	}
}

func TestChunkMaxLines(t *testing.T) {
	text := "```\n" + codeLines(40) + "```\n\n" + strings.Repeat("line\n", 30)
	o := Discord.ChunkOptions(0, ModeLength)
	for k, c := range checkChunks(t, text, o) {
		if n := strings.Count(c, "\n") + 1; n > DiscordMaxLines {
			t.Errorf("chunk %d has %d lines", k, n)
		}
		if strings.Count(c, "```")%2 != 0 {
			t.Errorf("chunk %d has unbalanced fences: %q", k, c)
		}
	}
}

func TestChunkSmallLimit(t *testing.T) {
	for _, c := range checkChunks(t, "abc def ghi jkl mno pqr stu vwx yz", ChunkOptions{Limit: 3}) {
		if utf8.RuneCountInString(c) > MinLimit {
			t.Errorf("chunk %q over MinLimit", c)
		}
	}
}

// answerOf returns markdown of about n characters: paragraphs of some 300
// characters, each with a bold word.
func answerOf(n int) string {
	var b strings.Builder
	for i := 1; b.Len() < n; i++ {
		start := b.Len()
		fmt.Fprintf(&b, "Paragraph %d explains one **step** of the setup. ", i)
		for b.Len()-start < 280 && b.Len() < n {
			b.WriteString("It goes on with details and more words about it. ")
		}
		b.WriteString("\n\n")
	}
	return strings.TrimSpace(b.String())
}

func TestChunk9000(t *testing.T) {
	md := answerOf(9000)
	if n := utf8.RuneCountInString(md); n < 8900 || n > 9100 {
		t.Fatalf("answer is %d characters", n)
	}
	for _, target := range []Target{Plain, Telegram, WhatsApp, Slack} {
		t.Run(target.String(), func(t *testing.T) {
			rendered := Render(Parse(md), target)
			o := target.ChunkOptions(4000, ModeLength)
			chunks := checkChunks(t, rendered, o)
			if len(chunks) != 3 {
				t.Fatalf("%d chunks, want 3", len(chunks))
			}
			if !strings.HasPrefix(HTMLToPlain(chunks[0]), "Paragraph 1 ") {
				t.Errorf("chunk 0 starts %.40q", chunks[0])
			}
			if got := RenderChunks(md, target, 4000, ModeLength); strings.Join(got, "") != strings.Join(chunks, "") {
				t.Errorf("RenderChunks differs from Render + ChunkText")
			}
		})
	}
}

func TestRenderChunksTelegram(t *testing.T) {
	md := answerOf(6000) + "\n\n```go\n" + codeLines(80) + "```\n\n" + answerOf(3000)
	for _, limit := range []int{0, 500, 1000} {
		chunks := RenderChunks(md, Telegram, limit, ModeLength)
		for k, c := range chunks {
			if err := validateTelegramHTML(c); err != nil {
				t.Fatalf("limit %d chunk %d: %v\n%q", limit, k, err, c)
			}
			if limit > 0 && UTF16.Len(c) > limit {
				t.Fatalf("limit %d chunk %d is %d long", limit, k, UTF16.Len(c))
			}
			if p := HTMLToPlain(c); UTF16.Len(p) > UTF16.Len(c) {
				t.Fatalf("plain fallback of chunk %d is longer than the chunk", k)
			}
		}
	}
}

func TestParseMode(t *testing.T) {
	for s, want := range map[string]Mode{"": ModeLength, "length": ModeLength, "newline": ModeNewline} {
		if got, err := ParseMode(s); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %v, %v", s, got, err)
		}
		if s != "" && want.String() != s {
			t.Errorf("%v.String() = %q", want, want.String())
		}
	}
	if _, err := ParseMode("paragraph"); err == nil {
		t.Error("ParseMode(paragraph) succeeded")
	}
}

func TestTargets(t *testing.T) {
	for _, tc := range []struct {
		t     Target
		limit int
		unit  Unit
		syn   Syntax
	}{
		{Plain, DefaultLimit, Runes, SyntaxMarkdown},
		{Telegram, 4000, UTF16, SyntaxHTML},
		{Slack, 8000, Runes, SyntaxSlack},
		{Discord, 2000, Runes, SyntaxMarkdown},
		{WhatsApp, 4000, Runes, SyntaxMarkdown},
	} {
		o := tc.t.ChunkOptions(0, ModeNewline)
		if o.Limit != tc.limit || o.Unit != tc.unit || o.Syntax != tc.syn || o.Mode != ModeNewline {
			t.Errorf("%v.ChunkOptions = %+v", tc.t, o)
		}
		if o := tc.t.ChunkOptions(123, ModeLength); o.Limit != 123 {
			t.Errorf("%v: explicit limit ignored", tc.t)
		}
	}
}
