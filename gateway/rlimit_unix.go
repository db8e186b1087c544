//go:build unix

package gateway

import "syscall"

// openFileLimit returns the process's soft RLIMIT_NOFILE (the Go runtime
// raises it to the hard limit at startup), or 0 if it cannot be read.
func openFileLimit() uint64 {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0
	}
	return uint64(l.Cur)
}
