package transcript_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/transcript"
)

// FuzzTranscriptReader feeds arbitrary file contents to Open, whole and
// with tiny read chunks (so chunk boundaries fall inside lines, NATS's
// two-chunk trick taken further), and a file built from valid lines,
// garbage and maybe a torn tail. Oracles: Open never fails or panics; the
// file is never rewritten (it ends as the input, the input plus a newline,
// or the input cut at its last newline with a backup of the input); every
// loaded message can be appended again; a second Open repairs nothing and
// loads the same; valid lines always load, in order; a torn tail is dropped.
func FuzzTranscriptReader(f *testing.F) {
	for _, tc := range repairCases(f) {
		if len(tc.data) < 64<<10 {
			f.Add(tc.data, []byte("\x00garbage"), uint8(0x15))
		}
	}
	f.Add([]byte("{\"role\":\"user\",\"content\":\"a\nb\",\"timestamp\":1}\n{\"role\""), []byte(`{"role":"user","content":"x`), uint8(0xff))
	f.Add([]byte("\n\n\r\n"), []byte("{}"), uint8(0x80))
	// One directory for the whole run: creating and removing a temporary
	// directory per input costs more than the load. Inputs run one at a
	// time in a fuzz worker.
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data, garbage []byte, mode uint8) {
		defer cleanDir(t, dir)
		want := checkLoad(t, dir, data, 0)
		if got := checkLoad(t, dir, data, int64(1+mode%13)); encode(t, got) != encode(t, want) {
			t.Fatalf("small read chunks load other messages:\n got %s\nwant %s", encode(t, got), encode(t, want))
		}
		checkValidLinesSurvive(t, dir, garbage, mode)
	})
}

// cleanDir removes the files a fuzz input left in dir.
func cleanDir(t *testing.T, dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
}

