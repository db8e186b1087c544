package telegram

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
)

// pollLock is held while the bridge polls, so a second Switchboard (or a
// second bridge in one program) reading the same bot from this state
// directory is stopped before Telegram answers both with 409 conflicts.
type pollLock struct{ f *os.File }

// lockName is the lock file of a token: a hash, never the token itself.
func lockName(token string) string {
	sum := sha256.Sum256([]byte(token))
	return "telegram-" + hex.EncodeToString(sum[:6]) + ".lock"
}

// acquirePollLock takes the token's lock in dir without waiting; ok is
// false when another holder has it.
func acquirePollLock(dir, token string) (l *pollLock, ok bool, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, false, err
	}
	f, err := os.OpenFile(filepath.Join(dir, lockName(token)), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, err
	}
	got, err := tryFlock(f)
	if err != nil || !got {
		f.Close()
		return nil, false, err
	}
	_ = f.Truncate(0)
	_, _ = fmt.Fprintf(f, "%d\n", os.Getpid())
	return &pollLock{f: f}, true, nil
}

func (l *pollLock) release() {
	if l != nil {
		_ = unflock(l.f)
		l.f.Close()
	}
}
