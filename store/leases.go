package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Lease is a named right held by one owner until it expires: the right to
// run a session's turns ("session:<key>") or to hold a platform connection
// that must be unique ("conn:<channel>/<account>"). Leases are how several
// instances sharing one database agree on who does what.
type Lease struct {
	// Name is what the lease is for.
	Name string
	// Owner is the instance holding it; "" after it was released.
	Owner string
	// Fence increases every time the lease changes hands (and never
	// otherwise), so a write carrying an older Fence comes from a holder
	// that lost the lease; the store refuses it (see [Fence]).
	Fence int64
	// AcquiredAt is when Owner took it, ExpiresAt when it lapses unless
	// renewed, both in unix milliseconds of the store's clock.
	AcquiredAt, ExpiresAt int64
}

// Held reports whether the lease has an owner and has not expired at now
// (unix milliseconds).
func (l Lease) Held(now int64) bool { return l.Owner != "" && l.ExpiresAt > now }

// Fence is a lease holding a write depends on: the write commits only if
// the lease Name is still held at Fence. A fence check takes the lease row
// for the transaction, so a take-over waits for the write to end rather
// than overtaking it.
type Fence struct {
	Name  string
	Fence int64
}

// ErrFenced is wrapped by the error of a write whose [Fence] no longer
// holds: the lease was taken over by another owner or released. Nothing of
// the write was applied; the caller has lost the lease and must stop
// acting on it.
var ErrFenced = errors.New("store: lease lost (fenced out)")

// Leases keeps named leases with fencing tokens. All times are the store's
// clock (for PostgreSQL, the database server's unless a clock was
// injected), so instances with skewed clocks still agree on expiry. Every
// method is safe for concurrent use from any goroutine and from several
// processes sharing the database; each is one short transaction bounded by
// ctx.
type Leases interface {
	// AcquireLease gives name to owner for ttl when nobody holds it, it
	// expired, it was released, or owner holds it already (then its expiry
	// is extended and its Fence kept). Otherwise ok is false and the
	// returned Lease is the current holder's. Taking a lease from anyone,
	// including a release, increments Fence. Of several owners racing for
	// a free lease, exactly one gets it.
	AcquireLease(ctx context.Context, name, owner string, ttl time.Duration) (l Lease, ok bool, err error)
	// RenewLease extends l for ttl from now if l.Owner still holds l.Name
	// at l.Fence (an expiry nobody took over is forgiven: no one else
	// wrote in between). ok false means the lease was lost: stop.
	RenewLease(ctx context.Context, l Lease, ttl time.Duration) (Lease, bool, error)
	// ReleaseLease gives l up at once, if still held at l.Fence by
	// l.Owner, so another owner can take it without waiting for expiry.
	// Releasing a lost lease does nothing and is not an error.
	ReleaseLease(ctx context.Context, l Lease) error
	// ListLeases returns the leases whose names start with prefix ("" for
	// all), held or not, ordered by name.
	ListLeases(ctx context.Context, prefix string) ([]Lease, error)
}

// Instance is one running Switchboard process as the shared store knows
// it, for `switchboard cluster status`.
type Instance struct {
	// ID names this process (one run of it): a new ID every start.
	ID string
	// Name is the operator's name for the instance (cluster.instanceName,
	// default the host name).
	Name string
	// Info is what the instance says about itself (version, address,
	// pid), as JSON opaque to the store.
	Info []byte
	// StartedAt and HeartbeatAt are unix milliseconds of the store's
	// clock; StoppedAt is non-zero once it stopped cleanly.
	StartedAt, HeartbeatAt, StoppedAt int64
}

// Instances is the registry of running instances. Safe for concurrent use.
type Instances interface {
	// PutInstance records in (creating it, or updating Name, Info and
	// StoppedAt) and sets its HeartbeatAt to now; StartedAt is set on
	// creation and kept after. It returns the stored record.
	PutInstance(ctx context.Context, in Instance) (Instance, error)
	// ListInstances returns every recorded instance, by StartedAt.
	ListInstances(ctx context.Context) ([]Instance, error)
	// PruneInstances deletes the instances whose last heartbeat is before
	// the unix milliseconds before, and reports how many.
	PruneInstances(ctx context.Context, before int64) (int, error)
}

