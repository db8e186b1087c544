package llm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// maxSSEEvent bounds one server-sent event (all its data lines): a model's
// stream events are small, the largest being a redacted thinking block
// sent whole, so a stream that exceeds this is broken, not busy.
const maxSSEEvent = 16 << 20

// errSSETooLarge is the error for an event longer than maxSSEEvent.
var errSSETooLarge = fmt.Errorf("a server-sent event is longer than %d MiB", maxSSEEvent>>20)

// sseReader reads a text/event-stream (the WHATWG HTML "server-sent
// events" format) one event at a time. Lines end in LF, CRLF or CR; a
// line starting with ':' is a comment; "event" names the event and each
// "data" line adds a line to its data; an empty line dispatches it. Id and
// retry fields mean nothing to a model stream and are skipped. An event
// the stream ends in the middle of a line of is not dispatched, so a cut
// stream shows as io.ErrUnexpectedEOF; one that only lacks its final blank
// line is (the format would drop it; servers that close right after their
// last event lose nothing). Not safe for concurrent
// use; it reads from r on the calling goroutine.
type sseReader struct {
	r io.Reader
	// buf[start:end] is read and not yet consumed.
	buf        []byte
	start, end int
	err        error // the read error after buf's data
	// skipLF drops the LF of a CRLF whose CR ended the previous line.
	skipLF bool
	// cut is set when the stream ended in the middle of a line.
	cut bool
	// name and data are the event being read; reused, so what next
	// returns is valid until the next call.
	name, data []byte
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: r, buf: make([]byte, 4<<10)}
}

// next returns the next event's name and data (data lines joined by LF,
// without a final LF). It returns io.EOF at the end of the stream and
// io.ErrUnexpectedEOF when the stream ends inside a line. The slices are
// valid until the next call.
func (s *sseReader) next() (name, data []byte, err error) {
	s.name, s.data = s.name[:0], s.data[:0]
	started, hasData := false, false
	for {
		line, err := s.readLine()
		if err != nil {
			switch {
			case !errors.Is(err, io.EOF) || !started:
			case s.cut:
				err = io.ErrUnexpectedEOF
			case hasData:
				// Every line arrived whole; only the blank line that
				// ends the event is missing, as from a server that
				// closes right after its last event.
				return s.name, s.data, nil
			}
			return nil, nil, err
		}
		if len(line) == 0 {
			if hasData {
				return s.name, s.data, nil
			}
			// An event without data is not dispatched; its name is
			// forgotten.
			s.name, started = s.name[:0], false
			continue
		}
		started = true
		if line[0] == ':' {
			continue
		}
		field, value, found := bytes.Cut(line, []byte{':'})
		if found && len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(field) {
		case "event":
			s.name = append(s.name[:0], value...)
		case "data":
			if len(s.data)+len(value)+1 > maxSSEEvent {
				return nil, nil, errSSETooLarge
			}
			if hasData {
				s.data = append(s.data, '\n')
			}
			s.data = append(s.data, value...)
			hasData = true
		}
	}
}

// readLine returns the next line without its terminator; a last line
// without one still counts. The slice is valid until the next call.
func (s *sseReader) readLine() ([]byte, error) {
	for {
		if s.skipLF && s.start < s.end {
			if s.buf[s.start] == '\n' {
				s.start++
			}
			s.skipLF = false
		}
		if i := bytes.IndexAny(s.buf[s.start:s.end], "\r\n"); i >= 0 {
			line := s.buf[s.start : s.start+i]
			s.start += i + 1
			if s.buf[s.start-1] == '\r' {
				s.skipLF = true
			}
			return line, nil
		}
		if s.err != nil {
			if s.start < s.end {
				line := s.buf[s.start:s.end]
				s.start, s.cut = s.end, true
				return line, nil
			}
			return nil, s.err
		}
		if s.end-s.start > maxSSEEvent {
			return nil, errSSETooLarge
		}
		// Make room: move the partial line to the front, grow if full.
		n := copy(s.buf, s.buf[s.start:s.end])
		s.start, s.end = 0, n
		if n == len(s.buf) {
			s.buf = append(s.buf, make([]byte, len(s.buf))...)
		}
		m, err := s.r.Read(s.buf[s.end:])
		s.end += m
		if err != nil {
			s.err = err
		}
	}
}
