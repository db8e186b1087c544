package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// openStore opens a store in dir and closes it when the test ends.
func openStore(t *testing.T, dir string) *SQLite {
	t.Helper()
	s, err := Open(t.Context(), dir)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// latestVersion is the newest embedded migration, the version a fresh store
// reaches.
func latestVersion(t *testing.T) int {
	t.Helper()
	ms, err := LoadMigrations(sqliteMigrations, sqliteMigrationsDir)
	if err != nil || len(ms) == 0 {
		t.Fatalf("embedded migrations: %v", err)
	}
	return len(ms)
}

// closeStore closes s now, failing the test on error.
func closeStore(t *testing.T, s *SQLite) {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// rawDB opens the database at path without the store, for tests that tamper
// with it; the state dir lock does not stop it.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestOpenFresh(t *testing.T) {
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "state") // does not exist yet
	s := openStore(t, dir)

	if want := filepath.Join(dir, "state.db"); s.Path() != want {
		t.Errorf("Path() = %q, want %q", s.Path(), want)
	}
	if err := s.Ping(ctx); err != nil {
		t.Errorf("Ping: %v", err)
	}
	v, err := s.SchemaVersion(ctx)
	if latest := latestVersion(t); err != nil || v != latest {
		t.Errorf("SchemaVersion() = %d, %v; want %d", v, err, latest)
	}

	var name string
	var appliedAt int64
	if err := s.reader.QueryRowContext(ctx, `SELECT name, applied_at FROM schema_version WHERE version = 1`).Scan(&name, &appliedAt); err != nil {
		t.Fatal(err)
	}
	if name != "meta" || appliedAt <= 0 {
		t.Errorf("schema_version 1 = (%q, %d), want (meta, unix ms)", name, appliedAt)
	}
	if got := createdAt(t, s); got <= 0 {
		t.Errorf("meta created_at = %d", got)
	}

	if runtime.GOOS != "windows" {
		for path, want := range map[string]os.FileMode{
			dir:                                    0o700 | os.ModeDir,
			s.Path():                               0o600,
			filepath.Join(dir, "switchboard.lock"): 0o600,
		} {
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode() != want {
				t.Errorf("mode of %s = %v, want %v", path, fi.Mode(), want)
			}
		}
	}
	pid, err := os.ReadFile(filepath.Join(dir, "switchboard.lock"))
	if err != nil || strings.TrimSpace(string(pid)) != strconv.Itoa(os.Getpid()) {
		t.Errorf("lock file holds %q, %v; want our pid %d", pid, err, os.Getpid())
	}
}

