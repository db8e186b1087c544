package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"unicode/utf8"
)

// ChannelState is the bridges' delivery state: where each bridge read its
// platform's stream up to, and the outbound ledger of the reply chunks it
// sent (bridges.ChannelState and bridges.Ledger are the bridges' views of
// it), with the ledger's pruning.
type ChannelState interface {
	// ChannelOffset returns the position stored for channel and key, ""
	// when none.
	ChannelOffset(ctx context.Context, channel, key string) (string, error)
	// ChannelOffsets returns the positions of channel whose key starts
	// with prefix, literally (no wildcards), by key.
	ChannelOffsets(ctx context.Context, channel, prefix string) (map[string]string, error)
	// SetChannelOffset stores the position for channel and key,
	// replacing the one before.
	SetChannelOffset(ctx context.Context, channel, key, value string) error
	// Sent returns the platform message id recorded for an outbound key.
	Sent(ctx context.Context, key string) (string, bool, error)
	// Record stores the platform message id sent for an outbound key;
	// recording a key again keeps the first id.
	Record(ctx context.Context, key, messageID string) error
	// PruneLedger removes ledger rows recorded before the cutoff (unix
	// ms) and returns how many went.
	PruneLedger(ctx context.Context, before int64) (int64, error)
}

var _ ChannelState = (*SQLite)(nil)

// ChannelOffset returns a bridge's stored stream position ("" when none).
func (s *SQLite) ChannelOffset(ctx context.Context, channel, accountID string) (string, error) {
	var v string
	err := s.rq.queryRow(ctx, `SELECT value FROM channel_offsets WHERE channel = ? AND account_id = ?`, channel, accountID).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("store: read %s offset: %w", channel, err)
	}
	return v, nil
}

// ChannelOffsets returns the stored positions of channel whose account ID
// starts with prefix, by account ID: a bridge that keeps one position per
// chat (Discord's newest message per channel) stores them under
// "<account>/<chat>" keys.
func (s *SQLite) ChannelOffsets(ctx context.Context, channel, prefix string) (map[string]string, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT account_id, value FROM channel_offsets WHERE channel = ? AND substr(account_id, 1, ?) = ?`,
		channel, utf8.RuneCountInString(prefix), prefix) // substr counts characters
	if err != nil {
		return nil, fmt.Errorf("store: read %s offsets: %w", channel, err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, fmt.Errorf("store: read %s offsets: %w", channel, err)
		}
		out[k] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: read %s offsets: %w", channel, err)
	}
	return out, nil
}

// SetChannelOffset stores a bridge's stream position.
func (s *SQLite) SetChannelOffset(ctx context.Context, channel, accountID, value string) error {
	_, err := s.wq.exec(ctx, `INSERT INTO channel_offsets (channel, account_id, value, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (channel, account_id) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
		channel, accountID, value, s.nowMilli())
	if err != nil {
		return fmt.Errorf("store: write %s offset: %w", channel, err)
	}
	return nil
}

// Sent returns the platform message id recorded for an outbound key
// (bridges.Ledger).
func (s *SQLite) Sent(ctx context.Context, key string) (string, bool, error) {
	var id string
	err := s.rq.queryRow(ctx, `SELECT message_id FROM outbound_ledger WHERE key = ?`, key).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("store: read outbound ledger: %w", err)
	}
	return id, true, nil
}

// Record stores the platform message id sent for an outbound key
// (bridges.Ledger). Recording a key again keeps the first id.
func (s *SQLite) Record(ctx context.Context, key, messageID string) error {
	_, err := s.wq.exec(ctx, `INSERT INTO outbound_ledger (key, message_id, created_at) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING`,
		key, messageID, s.nowMilli())
	if err != nil {
		return fmt.Errorf("store: write outbound ledger: %w", err)
	}
	return nil
}

// sqlPruneLedger deletes at most ?2 ledger rows recorded before ?1 (unix
// ms). INDEXED BY pins the index on created_at, so a prune never scans the
// table.
const sqlPruneLedger = `DELETE FROM outbound_ledger WHERE rowid IN (
	SELECT rowid FROM outbound_ledger INDEXED BY outbound_ledger_created WHERE created_at < ?1 LIMIT ?2)`

// PruneLedger removes ledger rows recorded before the cutoff (unix ms) and
// returns how many went. Like [SQLite.PruneJournal] it deletes in short
// transactions of at most pruneChunk rows, so a week of busy deliveries
// never holds the writer for long; if it fails or ctx ends part way, what
// it deleted so far stays deleted and is counted.
func (s *SQLite) PruneLedger(ctx context.Context, before int64) (int64, error) {
	return s.pruneChunked(ctx, "outbound ledger", sqlPruneLedger, before)
}
