package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/switchboardhq/switchboard/store"
)

var _ store.ChannelAccess = (*Store)(nil)

const channelCodeColumns = `channel, account_id, code, sender_id, sender_name, created_at`

func scanChannelCode(r pgx.Row) (store.ChannelPairingCode, error) {
	var c store.ChannelPairingCode
	err := r.Scan(&c.Channel, &c.AccountID, &c.Code, &c.SenderID, &c.SenderName, &c.CreatedAt)
	return c, err
}

// CreateChannelPairingCode gives c.SenderID a pairing code (see
// store.SQLite.CreateChannelPairingCode for the rules). Instances creating
// codes for one channel and account at once take turns (a transaction
// advisory lock on the pair), so the cap and the one-code-per-sender rule
// hold across the cluster.
func (s *Store) CreateChannelPairingCode(ctx context.Context, c store.ChannelPairingCode, expiredBefore int64, max int, newCode func() string) (store.ChannelPairingCode, bool, error) {
	if c.Channel == "" || c.SenderID == "" {
		return store.ChannelPairingCode{}, false, errors.New("store: create pairing code: channel and sender id are required")
	}
	if c.CreatedAt == 0 {
		c.CreatedAt = s.nowMilli()
	}
	var (
		out     store.ChannelPairingCode
		created bool
	)
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('pairing:' || $1 || ':' || $2, 0))`, c.Channel, c.AccountID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM channel_pairing_codes WHERE created_at < $1`, expiredBefore); err != nil {
			return err
		}
		existing, err := scanChannelCode(tx.QueryRow(ctx, `SELECT `+channelCodeColumns+
			` FROM channel_pairing_codes WHERE channel = $1 AND account_id = $2 AND sender_id = $3`, c.Channel, c.AccountID, c.SenderID))
		if err == nil {
			out = existing
			return nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		var pending int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM channel_pairing_codes WHERE channel = $1 AND account_id = $2`,
			c.Channel, c.AccountID).Scan(&pending); err != nil {
			return err
		}
		if pending >= max {
			return nil
		}
		for range 16 {
			c.Code = strings.ToUpper(newCode())
			// A code another account of the channel holds is drawn again.
			tag, err := tx.Exec(ctx, `INSERT INTO channel_pairing_codes (`+channelCodeColumns+`) VALUES ($1, $2, $3, $4, $5, $6)
				ON CONFLICT (channel, code) DO NOTHING`, c.Channel, c.AccountID, c.Code, c.SenderID, c.SenderName, c.CreatedAt)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 1 {
				out, created = c, true
				return nil
			}
		}
		return errors.New("no free code after 16 draws")
	})
	if err != nil {
		return store.ChannelPairingCode{}, false, fmt.Errorf("store: create pairing code: %w", err)
	}
	return out, created, nil
}

// ListChannelPairingCodes returns the codes created at or after notBefore,
// newest first; channel "" lists every channel's.
func (s *Store) ListChannelPairingCodes(ctx context.Context, channel string, notBefore int64) ([]store.ChannelPairingCode, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+channelCodeColumns+` FROM channel_pairing_codes
		WHERE ($1 = '' OR channel = $1) AND created_at >= $2 ORDER BY created_at DESC, code`, channel, notBefore)
	if err != nil {
		return nil, fmt.Errorf("store: list pairing codes: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.ChannelPairingCode, error) { return scanChannelCode(r) })
	if err != nil {
		return nil, fmt.Errorf("store: list pairing codes: %w", err)
	}
	return out, nil
}

// ApproveChannelPairingCode approves a pending code (any case) created at
// or after notBefore: the code goes and its sender joins the approved
// senders, at at (zero: now). store.ErrUnknownPairingCode when there is
// no such code, also when another instance decided it a moment before.
func (s *Store) ApproveChannelPairingCode(ctx context.Context, channel, code string, notBefore, at int64) (store.ChannelSender, error) {
	if at == 0 {
		at = s.nowMilli()
	}
	var out store.ChannelSender
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// DELETE … RETURNING takes the row: of two approvals racing, one
		// gets it.
		c, err := scanChannelCode(tx.QueryRow(ctx, `DELETE FROM channel_pairing_codes
			WHERE channel = $1 AND code = $2 AND created_at >= $3 RETURNING `+channelCodeColumns,
			channel, strings.ToUpper(strings.TrimSpace(code)), notBefore))
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("%w %s on %s (it may have expired after an hour or been decided; list them with `switchboard pairing list`)", store.ErrUnknownPairingCode, code, channel)
		}
		if err != nil {
			return fmt.Errorf("store: approve pairing code: %w", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO channel_allowed_senders (channel, account_id, sender_id, sender_name, approved_at)
			VALUES ($1, $2, $3, $4, $5) ON CONFLICT (channel, account_id, sender_id) DO UPDATE SET sender_name = excluded.sender_name, approved_at = excluded.approved_at`,
			c.Channel, c.AccountID, c.SenderID, c.SenderName, at); err != nil {
			return fmt.Errorf("store: approve pairing code: %w", err)
		}
		out = store.ChannelSender{Channel: c.Channel, AccountID: c.AccountID, SenderID: c.SenderID, SenderName: c.SenderName, ApprovedAt: at}
		return nil
	})
	return out, err
}

// RejectChannelPairingCode removes a pending code without approving its
// sender. store.ErrUnknownPairingCode when there is no such code.
func (s *Store) RejectChannelPairingCode(ctx context.Context, channel, code string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM channel_pairing_codes WHERE channel = $1 AND code = $2`, channel, strings.ToUpper(strings.TrimSpace(code)))
	if err != nil {
		return fmt.Errorf("store: reject pairing code: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w %s on %s", store.ErrUnknownPairingCode, code, channel)
	}
	return nil
}

// ChannelSenderAllowed reports whether pairing approved senderID on the
// channel and account.
func (s *Store) ChannelSenderAllowed(ctx context.Context, channel, accountID, senderID string) (bool, error) {
	var ok bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM channel_allowed_senders WHERE channel = $1 AND account_id = $2 AND sender_id = $3)`,
		channel, accountID, senderID).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("store: check approved sender: %w", err)
	}
	return ok, nil
}

// ListChannelSenders returns the approved senders, newest first; channel
// "" lists every channel's.
func (s *Store) ListChannelSenders(ctx context.Context, channel string) ([]store.ChannelSender, error) {
	rows, err := s.pool.Query(ctx, `SELECT channel, account_id, sender_id, sender_name, approved_at FROM channel_allowed_senders
		WHERE ($1 = '' OR channel = $1) ORDER BY approved_at DESC, sender_id`, channel)
	if err != nil {
		return nil, fmt.Errorf("store: list approved senders: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.ChannelSender, error) {
		var c store.ChannelSender
		err := r.Scan(&c.Channel, &c.AccountID, &c.SenderID, &c.SenderName, &c.ApprovedAt)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: list approved senders: %w", err)
	}
	return out, nil
}

// RemoveChannelSender revokes a sender's pairing approval; removing one
// not approved is not an error.
func (s *Store) RemoveChannelSender(ctx context.Context, channel, accountID, senderID string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM channel_allowed_senders WHERE channel = $1 AND account_id = $2 AND sender_id = $3`,
		channel, accountID, senderID); err != nil {
		return fmt.Errorf("store: remove approved sender: %w", err)
	}
	return nil
}