// TestOpenPragmas checks every connection of both pools, not just the first
// one a query happens to get.
func TestOpenPragmas(t *testing.T) {
	ctx := t.Context()
	s := openStore(t, t.TempDir())

	common := map[string]string{
		"journal_mode": "wal",
		"foreign_keys": "1",
		"busy_timeout": "5000",
		"synchronous":  "1", // NORMAL
	}
	for _, pool := range []struct {
		name  string
		db    *sql.DB
		conns int
		extra map[string]string
	}{
		{"writer", s.writer, 1, map[string]string{"query_only": "0"}},
		{"reader", s.reader, readerConns, map[string]string{"query_only": "1"}},
	} {
		var held []*sql.Conn
		for range pool.conns {
			c, err := pool.db.Conn(ctx)
			if err != nil {
				t.Fatalf("%s: %v", pool.name, err)
			}
			held = append(held, c)
		}
		for i, c := range held {
			for _, want := range []map[string]string{common, pool.extra} {
				for pragma, value := range want {
					var got string
					if err := c.QueryRowContext(ctx, "PRAGMA "+pragma).Scan(&got); err != nil {
						t.Fatalf("%s conn %d: PRAGMA %s: %v", pool.name, i, pragma, err)
					}
					if !strings.EqualFold(got, value) {
						t.Errorf("%s conn %d: %s = %q, want %q", pool.name, i, pragma, got, value)
					}
				}
			}
		}
		for _, c := range held {
			c.Close()
		}
	}

	if _, err := s.reader.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('x', 'y')`); err == nil {
		t.Error("write through the reader pool succeeded; want query_only to refuse it")
	}
}

func TestReopenIsIdempotent(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := openStore(t, dir)
	created := createdAt(t, s)
	closeStore(t, s)

	s = openStore(t, dir)
	var rows int
	if err := s.reader.QueryRowContext(ctx, `SELECT count(*) FROM schema_version`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if latest := latestVersion(t); rows != latest {
		t.Errorf("schema_version has %d rows after reopen, want %d", rows, latest)
	}
	if got := createdAt(t, s); got != created {
		t.Errorf("created_at changed on reopen: %d, was %d", got, created)
	}
}

func TestOpenSchemaTooNew(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := openStore(t, dir)
	path := s.Path()
	created := createdAt(t, s)
	if _, err := s.writer.ExecContext(ctx, `INSERT INTO schema_version (version, name, applied_at) VALUES (999, 'future', 1)`); err != nil {
		t.Fatal(err)
	}
	closeStore(t, s)

	s2, err := Open(ctx, dir)
	if err == nil {
		s2.Close()
		t.Fatal("Open of a newer database succeeded")
	}
	if !errors.Is(err, ErrSchemaTooNew) {
		t.Errorf("errors.Is(%v, ErrSchemaTooNew) = false", err)
	}
	latest := latestVersion(t)
	for _, want := range []string{path, "999", fmt.Sprintf("(%d)", latest), "upgrade switchboard"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	assertOneLine(t, err)

	// Nothing was touched, and the lock was released: a fixed database opens.
	db := rawDB(t, path)
	var rows int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM schema_version`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != latest+1 {
		t.Errorf("schema_version has %d rows, want the %d from before", rows, latest+1)
	}
	if _, err := db.ExecContext(ctx, `DELETE FROM schema_version WHERE version = 999`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s = openStore(t, dir)
	if v, err := s.SchemaVersion(ctx); err != nil || v != latest {
		t.Errorf("SchemaVersion() = %d, %v; want %d", v, err, latest)
	}
	if got := createdAt(t, s); got != created {
		t.Errorf("created_at = %d, want %d", got, created)
	}
}

func TestOpenLocked(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("state dir lock is not enforced on this platform")
	}
	ctx := t.Context()
	dir := t.TempDir()
	s := openStore(t, dir)

	s2, err := Open(ctx, dir)
	if err == nil {
		s2.Close()
		t.Fatal("second Open of a locked state dir succeeded")
	}
	if !errors.Is(err, ErrLocked) {
		t.Errorf("errors.Is(%v, ErrLocked) = false", err)
	}
	for _, want := range []string{dir, fmt.Sprintf("pid %d", os.Getpid()), "different stateDir"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	assertOneLine(t, err)
	// The failed Open must not have disturbed the holder.
	if err := s.Ping(ctx); err != nil {
		t.Errorf("Ping after a refused second Open: %v", err)
	}

	closeStore(t, s)
	openStore(t, dir)
}

func TestOpenNotADirectory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "state")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{file, filepath.Join(file, "sub")} {
		s, err := Open(t.Context(), dir)
		if err == nil {
			s.Close()
			t.Fatalf("Open(%s) succeeded", dir)
		}
		for _, want := range []string{"store: ", dir, "not a directory", "SWITCHBOARD_STATE_DIR"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("Open(%s) error %q does not mention %q", dir, err, want)
			}
		}
		assertOneLine(t, err)
	}
}