// ValidateLease rejects a lease request the store would only fail on
// later and less clearly. Every implementation calls it first.
func ValidateLease(name, owner string, ttl time.Duration) error {
	switch {
	case name == "" || len(name) > 512:
		return fmt.Errorf("store: lease name %q: must be 1 to 512 bytes", name)
	case owner == "" || len(owner) > 256:
		return fmt.Errorf("store: lease %s: owner %q must be 1 to 256 bytes", name, owner)
	case ttl < time.Millisecond:
		return fmt.Errorf("store: lease %s: ttl %s is below one millisecond", name, ttl)
	}
	return nil
}

var (
	_ Leases    = (*SQLite)(nil)
	_ Instances = (*SQLite)(nil)
)

// sqlAcquireLease takes or extends a lease in one statement: the upsert's
// WHERE lets the update happen only when the row is free, expired,
// released or already the owner's. Parameters: name, owner, now, expires.
const sqlAcquireLease = `
INSERT INTO leases (name, owner, fence, acquired_at, expires_at) VALUES (?1, ?2, 1, ?3, ?4)
ON CONFLICT (name) DO UPDATE SET
    fence       = CASE WHEN leases.owner = excluded.owner THEN leases.fence ELSE leases.fence + 1 END,
    acquired_at = CASE WHEN leases.owner = excluded.owner THEN leases.acquired_at ELSE excluded.acquired_at END,
    owner       = excluded.owner,
    expires_at  = excluded.expires_at
WHERE leases.owner = excluded.owner OR leases.owner = '' OR leases.expires_at <= excluded.acquired_at
RETURNING owner, fence, acquired_at, expires_at`

// AcquireLease implements Leases.
func (s *SQLite) AcquireLease(ctx context.Context, name, owner string, ttl time.Duration) (Lease, bool, error) {
	if err := ValidateLease(name, owner, ttl); err != nil {
		return Lease{}, false, err
	}
	now := s.nowMilli()
	l := Lease{Name: name}
	err := s.writer.QueryRowContext(ctx, sqlAcquireLease, name, owner, now, now+ttl.Milliseconds()).
		Scan(&l.Owner, &l.Fence, &l.AcquiredAt, &l.ExpiresAt)
	if err == nil {
		return l, true, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return Lease{}, false, fmt.Errorf("store: acquire lease %s: %w", name, err)
	}
	cur, err := s.lease(ctx, name)
	return cur, false, err
}

func (s *SQLite) lease(ctx context.Context, name string) (Lease, error) {
	l := Lease{Name: name}
	err := s.writer.QueryRowContext(ctx, `SELECT owner, fence, acquired_at, expires_at FROM leases WHERE name = ?`, name).
		Scan(&l.Owner, &l.Fence, &l.AcquiredAt, &l.ExpiresAt)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return Lease{}, fmt.Errorf("store: read lease %s: %w", name, err)
	}
	return l, nil
}

