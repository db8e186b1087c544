package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/migrations"
)

// migrateLockKey is the advisory lock instances starting together take
// around migrating, so each migration is applied once: the others wait,
// then find it applied.
const migrateLockKey int64 = 0x5357_4254_4d49_4752 // "SWBTMIGR"

// migrate applies the migrations the database is missing, each in its own
// transaction with its schema_version row, under the advisory lock, and
// returns the resulting version. A database with tables but no
// schema_version is not ours and is refused; one newer than this binary is
// left untouched.
func (s *Store) migrate(ctx context.Context) (version int, err error) {
	migs, err := store.LoadMigrations(migrations.Postgres, migrations.PostgresDir)
	if err != nil {
		return 0, err
	}
	newest := migs[len(migs)-1].Version
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return 0, fmt.Errorf("store: postgres: migrate: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrateLockKey); err != nil {
		return 0, fmt.Errorf("store: postgres: migrate: lock: %w", err)
	}
	defer func() {
		// A session lock outlives a failed unlock on a pooled connection:
		// close that connection rather than return it locked.
		uctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, uerr := conn.Exec(uctx, `SELECT pg_advisory_unlock($1)`, migrateLockKey); uerr != nil {
			_ = conn.Conn().Close(uctx)
		}
	}()

	var hasBookkeeping bool
	var others int
	if err := conn.QueryRow(ctx, `
		SELECT count(*) FILTER (WHERE table_name = 'schema_version') > 0,
		       count(*) FILTER (WHERE table_name <> 'schema_version')
		FROM information_schema.tables
		WHERE table_schema = current_schema()`).Scan(&hasBookkeeping, &others); err != nil {
		return 0, fmt.Errorf("store: postgres: migrate: read schema: %w", err)
	}
	if !hasBookkeeping {
		if others > 0 {
			return 0, errors.New("store: postgres: the database has tables but no schema_version, so it is not a Switchboard store; point store.url at an empty database")
		}
		if _, err := conn.Exec(ctx, `CREATE TABLE schema_version (
			version    INTEGER PRIMARY KEY,
			name       TEXT    NOT NULL,
			applied_at BIGINT  NOT NULL)`); err != nil {
			return 0, fmt.Errorf("store: postgres: migrate: create schema_version: %w", err)
		}
	}
	if err := conn.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&version); err != nil {
		return 0, fmt.Errorf("store: postgres: migrate: read schema_version: %w", err)
	}
	if version > newest {
		return version, fmt.Errorf("%w: the database has schema version %d, newer than this switchboard supports (%d); upgrade switchboard",
			store.ErrSchemaTooNew, version, newest)
	}
	for _, m := range migs[version:] {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_version (version, name, applied_at) VALUES ($1, $2, $3)`,
				m.Version, m.Name, s.nowMilli())
			return err
		})
		if err != nil {
			return version, fmt.Errorf("store: postgres: migrate: %s: %w", m.File, err)
		}
		version = m.Version
	}
	return version, nil
}
