package transcript_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/transcript"
)

// repairCase is one damaged transcript: the file's bytes and what a load
// must make of them.
type repairCase struct {
	name string
	data []byte
	// want is what must load: every message whose line survived.
	want []core.Message
	// skipped, recovered are the expected line numbers.
	skipped, recovered []int
	torn               bool
	newline            bool
}

// repairCases builds the damaged files of reliability §2.8 and matrix rows
// 5 and 18. They also seed FuzzTranscriptReader.
func repairCases(t testing.TB) []repairCase {
	msgs := sampleMessages()
	lines := make([][]byte, len(msgs))
	for i, m := range msgs {
		lines[i] = line(t, m)
	}
	join := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	all := join(lines...)
	n := len(msgs)
	last := lines[n-1]

	// A string holding a raw control character, and one holding raw line
	// breaks, as a writer that forgot to escape leaves them.
	ctrl := []byte("{\"role\":\"user\",\"content\":\"tab\there, bell\x07\",\"timestamp\":7}\n")
	split := []byte("{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"line one\nline two\n\nline four\"}],\"stopReason\":\"stop\",\"timestamp\":8}\n")
	ctrlMsg := &core.UserMessage{Content: core.UserContent{Text: "tab\there, bell\x07"}, Timestamp: 7}
	splitMsg := &core.AssistantMessage{Content: core.Content{text("line one\nline two\n\nline four")}, StopReason: core.StopReasonStop, Timestamp: 8}

	big := result("call_big", "read", strings.Repeat("0123456789abcdef", 1<<16), 9) // 1 MiB of text
	bigLine := line(t, big)

	with := func(extra ...core.Message) []core.Message { return append(append([]core.Message{}, msgs...), extra...) }

	return []repairCase{
		{name: "clean", data: all, want: msgs},
		{name: "empty", data: nil, want: nil},
		{
			name: "torn last line",
			data: join(all, lines[1][:len(lines[1])/2]),
			want: msgs, torn: true,
		},
		{
			name: "torn last line inside a string",
			data: join(all, []byte(`{"role":"user","content":"half a sent`)),
			want: msgs, torn: true,
		},
		{name: "torn only line", data: lines[0][:10], want: nil, torn: true},
		{
			name: "corrupted first line",
			data: join([]byte("{\"role\":\"user\",\"content\":\"Read the fi\x00\x00\x00\n"), join(lines[1:]...)),
			want: msgs[1:], skipped: []int{1},
		},
		{name: "byte order mark", data: join([]byte("\ufeff"), all), want: msgs},
		{name: "byte order mark only", data: []byte("\ufeff"), want: nil, newline: true},
		{
			name: "garbage first line",
			data: join([]byte("\x00\x01garbage{{{\n"), all),
			want: msgs, skipped: []int{1},
		},
		{
			name: "corrupted middle line",
			data: join(lines[0], lines[1], []byte(`{"role":"toolResult","toolCallId":"call_1","tool`+"\n"), join(lines[3:]...)),
			want: append(append([]core.Message{}, msgs[:2]...), msgs[3:]...), skipped: []int{3},
		},
		{
			name: "rejected lines",
			data: join(lines[0], []byte(`{"no":"role"}`+"\n"), []byte("[1,2,3]\n"), []byte(`{"role":"user","content":5}`+"\n"), join(lines[1:]...)),
			want: msgs, skipped: []int{2, 3, 4},
		},
		{
			name: "raw control character",
			data: join(lines[0], ctrl, join(lines[1:]...)),
			want: append([]core.Message{msgs[0], ctrlMsg}, msgs[1:]...), recovered: []int{2},
		},
		{
			name: "raw line breaks in a string",
			data: join(lines[0], split, join(lines[1:]...)),
			want: append([]core.Message{msgs[0], splitMsg}, msgs[1:]...), recovered: []int{2},
		},
		{
			name: "raw line breaks in the last line without newline",
			data: join(all, split[:len(split)-1]),
			want: with(splitMsg), recovered: []int{n + 1}, newline: true,
		},
		{
			name: "missing trailing newline",
			data: all[:len(all)-1],
			want: msgs, newline: true,
		},
		{
			name: "rejected last line without newline",
			data: join(all, []byte(`{"no":"role"}`)),
			want: msgs, skipped: []int{n + 1}, newline: true,
		},
		{
			name: "white space after the last newline",
			data: join(all, []byte("  \t")),
			want: msgs, newline: true,
		},
		{
			name: "blank and CRLF lines",
			data: join(lines[0], []byte("\n\r\n   \n"), bytes.Replace(lines[1], []byte("\n"), []byte("\r\n"), 1), join(lines[2:]...)),
			want: msgs,
		},
		{
			// Delayed allocation after a power cut can leave the end of
			// the file as zeros.
			name: "zero-filled tail",
			data: join(all, make([]byte, 4096)),
			want: msgs, torn: true,
		},
		{
			name: "zero-filled block before good lines",
			data: join(lines[0], make([]byte, 100), []byte("\n"), join(lines[1:]...)),
			want: msgs, skipped: []int{2},
		},
		{
			name: "corrupt middle and torn tail",
			data: join(lines[0], []byte("}}}\n"), join(lines[1:]...), last[:len(last)-5]),
			want: msgs, skipped: []int{2}, torn: true,
		},
		{
			name: "1 MiB line",
			data: join(lines[0], bigLine, join(lines[1:]...)),
			want: append([]core.Message{msgs[0], big}, msgs[1:]...),
		},
		{
			name: "torn 1 MiB line",
			data: join(all, bigLine[:len(bigLine)-100]),
			want: msgs, torn: true,
		},
	}
}