func TestOpenNotWritable(t *testing.T) {
	if runtime.GOOS == "windows" || os.Geteuid() == 0 {
		t.Skip("needs POSIX permissions that bind the current user")
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	s, err := Open(t.Context(), dir)
	if err == nil {
		s.Close()
		t.Fatal("Open of a read-only dir succeeded")
	}
	if !strings.Contains(err.Error(), "not writable") || !strings.Contains(err.Error(), dir) {
		t.Errorf("error %q does not say %s is not writable", err, dir)
	}
}

func TestOpenForeignDatabase(t *testing.T) {
	dir := t.TempDir()
	db := rawDB(t, filepath.Join(dir, "state.db"))
	if _, err := db.Exec(`CREATE TABLE theirs (x)`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s, err := Open(t.Context(), dir)
	if err == nil {
		s.Close()
		t.Fatal("Open of a non-switchboard database succeeded")
	}
	if !strings.Contains(err.Error(), "not a switchboard state database") {
		t.Errorf("error %q does not say the database is foreign", err)
	}
	db = rawDB(t, filepath.Join(dir, "state.db"))
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = 'schema_version'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("schema_version tables in the foreign database: %d, %v; want none", n, err)
	}
}

// TestOpenCanceled checks that a failed Open cleans up after itself: no
// goroutines left (TestMain) and the lock released.
func TestOpenCanceled(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if s, err := Open(ctx, dir); err == nil {
		s.Close()
		t.Fatal("Open with a canceled context succeeded")
	}
	openStore(t, dir)
}

func TestOpenRelativeAndOddPath(t *testing.T) {
	t.Chdir(t.TempDir())
	dir := "state?#% dir"
	s := openStore(t, dir)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(wd, dir, "state.db")
	if s.Path() != want {
		t.Errorf("Path() = %q, want %q", s.Path(), want)
	}
	if _, err := os.Stat(want); err != nil {
		t.Errorf("database not at %s: %v", want, err)
	}
}

func TestOpenEmptyDir(t *testing.T) {
	s, err := Open(t.Context(), "")
	if err == nil {
		s.Close()
		t.Fatal(`Open("") succeeded`)
	}
	if !strings.Contains(err.Error(), "SWITCHBOARD_STATE_DIR") {
		t.Errorf("error %q does not say how to set the state dir", err)
	}
}

func TestCloseTwice(t *testing.T) {
	s, err := Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("first Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := s.Ping(t.Context()); err == nil {
		t.Error("Ping after Close succeeded")
	}
}

// TestConcurrentReadWrite runs readers on the read pool while writers queue on
// the writer; under -race this also checks the pools for data races. No
// operation may fail, SQLITE_BUSY in particular.
func TestConcurrentReadWrite(t *testing.T) {
	ctx := t.Context()
	s := openStore(t, t.TempDir())
	if _, err := s.writer.ExecContext(ctx, `CREATE TABLE scratch (id INTEGER PRIMARY KEY, writer INTEGER NOT NULL, seq INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}

	const writers, readers, perWriter, perReader = 4, 8, 50, 100
	errs := make(chan error, writers+readers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				if err := writeScratch(ctx, s.writer, w, i); err != nil {
					errs <- fmt.Errorf("writer %d: %w", w, err)
					return
				}
			}
		})
	}
	for r := range readers {
		wg.Go(func() {
			for range perReader {
				if err := readScratch(ctx, s.reader); err != nil {
					errs <- fmt.Errorf("reader %d: %w", r, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	var n int
	if err := s.reader.QueryRowContext(ctx, `SELECT count(*) FROM scratch`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != writers*perWriter {
		t.Errorf("scratch has %d rows, want %d", n, writers*perWriter)
	}
}

// writeScratch reads, then writes, in one transaction: the pattern that
// deadlocks on lock upgrade without BEGIN IMMEDIATE.
func writeScratch(ctx context.Context, db *sql.DB, writer, seq int) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var last int
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), -1) FROM scratch WHERE writer = ?`, writer).Scan(&last); err != nil {
		return err
	}
	if last != seq-1 {
		return fmt.Errorf("last seq %d, want %d", last, seq-1)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO scratch (writer, seq) VALUES (?, ?)`, writer, seq); err != nil {
		return err
	}
	return tx.Commit()
}

// readScratch checks that a reader transaction sees a consistent snapshot.
func readScratch(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var count, sum int
	if err := tx.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(seq + 1), 0) FROM scratch`).Scan(&count, &sum); err != nil {
		return err
	}
	var count2 int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM scratch`).Scan(&count2); err != nil {
		return err
	}
	if count != count2 {
		return fmt.Errorf("snapshot moved inside a transaction: %d then %d rows", count, count2)
	}
	return tx.Commit()
}

func createdAt(t *testing.T, s *SQLite) int64 {
	t.Helper()
	var v string
	if err := s.reader.QueryRowContext(t.Context(), `SELECT value FROM meta WHERE key = 'created_at'`).Scan(&v); err != nil {
		t.Fatalf("meta created_at: %v", err)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("meta created_at = %q: %v", v, err)
	}
	return n
}

func assertOneLine(t *testing.T, err error) {
	t.Helper()
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "store: ") {
		t.Errorf("error %q: want one line starting with \"store: \"", msg)
	}
}

func TestCloseFoldsTheWALIntoTheDatabase(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	for i := range 200 {
		if err := s.PutSession(t.Context(), core.SessionEntry{Key: core.SessionKey(fmt.Sprintf("agent:main:k%d", i)), SessionID: "s"}); err != nil {
			t.Fatal(err)
		}
	}
	wal := filepath.Join(dir, "state.db-wal")
	if fi, err := os.Stat(wal); err != nil || fi.Size() == 0 {
		t.Fatalf("expected a non-empty WAL while open: %v", err)
	}
	closeStore(t, s)
	if fi, err := os.Stat(wal); err == nil && fi.Size() != 0 {
		t.Errorf("WAL is %d bytes after Close; the checkpoint should have emptied it", fi.Size())
	}
	s = openStore(t, dir)
	if list, _ := s.ListSessions(t.Context(), 0); len(list) != 200 {
		t.Errorf("after reopen %d sessions, want 200", len(list))
	}
}

// Issue 22, finding 10: a state directory made beforehand with room for
// others (0755) was used as it was, leaving the journal's folder, the
// gateway token and device keys listable by every local user. Open makes
// it private.
func TestFinding10_StateDirIsMadePrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil { // whatever the umask
		t.Fatal(err)
	}
	s, err := Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o700 {
		t.Errorf("state dir mode %#o after Open, want 0700", perm)
	}
}
