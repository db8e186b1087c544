package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver; pure Go, no cgo
)

// dbFileName is the SQLite database inside the state directory. SQLite keeps
// dbFileName+"-wal" and dbFileName+"-shm" next to it while it is open.
const dbFileName = "state.db"

// readerConns is the size of the read pool. In WAL mode readers never block
// each other or the writer, so a few connections let the dispatcher, gateway
// and cron read concurrently; more would only hold more page cache.
const readerConns = 4

// Connection pragmas, applied by the driver to every connection it opens, so a
// connection database/sql replaces behind our back is configured the same way.
//
// Durability: journal_mode=WAL with synchronous=NORMAL means a committed
// transaction is in the WAL file (the OS has it) before Commit returns, but the
// WAL is fsynced only at checkpoints. A committed transaction therefore
// survives the process crashing or being killed (SIGKILL, OOM), which is what
// "journal the inbound, then ack the platform" relies on. On power loss or an
// OS crash the last transactions before the failure may roll back; the
// database itself stays consistent. synchronous=FULL would close that window
// at the price of an fsync per commit.
//
// busy_timeout is a safety net: inside one process all writes share the one
// writer connection, but a checkpoint or an outside tool (sqlite3 CLI, a
// backup) can still hold a lock for a moment.
const (
	writerParams = "_pragma=busy_timeout(5000)" +
		"&_pragma=foreign_keys(1)" +
		// Checkpoints run on their own connection in the background (see
		// checkpointLoop), not inside whichever commit crosses the WAL size
		// threshold: an automatic checkpoint stalls that commit for
		// milliseconds, which is the tail latency of accepting a message.
		"&_pragma=wal_autocheckpoint(0)" +
		"&_pragma=journal_mode(WAL)" +
		"&_pragma=synchronous(NORMAL)" +
		// BEGIN IMMEDIATE takes the write lock up front. A deferred transaction
		// that reads and then writes has to upgrade its lock, and an upgrade
		// that loses to another writer fails with SQLITE_BUSY at once, without
		// waiting out busy_timeout.
		"&_txlock=immediate"
	// Readers do not set journal_mode: it is a property of the file, set by
	// the writer, and changing it would be a write. query_only makes any
	// attempt to write through the read pool fail loudly.
	readerParams = "_pragma=busy_timeout(5000)" +
		"&_pragma=foreign_keys(1)" +
		"&_pragma=query_only(1)" +
		"&_pragma=synchronous(NORMAL)"
)

// SQLite is the embedded [Store]: one SQLite database in the state directory,
// owned by exactly one process at a time.
//
// All writes go through a pool of one connection, so writers queue in Go
// instead of contending for SQLite's lock; reads use a separate pool and see
// the last committed state without waiting for writers. The methods are safe
// for concurrent use.
type SQLite struct {
	dir  string // absolute state directory
	path string // absolute path of state.db

	// writer has exactly one connection and begins transactions with BEGIN
	// IMMEDIATE. A method holding a writer transaction must not use writer
	// outside that transaction: it would wait for itself forever.
	writer *sql.DB
	// reader has readerConns query_only connections. A read that must see a
	// consistent snapshot across several statements uses a reader
	// transaction.
	reader *sql.DB

	lock *dirLock

	// checkpointer is a one-connection pool that copies the WAL back into
	// state.db every checkpointEvery, so commits never pay for it.
	checkpointer *sql.DB
	stopCkpt     chan struct{}
	ckptDone     chan struct{}

	// js holds the journal's statements, prepared on writer by Open.
	js *journalStmts
	// rq and wq keep the prepared statements of the per-message reads
	// (on reader) and writes (on writer).
	rq, wq *stmtCache
	// now is the clock for journal and queue-settings timestamps; nil means
	// time.Now. Tests set it right after Open.
	now func() time.Time

	closeMu sync.Mutex
	closed  bool
}

var _ Store = (*SQLite)(nil)

// Open opens the state store in dir, creating dir (mode 0700) and the database
// as needed, and applies any migrations the database is missing.
//
// Only one process may have a state directory open: if another process (or
// another Open in this process) has it, Open fails with an error wrapping
// [ErrLocked]. If the database was migrated by a newer Switchboard, Open fails
// with an error wrapping [ErrSchemaTooNew] and changes nothing. The caller
// must Close the store to release the directory.
//
// ctx bounds the time spent opening and migrating; it is not retained.
func Open(ctx context.Context, dir string) (*SQLite, error) {
	return OpenWith(ctx, dir, Options{})
}

