package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// ChannelPairingCode is a pending direct-message pairing code: a sender a
// bridge does not know asked for access and was given Code.
type ChannelPairingCode struct {
	// Channel is the bridge ("telegram", ...).
	Channel string
	// AccountID is the bot account the sender wrote to.
	AccountID string
	// Code is what the owner approves, upper case.
	Code string
	// SenderID is the platform id of the sender.
	SenderID string
	// SenderName is a display name, for the owner's list.
	SenderName string
	// CreatedAt is when the code was made, in Unix milliseconds.
	CreatedAt int64
}

// ChannelSender is a sender approved by pairing.
type ChannelSender struct {
	// Channel, AccountID and SenderID identify the sender.
	Channel, AccountID, SenderID string
	// SenderName is the display name when the code was approved.
	SenderName string
	// ApprovedAt is when, in Unix milliseconds.
	ApprovedAt int64
}

// ErrUnknownPairingCode is returned when a code is not pending (never
// issued, expired, or already decided).
var ErrUnknownPairingCode = errors.New("store: unknown pairing code")

const channelCodeColumns = `channel, account_id, code, sender_id, sender_name, created_at`

func scanChannelCode(r interface{ Scan(...any) error }) (ChannelPairingCode, error) {
	var c ChannelPairingCode
	err := r.Scan(&c.Channel, &c.AccountID, &c.Code, &c.SenderID, &c.SenderName, &c.CreatedAt)
	return c, err
}

