//go:build unix

package telegram

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// tryFlock takes an exclusive flock without blocking. The lock belongs to
// the open file, so a second holder in the same process is refused too,
// and it goes away with the process however it ends.
func tryFlock(f *os.File) (bool, error) {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EWOULDBLOCK), errors.Is(err, unix.EAGAIN):
			return false, nil
		default:
			return false, err
		}
	}
}

func unflock(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_UN) }
