package llm

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

type sseEvent struct{ name, data string }

// readAllEvents reads r to its end, returning the events and the error
// that ended it (io.EOF for a clean end).
func readAllEvents(r io.Reader) ([]sseEvent, error) {
	s := newSSEReader(r)
	var out []sseEvent
	for {
		name, data, err := s.next()
		if err != nil {
			return out, err
		}
		out = append(out, sseEvent{string(name), string(data)})
	}
}

func TestSSEReader(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []sseEvent
		wantErr error
	}{
		{"named events", "event: a\ndata: 1\n\nevent: b\ndata: 2\n\n", []sseEvent{{"a", "1"}, {"b", "2"}}, io.EOF},
		{"no space after colon", "event:a\ndata:{\"x\":1}\n\n", []sseEvent{{"a", `{"x":1}`}}, io.EOF},
		{"only one space is dropped", "data:  two\n\n", []sseEvent{{"", " two"}}, io.EOF},
		{"CRLF", "event: a\r\ndata: 1\r\n\r\n", []sseEvent{{"a", "1"}}, io.EOF},
		{"CR", "event: a\rdata: 1\r\r", []sseEvent{{"a", "1"}}, io.EOF},
		{"data lines join with LF", "data: a\ndata: b\ndata:\n\n", []sseEvent{{"", "a\nb\n"}}, io.EOF},
		{"comments and other fields", ": keep-alive\nid: 7\nretry: 100\ndata: x\nfoo: bar\n\n", []sseEvent{{"", "x"}}, io.EOF},
		{"an event without data is not dispatched", "event: ping\n\ndata: x\n\n", []sseEvent{{"", "x"}}, io.EOF},
		{"the name does not carry over", "event: a\ndata: 1\n\ndata: 2\n\n", []sseEvent{{"a", "1"}, {"", "2"}}, io.EOF},
		{"blank lines between events", "\n\n\ndata: x\n\n\n\n", []sseEvent{{"", "x"}}, io.EOF},
		{"field without a colon", "data\n\n", []sseEvent{{"", ""}}, io.EOF},
		{"cut mid-event", "data: 1\n\ndata: {\"partial", []sseEvent{{"", "1"}}, io.ErrUnexpectedEOF},
		{"no blank line after the last event", "data: 1\n\nevent: x\ndata: 2\n", []sseEvent{{"", "1"}, {"x", "2"}}, io.EOF},
		{"cut after a name", "data: 1\n\nevent: x\n", []sseEvent{{"", "1"}}, io.EOF},
		{"cut mid-line after whole lines", "data: 1\ndata: 2", nil, io.ErrUnexpectedEOF},
		{"empty stream", "", nil, io.EOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, r := range []struct {
				name string
				r    io.Reader
			}{
				{"whole", strings.NewReader(tt.in)},
				{"a byte at a time", iotest.OneByteReader(strings.NewReader(tt.in))},
			} {
				got, err := readAllEvents(r.r)
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("%s: error %v, want %v", r.name, err, tt.wantErr)
				}
				if len(got) != len(tt.want) {
					t.Fatalf("%s: events %q, want %q", r.name, got, tt.want)
				}
				for i := range got {
					if got[i] != tt.want[i] {
						t.Errorf("%s: event %d = %q, want %q", r.name, i, got[i], tt.want[i])
					}
				}
			}
		})
	}
}

func TestSSEReaderLongLines(t *testing.T) {
	long := strings.Repeat("x", 100<<10) // longer than the first buffer
	got, err := readAllEvents(strings.NewReader("data: " + long + "\n\ndata: after\n\n"))
	if !errors.Is(err, io.EOF) || len(got) != 2 || got[0].data != long || got[1].data != "after" {
		t.Fatalf("events %d, err %v", len(got), err)
	}
}

func TestSSEReaderRefusesAnOversizedEvent(t *testing.T) {
	// One line past the bound, and many lines adding up past it.
	line := strings.NewReader("data: " + strings.Repeat("x", maxSSEEvent+1))
	if _, err := readAllEvents(line); !errors.Is(err, errSSETooLarge) {
		t.Errorf("one long line: %v, want errSSETooLarge", err)
	}
	chunk := "data: " + strings.Repeat("y", 1<<20) + "\n"
	lines := io.MultiReader(strings.NewReader(strings.Repeat(chunk, maxSSEEvent>>20+1)), strings.NewReader("\n"))
	if _, err := readAllEvents(lines); !errors.Is(err, errSSETooLarge) {
		t.Errorf("many lines: %v, want errSSETooLarge", err)
	}
}

func TestSSEReaderPassesReadErrors(t *testing.T) {
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("data: 1\n\ndata: 2"), iotest.ErrReader(boom))
	got, err := readAllEvents(r)
	if !errors.Is(err, boom) || len(got) != 1 {
		t.Errorf("events %q, err %v; want one event, then the read error", got, err)
	}
}

// FuzzSSEReader: any bytes from a server end in events and an error,
// never a panic or a loop; reading a byte at a time gives the same events
// as reading at once.
func FuzzSSEReader(f *testing.F) {
	for _, seed := range []string{
		"event: message_start\ndata: {}\n\n",
		"data: a\r\ndata: b\r\rdata: c\n\n",
		": c\nid\nretry: x\ndata\n\n",
		"data: 1\n\ndata: cut",
		"\r\n\r\r\n\n",
		"event: x\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		whole, err1 := readAllEvents(strings.NewReader(in))
		bytewise, err2 := readAllEvents(iotest.OneByteReader(strings.NewReader(in)))
		if !errors.Is(err1, io.EOF) && !errors.Is(err1, io.ErrUnexpectedEOF) {
			t.Fatalf("error %v", err1)
		}
		if !errors.Is(err2, err1) {
			t.Fatalf("byte at a time: %v, at once: %v", err2, err1)
		}
		if len(whole) != len(bytewise) {
			t.Fatalf("at once %q, byte at a time %q", whole, bytewise)
		}
		for i := range whole {
			if whole[i] != bytewise[i] {
				t.Fatalf("event %d: at once %q, byte at a time %q", i, whole[i], bytewise[i])
			}
		}
	})
}
