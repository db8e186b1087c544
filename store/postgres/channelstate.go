package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/switchboardhq/switchboard/store"
)

var _ store.ChannelState = (*Store)(nil)

// ChannelOffset returns a bridge's stored stream position ("" when none).
func (s *Store) ChannelOffset(ctx context.Context, channel, key string) (string, error) {
	var v string
	err := s.pool.QueryRow(ctx, `SELECT value FROM channel_offsets WHERE channel = $1 AND account_id = $2`, channel, key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("store: read %s offset: %w", channel, err)
	}
	return v, nil
}

// ChannelOffsets returns the positions of channel whose key starts with
// prefix, compared as a string (not a LIKE pattern).
func (s *Store) ChannelOffsets(ctx context.Context, channel, prefix string) (map[string]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT account_id, value FROM channel_offsets WHERE channel = $1 AND left(account_id, $2) = $3`,
		channel, len([]rune(prefix)), prefix)
	if err != nil {
		return nil, fmt.Errorf("store: read %s offsets: %w", channel, err)
	}
	out := map[string]string{}
	var k, v string
	if _, err := pgx.ForEachRow(rows, []any{&k, &v}, func() error { out[k] = v; return nil }); err != nil {
		return nil, fmt.Errorf("store: read %s offsets: %w", channel, err)
	}
	return out, nil
}

// SetChannelOffset stores a bridge's stream position.
func (s *Store) SetChannelOffset(ctx context.Context, channel, key, value string) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO channel_offsets (channel, account_id, value, updated_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (channel, account_id) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
		channel, key, value, s.nowMilli())
	if err != nil {
		return fmt.Errorf("store: write %s offset: %w", channel, err)
	}
	return nil
}

// Sent returns the platform message id recorded for an outbound key.
func (s *Store) Sent(ctx context.Context, key string) (string, bool, error) {
	var id string
	err := s.pool.QueryRow(ctx, `SELECT message_id FROM outbound_ledger WHERE key = $1`, key).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("store: read outbound ledger: %w", err)
	}
	return id, true, nil
}

// Record stores the platform message id sent for an outbound key;
// recording a key again keeps the first id.
func (s *Store) Record(ctx context.Context, key, messageID string) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO outbound_ledger (key, message_id, created_at) VALUES ($1, $2, $3) ON CONFLICT (key) DO NOTHING`,
		key, messageID, s.nowMilli())
	if err != nil {
		return fmt.Errorf("store: write outbound ledger: %w", err)
	}
	return nil
}

// pruneChunk is how many rows one pruning statement deletes at most, so a
// prune never holds locks on a week of rows at once.
const pruneChunk = 1000

// PruneLedger removes ledger rows recorded before the cutoff (unix ms), in
// statements of at most pruneChunk rows, and returns how many went; what
// it deleted before a failure stays deleted and is counted.
func (s *Store) PruneLedger(ctx context.Context, before int64) (int64, error) {
	return s.pruneChunked(ctx, "outbound ledger", `DELETE FROM outbound_ledger WHERE key IN (
		SELECT key FROM outbound_ledger WHERE created_at < $1 ORDER BY created_at LIMIT $2)`, before)
}

func (s *Store) pruneChunked(ctx context.Context, what, query string, before int64) (int64, error) {
	var total int64
	for {
		tag, err := s.pool.Exec(ctx, query, before, pruneChunk)
		if err != nil {
			return total, fmt.Errorf("store: prune %s: %w", what, err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < pruneChunk {
			return total, nil
		}
	}
}
