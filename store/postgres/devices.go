package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/switchboardhq/switchboard/store"
)

var _ store.Devices = (*Store)(nil)

// orNow returns at, or the store's clock when at is zero.
func (s *Store) orNow(at int64) int64 {
	if at == 0 {
		return s.nowMilli()
	}
	return at
}

const deviceColumns = `id, public_key, role, scopes, client_id, client_mode, platform,
	device_family, display_name, remote, paired_at, last_seen_at`

func scanDevice(r pgx.Row) (store.Device, error) {
	var (
		d      store.Device
		scopes string
	)
	err := r.Scan(&d.ID, &d.PublicKey, &d.Role, &scopes, &d.ClientID, &d.ClientMode, &d.Platform,
		&d.DeviceFamily, &d.DisplayName, &d.Remote, &d.PairedAt, &d.LastSeenAt)
	if err != nil {
		return store.Device{}, err
	}
	if d.Scopes, err = store.ParseScopes(scopes); err != nil {
		return store.Device{}, fmt.Errorf("device %s: %w", d.ID, err)
	}
	return d, nil
}

// GetDevice returns the paired device with id, and false if there is none.
func (s *Store) GetDevice(ctx context.Context, id string) (store.Device, bool, error) {
	d, err := scanDevice(s.pool.QueryRow(ctx, `SELECT `+deviceColumns+` FROM devices WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Device{}, false, nil
	}
	if err != nil {
		return store.Device{}, false, fmt.Errorf("store: get device %s: %w", id, err)
	}
	return d, true, nil
}

// ListDevices returns every paired device, most recently paired first.
func (s *Store) ListDevices(ctx context.Context) ([]store.Device, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+deviceColumns+` FROM devices ORDER BY paired_at DESC, id`)
	if err != nil {
		return nil, fmt.Errorf("store: list devices: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Device, error) { return scanDevice(r) })
	if err != nil {
		return nil, fmt.Errorf("store: list devices: %w", err)
	}
	return out, nil
}

// sqlPutDevice upserts a device in place: its tokens stay.
const sqlPutDevice = `INSERT INTO devices (` + deviceColumns + `)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
	ON CONFLICT (id) DO UPDATE SET
		public_key = excluded.public_key, role = excluded.role, scopes = excluded.scopes,
		client_id = excluded.client_id, client_mode = excluded.client_mode,
		platform = excluded.platform, device_family = excluded.device_family,
		display_name = excluded.display_name, remote = excluded.remote,
		paired_at = excluded.paired_at, last_seen_at = excluded.last_seen_at`

// execer is the pool or a transaction.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

func putDevice(ctx context.Context, db execer, d store.Device) error {
	_, err := db.Exec(ctx, sqlPutDevice,
		d.ID, d.PublicKey, d.Role, store.ScopesJSON(d.Scopes), d.ClientID, d.ClientMode, d.Platform,
		d.DeviceFamily, d.DisplayName, d.Remote, d.PairedAt, d.LastSeenAt)
	return err
}

// PutDevice pairs d, or replaces every field of the paired device d.ID; a
// zero PairedAt is set to the store's clock.
func (s *Store) PutDevice(ctx context.Context, d store.Device) error {
	if err := store.ValidateDevice("put device", d); err != nil {
		return err
	}
	d.PairedAt = s.orNow(d.PairedAt)
	if err := putDevice(ctx, s.pool, d); err != nil {
		return fmt.Errorf("store: put device %s: %w", d.ID, err)
	}
	return nil
}

// TouchDevice sets the device's LastSeenAt to at unless it is already
// later.
func (s *Store) TouchDevice(ctx context.Context, id string, at int64) error {
	tag, err := s.pool.Exec(ctx, `UPDATE devices SET last_seen_at = GREATEST(last_seen_at, $1) WHERE id = $2`, s.orNow(at), id)
	if err != nil {
		return fmt.Errorf("store: touch device %s: %w", id, err)
	}
	return affectedOne(tag, "touch device", id, store.ErrUnknownDevice)
}

// affectedOne turns a statement that matched no row into an error wrapping
// unknown.
func affectedOne(tag pgconn.CommandTag, op, id string, unknown error) error {
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w: %s %q", unknown, op, id)
	}
	return nil
}

// RemoveDevice unpairs the device; the cascade deletes its tokens, and its
// pending request goes in the same transaction.
func (s *Store) RemoveDevice(ctx context.Context, id string) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM devices WHERE id = $1`, id)
		if err != nil {
			return fmt.Errorf("store: remove device %s: %w", id, err)
		}
		if err := affectedOne(tag, "remove device", id, store.ErrUnknownDevice); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM pairing_requests WHERE device_id = $1`, id); err != nil {
			return fmt.Errorf("store: remove device %s: pairing request: %w", id, err)
		}
		return nil
	})
}

const pairingColumns = `request_id, device, ip, created_at`

func scanPairingRequest(r pgx.Row) (store.PairingRequest, error) {
	var (
		pr   store.PairingRequest
		data string
	)
	if err := r.Scan(&pr.RequestID, &data, &pr.IP, &pr.CreatedAt); err != nil {
		return store.PairingRequest{}, err
	}
	d, err := store.UnmarshalPairingDevice([]byte(data))
	if err != nil {
		return store.PairingRequest{}, fmt.Errorf("pairing request %s: stored device is not valid JSON: %w", pr.RequestID, err)
	}
	pr.Device = d
	return pr, nil
}

// CreatePairingRequest records r (a RequestID is made when empty, a zero
// CreatedAt is now), unless the device already has a pending request,
// which is returned instead with false. Requests are created one at a
// time across instances (a transaction advisory lock), so the cap and one
// request per device hold.
func (s *Store) CreatePairingRequest(ctx context.Context, r store.PairingRequest) (store.PairingRequest, bool, error) {
	if err := store.ValidateDevice("create pairing request", r.Device); err != nil {
		return store.PairingRequest{}, false, err
	}
	if r.RequestID == "" {
		r.RequestID = store.NewRequestID()
	} else if !store.ValidRequestID(r.RequestID) {
		return store.PairingRequest{}, false, fmt.Errorf("store: create pairing request: request id %q is not 1 to 128 URL-safe characters (A-Z a-z 0-9 - _)", r.RequestID)
	}
	r.CreatedAt = s.orNow(r.CreatedAt)
	r.Device.Scopes = store.NormalizeScopes(r.Device.Scopes)
	r.Device.PairedAt, r.Device.LastSeenAt = 0, 0
	data, err := store.MarshalPairingDevice(r.Device)
	if err != nil {
		return store.PairingRequest{}, false, fmt.Errorf("store: create pairing request for %s: %w", r.Device.ID, err)
	}
	var (
		out     store.PairingRequest
		created bool
	)
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('device-pairing', 0))`); err != nil {
			return fmt.Errorf("store: create pairing request for %s: %w", r.Device.ID, err)
		}
		existing, err := scanPairingRequest(tx.QueryRow(ctx,
			`SELECT `+pairingColumns+` FROM pairing_requests WHERE device_id = $1`, r.Device.ID))
		if err == nil {
			out = existing
			return nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("store: create pairing request for %s: %w", r.Device.ID, err)
		}
		var pending int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM pairing_requests`).Scan(&pending); err != nil {
			return fmt.Errorf("store: create pairing request for %s: %w", r.Device.ID, err)
		}
		if pending >= store.MaxPendingPairingRequests {
			return fmt.Errorf("%w: %d are pending; approve or reject them, or wait for them to expire", store.ErrTooManyPairingRequests, pending)
		}
		if _, err := tx.Exec(ctx,
			`INSERT INTO pairing_requests (request_id, device_id, device, ip, created_at) VALUES ($1, $2, $3, $4, $5)`,
			r.RequestID, r.Device.ID, string(data), r.IP, r.CreatedAt); err != nil {
			return fmt.Errorf("store: create pairing request for %s: %w", r.Device.ID, err)
		}
		out, created = r, true
		return nil
	})
	if err != nil {
		return store.PairingRequest{}, false, err
	}
	return out, created, nil
}

// ListPairingRequests returns the pending requests, newest first.
func (s *Store) ListPairingRequests(ctx context.Context) ([]store.PairingRequest, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+pairingColumns+` FROM pairing_requests ORDER BY created_at DESC, request_id`)
	if err != nil {
		return nil, fmt.Errorf("store: list pairing requests: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.PairingRequest, error) { return scanPairingRequest(r) })
	if err != nil {
		return nil, fmt.Errorf("store: list pairing requests: %w", err)
	}
	return out, nil
}

// ApprovePairing pairs the request's device with scopes at at and deletes
// the request; of two approvals racing, the one that deletes the request
// pairs. The device's LastSeenAt is the later of its previous one and the
// request's creation.
func (s *Store) ApprovePairing(ctx context.Context, requestID string, scopes []string, at int64) (store.Device, error) {
	at = s.orNow(at)
	var d store.Device
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		pr, err := scanPairingRequest(tx.QueryRow(ctx,
			`DELETE FROM pairing_requests WHERE request_id = $1 RETURNING `+pairingColumns, requestID))
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("%w: approve %q", store.ErrUnknownPairingRequest, requestID)
		}
		if err != nil {
			return fmt.Errorf("store: approve pairing %s: %w", requestID, err)
		}
		d = pr.Device
		d.Scopes = store.NormalizeScopes(scopes)
		d.PairedAt = at
		d.LastSeenAt = pr.CreatedAt
		var seen int64
		err = tx.QueryRow(ctx, `SELECT last_seen_at FROM devices WHERE id = $1`, d.ID).Scan(&seen)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("store: approve pairing %s: %w", requestID, err)
		}
		d.LastSeenAt = max(d.LastSeenAt, seen)
		if err := store.ValidateDevice("approve pairing "+requestID, d); err != nil {
			return err
		}
		if err := putDevice(ctx, tx, d); err != nil {
			return fmt.Errorf("store: approve pairing %s: %w", requestID, err)
		}
		return nil
	})
	if err != nil {
		return store.Device{}, err
	}
	return d, nil
}

// RejectPairing deletes the pending request.
func (s *Store) RejectPairing(ctx context.Context, requestID string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM pairing_requests WHERE request_id = $1`, requestID)
	if err != nil {
		return fmt.Errorf("store: reject pairing %s: %w", requestID, err)
	}
	return affectedOne(tag, "reject", requestID, store.ErrUnknownPairingRequest)
}

