package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
)

// QueueSettings stores per-session queue overrides, set with a standalone
// /queue directive, as JSON opaque to the store, so they survive a restart.
type QueueSettings interface {
	// AllQueueSettings returns every stored override by session key; a
	// session without one is absent.
	AllQueueSettings(ctx context.Context) (map[core.SessionKey]json.RawMessage, error)
	// PutQueueSettings stores v as the override for key, replacing any
	// before it; a nil or empty v, or JSON null, deletes it.
	PutQueueSettings(ctx context.Context, key core.SessionKey, v json.RawMessage) error
}

var _ QueueSettings = (*SQLite)(nil)

// AllQueueSettings returns every stored override by session key.
func (s *SQLite) AllQueueSettings(ctx context.Context) (map[core.SessionKey]json.RawMessage, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT session_key, settings FROM session_queue_settings`)
	if err != nil {
		return nil, fmt.Errorf("store: queue settings: %w", err)
	}
	defer rows.Close()
	out := map[core.SessionKey]json.RawMessage{}
	for rows.Next() {
		var (
			key string
			v   []byte
		)
		if err := rows.Scan(&key, &v); err != nil {
			return nil, fmt.Errorf("store: queue settings: %w", err)
		}
		out[core.SessionKey(key)] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: queue settings: %w", err)
	}
	return out, nil
}

// PutQueueSettings stores v as the override for key; a nil or empty v, or
// JSON null, deletes it. v must be valid JSON.
func (s *SQLite) PutQueueSettings(ctx context.Context, key core.SessionKey, v json.RawMessage) error {
	if key == "" {
		return fmt.Errorf("store: put queue settings: session key is required")
	}
	v = bytes.TrimSpace(v)
	if len(v) == 0 || string(v) == "null" {
		if _, err := s.writer.ExecContext(ctx, `DELETE FROM session_queue_settings WHERE session_key = ?`, string(key)); err != nil {
			return fmt.Errorf("store: delete queue settings of %s: %w", key, err)
		}
		return nil
	}
	if !json.Valid(v) {
		return fmt.Errorf("store: put queue settings of %s: value is not valid JSON", key)
	}
	_, err := s.writer.ExecContext(ctx, `
		INSERT INTO session_queue_settings (session_key, settings, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (session_key) DO UPDATE SET settings = excluded.settings, updated_at = excluded.updated_at`,
		string(key), string(v), s.nowMilli())
	if err != nil {
		return fmt.Errorf("store: put queue settings of %s: %w", key, err)
	}
	return nil
}
