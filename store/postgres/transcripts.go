package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/transcript"
)

// Transcripts is the transcript store in this database (postgres mode):
// what the agent runner opens instead of JSONL files, so that any
// instance of a cluster can run any session.
func (s *Store) Transcripts() *Transcripts { return &Transcripts{s: s} }

// Transcripts keeps transcripts as rows of transcript_lines. Its methods
// are safe for concurrent use; each is one short transaction bounded by
// its ctx.
type Transcripts struct{ s *Store }

var _ transcript.Store = (*Transcripts)(nil)

// ErrTranscriptConflict is wrapped by the error of an append that found
// its position already written: another writer (an instance that took the
// session over) appended since this one loaded. Nothing was written.
var ErrTranscriptConflict = errors.New("store: the transcript was appended to by another writer")

// Open implements transcript.Store: it loads the lines (a database has no
// torn lines to repair; a line that does not decode is skipped, as in a
// file) and returns a Log whose appends insert rows after them.
func (t *Transcripts) Open(ctx context.Context, agentID, sessionID string) (transcript.Log, transcript.LoadReport, error) {
	lines, err := t.lines(ctx, agentID, sessionID)
	if err != nil {
		return nil, transcript.LoadReport{}, err
	}
	rep := transcript.DecodeLines(lines)
	w := &lineWriter{s: t.s, agentID: agentID, sessionID: sessionID, next: int64(len(lines))}
	return transcript.NewLog(context.Background(), rep, w), rep, nil
}

// Read implements transcript.Store.
func (t *Transcripts) Read(ctx context.Context, agentID, sessionID string) ([]core.Message, error) {
	lines, err := t.lines(ctx, agentID, sessionID)
	if err != nil {
		return nil, err
	}
	return transcript.DecodeLines(lines).Messages, nil
}

// Lines returns a transcript's stored lines in order, for export.
func (t *Transcripts) Lines(ctx context.Context, agentID, sessionID string) ([][]byte, error) {
	return t.lines(ctx, agentID, sessionID)
}

func (t *Transcripts) lines(ctx context.Context, agentID, sessionID string) ([][]byte, error) {
	if err := transcript.ValidateSessionID(sessionID); err != nil {
		return nil, err
	}
	rows, err := t.s.pool.Query(ctx, `SELECT line FROM transcript_lines WHERE agent_id = $1 AND session_id = $2 ORDER BY seq`, agentID, sessionID)
	if err != nil {
		return nil, fmt.Errorf("store: load transcript %s/%s: %w", agentID, sessionID, err)
	}
	lines, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([]byte, error) {
		var line string
		err := r.Scan(&line)
		return []byte(line), err
	})
	if err != nil {
		return nil, fmt.Errorf("store: load transcript %s/%s: %w", agentID, sessionID, err)
	}
	return lines, nil
}

// TranscriptRef names one stored transcript.
type TranscriptRef struct {
	AgentID, SessionID string
	// Lines is how many lines it holds.
	Lines int64
}

// List returns every stored transcript, by agent and session id.
func (t *Transcripts) List(ctx context.Context) ([]TranscriptRef, error) {
	rows, err := t.s.pool.Query(ctx, `SELECT agent_id, session_id, count(*) FROM transcript_lines GROUP BY agent_id, session_id ORDER BY agent_id, session_id`)
	if err != nil {
		return nil, fmt.Errorf("store: list transcripts: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (TranscriptRef, error) {
		var ref TranscriptRef
		err := r.Scan(&ref.AgentID, &ref.SessionID, &ref.Lines)
		return ref, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: list transcripts: %w", err)
	}
	return out, nil
}

// lineWriter appends one transcript's lines at its next positions.
type lineWriter struct {
	s                  *Store
	agentID, sessionID string
	next               int64 // guarded by the Log's lock
}

// Write implements transcript.Lines: one INSERT of every line, all or
// nothing.
func (w *lineWriter) Write(ctx context.Context, lines [][]byte) error {
	seqs := make([]int64, len(lines))
	text := make([]string, len(lines))
	for i, l := range lines {
		seqs[i], text[i] = w.next+int64(i), string(l)
	}
	_, err := w.s.pool.Exec(ctx, `INSERT INTO transcript_lines (agent_id, session_id, seq, line, created_at)
		SELECT $1, $2, s, l, $5 FROM unnest($3::bigint[], $4::text[]) AS u(s, l)`,
		w.agentID, w.sessionID, seqs, text, w.s.nowMilli())
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return fmt.Errorf("%w (%s/%s at line %d)", ErrTranscriptConflict, w.agentID, w.sessionID, w.next+1)
	}
	if err != nil {
		return fmt.Errorf("store: append to transcript %s/%s: %w", w.agentID, w.sessionID, err)
	}
	w.next += int64(len(lines))
	return nil
}

// Close implements transcript.Lines; the pool stays the store's.
func (w *lineWriter) Close() error { return nil }