// PrunePairingRequests deletes the requests created before the cutoff.
func (s *Store) PrunePairingRequests(ctx context.Context, before int64) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM pairing_requests WHERE created_at < $1`, before)
	if err != nil {
		return 0, fmt.Errorf("store: prune pairing requests: %w", err)
	}
	return tag.RowsAffected(), nil
}

// pairedGrant reads the role and scopes device id was paired with, inside
// tx, and locks the device's row: token operations on one device take
// turns, so the cap on its live tokens holds however many instances issue.
func pairedGrant(ctx context.Context, tx pgx.Tx, op, id string) (role string, scopes []string, err error) {
	var raw string
	err = tx.QueryRow(ctx, `SELECT role, scopes FROM devices WHERE id = $1 FOR UPDATE`, id).Scan(&role, &raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil, fmt.Errorf("%w: %s %q", store.ErrUnknownDevice, op, id)
	}
	if err != nil {
		return "", nil, fmt.Errorf("store: %s %s: %w", op, id, err)
	}
	if scopes, err = store.ParseScopes(raw); err != nil {
		return "", nil, fmt.Errorf("store: %s %s: %w", op, id, err)
	}
	return role, scopes, nil
}

// insertToken stores a new token's hash for deviceID, keeps the device
// within store.MaxDeviceTokens, and returns the token.
func insertToken(ctx context.Context, tx pgx.Tx, op, deviceID, role string, scopes []string, at int64) (string, error) {
	token := store.NewSecretToken()
	if _, err := tx.Exec(ctx,
		`INSERT INTO device_tokens (token_hash, device_id, role, scopes, issued_at) VALUES ($1, $2, $3, $4, $5)`,
		store.TokenHash(token), deviceID, role, store.ScopesJSON(scopes), at); err != nil {
		return "", fmt.Errorf("store: %s %s: %w", op, deviceID, err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM device_tokens WHERE device_id = $1 AND token_hash NOT IN (
		SELECT token_hash FROM device_tokens WHERE device_id = $1 ORDER BY issued_at DESC, seq DESC LIMIT $2)`,
		deviceID, store.MaxDeviceTokens); err != nil {
		return "", fmt.Errorf("store: %s %s: %w", op, deviceID, err)
	}
	return token, nil
}

