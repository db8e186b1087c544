package transcript_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/transcript"
)

func TestPath(t *testing.T) {
	got, err := transcript.Path("/state", "Main Agent!", "3b241101-e2bb-4255-8caf-4136c566a962")
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join("/state", "agents", "main-agent", "sessions", "3b241101-e2bb-4255-8caf-4136c566a962.jsonl")
	if got != want {
		t.Errorf("Path = %q, want %q", got, want)
	}
	if got, _ := transcript.Path("/state", "", "abc"); got != filepath.Join("/state", "agents", core.DefaultAgentID, "sessions", "abc.jsonl") {
		t.Errorf("empty agent id: %q", got)
	}
}

func TestValidateSessionID(t *testing.T) {
	for _, id := range []string{"a", "abc", "3b241101-e2bb-4255-8caf-4136c566a962", "uuid-topic-42", "run_1.2", strings.Repeat("a", 128)} {
		if err := transcript.ValidateSessionID(id); err != nil {
			t.Errorf("ValidateSessionID(%q) = %v, want nil", id, err)
		}
	}
	for _, id := range []string{"", ".", "..", "../x", "a/b", `a\b`, ".hidden", "-x", "a b", "a\x00", "é", strings.Repeat("a", 129)} {
		err := transcript.ValidateSessionID(id)
		if !errors.Is(err, transcript.ErrInvalidSessionID) {
			t.Errorf("ValidateSessionID(%q) = %v, want ErrInvalidSessionID", id, err)
		}
		if _, perr := transcript.Path("/state", "main", id); !errors.Is(perr, transcript.ErrInvalidSessionID) {
			t.Errorf("Path(..., %q) error = %v", id, perr)
		}
	}
}

func TestNewSessionID(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 100 {
		id := transcript.NewSessionID()
		if !re.MatchString(id) {
			t.Fatalf("NewSessionID() = %q, not a UUIDv4", id)
		}
		if err := transcript.ValidateSessionID(id); err != nil {
			t.Fatal(err)
		}
		if seen[id] {
			t.Fatalf("NewSessionID repeated %q", id)
		}
		seen[id] = true
	}
}

