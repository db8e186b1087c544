package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
)

var _ core.SessionIndex = (*SQLite)(nil)

// GetSession returns the sessions-index entry for key, and false if there is
// none.
func (s *SQLite) GetSession(ctx context.Context, key core.SessionKey) (core.SessionEntry, bool, error) {
	var data string
	err := s.rq.queryRow(ctx, `SELECT data FROM sessions WHERE key = ?`, string(key)).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return core.SessionEntry{}, false, nil
	}
	if err != nil {
		return core.SessionEntry{}, false, fmt.Errorf("store: get session %s: %w", key, err)
	}
	var e core.SessionEntry
	if err := json.Unmarshal([]byte(data), &e); err != nil {
		return core.SessionEntry{}, false, fmt.Errorf("store: session %s: stored entry is not valid JSON: %w", key, err)
	}
	return e, true, nil
}

// PutSession creates or replaces the sessions-index entry for e.Key.
func (s *SQLite) PutSession(ctx context.Context, e core.SessionEntry) error {
	if e.Key == "" || e.SessionID == "" {
		return fmt.Errorf("store: put session: key and sessionId are required (got %q, %q)", e.Key, e.SessionID)
	}
	data, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("store: put session %s: %w", e.Key, err)
	}
	_, err = s.wq.exec(ctx, `
		INSERT INTO sessions (key, agent_id, session_id, created_at, updated_at, data)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET
			agent_id = excluded.agent_id, session_id = excluded.session_id,
			created_at = excluded.created_at, updated_at = excluded.updated_at,
			data = excluded.data`,
		string(e.Key), e.AgentID, e.SessionID, e.CreatedAt, e.UpdatedAt, string(data))
	if err != nil {
		return fmt.Errorf("store: put session %s: %w", e.Key, err)
	}
	return nil
}

// ListSessions returns entries, most recently updated first, at most limit
// of them (0 means all).
func (s *SQLite) ListSessions(ctx context.Context, limit int) ([]core.SessionEntry, error) {
	q := `SELECT data FROM sessions ORDER BY updated_at DESC, key`
	args := []any{}
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	rows, err := s.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list sessions: %w", err)
	}
	defer rows.Close()
	var out []core.SessionEntry
	for rows.Next() {
		var data string
		if err := rows.Scan(&data); err != nil {
			return nil, fmt.Errorf("store: list sessions: %w", err)
		}
		var e core.SessionEntry
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			return nil, fmt.Errorf("store: list sessions: an entry is not valid JSON: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list sessions: %w", err)
	}
	return out, nil
}

// DeleteSession removes the entry for key; its transcripts stay on disk.
func (s *SQLite) DeleteSession(ctx context.Context, key core.SessionKey) error {
	if _, err := s.writer.ExecContext(ctx, `DELETE FROM sessions WHERE key = ?`, string(key)); err != nil {
		return fmt.Errorf("store: delete session %s: %w", key, err)
	}
	return nil
}