// IssueDeviceToken creates a token granting role and scopes to the paired
// device and returns it; only its hash is stored.
func (s *Store) IssueDeviceToken(ctx context.Context, deviceID, role string, scopes []string, at int64) (string, error) {
	at = s.orNow(at)
	scopes = store.NormalizeScopes(scopes)
	var token string
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		pairedRole, paired, err := pairedGrant(ctx, tx, "issue device token", deviceID)
		if err != nil {
			return err
		}
		if role != pairedRole {
			return fmt.Errorf("%w: device %s was paired as %s, not %s", store.ErrExceedsGrant, deviceID, pairedRole, role)
		}
		for _, sc := range scopes {
			if _, ok := slices.BinarySearch(paired, sc); !ok {
				return fmt.Errorf("%w: device %s was not granted scope %s", store.ErrExceedsGrant, deviceID, sc)
			}
		}
		token, err = insertToken(ctx, tx, "issue device token", deviceID, role, scopes, at)
		return err
	})
	if err != nil {
		return "", err
	}
	return token, nil
}

// CheckDeviceToken returns what token grants: its scopes as issued,
// intersected with the device's current scopes, provided the device's role
// is still the one the token was issued for. No error names the token or
// its hash.
func (s *Store) CheckDeviceToken(ctx context.Context, token string) (store.IssuedToken, bool, error) {
	if !store.IsSecretTokenShaped(token) {
		return store.IssuedToken{}, false, nil
	}
	var (
		it                   store.IssuedToken
		tokenScopes, devRole string
		devScopes            string
	)
	err := s.pool.QueryRow(ctx, `
		SELECT t.device_id, t.role, t.scopes, t.issued_at, d.role, d.scopes
		FROM device_tokens AS t JOIN devices AS d ON d.id = t.device_id
		WHERE t.token_hash = $1`, store.TokenHash(token)).
		Scan(&it.DeviceID, &it.Role, &tokenScopes, &it.IssuedAt, &devRole, &devScopes)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.IssuedToken{}, false, nil
	}
	if err != nil {
		return store.IssuedToken{}, false, fmt.Errorf("store: check device token: %w", err)
	}
	if it.Role != devRole {
		return store.IssuedToken{}, false, nil
	}
	granted, err := store.ParseScopes(tokenScopes)
	if err != nil {
		return store.IssuedToken{}, false, fmt.Errorf("store: check device token of %s: %w", it.DeviceID, err)
	}
	paired, err := store.ParseScopes(devScopes)
	if err != nil {
		return store.IssuedToken{}, false, fmt.Errorf("store: check device token of %s: %w", it.DeviceID, err)
	}
	it.Scopes = slices.DeleteFunc(granted, func(sc string) bool {
		_, ok := slices.BinarySearch(paired, sc)
		return !ok
	})
	return it, true, nil
}

// RotateDeviceToken revokes the device's tokens and issues one with its
// paired role and scopes.
func (s *Store) RotateDeviceToken(ctx context.Context, deviceID string, at int64) (string, error) {
	at = s.orNow(at)
	var token string
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		role, scopes, err := pairedGrant(ctx, tx, "rotate device token", deviceID)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM device_tokens WHERE device_id = $1`, deviceID); err != nil {
			return fmt.Errorf("store: rotate device token %s: %w", deviceID, err)
		}
		token, err = insertToken(ctx, tx, "rotate device token", deviceID, role, scopes, at)
		return err
	})
	if err != nil {
		return "", err
	}
	return token, nil
}

// RevokeDeviceTokens deletes all of the device's tokens and returns how
// many there were.
func (s *Store) RevokeDeviceTokens(ctx context.Context, deviceID string) (int64, error) {
	var n int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, _, err := pairedGrant(ctx, tx, "revoke device tokens", deviceID); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM device_tokens WHERE device_id = $1`, deviceID)
		if err != nil {
			return fmt.Errorf("store: revoke device tokens %s: %w", deviceID, err)
		}
		n = tag.RowsAffected()
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
