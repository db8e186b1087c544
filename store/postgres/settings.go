package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/store"
)

var (
	_ store.QueueSettings  = (*Store)(nil)
	_ store.SchedulerState = (*Store)(nil)
)

// AllQueueSettings returns every stored override by session key.
func (s *Store) AllQueueSettings(ctx context.Context) (map[core.SessionKey]json.RawMessage, error) {
	rows, err := s.pool.Query(ctx, `SELECT session_key, settings FROM session_queue_settings`)
	if err != nil {
		return nil, fmt.Errorf("store: queue settings: %w", err)
	}
	out := map[core.SessionKey]json.RawMessage{}
	var key, v string
	_, err = pgx.ForEachRow(rows, []any{&key, &v}, func() error {
		out[core.SessionKey(key)] = json.RawMessage(v)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: queue settings: %w", err)
	}
	return out, nil
}

// PutQueueSettings stores v as the override for key; a nil or empty v, or
// JSON null, deletes it. v must be valid JSON.
func (s *Store) PutQueueSettings(ctx context.Context, key core.SessionKey, v json.RawMessage) error {
	if key == "" {
		return errors.New("store: put queue settings: session key is required")
	}
	v = bytes.TrimSpace(v)
	if len(v) == 0 || string(v) == "null" {
		if _, err := s.pool.Exec(ctx, `DELETE FROM session_queue_settings WHERE session_key = $1`, string(key)); err != nil {
			return fmt.Errorf("store: delete queue settings of %s: %w", key, err)
		}
		return nil
	}
	if !json.Valid(v) {
		return fmt.Errorf("store: put queue settings of %s: value is not valid JSON", key)
	}
	_, err := s.pool.Exec(ctx, `
		INSERT INTO session_queue_settings (session_key, settings, updated_at) VALUES ($1, $2, $3)
		ON CONFLICT (session_key) DO UPDATE SET settings = excluded.settings, updated_at = excluded.updated_at`,
		string(key), string(v), s.nowMilli())
	if err != nil {
		return fmt.Errorf("store: put queue settings of %s: %w", key, err)
	}
	return nil
}

// SchedulerValue returns the value stored under key.
func (s *Store) SchedulerValue(ctx context.Context, key string) (json.RawMessage, bool, error) {
	var v string
	err := s.pool.QueryRow(ctx, `SELECT value FROM scheduler_state WHERE key = $1`, key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("store: read scheduler state %s: %w", key, err)
	}
	return json.RawMessage(v), true, nil
}

// PutSchedulerValue stores v under key, replacing any value before it.
func (s *Store) PutSchedulerValue(ctx context.Context, key string, v json.RawMessage) error {
	if !json.Valid(v) {
		return fmt.Errorf("store: scheduler state %s: value is not valid JSON", key)
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO scheduler_state (key, value, updated_at) VALUES ($1, $2, $3)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`, key, string(v), s.nowMilli())
	if err != nil {
		return fmt.Errorf("store: write scheduler state %s: %w", key, err)
	}
	return nil
}
