package store

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// stmtCache keeps one pool's prepared statements by query text, for the
// statements run on every message (the sessions index, the outbound
// ledger, stream positions). SQLite parses a statement each time it is
// prepared, and these were parsed per call: 7.7% of the daemon's CPU in
// the bench's load mode (issue 24). database/sql prepares a *sql.Stmt on
// each connection of the pool the first time it runs there. The queries
// are the methods' constants, so the cache is bounded by the code. Safe
// for concurrent use.
type stmtCache struct {
	db *sql.DB
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, m: map[string]*sql.Stmt{}}
}

// get returns the prepared form of query, preparing it on first use.
func (c *stmtCache) get(ctx context.Context, query string) (*sql.Stmt, error) {
	c.mu.Lock()
	st := c.m[query]
	c.mu.Unlock()
	if st != nil {
		return st, nil
	}
	st, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev := c.m[query]; prev != nil { // prepared meanwhile by another call
		_ = st.Close()
		return prev, nil
	}
	c.m[query] = st
	return st, nil
}

// queryRow is DB.QueryRowContext with query prepared once. A query that
// cannot be prepared runs unprepared, so its error reaches Scan.
func (c *stmtCache) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := c.get(ctx, query)
	if err != nil {
		return c.db.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

// exec is DB.ExecContext with query prepared once.
func (c *stmtCache) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := c.get(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// close closes the statements; call it before closing the pool.
func (c *stmtCache) close() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for q, st := range c.m {
		errs = append(errs, st.Close())
		delete(c.m, q)
	}
	return errors.Join(errs...)
}