// checkLoad opens data as a transcript and checks the oracles that hold
// for any input. chunk > 0 sets the read chunk size.
func checkLoad(t *testing.T, dir string, data []byte, chunk int64) []core.Message {
	if chunk > 0 {
		defer transcript.SetReadChunk(chunk)()
	}
	defer cleanDir(t, dir)
	path := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, rep, err := transcript.Open(path, transcript.Options{NoSync: true})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	_ = f.Close()

	after := readFile(t, path)
	switch {
	case rep.TruncatedTail:
		cut := bytes.LastIndexByte(data, '\n') + 1
		if !bytes.Equal(after, data[:cut]) {
			t.Fatalf("torn tail: file is not the input up to its last newline")
		}
		if !bytes.Equal(readFile(t, rep.BackupPath), data) {
			t.Fatalf("backup differs from the input")
		}
	case rep.AddedNewline:
		if !bytes.Equal(after, append(bytes.Clone(data), '\n')) {
			t.Fatalf("added newline: file is not the input plus a newline")
		}
	default:
		if !bytes.Equal(after, data) {
			t.Fatalf("file changed without a repair being reported")
		}
	}
	if len(after) > 0 && after[len(after)-1] != '\n' {
		t.Fatalf("file does not end with a newline after Open")
	}
	if lines := bytes.Count(data, []byte{'\n'}) + 1; len(rep.Messages)+len(rep.SkippedLines) > lines {
		t.Fatalf("%d messages and %d skipped lines from %d lines", len(rep.Messages), len(rep.SkippedLines), lines)
	}

	// Every loaded message can be written again.
	g, _, err := transcript.Open(filepath.Join(dir, "copy.jsonl"), transcript.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Append(rep.Messages...); err != nil {
		t.Fatalf("loaded messages do not append again: %v", err)
	}
	_ = g.Close()

	reopenClean(t, path, rep)
	return rep.Messages
}

// checkValidLinesSurvive builds a transcript of valid lines with garbage
// lines between them (mode bits 0-5 say where) and maybe a torn tail (bit
// 7), and checks that every valid line loads, in order, and that the torn
// tail is dropped.
func checkValidLinesSurvive(t *testing.T, dir string, garbage []byte, mode uint8) {
	msgs := sampleMessages()
	var data []byte
	for i, m := range msgs {
		if mode&(1<<i) != 0 {
			data = append(data, garbage...)
			data = append(data, '\n')
		}
		data = append(data, line(t, m)...)
	}
	torn := mode&0x80 != 0
	if torn {
		l := line(t, msgs[len(garbage)%len(msgs)])
		data = append(data, l[:1+len(garbage)%(len(l)-2)]...)
	}
	path := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, rep, err := transcript.Open(path, transcript.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	if rep.TruncatedTail != torn {
		t.Fatalf("TruncatedTail = %v, want %v", rep.TruncatedTail, torn)
	}
	// The valid messages are a subsequence of the loaded ones (garbage may
	// add messages of its own).
	got := make([]string, len(rep.Messages))
	for i, m := range rep.Messages {
		got[i] = encode(t, []core.Message{m})
	}
	j := 0
	for _, m := range msgs {
		w := encode(t, []core.Message{m})
		for j < len(got) && got[j] != w {
			j++
		}
		if j == len(got) {
			t.Fatalf("valid message %s was not loaded; loaded %s", w, strings.Join(got, " "))
		}
		j++
	}
}

// FuzzPipeline runs Pipeline and SplitForCompaction on arbitrary
// transcripts with options taken from flags. Oracles: no panic; the input
// is not modified; the output is well paired, holds only model messages,
// does not end with an orphaned prompt, and alternates when asked to.
func FuzzPipeline(f *testing.F) {
	for _, gc := range loadGolden(f) {
		var b []byte
		for _, m := range gc.Input {
			b = append(b, line(f, m)...)
		}
		f.Add(b, uint8(0xff), uint8(3))
		f.Add(b, uint8(0), uint8(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, flags, limit uint8) {
		var msgs []core.Message
		for l := range bytes.Lines(data) {
			if m, err := core.UnmarshalMessage(l); err == nil {
				msgs = append(msgs, m)
			}
		}
		before := encode(t, msgs)
		opts := transcript.PipelineOptions{
			DropThinking:         flags&1 != 0,
			DropUnsignedThinking: flags&2 != 0,
			StrictAlternation:    flags&4 != 0,
			HistoryLimit:         int(limit % 8),
		}
		if flags&8 != 0 {
			opts.IsHeartbeatPrompt, opts.IsHeartbeatAck = testIsHeartbeatPrompt, testIsHeartbeatAck
		}
		if flags&16 != 0 {
			opts.Prune = &transcript.PruneOptions{SoftLimitTokens: 1, HardLimitTokens: int(limit), SoftTrimChars: 8, HeadChars: 2, TailChars: 3, KeepLastAssistants: int(flags>>5) - 1}
		}
		out, rep := transcript.Pipeline(msgs, opts)
		if encode(t, msgs) != before {
			t.Fatal("Pipeline modified its input")
		}
		if err := transcript.CheckToolPairing(out); err != nil {
			t.Fatalf("output pairing: %v\n%s", err, encode(t, out))
		}
		if rep.Out != len(out) {
			t.Fatalf("report.Out = %d, len = %d", rep.Out, len(out))
		}
		for i, m := range out {
			switch m.(type) {
			case *core.UserMessage, *core.AssistantMessage, *core.ToolResultMessage:
			default:
				t.Fatalf("output %d is a %T", i, m)
			}
			if opts.StrictAlternation && i > 0 && m.Role() == core.RoleUser && out[i-1].Role() == core.RoleUser {
				t.Fatalf("two user messages at %d with StrictAlternation", i)
			}
		}
		if n := len(out); n > 0 && out[n-1].Role() == core.RoleUser &&
			!strings.HasPrefix(out[n-1].(*core.UserMessage).Text(), transcript.CompactionSummaryPrefix) {
			t.Fatalf("output ends with a user message")
		}
		if _, err := core.Messages(out).MarshalJSON(); err != nil {
			t.Fatalf("output does not encode: %v", err)
		}

		older, recent, cut := transcript.SplitForCompaction(msgs, int(limit)*10)
		if encode(t, msgs) != before {
			t.Fatal("SplitForCompaction modified its input")
		}
		if cut < 0 || cut > len(msgs) {
			t.Fatalf("cut %d out of range", cut)
		}
		if len(older) > 0 && len(recent) > 0 && recent[0].Role() == core.RoleToolResult {
			t.Fatalf("recent starts with a tool result")
		}
	})
}
