package transcript_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/transcript"
)

// words is the vocabulary of the generated text.
var words = strings.Fields(`the session key parser rejects keys written before format change so
let me read file and its tests then run them again with race detector enabled because flaky
output suggests goroutine leak in dispatcher lane when context cancelled while tool runs exec
grep find ls returned lines config yaml telegram slack discord whatsapp gateway heartbeat`)

func prose(r *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[r.IntN(len(words))])
	}
	return b.String()
}

// benchMessages returns n messages of a realistic coding conversation:
// turns of a user prompt, an assistant message with thinking, text and a
// tool call, the tool's output, and a final assistant answer with usage.
func benchMessages(n int) []core.Message {
	r := rand.New(rand.NewPCG(1, 2))
	usage := core.Usage{Input: 18234, Output: 142, CacheRead: 17920, CacheWrite: 314, TotalTokens: 18376,
		Cost: core.Cost{Input: 0.27351, Output: 0.01065, CacheRead: 0.02688, CacheWrite: 0.0058875, Total: 0.3169275}}
	msgs := make([]core.Message, 0, n)
	ts := int64(1740000000000)
	for turn := 0; len(msgs) < n; turn++ {
		id := fmt.Sprintf("toolu_%06d", turn)
		ts += 1000
		msgs = append(msgs, core.NewUserText(prose(r, 80+r.IntN(300)), ts))
		ts += 1000
		msgs = append(msgs, &core.AssistantMessage{
			Content: core.Content{
				&core.ThinkingContent{Thinking: prose(r, 200+r.IntN(400)), ThinkingSignature: "EqQBCgIYAhIM" + id},
				&core.TextContent{Text: prose(r, 60+r.IntN(200))},
				&core.ToolCall{ID: id, Name: "exec", Arguments: map[string]any{"command": "go test ./core/... -run " + prose(r, 10), "timeout": float64(120)}},
			},
			API: "anthropic-messages", Provider: "anthropic", Model: "claude-opus-4-6",
			Usage: usage, StopReason: core.StopReasonToolUse, Timestamp: ts,
		})
		ts += 1000
		msgs = append(msgs, &core.ToolResultMessage{
			ToolCallID: id, ToolName: "exec",
			Content:   core.Content{&core.TextContent{Text: prose(r, 300+r.IntN(3000))}},
			Details:   []byte(`{"exitCode":0,"durationMs":1234}`),
			Timestamp: ts,
		})
		ts += 1000
		msgs = append(msgs, &core.AssistantMessage{
			Content: core.Content{&core.TextContent{Text: prose(r, 200+r.IntN(800))}},
			API:     "anthropic-messages", Provider: "anthropic", Model: "claude-opus-4-6",
			Usage: usage, StopReason: core.StopReasonStop, Timestamp: ts,
		})
	}
	return msgs[:n]
}

func BenchmarkAppend(b *testing.B) {
	m := benchMessages(2)[1] // an assistant message with thinking, text and a tool call
	for _, bc := range []struct {
		name   string
		noSync bool
	}{{"fsync", false}, {"nosync", true}} {
		b.Run(bc.name, func(b *testing.B) {
			f, _, err := transcript.Open(filepath.Join(b.TempDir(), "s.jsonl"), transcript.Options{NoSync: bc.noSync})
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			b.ReportAllocs()
			for b.Loop() {
				if err := f.Append(m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// chatMessages returns n messages of a chat bot conversation: short user
// messages and answers with usage, no tools.
func chatMessages(n int) []core.Message {
	r := rand.New(rand.NewPCG(3, 4))
	usage := core.Usage{Input: 4210, Output: 96, CacheRead: 4096, TotalTokens: 4306, Cost: core.Cost{Input: 0.0126, Output: 0.00144, Total: 0.01404}}
	msgs := make([]core.Message, 0, n)
	ts := int64(1740000000000)
	for len(msgs) < n {
		ts += 30_000
		msgs = append(msgs, core.NewUserText(prose(r, 20+r.IntN(180)), ts))
		ts += 3_000
		msgs = append(msgs, &core.AssistantMessage{
			Content: core.Content{&core.TextContent{Text: prose(r, 50+r.IntN(550))}},
			API:     "anthropic-messages", Provider: "anthropic", Model: "claude-sonnet-4-5",
			Usage: usage, StopReason: core.StopReasonStop, Timestamp: ts,
		})
	}
	return msgs[:n]
}

// writeTranscript writes msgs to a new transcript in dir and returns its
// path and size.
func writeTranscript(b *testing.B, msgs []core.Message) (string, int64) {
	path := filepath.Join(b.TempDir(), "s.jsonl")
	f, _, err := transcript.Open(path, transcript.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	for len(msgs) > 0 {
		n := min(len(msgs), 1000)
		if err := f.Append(msgs[:n]...); err != nil {
			b.Fatal(err)
		}
		msgs = msgs[n:]
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return path, st.Size()
}

// benchLoad opens path b.N times. It reports the file size and the heap
// the loaded transcript holds, relative to the file size, measured once.
func benchLoad(b *testing.B, path string, size int64, want int) {
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	f, rep, err := transcript.Open(path, transcript.Options{})
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	runtime.KeepAlive(rep)
	_ = f.Close()
	if len(rep.Messages) != want {
		b.Fatalf("loaded %d messages, want %d", len(rep.Messages), want)
	}

	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		f, _, err := transcript.Open(path, transcript.Options{})
		if err != nil {
			b.Fatal(err)
		}
		_ = f.Close()
	}
	b.ReportMetric(float64(size)/(1<<20), "file-MiB")
	b.ReportMetric(float64(m1.HeapAlloc-m0.HeapAlloc)/float64(size), "retained-heap/file")
}

// BenchmarkLoad10k loads a 10,000-message transcript: "coding" is a tool
// heavy agent session (thinking, tool calls, tool output of up to 3 KB,
// usage on every reply), "chat" a chat bot's history.
func BenchmarkLoad10k(b *testing.B) {
	b.Run("coding", func(b *testing.B) {
		path, size := writeTranscript(b, benchMessages(10_000))
		benchLoad(b, path, size, 10_000)
	})
	b.Run("chat", func(b *testing.B) {
		path, size := writeTranscript(b, chatMessages(10_000))
		benchLoad(b, path, size, 10_000)
	})
}

// BenchmarkLoad100MB is the size of test matrix row 18 (target: under 2 s
// and under 3x the file size in heap).
func BenchmarkLoad100MB(b *testing.B) {
	if testing.Short() {
		b.Skip("writes a 100 MB file")
	}
	msgs := benchMessages(95_000)
	path, size := writeTranscript(b, msgs)
	benchLoad(b, path, size, len(msgs))
}

func BenchmarkPipeline(b *testing.B) {
	msgs := benchMessages(1000)
	opts := transcript.PipelineOptions{
		DropUnsignedThinking: true,
		HistoryLimit:         200,
		StrictAlternation:    true,
		IsHeartbeatPrompt:    func(s string) bool { return strings.HasPrefix(s, "Read HEARTBEAT.md") },
		IsHeartbeatAck:       func(s string) bool { return strings.TrimSpace(s) == "HEARTBEAT_OK" },
		Prune:                &transcript.PruneOptions{SoftLimitTokens: 50_000, HardLimitTokens: 80_000},
	}
	b.ReportAllocs()
	for b.Loop() {
		out, _ := transcript.Pipeline(msgs, opts)
		if len(out) == 0 {
			b.Fatal("empty")
		}
	}
}