func TestOpenCreatesDirsAndFile(t *testing.T) {
	path, err := transcript.Path(t.TempDir(), "main", transcript.NewSessionID())
	if err != nil {
		t.Fatal(err)
	}
	f, rep, err := transcript.Open(path, transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Path() != path {
		t.Errorf("File.Path = %q, want %q", f.Path(), path)
	}
	if len(rep.Messages) != 0 || rep.Bytes != 0 || rep.TruncatedTail || rep.AddedNewline {
		t.Errorf("new file report = %+v", rep)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, want 0600", st.Mode().Perm())
	}
	dir, err := os.Stat(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if dir.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v, want 0700", dir.Mode().Perm())
	}
}

func TestAppendReopenRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	f, _, err := transcript.Open(path, transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	msgs := sampleMessages()
	// One message, then a batch, as the agent appends a prompt and then a
	// finished assistant message with its tool results.
	if err := f.Append(msgs[0]); err != nil {
		t.Fatal(err)
	}
	if err := f.Append(msgs[1:]...); err != nil {
		t.Fatal(err)
	}
	if err := f.Append(); err != nil {
		t.Fatalf("empty Append: %v", err)
	}
	if got, want := encode(t, f.Messages()), encode(t, msgs); got != want {
		t.Errorf("Messages after Append:\n got %s\nwant %s", got, want)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := f.Append(user("late", 9)); !errors.Is(err, transcript.ErrClosed) {
		t.Errorf("Append after Close = %v, want ErrClosed", err)
	}

	data := readFile(t, path)
	if n := bytes.Count(data, []byte{'\n'}); n != len(msgs) {
		t.Errorf("file has %d lines, want %d", n, len(msgs))
	}
	for i, l := range bytes.Split(bytes.TrimSuffix(data, []byte{'\n'}), []byte{'\n'}) {
		if !json.Valid(l) {
			t.Errorf("line %d is not valid JSON: %s", i+1, l)
		}
	}
	// The raw message is written back byte for byte, and HTML is not
	// escaped (JSON.stringify writes the same).
	if !bytes.Contains(data, []byte(`{"role":"bashExecution","command":"ls","output":"a\nb","exitCode":0,"timestamp":4}`+"\n")) {
		t.Errorf("raw message not kept verbatim:\n%s", data)
	}

	f2, rep := open(t, path)
	if got, want := encode(t, rep.Messages), encode(t, msgs); got != want {
		t.Errorf("reopen:\n got %s\nwant %s", got, want)
	}
	if len(rep.SkippedLines) != 0 || rep.TruncatedTail || rep.AddedNewline || rep.Bytes != int64(len(data)) {
		t.Errorf("reopen report = %+v", rep)
	}
	if _, ok := rep.Messages[3].(*core.RawMessage); !ok {
		t.Errorf("unknown role loaded as %T, want *core.RawMessage", rep.Messages[3])
	}
	// Appending after a reopen continues the file.
	if err := f2.Append(user("more", 10)); err != nil {
		t.Fatal(err)
	}
	if n := len(f2.Messages()); n != len(msgs)+1 {
		t.Errorf("Messages has %d, want %d", n, len(msgs)+1)
	}
}

func TestAppendCompactsMultilineJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	f, _ := open(t, path)
	raw := &core.RawMessage{JSON: json.RawMessage("{\n  \"role\": \"custom\",\n  \"note\": \"x\"\r\n}")}
	if err := f.Append(raw); err != nil {
		t.Fatal(err)
	}
	if got := string(readFile(t, path)); got != `{"role":"custom","note":"x"}`+"\n" {
		t.Errorf("file = %q", got)
	}
}

func TestAppendUnserializableWritesNothing(t *testing.T) {
	path, _ := writeLines(t, sampleMessages()[:2])
	f, _ := open(t, path)
	before := readFile(t, path)
	bad := []core.Message{
		&core.ToolResultMessage{ToolCallID: "c", ToolName: "exec", Content: core.Content{text("ok")}, Details: json.RawMessage(`{"exit":`)},
		nil,
		(*core.UserMessage)(nil),
		&core.AssistantMessage{Usage: core.Usage{Cost: core.Cost{Total: nan()}}},
		&core.RawMessage{JSON: json.RawMessage(`{"no":"role"}`)},
		&core.RawMessage{JSON: json.RawMessage(`[1,2]`)},
		&core.UserMessage{Content: core.UserContent{Blocks: core.Content{nil}}},
	}
	for i, m := range bad {
		// A good message before the bad one must not be written either.
		err := f.Append(user("good", 1), m)
		if !errors.Is(err, transcript.ErrUnserializable) {
			t.Errorf("bad[%d] %T: Append error = %v, want ErrUnserializable", i, m, err)
		}
	}
	if after := readFile(t, path); !bytes.Equal(before, after) {
		t.Errorf("file changed:\nbefore %q\nafter  %q", before, after)
	}
	if n := len(f.Messages()); n != 2 {
		t.Errorf("Messages has %d, want 2", n)
	}
	if err := f.Append(user("still works", 2)); err != nil {
		t.Errorf("Append after a refused one: %v", err)
	}
}

func nan() float64 {
	var zero float64
	return zero / zero
}

func TestConcurrentAppendWholeLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	f, _, err := transcript.Open(path, transcript.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 8, 50
	long := strings.Repeat("x", 10_000) // lines longer than a pipe buffer
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				m := result("c", "exec", long, int64(w*1000+i))
				if err := f.Append(assistant(int64(w*1000+i), text("hi")), m); err != nil {
					t.Error(err)
					return
				}
				_ = f.Messages()
			}
		})
	}
	wg.Wait()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	msgs := f.Messages()
	if len(msgs) != writers*each*2 {
		t.Fatalf("Messages has %d, want %d", len(msgs), writers*each*2)
	}
	// Each batch stays together.
	for i := 0; i < len(msgs); i += 2 {
		a, r := msgs[i].(*core.AssistantMessage), msgs[i+1].(*core.ToolResultMessage)
		if a.Timestamp != r.Timestamp {
			t.Fatalf("batch split at %d: %d vs %d", i, a.Timestamp, r.Timestamp)
		}
	}
	_, rep := open(t, path)
	if len(rep.Messages) != writers*each*2 || len(rep.SkippedLines) != 0 || rep.TruncatedTail {
		t.Fatalf("reopen: %d messages, skipped %v, torn %v", len(rep.Messages), rep.SkippedLines, rep.TruncatedTail)
	}
	if encode(t, rep.Messages) != encode(t, msgs) {
		t.Error("file order differs from Messages order")
	}
}

func TestMessagesSnapshot(t *testing.T) {
	f, _ := open(t, filepath.Join(t.TempDir(), "s.jsonl"))
	if err := f.Append(user("a", 1), user("b", 2)); err != nil {
		t.Fatal(err)
	}
	snap := f.Messages()
	// Appending to the snapshot must not reach the File.
	_ = append(snap, user("intruder", 3))
	if err := f.Append(user("c", 4)); err != nil {
		t.Fatal(err)
	}
	if len(snap) != 2 {
		t.Errorf("snapshot grew to %d", len(snap))
	}
	got := f.Messages()
	if u := got[2].(*core.UserMessage); u.Text() != "c" {
		t.Errorf("third message = %q, want c", u.Text())
	}
}
