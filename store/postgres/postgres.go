// Package postgres is the state store on PostgreSQL (store.driver:
// postgres): the interfaces of package store over a pgx connection pool,
// with its own migrations (store/migrations/postgres), so that several
// Switchboard instances can share one database. What each method promises
// is what the interface in package store says; the conformance suite in
// store/storetest holds both implementations to it.
//
// Values the store keeps opaque (JSON documents) are text columns, not
// jsonb: a method hands back the bytes it was given.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchboardhq/switchboard/store"
)

var _ store.Store = (*Store)(nil)

// Options tune Open. The zero value is ready to use.
type Options struct {
	// Now is the clock for the timestamps the store writes; nil means
	// time.Now.
	Now func() time.Time
	// MaxConns bounds the connection pool; 0 keeps the URL's
	// pool_max_conns, or else pgxpool's default (4, or the number of
	// cores if more).
	MaxConns int32
}

// Store is the PostgreSQL state store. Its methods are safe for concurrent
// use; each runs its statements on a pooled connection and returns once
// PostgreSQL has answered, bounded by the caller's ctx.
type Store struct {
	pool *pgxpool.Pool
	now  func() time.Time
	// dbClock: no clock was injected, so leases and the instance registry
	// take the database server's time, which every instance shares.
	dbClock bool

	closeOnce sync.Once
}

// Open connects to the database at url (a libpq URL or key=value string),
// applies the migrations it is missing, several instances starting
// together applying each once (an advisory lock), and returns the store.
// If the database was migrated by a newer Switchboard, Open fails with an
// error wrapping store.ErrSchemaTooNew and changes nothing. Errors never
// contain the URL's password. ctx bounds the connecting and migrating;
// it is not retained.
func Open(ctx context.Context, url string, o Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("store: postgres: the database URL does not parse (%v); give a libpq URL (postgres://user@host:5432/db) or key=value string", redactParseError(err))
	}
	if o.MaxConns > 0 {
		cfg.MaxConns = o.MaxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: postgres: %w", err)
	}
	s := &Store{pool: pool, now: o.Now}
	if s.now == nil {
		s.now, s.dbClock = time.Now, true
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: postgres: cannot reach %s:%d as %s: %w", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.User, err)
	}
	if _, err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	if _, err := pool.Exec(ctx, `INSERT INTO meta (key, value) VALUES ('created_at', $1) ON CONFLICT (key) DO NOTHING`,
		strconv.FormatInt(s.nowMilli(), 10)); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: postgres: write created_at: %w", err)
	}
	return s, nil
}

// redactParseError is what pgx's parse error says was wrong, without the
// connection string it quotes (pgx masks passwords there on a best-effort
// basis only): the text after "cannot parse `…`: ".
func redactParseError(err error) string {
	var pe *pgconn.ParseConfigError
	if !errors.As(err, &pe) {
		return "invalid connection string"
	}
	msg := pe.Error()
	if i := strings.LastIndex(msg, "`: "); i >= 0 && !strings.Contains(msg[i:], pe.ConnString) {
		return msg[i+3:]
	}
	return "invalid connection string"
}

// Ping reports whether the database can be reached.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("store: postgres: %w", err)
	}
	return nil
}

// SchemaVersion returns the highest migration applied.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	if err := s.pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&v); err != nil {
		return 0, fmt.Errorf("store: postgres: schema version: %w", err)
	}
	return v, nil
}

// Close closes the pool, waiting for connections in use to be returned.
// Calls after the first do nothing and return nil.
func (s *Store) Close() error {
	s.closeOnce.Do(s.pool.Close)
	return nil
}

func (s *Store) nowMilli() int64 { return s.now().UnixMilli() }
