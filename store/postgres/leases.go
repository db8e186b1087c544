package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboardhq/switchboard/store"
)

var (
	_ store.Leases    = (*Store)(nil)
	_ store.Instances = (*Store)(nil)
)

// sqlNow is the lease clock in unix milliseconds: the injected clock's
// reading when $1 is not NULL, else the server's.
const sqlNow = `coalesce($1::bigint, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint)`

// leaseNow is the $1 of statements using sqlNow.
func (s *Store) leaseNow() *int64 {
	if s.dbClock {
		return nil
	}
	ms := s.nowMilli()
	return &ms
}

// AcquireLease implements store.Leases in one upsert: its WHERE lets the
// update happen only when the row is free, expired, released or already
// the owner's; a racing insert of the same name waits for the first and
// then finds it held.
func (s *Store) AcquireLease(ctx context.Context, name, owner string, ttl time.Duration) (store.Lease, bool, error) {
	if err := store.ValidateLease(name, owner, ttl); err != nil {
		return store.Lease{}, false, err
	}
	l := store.Lease{Name: name}
	err := s.pool.QueryRow(ctx, `
		WITH clock AS (SELECT `+sqlNow+` AS ms)
		INSERT INTO leases (name, owner, fence, acquired_at, expires_at)
		SELECT $2, $3, 1, ms, ms + $4 FROM clock
		ON CONFLICT (name) DO UPDATE SET
			fence       = CASE WHEN leases.owner = excluded.owner THEN leases.fence ELSE leases.fence + 1 END,
			acquired_at = CASE WHEN leases.owner = excluded.owner THEN leases.acquired_at ELSE excluded.acquired_at END,
			owner       = excluded.owner,
			expires_at  = excluded.expires_at
		WHERE leases.owner = excluded.owner OR leases.owner = '' OR leases.expires_at <= excluded.acquired_at
		RETURNING owner, fence, acquired_at, expires_at`,
		s.leaseNow(), name, owner, ttl.Milliseconds()).Scan(&l.Owner, &l.Fence, &l.AcquiredAt, &l.ExpiresAt)
	if err == nil {
		return l, true, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return store.Lease{}, false, fmt.Errorf("store: acquire lease %s: %w", name, err)
	}
	cur, err := s.lease(ctx, name)
	return cur, false, err
}

func (s *Store) lease(ctx context.Context, name string) (store.Lease, error) {
	l := store.Lease{Name: name}
	err := s.pool.QueryRow(ctx, `SELECT owner, fence, acquired_at, expires_at FROM leases WHERE name = $1`, name).
		Scan(&l.Owner, &l.Fence, &l.AcquiredAt, &l.ExpiresAt)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return store.Lease{}, fmt.Errorf("store: read lease %s: %w", name, err)
	}
	return l, nil
}

// RenewLease implements store.Leases.
func (s *Store) RenewLease(ctx context.Context, l store.Lease, ttl time.Duration) (store.Lease, bool, error) {
	if err := store.ValidateLease(l.Name, l.Owner, ttl); err != nil {
		return store.Lease{}, false, err
	}
	err := s.pool.QueryRow(ctx, `UPDATE leases SET expires_at = `+sqlNow+` + $5
		WHERE name = $2 AND owner = $3 AND fence = $4 RETURNING expires_at`,
		s.leaseNow(), l.Name, l.Owner, l.Fence, ttl.Milliseconds()).Scan(&l.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		cur, err := s.lease(ctx, l.Name)
		return cur, false, err
	}
	if err != nil {
		return store.Lease{}, false, fmt.Errorf("store: renew lease %s: %w", l.Name, err)
	}
	return l, true, nil
}

// ReleaseLease implements store.Leases.
func (s *Store) ReleaseLease(ctx context.Context, l store.Lease) error {
	_, err := s.pool.Exec(ctx, `UPDATE leases SET owner = '', expires_at = `+sqlNow+`
		WHERE name = $2 AND owner = $3 AND fence = $4`, s.leaseNow(), l.Name, l.Owner, l.Fence)
	if err != nil {
		return fmt.Errorf("store: release lease %s: %w", l.Name, err)
	}
	return nil
}

// ListLeases implements store.Leases.
func (s *Store) ListLeases(ctx context.Context, prefix string) ([]store.Lease, error) {
	rows, err := s.pool.Query(ctx, `SELECT name, owner, fence, acquired_at, expires_at FROM leases
		WHERE left(name, length($1)) = $1 ORDER BY name COLLATE "C"`, prefix)
	if err != nil {
		return nil, fmt.Errorf("store: list leases: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Lease, error) {
		var l store.Lease
		err := r.Scan(&l.Name, &l.Owner, &l.Fence, &l.AcquiredAt, &l.ExpiresAt)
		return l, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: list leases: %w", err)
	}
	return out, nil
}

// checkFences refuses the transaction unless every fence holds. Each lease
// row is locked FOR SHARE until tx ends, so a take-over (an UPDATE of the
// row) waits for this write instead of overtaking it.
func checkFences(ctx context.Context, tx pgx.Tx, fences []store.Fence) error {
	for _, f := range fences {
		var fence int64
		err := tx.QueryRow(ctx, `SELECT fence FROM leases WHERE name = $1 AND owner <> '' FOR SHARE`, f.Name).Scan(&fence)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("store: check lease %s: %w", f.Name, err)
		}
		if err != nil || fence != f.Fence {
			return store.FencedError(f, fence)
		}
	}
	return nil
}

// PutInstance implements store.Instances.
func (s *Store) PutInstance(ctx context.Context, in store.Instance) (store.Instance, error) {
	if err := store.ValidateInstance(in); err != nil {
		return store.Instance{}, err
	}
	err := s.pool.QueryRow(ctx, `
		WITH clock AS (SELECT `+sqlNow+` AS ms)
		INSERT INTO instances (id, name, info, started_at, heartbeat_at, stopped_at)
		SELECT $2, $3, $4, ms, ms, $5 FROM clock
		ON CONFLICT (id) DO UPDATE SET name = excluded.name, info = excluded.info,
			heartbeat_at = excluded.heartbeat_at, stopped_at = excluded.stopped_at
		RETURNING started_at, heartbeat_at`,
		s.leaseNow(), in.ID, in.Name, string(in.Info), in.StoppedAt).Scan(&in.StartedAt, &in.HeartbeatAt)
	if err != nil {
		return store.Instance{}, fmt.Errorf("store: put instance %s: %w", in.ID, err)
	}
	return in, nil
}

// ListInstances implements store.Instances.
func (s *Store) ListInstances(ctx context.Context) ([]store.Instance, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, name, info, started_at, heartbeat_at, stopped_at FROM instances ORDER BY started_at, id`)
	if err != nil {
		return nil, fmt.Errorf("store: list instances: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Instance, error) {
		var in store.Instance
		var info string
		err := r.Scan(&in.ID, &in.Name, &info, &in.StartedAt, &in.HeartbeatAt, &in.StoppedAt)
		in.Info = []byte(info)
		return in, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: list instances: %w", err)
	}
	return out, nil
}

// PruneInstances implements store.Instances.
func (s *Store) PruneInstances(ctx context.Context, before int64) (int, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM instances WHERE heartbeat_at < $1`, before)
	if err != nil {
		return 0, fmt.Errorf("store: prune instances: %w", err)
	}
	return int(tag.RowsAffected()), nil
}
