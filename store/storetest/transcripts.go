package storetest

import (
	"errors"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/transcript"
)

// Transcripts asserts transcript.Store: a new transcript is empty; appends
// are kept in order and load back the same after reopening, and Read sees
// them without opening for writing; a missing transcript reads empty; a
// compaction entry lets go of the messages before its FirstKeptIndex in
// Messages, on append and on load alike, while Read keeps them; an
// unserializable message fails the whole Append and writes nothing;
// transcripts of other sessions and agents are apart; an invalid session
// id is refused.
func Transcripts(t *testing.T, open func(t *testing.T) transcript.Store) {
	ctx := t.Context()
	s := open(t)
	const agent, sid = "main", "0f6c2a1e-3b4d-4c5e-8f90-123456789abc"
	texts := func(msgs []core.Message) string {
		var out []string
		for _, m := range msgs {
			switch m := m.(type) {
			case nil:
				out = append(out, "-")
			case *core.UserMessage:
				out = append(out, m.Text())
			case *core.CompactionSummaryMessage:
				out = append(out, "summary:"+m.Summary)
			default:
				out = append(out, m.Role())
			}
		}
		return strings.Join(out, ",")
	}
	l, rep, err := s.Open(ctx, agent, sid)
	if err != nil || len(rep.Messages) != 0 || len(l.Messages()) != 0 {
		t.Fatalf("new transcript: %v, %+v", err, rep)
	}
	if err := l.Append(core.NewUserText("one", 1), core.NewUserText("two", 2)); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(core.NewUserText("three", 3)); err != nil {
		t.Fatal(err)
	}
	if got := texts(l.Messages()); got != "one,two,three" {
		t.Fatalf("Messages = %s", got)
	}
	held := l.Held()
	if held <= 0 {
		t.Errorf("Held = %d", held)
	}
	if err := l.Append(core.NewUserText("bad", 4), nil); !errors.Is(err, transcript.ErrUnserializable) {
		t.Fatalf("Append with a nil message: %v; want ErrUnserializable", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if got, err := s.Read(ctx, agent, sid); err != nil || texts(got) != "one,two,three" {
		t.Fatalf("Read = %s, %v; want what was appended and nothing of the failed Append", texts(got), err)
	}
	if got, err := s.Read(ctx, "other", sid); err != nil || len(got) != 0 {
		t.Fatalf("another agent's transcript = %s, %v", texts(got), err)
	}
	if got, err := s.Read(ctx, agent, "1f6c2a1e-3b4d-4c5e-8f90-123456789abc"); err != nil || len(got) != 0 {
		t.Fatalf("a missing transcript = %s, %v", texts(got), err)
	}

	l, rep, err = s.Open(ctx, agent, sid)
	if err != nil || texts(rep.Messages) != "one,two,three" || texts(l.Messages()) != "one,two,three" {
		t.Fatalf("reopened: %v, %s", err, texts(l.Messages()))
	}
	if err := l.Append(&core.CompactionSummaryMessage{Summary: "s", FirstKeptIndex: 2, Timestamp: 5}, core.NewUserText("four", 6)); err != nil {
		t.Fatal(err)
	}
	if got := texts(l.Messages()); got != "-,-,three,summary:s,four" {
		t.Fatalf("after compaction Messages = %s; want the first two let go", got)
	}
	if l.Held() >= held*2 {
		t.Errorf("Held after compaction = %d (before %d); want it to shrink to what is kept", l.Held(), held)
	}
	l.Close()
	l, _, err = s.Open(ctx, agent, sid)
	if err != nil || texts(l.Messages()) != "-,-,three,summary:s,four" {
		t.Fatalf("reopened after compaction: %s, %v", texts(l.Messages()), err)
	}
	l.Close()
	if got, _ := s.Read(ctx, agent, sid); texts(got) != "one,two,three,summary:s,four" {
		t.Fatalf("Read after compaction = %s; want the whole history", texts(got))
	}
	for _, bad := range []string{"", "../x", "a/b"} {
		if _, _, err := s.Open(ctx, agent, bad); err == nil {
			t.Errorf("Open with session id %q: no error", bad)
		}
	}
}
