package transcript_test

import (
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/transcript"
)

// TestCompactionReleasesOlderMessages: after a compaction entry the File
// holds only what a context can still be built from, so a session that
// runs for months does not keep its whole history in memory, and neither
// the context nor the next compaction's split changes.
func TestCompactionReleasesOlderMessages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	f, _ := open(t, path)
	for i := range 10 {
		ts := int64(i * 10)
		if err := f.Append(user(fmt.Sprintf("question %d with some words in it", i), ts), assistant(ts+1, text(fmt.Sprintf("answer %d", i)))); err != nil {
			t.Fatal(err)
		}
	}
	before := f.Messages()
	if f.Held() != f.Size() {
		t.Fatalf("before any compaction Held = %d, Size = %d", f.Held(), f.Size())
	}
	entry := &core.CompactionSummaryMessage{Summary: "they talked", FirstKeptIndex: 14, Timestamp: 200}
	if err := f.Append(entry, user("after", 201)); err != nil {
		t.Fatal(err)
	}

	got := f.Messages()
	if len(got) != 22 {
		t.Fatalf("len(Messages) = %d, want 22 (indexes keep their meaning)", len(got))
	}
	for i, m := range got {
		if (m == nil) != (i < 14) {
			t.Errorf("Messages()[%d] = %v; want nil exactly before FirstKeptIndex 14", i, m)
		}
	}
	for i, m := range before {
		if m == nil {
			t.Fatalf("an earlier snapshot changed: [%d] is nil", i)
		}
	}
	if f.Held() >= f.Size()/2 || f.Held() <= 0 {
		t.Errorf("Held = %d of Size %d; want the 8 kept lines only", f.Held(), f.Size())
	}

	whole, err := transcript.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(whole) != 22 || whole[0] == nil {
		t.Fatalf("the file lost history: %d messages", len(whole))
	}
	if !reflect.DeepEqual(transcript.ContextMessages(got), transcript.ContextMessages(whole)) {
		t.Error("the context built from the released File differs from the whole file's")
	}
	o1, r1, k1 := transcript.SplitForCompaction(got, 10)
	o2, r2, k2 := transcript.SplitForCompaction(whole, 10)
	if k1 != k2 || !reflect.DeepEqual(o1, o2) || !reflect.DeepEqual(r1, r2) {
		t.Errorf("SplitForCompaction differs: cut %d vs %d", k1, k2)
	}
	held := f.Held()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	// A reopened File lets go of the same messages; its report still has
	// every one.
	g, rep := open(t, path)
	defer g.Close()
	if len(rep.Messages) != 22 || rep.Messages[0] == nil {
		t.Errorf("LoadReport.Messages = %d messages, first %v; want the whole file", len(rep.Messages), rep.Messages[0])
	}
	if m := g.Messages(); len(m) != 22 || m[13] != nil || m[14] == nil {
		t.Errorf("reopened: %d messages, [13] %v, [14] %v", len(m), m[13], m[14])
	}
	if g.Held() != held {
		t.Errorf("reopened Held = %d, want %d as before", g.Held(), held)
	}
}
