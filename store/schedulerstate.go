package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// SchedulerState keeps small named values of the heartbeat runner (its
// last event, the last alert for the duplicate check, task run times, the
// on/off switch) as JSON opaque to the store.
type SchedulerState interface {
	// SchedulerValue returns the value stored under key.
	SchedulerValue(ctx context.Context, key string) (json.RawMessage, bool, error)
	// PutSchedulerValue stores v under key, replacing any value before it.
	PutSchedulerValue(ctx context.Context, key string, v json.RawMessage) error
}

var _ SchedulerState = (*SQLite)(nil)

// SchedulerValue returns the value stored under key.
func (s *SQLite) SchedulerValue(ctx context.Context, key string) (json.RawMessage, bool, error) {
	var v []byte
	err := s.reader.QueryRowContext(ctx, `SELECT value FROM scheduler_state WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("store: read scheduler state %s: %w", key, err)
	}
	return v, true, nil
}

// PutSchedulerValue stores v under key.
func (s *SQLite) PutSchedulerValue(ctx context.Context, key string, v json.RawMessage) error {
	if !json.Valid(v) {
		return fmt.Errorf("store: scheduler state %s: value is not valid JSON", key)
	}
	_, err := s.writer.ExecContext(ctx, `INSERT INTO scheduler_state (key, value, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`, key, []byte(v), s.nowMilli())
	if err != nil {
		return fmt.Errorf("store: write scheduler state %s: %w", key, err)
	}
	return nil
}
