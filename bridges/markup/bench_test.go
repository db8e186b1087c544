package markup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchAnswer is testdata/answer.md, a typical answer of about 4 KB.
func benchAnswer(b *testing.B) string {
	b.Helper()
	md, err := os.ReadFile(filepath.Join("testdata", "answer.md"))
	if err != nil {
		b.Fatal(err)
	}
	return string(md)
}

func BenchmarkParse(b *testing.B) {
	md := benchAnswer(b)
	b.ReportAllocs()
	b.SetBytes(int64(len(md)))
	for b.Loop() {
		Parse(md)
	}
}

func BenchmarkTelegramHTML(b *testing.B) {
	md := benchAnswer(b)
	b.ReportAllocs()
	b.SetBytes(int64(len(md)))
	for b.Loop() {
		TelegramHTML(md)
	}
}

func BenchmarkSlackMrkdwn(b *testing.B) {
	md := benchAnswer(b)
	b.ReportAllocs()
	b.SetBytes(int64(len(md)))
	for b.Loop() {
		SlackMrkdwn(md)
	}
}

// BenchmarkChunk splits a 9,000-character rendered answer at 4000.
func BenchmarkChunk(b *testing.B) {
	text := PlainText(answerOf(9000))
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Chunk(text, 4000, ModeLength)
	}
}

// BenchmarkChunkHTML splits the Telegram HTML of a 9,000-character answer
// at 4000 UTF-16 code units.
func BenchmarkChunkHTML(b *testing.B) {
	text := TelegramHTML(answerOf(9000) + "\n\n" + benchAnswer(b))
	o := Telegram.ChunkOptions(0, ModeLength)
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		ChunkText(text, o)
	}
}

// hostileInputs are inputs that make naive markdown parsers and chunkers
// quadratic; their benchmarks should scale linearly with n.
func hostileInputs(n int) map[string]string {
	return map[string]string{
		"nested-emphasis": strings.Repeat("*a ", n/6) + strings.Repeat("a* ", n/6),
		"nested-strong":   strings.Repeat("**a ", n/8) + strings.Repeat("a** ", n/8),
		"unmatched-stars": strings.Repeat("*a ", n/3),
		"brackets":        strings.Repeat("[", n),
		"link-openers":    strings.Repeat("[a](", n/4),
		"images":          strings.Repeat("![", n/6) + strings.Repeat("](u)", n/6),
		"backticks":       strings.Repeat("` `` ``` ", n/10),
		"angles":          strings.Repeat("<a", n/2),
		"quotes":          strings.Repeat(">", n),
		"indented-lists":  strings.Repeat("  ", n/4) + "- a\n" + strings.Repeat("- a\n  ", n/8),
		"table-columns":   "|" + strings.Repeat("a|", n/4) + "\n|" + strings.Repeat("-|", n/4) + "\n",
		"url-parens":      "https://" + strings.Repeat(")", n),
		"one-word":        strings.Repeat("x", n),
		"indentation":     "x\n" + strings.Repeat(" ", n) + "x",
	}
}

// BenchmarkHostile parses, renders and chunks hostile 100 KB inputs for
// every target.
func BenchmarkHostile(b *testing.B) {
	for name, md := range hostileInputs(100_000) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(md)))
			for b.Loop() {
				doc := Parse(md)
				for _, t := range []Target{Plain, Telegram, Slack, Discord, WhatsApp} {
					ChunkText(Render(doc, t), t.ChunkOptions(100, ModeLength))
				}
			}
		})
	}
}