func TestOpenRepair(t *testing.T) {
	for _, tc := range repairCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, tc.data)
			var logs bytes.Buffer
			f, rep, err := transcript.Open(path, transcript.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer f.Close()

			// History is never shorter than the lines that survive.
			if len(rep.Messages) != len(tc.want) {
				t.Fatalf("loaded %d messages, want %d", len(rep.Messages), len(tc.want))
			}
			if got, want := encode(t, rep.Messages), encode(t, tc.want); got != want {
				t.Errorf("messages:\n got %s\nwant %s", got, want)
			}
			if got := encode(t, f.Messages()); got != encode(t, rep.Messages) {
				t.Errorf("File.Messages differs from the report")
			}
			if !equalInts(rep.SkippedLines, tc.skipped) {
				t.Errorf("SkippedLines = %v, want %v", rep.SkippedLines, tc.skipped)
			}
			if !equalInts(rep.RecoveredLines, tc.recovered) {
				t.Errorf("RecoveredLines = %v, want %v", rep.RecoveredLines, tc.recovered)
			}
			if rep.TruncatedTail != tc.torn || rep.AddedNewline != tc.newline {
				t.Errorf("TruncatedTail = %v, AddedNewline = %v; want %v, %v", rep.TruncatedTail, rep.AddedNewline, tc.torn, tc.newline)
			}

			after := readFile(t, path)
			if rep.Bytes != int64(len(after)) {
				t.Errorf("Bytes = %d, file has %d", rep.Bytes, len(after))
			}
			switch {
			case tc.torn:
				// The backup holds the original bytes; the file is the
				// original up to the start of the torn line.
				if rep.BackupPath == "" || !strings.HasPrefix(filepath.Base(rep.BackupPath), "s1.jsonl.bak-") {
					t.Fatalf("BackupPath = %q", rep.BackupPath)
				}
				if b := readFile(t, rep.BackupPath); !bytes.Equal(b, tc.data) {
					t.Errorf("backup differs from the original")
				}
				cut := bytes.LastIndexByte(tc.data, '\n') + 1
				if !bytes.Equal(after, tc.data[:cut]) {
					t.Errorf("file after repair is not the original up to the torn line")
				}
				if rep.TornBytes != int64(len(tc.data)-cut) {
					t.Errorf("TornBytes = %d, want %d", rep.TornBytes, len(tc.data)-cut)
				}
				if !strings.Contains(logs.String(), "torn") {
					t.Errorf("no warning logged: %s", logs.String())
				}
			case tc.newline:
				if !bytes.Equal(after, append(bytes.Clone(tc.data), '\n')) {
					t.Errorf("file after repair is not the original plus a newline")
				}
			default:
				if !bytes.Equal(after, tc.data) {
					t.Errorf("file changed without a torn tail or missing newline")
				}
			}
			if !tc.torn && rep.BackupPath != "" {
				t.Errorf("backup made without a torn tail: %s", rep.BackupPath)
			}
			if len(tc.skipped) > 0 && !strings.Contains(logs.String(), "skipped") {
				t.Errorf("skipped lines not logged: %s", logs.String())
			}
			if strings.Contains(logs.String(), "file contents") {
				t.Errorf("log holds message content: %s", logs.String())
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}

			reopenClean(t, path, rep)

			// An append after the repair lands on a line of its own.
			f2, _ := open(t, path)
			if err := f2.Append(user("after repair", 99)); err != nil {
				t.Fatal(err)
			}
			_ = f2.Close()
			_, rep3 := open(t, path)
			if len(rep3.Messages) != len(tc.want)+1 || rep3.TruncatedTail {
				t.Errorf("after append: %d messages (want %d), torn %v", len(rep3.Messages), len(tc.want)+1, rep3.TruncatedTail)
			}
		})
	}
}