// Options tune OpenWith. The zero value is what Open uses.
type Options struct {
	// Now is the clock for the timestamps the store writes; nil means
	// time.Now. Tests and the conformance suite set it.
	Now func() time.Time
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, dir string, o Options) (*SQLite, error) {
	if dir == "" {
		return nil, errors.New("store: no state dir given; set stateDir or SWITCHBOARD_STATE_DIR")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("store: state dir %s: %w", dir, err)
	}
	if err := ensureDir(abs); err != nil {
		return nil, err
	}
	lock, err := acquireLock(abs)
	if err != nil {
		return nil, err
	}

	s := &SQLite{dir: abs, path: filepath.Join(abs, dbFileName), lock: lock, now: o.Now}
	if err := s.open(ctx); err != nil {
		// Close releases whatever open got to, the lock last.
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *SQLite) open(ctx context.Context) error {
	// Create the file ourselves so that it, and the -wal and -shm files SQLite
	// later creates with the same mode, are readable by the owner only: the
	// store holds message text and pairing codes.
	f, err := os.OpenFile(s.path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("store: open %s: %w", s.path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("store: open %s: %w", s.path, err)
	}

	s.writer, err = openPool(ctx, s.path, writerParams, 1)
	if err != nil {
		return err
	}
	// journal_mode=WAL reports the old mode instead of failing when the file
	// system cannot do WAL (no shared memory, some network file systems), and
	// every durability promise above depends on it.
	var mode string
	if err := s.writer.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("store: open %s: read journal_mode: %w", s.path, err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("store: open %s: journal_mode is %q, not wal; put stateDir on a local file system", s.path, mode)
	}

	if _, err := migrate(ctx, s.writer, sqliteMigrations, sqliteMigrationsDir, s.path); err != nil {
		return err
	}
	// A write transaction (and its fsync) only the first time: restarts
	// are faster without one.
	var created int
	if err := s.writer.QueryRowContext(ctx, `SELECT count(*) FROM meta WHERE key = 'created_at'`).Scan(&created); err != nil {
		return fmt.Errorf("store: open %s: read created_at: %w", s.path, err)
	}
	if created == 0 {
		if _, err := s.writer.ExecContext(ctx,
			`INSERT INTO meta (key, value) VALUES ('created_at', ?) ON CONFLICT (key) DO NOTHING`,
			strconv.FormatInt(time.Now().UnixMilli(), 10)); err != nil {
			return fmt.Errorf("store: open %s: record created_at: %w", s.path, err)
		}
	}

	if s.js, err = prepareJournal(ctx, s.writer); err != nil {
		return err
	}

	s.reader, err = openPool(ctx, s.path, readerParams, readerConns)
	if err != nil {
		return err
	}
	s.rq, s.wq = newStmtCache(s.reader), newStmtCache(s.writer)
	s.checkpointer, err = openPool(ctx, s.path, checkpointParams, 1)
	if err != nil {
		return err
	}
	s.stopCkpt, s.ckptDone = make(chan struct{}), make(chan struct{})
	go s.checkpointLoop()
	return nil
}

// checkpointEvery is how often the WAL is checkpointed.
const checkpointEvery = time.Second

// checkpointParams configure the checkpoint connection: it never writes
// rows, but a checkpoint writes state.db, so it is not query_only.
const checkpointParams = "_pragma=busy_timeout(5000)"

// checkpointLoop runs a PASSIVE checkpoint every checkpointEvery until
// Close. PASSIVE copies what it can without waiting for readers or the
// writer, so it never blocks a commit; once a checkpoint has copied the
// whole WAL, the next commit starts the WAL over, which bounds its size.
func (s *SQLite) checkpointLoop() {
	defer close(s.ckptDone)
	t := time.NewTicker(checkpointEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if _, err := s.checkpointer.Exec(`PRAGMA wal_checkpoint(PASSIVE)`); err != nil && !errors.Is(err, sql.ErrConnDone) {
				// Busy or locked: the next tick tries again.
				continue
			}
		case <-s.stopCkpt:
			return
		}
	}
}

// ensureDir makes sure dir is a directory only its owner can enter,
// creating it if it does not exist. One made beforehand with room for the
// group or others (0755, say) is narrowed to the owner: it holds the
// gateway token, device keys, transcripts and the journal.
func ensureDir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case err == nil && !fi.IsDir():
		return fmt.Errorf("store: state dir %s is not a directory; set stateDir or SWITCHBOARD_STATE_DIR to a directory", dir)
	case err == nil:
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			if err := os.Chmod(dir, perm&^0o077); err != nil {
				return fmt.Errorf("store: state dir %s is open to other users (mode %#o) and could not be made private: %w; run chmod 700 on it", dir, perm, err)
			}
		}
		return nil
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("store: create state dir %s: %w; set stateDir or SWITCHBOARD_STATE_DIR to a writable directory", dir, err)
		}
		return nil
	default:
		return fmt.Errorf("store: state dir %s: %w; set stateDir or SWITCHBOARD_STATE_DIR to an accessible directory", dir, err)
	}
}

