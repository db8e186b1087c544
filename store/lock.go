package store

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// lockFileName is the file in the state directory that one Switchboard process
// holds an exclusive lock on for as long as it has the store open. The file
// holds the pid of the process that last took the lock; it is never removed,
// because removing a lock file lets a second process lock a fresh inode while
// the first still holds the old one.
const lockFileName = "switchboard.lock"

// dirLock is a held lock on a state directory.
type dirLock struct {
	f *os.File
}

// acquireLock takes the exclusive, non-blocking lock on dir's lock file and
// records our pid in it. dir must exist.
func acquireLock(dir string) (*dirLock, error) {
	path := filepath.Join(dir, lockFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: state dir %s is not writable: %w; set stateDir or SWITCHBOARD_STATE_DIR to a writable directory", dir, err)
	}
	ok, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("store: lock %s: %w", path, err)
	}
	if !ok {
		holder := readHolder(f)
		f.Close()
		return nil, fmt.Errorf("%w: %s is in use by another switchboard process (%s); stop it or use a different stateDir", ErrLocked, dir, holder)
	}
	if err := writePid(f); err != nil {
		f.Close() // closing the only descriptor releases the lock
		return nil, fmt.Errorf("store: write pid to %s: %w", path, err)
	}
	return &dirLock{f: f}, nil
}

// release drops the lock. The pid stays in the file; it is only read while
// someone holds the lock, so a stale one is never reported.
func (l *dirLock) release() error {
	if err := unlock(l.f); err != nil {
		l.f.Close()
		return fmt.Errorf("store: unlock %s: %w", l.f.Name(), err)
	}
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("store: close %s: %w", l.f.Name(), err)
	}
	return nil
}

func writePid(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return err
}

// readHolder describes the process holding the lock for an error message. The
// holder writes its pid right after locking, so a reader racing with it can
// see an empty file.
func readHolder(f *os.File) string {
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 32))
	if err != nil {
		return "pid unknown"
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return "pid unknown"
	}
	return "pid " + strconv.Itoa(pid)
}