func TestBackupNameCollision(t *testing.T) {
	msgs := sampleMessages()
	var data []byte
	for _, m := range msgs {
		data = append(data, line(t, m)...)
	}
	data = append(data, `{"role":"us`...)
	path := writeFile(t, data)
	seen := map[string]bool{}
	for i := range 3 {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		f, rep, err := transcript.Open(path, transcript.Options{})
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		_ = f.Close()
		if seen[rep.BackupPath] {
			t.Fatalf("backup %s overwritten", rep.BackupPath)
		}
		seen[rep.BackupPath] = true
		if b := readFile(t, rep.BackupPath); !bytes.Equal(b, data) {
			t.Errorf("backup %d differs", i)
		}
	}
}

func TestOpenLargeMixedFile(t *testing.T) {
	// Enough lines for the parallel decoder, with damage spread through
	// several read chunks.
	msgs := benchMessages(3000)
	var data []byte
	var want []core.Message
	var skipped []int
	for i, m := range msgs {
		data = append(data, line(t, m)...)
		want = append(want, m)
		if i%700 == 350 {
			data = append(data, "not json\n"...)
			skipped = append(skipped, len(want)+len(skipped)+1)
		}
	}
	path := writeFile(t, data)
	_, rep := open(t, path)
	if len(rep.Messages) != len(want) {
		t.Fatalf("loaded %d, want %d", len(rep.Messages), len(want))
	}
	if encode(t, rep.Messages) != encode(t, want) {
		t.Error("messages differ")
	}
	if !equalInts(rep.SkippedLines, skipped) {
		t.Errorf("SkippedLines = %v, want %v", rep.SkippedLines, skipped)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	// A directory where the file should be.
	if _, _, err := transcript.Open(dir, transcript.Options{}); err == nil {
		t.Error("Open of a directory succeeded")
	}
	// A file where a directory should be.
	blocker := filepath.Join(dir, "agents")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := transcript.Open(filepath.Join(blocker, "main", "sessions", "s.jsonl"), transcript.Options{})
	if err == nil || !strings.Contains(err.Error(), "transcript: open") {
		t.Errorf("Open under a file = %v", err)
	}
}

func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "transcript")
	defer os.RemoveAll(dir)
	path, _ := transcript.Path(dir, "main", "example")
	f, _, _ := transcript.Open(path, transcript.Options{})
	_ = f.Append(core.NewUserText("hello", 1740000000000))
	_ = f.Close()

	// A crash in the middle of the next write leaves half a line.
	fd, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	_, _ = fd.WriteString(`{"role":"assistant","content":[{"type":"te`)
	_ = fd.Close()

	f, rep, _ := transcript.Open(path, transcript.Options{})
	defer f.Close()
	fmt.Println(len(rep.Messages), rep.TruncatedTail, rep.BackupPath != "")
	// Output: 1 true true
}