// openPool opens a pool of at most conns connections to the database at path
// and makes sure one connection can be established, so that a bad file or a
// failing pragma is reported by Open rather than by the first query.
func openPool(ctx context.Context, path, params string, conns int) (*sql.DB, error) {
	db, err := sql.Open("sqlite", dsn(path, params))
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	// Connections live as long as the pool: reopening costs a schema parse
	// and gains nothing for a local file.
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	return db, nil
}

// dsn builds a "file:" URI for path. The URI form lets the path contain
// characters such as '?', '#' and '%', which are escaped; a plain file name
// DSN would be cut at the first '?'.
func dsn(path, params string) string {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // Windows: file:///C:/...
	}
	u := url.URL{Scheme: "file", Path: p, RawQuery: params}
	return u.String()
}

// Path returns the absolute path of the database file, <stateDir>/state.db.
func (s *SQLite) Path() string { return s.path }

// Ping reports whether both the writer and the reader pool can reach the
// database. It waits for the writer connection if a write is in progress, so
// a wedged writer shows up as a Ping that runs into ctx's deadline.
func (s *SQLite) Ping(ctx context.Context) error {
	if err := s.writer.PingContext(ctx); err != nil {
		return fmt.Errorf("store: ping %s: writer: %w", s.path, err)
	}
	if err := s.reader.PingContext(ctx); err != nil {
		return fmt.Errorf("store: ping %s: reader: %w", s.path, err)
	}
	return nil
}

// SchemaVersion returns the highest migration applied to the database.
func (s *SQLite) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.reader.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("store: read schema version of %s: %w", s.path, err)
	}
	return v, nil
}

// Close closes both connection pools and then releases the state directory's
// lock, so another process can open it. Calls after the first return nil.
func (s *SQLite) Close() error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true

	var errs []error
	if s.stopCkpt != nil {
		close(s.stopCkpt)
		<-s.ckptDone
	}
	if s.checkpointer != nil {
		// Fold the whole WAL into state.db and empty it, so a closed store
		// is one self-contained file.
		if _, err := s.checkpointer.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
			errs = append(errs, fmt.Errorf("store: close %s: checkpoint: %w", s.path, err))
		}
		if err := s.checkpointer.Close(); err != nil {
			errs = append(errs, fmt.Errorf("store: close %s: checkpointer: %w", s.path, err))
		}
	}
	// The reader goes first so the writer is the last connection to the file:
	// SQLite checkpoints the WAL into state.db when its last connection
	// closes, and that should happen on a connection that may write.
	_ = s.rq.close()
	_ = s.wq.close()
	if s.reader != nil {
		if err := s.reader.Close(); err != nil {
			errs = append(errs, fmt.Errorf("store: close %s: reader: %w", s.path, err))
		}
	}
	s.js.close()
	if s.writer != nil {
		if err := s.writer.Close(); err != nil {
			errs = append(errs, fmt.Errorf("store: close %s: writer: %w", s.path, err))
		}
	}
	// The lock goes last: until every connection is closed, the next process
	// must not open the database.
	if err := s.lock.release(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		// One line: the first failure is the one worth reading.
		return errs[0]
	}
	return nil
}