// RenewLease implements Leases.
func (s *SQLite) RenewLease(ctx context.Context, l Lease, ttl time.Duration) (Lease, bool, error) {
	if err := ValidateLease(l.Name, l.Owner, ttl); err != nil {
		return Lease{}, false, err
	}
	now := s.nowMilli()
	res, err := s.writer.ExecContext(ctx, `UPDATE leases SET expires_at = ? WHERE name = ? AND owner = ? AND fence = ?`,
		now+ttl.Milliseconds(), l.Name, l.Owner, l.Fence)
	if err != nil {
		return Lease{}, false, fmt.Errorf("store: renew lease %s: %w", l.Name, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		cur, err := s.lease(ctx, l.Name)
		return cur, false, err
	}
	l.ExpiresAt = now + ttl.Milliseconds()
	return l, true, nil
}

// ReleaseLease implements Leases.
func (s *SQLite) ReleaseLease(ctx context.Context, l Lease) error {
	_, err := s.writer.ExecContext(ctx, `UPDATE leases SET owner = '', expires_at = ? WHERE name = ? AND owner = ? AND fence = ?`,
		s.nowMilli(), l.Name, l.Owner, l.Fence)
	if err != nil {
		return fmt.Errorf("store: release lease %s: %w", l.Name, err)
	}
	return nil
}

// ListLeases implements Leases.
func (s *SQLite) ListLeases(ctx context.Context, prefix string) ([]Lease, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT name, owner, fence, acquired_at, expires_at FROM leases
		WHERE substr(name, 1, length(?1)) = ?1 ORDER BY name`, prefix)
	if err != nil {
		return nil, fmt.Errorf("store: list leases: %w", err)
	}
	defer rows.Close()
	var out []Lease
	for rows.Next() {
		var l Lease
		if err := rows.Scan(&l.Name, &l.Owner, &l.Fence, &l.AcquiredAt, &l.ExpiresAt); err != nil {
			return nil, fmt.Errorf("store: list leases: %w", err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list leases: %w", err)
	}
	return out, nil
}

// checkFences refuses the transaction tx unless every fence holds.
func checkFences(ctx context.Context, tx *sql.Tx, fences []Fence) error {
	for _, f := range fences {
		var fence int64
		err := tx.QueryRowContext(ctx, `SELECT fence FROM leases WHERE name = ? AND owner <> ''`, f.Name).Scan(&fence)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("store: check lease %s: %w", f.Name, err)
		}
		if err != nil || fence != f.Fence {
			return FencedError(f, fence)
		}
	}
	return nil
}

// FencedError is the error for a write under f when the lease is now at
// fence (0: released or never taken). It wraps [ErrFenced].
func FencedError(f Fence, fence int64) error {
	if fence == 0 {
		return fmt.Errorf("%w: %s was released; this write held fence %d", ErrFenced, f.Name, f.Fence)
	}
	return fmt.Errorf("%w: %s is at fence %d, this write held %d", ErrFenced, f.Name, fence, f.Fence)
}

// PutInstance implements Instances.
func (s *SQLite) PutInstance(ctx context.Context, in Instance) (Instance, error) {
	if err := ValidateInstance(in); err != nil {
		return Instance{}, err
	}
	now := s.nowMilli()
	err := s.writer.QueryRowContext(ctx, `INSERT INTO instances (id, name, info, started_at, heartbeat_at, stopped_at)
		VALUES (?1, ?2, ?3, ?4, ?4, ?5)
		ON CONFLICT (id) DO UPDATE SET name = excluded.name, info = excluded.info,
			heartbeat_at = excluded.heartbeat_at, stopped_at = excluded.stopped_at
		RETURNING started_at, heartbeat_at`, in.ID, in.Name, string(in.Info), now, in.StoppedAt).
		Scan(&in.StartedAt, &in.HeartbeatAt)
	if err != nil {
		return Instance{}, fmt.Errorf("store: put instance %s: %w", in.ID, err)
	}
	return in, nil
}

// ValidateInstance rejects an instance record without id or name, or with
// either over 256 bytes. Every implementation calls it first.
func ValidateInstance(in Instance) error {
	if in.ID == "" || len(in.ID) > 256 || strings.TrimSpace(in.Name) == "" || len(in.Name) > 256 {
		return fmt.Errorf("store: instance %q named %q: id and name must be 1 to 256 bytes", in.ID, in.Name)
	}
	return nil
}

// ListInstances implements Instances.
func (s *SQLite) ListInstances(ctx context.Context) ([]Instance, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT id, name, info, started_at, heartbeat_at, stopped_at FROM instances ORDER BY started_at, id`)
	if err != nil {
		return nil, fmt.Errorf("store: list instances: %w", err)
	}
	defer rows.Close()
	var out []Instance
	for rows.Next() {
		var in Instance
		var info string
		if err := rows.Scan(&in.ID, &in.Name, &info, &in.StartedAt, &in.HeartbeatAt, &in.StoppedAt); err != nil {
			return nil, fmt.Errorf("store: list instances: %w", err)
		}
		in.Info = []byte(info)
		out = append(out, in)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list instances: %w", err)
	}
	return out, nil
}

// PruneInstances implements Instances.
func (s *SQLite) PruneInstances(ctx context.Context, before int64) (int, error) {
	res, err := s.writer.ExecContext(ctx, `DELETE FROM instances WHERE heartbeat_at < ?`, before)
	if err != nil {
		return 0, fmt.Errorf("store: prune instances: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}
