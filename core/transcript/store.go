package transcript

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"github.com/switchboardhq/switchboard/core"
)

// Log is an open transcript: the messages loaded when it was opened plus
// those appended since. *File keeps one in a JSONL file; store/postgres
// keeps one in the database, so that any instance of a cluster can run any
// session. One writer at a time per transcript (the dispatcher's session
// lane, across instances its session lease); methods are safe for
// concurrent use.
type Log interface {
	// Messages returns what the log holds: since the last compaction
	// entry, the entry itself and everything after. It does no IO.
	Messages() []core.Message
	// Append writes msgs durably, in order, before it returns, and adds
	// them to Messages. On error nothing of msgs counts as written (a
	// partial write is rolled back or dropped at the next load).
	Append(msgs ...core.Message) error
	// Held is roughly how many bytes of messages Messages holds, for the
	// runner's cache budget.
	Held() int64
	// Close releases what the log holds open. Calls after the first do
	// nothing.
	Close() error
}

// Store opens transcripts by agent and session id. Its methods are safe
// for concurrent use and do IO bounded by ctx.
type Store interface {
	// Open opens (creating it when new) the transcript of agentID's
	// session sessionID for appending, with crash repair: the LoadReport
	// says what the load found and repaired.
	Open(ctx context.Context, agentID, sessionID string) (Log, LoadReport, error)
	// Read loads the transcript without changing or creating it, as a
	// reader beside the one writer (chat.history). A missing transcript
	// is empty.
	Read(ctx context.Context, agentID, sessionID string) ([]core.Message, error)
}

// Files is the Store of JSONL files: <StateDir>/agents/<agentId>/sessions/
// <sessionId>.jsonl (see Path), opened with Options. It is the default,
// and what SQLite mode uses.
type Files struct {
	StateDir string
	Options  Options
}

var (
	_ Store = Files{}
	_ Log   = (*File)(nil)
)

// Open implements Store.
func (f Files) Open(_ context.Context, agentID, sessionID string) (Log, LoadReport, error) {
	path, err := Path(f.StateDir, agentID, sessionID)
	if err != nil {
		return nil, LoadReport{}, err
	}
	file, rep, err := Open(path, f.Options)
	if err != nil {
		return nil, rep, err
	}
	return file, rep, nil
}

// Read implements Store.
func (f Files) Read(_ context.Context, agentID, sessionID string) ([]core.Message, error) {
	path, err := Path(f.StateDir, agentID, sessionID)
	if err != nil {
		return nil, err
	}
	return Read(path)
}

// EncodeLine returns m as the one JSON line (without its newline) a
// transcript keeps for it: compact, and checked to decode again, so a
// store never keeps what its next load would have to skip.
func EncodeLine(m core.Message) ([]byte, error) {
	line, err := appendLine(nil, m)
	if err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(line, []byte{'\n'}), nil
}

// Lines is a transcript's durable form in a store other than files: one
// encoded message per line, in order (see EncodeLine).
type Lines interface {
	// Write appends lines durably and all together, or not at all.
	Write(ctx context.Context, lines [][]byte) error
	// Close releases what Write needs; it may do nothing.
	Close() error
}

// DecodeLines loads a transcript from its lines as Open loads a file: a
// line that does not decode to a message is skipped and its 1-based number
// reported in SkippedLines. Bytes counts the lines' bytes with a newline
// each.
func DecodeLines(lines [][]byte) LoadReport {
	var rep LoadReport
	for i, line := range lines {
		rep.Bytes += int64(len(line)) + 1
		m, err := core.UnmarshalMessage(line)
		if err != nil {
			rep.SkippedLines = append(rep.SkippedLines, i+1)
			continue
		}
		rep.Messages = append(rep.Messages, m)
	}
	return rep
}

// NewLog returns the Log of a transcript a store loaded (rep, from
// DecodeLines) whose appends go to w: the same Messages, compaction
// release and Held as a File. ctx bounds each Append's write.
func NewLog(ctx context.Context, rep LoadReport, w Lines) Log {
	l := &linesLog{ctx: ctx, w: w, msgs: rep.Messages[:len(rep.Messages):len(rep.Messages)], held: rep.Bytes}
	if kept, held, ok := releaseCompacted(l.msgs); ok {
		l.msgs, l.held = kept, held
	}
	return l
}

type linesLog struct {
	ctx context.Context
	w   Lines

	mu     sync.Mutex
	msgs   []core.Message
	held   int64
	closed bool
}

// Messages implements Log.
func (l *linesLog) Messages() []core.Message {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.msgs[:len(l.msgs):len(l.msgs)]
}

// Held implements Log.
func (l *linesLog) Held() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held
}

// Append implements Log: every message is encoded first, then all are
// written in one Lines.Write.
func (l *linesLog) Append(msgs ...core.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	lines := make([][]byte, len(msgs))
	n := int64(0)
	for i, m := range msgs {
		line, err := EncodeLine(m)
		if err != nil {
			return fmt.Errorf("%w: message %d of %d: %w", ErrUnserializable, i+1, len(msgs), err)
		}
		lines[i] = line
		n += int64(len(line)) + 1
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	if err := l.w.Write(l.ctx, lines); err != nil {
		return fmt.Errorf("transcript: append: %w", err)
	}
	l.held += n
	l.msgs = append(l.msgs, msgs...)
	for _, m := range msgs {
		if _, ok := m.(*core.CompactionSummaryMessage); ok {
			if kept, held, ok := releaseCompacted(l.msgs); ok {
				l.msgs, l.held = kept, held
			}
			break
		}
	}
	return nil
}

// Close implements Log.
func (l *linesLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	return l.w.Close()
}
