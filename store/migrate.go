package store

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strconv"
	"time"
)

// sqliteMigrations holds the SQLite schema, one file per step.
//
//go:embed migrations/sqlite/*.sql
var sqliteMigrations embed.FS

const sqliteMigrationsDir = "migrations/sqlite"

// migrationName is NNNN_name.sql: a 4-digit version and a lower-case name.
var migrationName = regexp.MustCompile(`^([0-9]{4})_([a-z0-9][a-z0-9_]*)\.sql$`)

// Migration is one schema step: a file NNNN_name.sql of a migrations
// folder (migrations/sqlite here, migrations/postgres for store/postgres).
type Migration struct {
	// Version is NNNN: 1, 2, … without gaps.
	Version int
	// Name is the file's name without version and extension: "meta".
	Name string
	// File is the path inside the FS, for error messages.
	File string
	// SQL is the file's content, applied in one transaction.
	SQL string
}

// LoadMigrations reads the migrations in dir of fsys, sorted by version.
// Every entry of dir must be a migration file, versions must start at 0001
// and be consecutive, so a misnamed or missing file is found at build/test
// time instead of silently skipped. It does no IO beyond fsys.
func LoadMigrations(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir) // sorted by file name
	if err != nil {
		return nil, fmt.Errorf("store: read migrations %s: %w", dir, err)
	}
	var migs []Migration
	for _, e := range entries {
		file := path.Join(dir, e.Name())
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil || e.IsDir() {
			return nil, fmt.Errorf("store: migration %s: name must look like 0001_name.sql (4-digit version, lower-case name)", file)
		}
		version, _ := strconv.Atoi(m[1]) // the pattern guarantees digits
		want := len(migs) + 1
		switch {
		case len(migs) > 0 && version == migs[len(migs)-1].Version:
			return nil, fmt.Errorf("store: migration %s: version %04d is also used by %s", file, version, migs[len(migs)-1].File)
		case version != want:
			return nil, fmt.Errorf("store: migration %s: expected version %04d next; versions start at 0001 and have no gaps", file, want)
		}
		body, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, fmt.Errorf("store: migration %s: %w", file, err)
		}
		migs = append(migs, Migration{Version: version, Name: m[2], File: file, SQL: string(body)})
	}
	if len(migs) == 0 {
		return nil, fmt.Errorf("store: no migrations in %s", dir)
	}
	return migs, nil
}

// migrate brings the database at dbPath, reached through db, up to the newest
// migration in dir of fsys and returns the resulting schema version. db must
// begin transactions with BEGIN IMMEDIATE (the writer pool), so two migrating
// connections could never both read the old version.
//
// Each migration runs in its own transaction together with its schema_version
// row: a failing migration leaves the database at the previous version. A
// database that is newer than the newest migration is left untouched.
func migrate(ctx context.Context, db *sql.DB, fsys fs.FS, dir, dbPath string) (int, error) {
	migs, err := LoadMigrations(fsys, dir)
	if err != nil {
		return 0, err
	}
	newest := migs[len(migs)-1].Version

	current, err := prepareBookkeeping(ctx, db, dbPath)
	if err != nil {
		return 0, err
	}
	if current > newest {
		return current, fmt.Errorf("%w: %s has schema version %d, newer than this switchboard supports (%d); upgrade switchboard or use a different stateDir",
			ErrSchemaTooNew, dbPath, current, newest)
	}

	for _, m := range migs[current:] {
		if err := applyMigration(ctx, db, m); err != nil {
			return current, fmt.Errorf("store: migrate %s: %s: %w", dbPath, m.File, err)
		}
		current = m.Version
	}
	return current, nil
}

// prepareBookkeeping creates schema_version in a fresh database and returns the
// highest version recorded. It refuses a database that has tables of its own
// but no schema_version: that is not a Switchboard state store, and
// migrating it would write into someone else's file.
func prepareBookkeeping(ctx context.Context, db *sql.DB, dbPath string) (version int, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("store: migrate %s: begin: %w", dbPath, err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()

	var hasBookkeeping, others int
	err = tx.QueryRowContext(ctx, `
		SELECT
			count(*) FILTER (WHERE name = 'schema_version'),
			count(*) FILTER (WHERE name <> 'schema_version')
		FROM sqlite_schema
		WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\'`).Scan(&hasBookkeeping, &others)
	if err != nil {
		return 0, fmt.Errorf("store: migrate %s: read schema: %w", dbPath, err)
	}
	if hasBookkeeping == 0 {
		if others > 0 {
			return 0, fmt.Errorf("store: %s is not a switchboard state database (it has tables but no schema_version); use a different stateDir", dbPath)
		}
		if _, err := tx.ExecContext(ctx, `
			CREATE TABLE schema_version (
				version    INTEGER PRIMARY KEY,
				name       TEXT NOT NULL,
				applied_at INTEGER NOT NULL
			)`); err != nil {
			return 0, fmt.Errorf("store: migrate %s: create schema_version: %w", dbPath, err)
		}
	}
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&version); err != nil {
		return 0, fmt.Errorf("store: migrate %s: read schema_version: %w", dbPath, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("store: migrate %s: commit: %w", dbPath, err)
	}
	return version, nil
}

func applyMigration(ctx context.Context, db *sql.DB, m Migration) (err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)`,
		m.Version, m.Name, time.Now().UnixMilli()); err != nil {
		return fmt.Errorf("record version: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}