// CreateChannelPairingCode gives c.SenderID a pairing code on c.Channel and
// c.AccountID, in one transaction:
//
//   - codes created before expiredBefore are deleted first;
//   - a sender with a pending code gets it back, with created false (the
//     code is sent only once);
//   - when max codes are pending for the channel and account, nothing is
//     created: the zero code and false (extra requests are ignored);
//   - otherwise a new code from newCode is stored (a code already in use on
//     the channel is drawn again) and returned with created true.
//
// A zero c.CreatedAt means now.
func (s *SQLite) CreateChannelPairingCode(ctx context.Context, c ChannelPairingCode, expiredBefore int64, max int, newCode func() string) (ChannelPairingCode, bool, error) {
	if c.Channel == "" || c.SenderID == "" {
		return ChannelPairingCode{}, false, errors.New("store: create pairing code: channel and sender id are required")
	}
	c.CreatedAt = s.orNow(c.CreatedAt)
	var (
		out     ChannelPairingCode
		created bool
	)
	err := s.withTx(ctx, "create pairing code", func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM channel_pairing_codes WHERE created_at < ?`, expiredBefore); err != nil {
			return fmt.Errorf("store: create pairing code: %w", err)
		}
		existing, err := scanChannelCode(tx.QueryRowContext(ctx, `SELECT `+channelCodeColumns+
			` FROM channel_pairing_codes WHERE channel = ? AND account_id = ? AND sender_id = ?`, c.Channel, c.AccountID, c.SenderID))
		if err == nil {
			out = existing
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("store: create pairing code: %w", err)
		}
		var pending int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM channel_pairing_codes WHERE channel = ? AND account_id = ?`,
			c.Channel, c.AccountID).Scan(&pending); err != nil {
			return fmt.Errorf("store: create pairing code: %w", err)
		}
		if pending >= max {
			return nil
		}
		for range 16 {
			c.Code = strings.ToUpper(newCode())
			var taken int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM channel_pairing_codes WHERE channel = ? AND code = ?`,
				c.Channel, c.Code).Scan(&taken); err != nil {
				return fmt.Errorf("store: create pairing code: %w", err)
			}
			if taken == 0 {
				if _, err := tx.ExecContext(ctx, `INSERT INTO channel_pairing_codes (`+channelCodeColumns+`) VALUES (?, ?, ?, ?, ?, ?)`,
					c.Channel, c.AccountID, c.Code, c.SenderID, c.SenderName, c.CreatedAt); err != nil {
					return fmt.Errorf("store: create pairing code: %w", err)
				}
				out, created = c, true
				return nil
			}
		}
		return errors.New("store: create pairing code: no free code after 16 draws")
	})
	if err != nil {
		return ChannelPairingCode{}, false, err
	}
	return out, created, nil
}

// ListChannelPairingCodes returns the codes created at or after notBefore,
// newest first; channel "" lists every channel's.
func (s *SQLite) ListChannelPairingCodes(ctx context.Context, channel string, notBefore int64) ([]ChannelPairingCode, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT `+channelCodeColumns+` FROM channel_pairing_codes
		WHERE (? = '' OR channel = ?) AND created_at >= ? ORDER BY created_at DESC, code`, channel, channel, notBefore)
	if err != nil {
		return nil, fmt.Errorf("store: list pairing codes: %w", err)
	}
	defer rows.Close()
	var out []ChannelPairingCode
	for rows.Next() {
		c, err := scanChannelCode(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list pairing codes: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// ApproveChannelPairingCode approves a pending code (matched without
// regard to case) created at or after notBefore: the code is removed and
// its sender added to the channel's approved senders, approved at at (zero
// means now). ErrUnknownPairingCode when there is no such code.
func (s *SQLite) ApproveChannelPairingCode(ctx context.Context, channel, code string, notBefore, at int64) (ChannelSender, error) {
	at = s.orNow(at)
	var out ChannelSender
	err := s.withTx(ctx, "approve pairing code", func(tx *sql.Tx) error {
		c, err := scanChannelCode(tx.QueryRowContext(ctx, `SELECT `+channelCodeColumns+
			` FROM channel_pairing_codes WHERE channel = ? AND code = ? AND created_at >= ?`, channel, strings.ToUpper(strings.TrimSpace(code)), notBefore))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w %s on %s (it may have expired after an hour or been decided; list them with `switchboard pairing list`)", ErrUnknownPairingCode, code, channel)
		}
		if err != nil {
			return fmt.Errorf("store: approve pairing code: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM channel_pairing_codes WHERE channel = ? AND code = ?`, c.Channel, c.Code); err != nil {
			return fmt.Errorf("store: approve pairing code: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO channel_allowed_senders (channel, account_id, sender_id, sender_name, approved_at)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT (channel, account_id, sender_id) DO UPDATE SET sender_name = excluded.sender_name, approved_at = excluded.approved_at`,
			c.Channel, c.AccountID, c.SenderID, c.SenderName, at); err != nil {
			return fmt.Errorf("store: approve pairing code: %w", err)
		}
		out = ChannelSender{Channel: c.Channel, AccountID: c.AccountID, SenderID: c.SenderID, SenderName: c.SenderName, ApprovedAt: at}
		return nil
	})
	return out, err
}

// RejectChannelPairingCode removes a pending code without approving its
// sender. ErrUnknownPairingCode when there is no such code.
func (s *SQLite) RejectChannelPairingCode(ctx context.Context, channel, code string) error {
	res, err := s.writer.ExecContext(ctx, `DELETE FROM channel_pairing_codes WHERE channel = ? AND code = ?`, channel, strings.ToUpper(strings.TrimSpace(code)))
	if err != nil {
		return fmt.Errorf("store: reject pairing code: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%w %s on %s", ErrUnknownPairingCode, code, channel)
	}
	return nil
}

// ChannelSenderAllowed reports whether pairing approved senderID on the
// channel and account.
func (s *SQLite) ChannelSenderAllowed(ctx context.Context, channel, accountID, senderID string) (bool, error) {
	var n int
	err := s.reader.QueryRowContext(ctx, `SELECT count(*) FROM channel_allowed_senders WHERE channel = ? AND account_id = ? AND sender_id = ?`,
		channel, accountID, senderID).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("store: check approved sender: %w", err)
	}
	return n > 0, nil
}

// ListChannelSenders returns the approved senders, newest first; channel ""
// lists every channel's.
func (s *SQLite) ListChannelSenders(ctx context.Context, channel string) ([]ChannelSender, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT channel, account_id, sender_id, sender_name, approved_at FROM channel_allowed_senders
		WHERE (? = '' OR channel = ?) ORDER BY approved_at DESC, sender_id`, channel, channel)
	if err != nil {
		return nil, fmt.Errorf("store: list approved senders: %w", err)
	}
	defer rows.Close()
	var out []ChannelSender
	for rows.Next() {
		var c ChannelSender
		if err := rows.Scan(&c.Channel, &c.AccountID, &c.SenderID, &c.SenderName, &c.ApprovedAt); err != nil {
			return nil, fmt.Errorf("store: list approved senders: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// RemoveChannelSender revokes a sender's pairing approval. Removing a
// sender that is not approved is not an error.
func (s *SQLite) RemoveChannelSender(ctx context.Context, channel, accountID, senderID string) error {
	if _, err := s.writer.ExecContext(ctx, `DELETE FROM channel_allowed_senders WHERE channel = ? AND account_id = ? AND sender_id = ?`,
		channel, accountID, senderID); err != nil {
		return fmt.Errorf("store: remove approved sender: %w", err)
	}
	return nil
}

// ChannelAccess is the DM pairing part of the store, for the gateway's
// pairing.* methods and the bridges' gate.
//
// Every method is safe for concurrent use, also by several instances of
// one database, and does its work in one transaction.
type ChannelAccess interface {
	// CreateChannelPairingCode gives c.SenderID a code on c.Channel and
	// c.AccountID: codes created before expiredBefore go first; a sender
	// with a pending code gets it back (created false); with max codes
	// pending nothing is created (the zero code, false); otherwise a
	// code from newCode, upper-cased and drawn again while the channel
	// has it, is stored (created true). A zero c.CreatedAt means now.
	CreateChannelPairingCode(ctx context.Context, c ChannelPairingCode, expiredBefore int64, max int, newCode func() string) (ChannelPairingCode, bool, error)
	// ListChannelPairingCodes returns the codes created at or after
	// notBefore, newest first; channel "" lists every channel's.
	ListChannelPairingCodes(ctx context.Context, channel string, notBefore int64) ([]ChannelPairingCode, error)
	// ApproveChannelPairingCode approves a pending code (any case)
	// created at or after notBefore, once: the code goes and its sender
	// joins the approved senders at at (zero: now). ErrUnknownPairingCode
	// when there is no such code.
	ApproveChannelPairingCode(ctx context.Context, channel, code string, notBefore, at int64) (ChannelSender, error)
	// RejectChannelPairingCode removes a pending code without approving
	// its sender; ErrUnknownPairingCode when there is none.
	RejectChannelPairingCode(ctx context.Context, channel, code string) error
	// ChannelSenderAllowed reports whether pairing approved senderID on
	// the channel and account.
	ChannelSenderAllowed(ctx context.Context, channel, accountID, senderID string) (bool, error)
	// ListChannelSenders returns the approved senders, newest first;
	// channel "" lists every channel's.
	ListChannelSenders(ctx context.Context, channel string) ([]ChannelSender, error)
	// RemoveChannelSender revokes a sender's approval; removing one not
	// approved is not an error.
	RemoveChannelSender(ctx context.Context, channel, accountID, senderID string) error
}

var _ ChannelAccess = (*SQLite)(nil)
