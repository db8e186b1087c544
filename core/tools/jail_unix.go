//go:build unix

package tools

import (
	"io/fs"
	"os"
	"runtime"
	"strconv"
	"syscall"
)

// openNonBlock keeps opening a FIFO from blocking.
const openNonBlock = syscall.O_NONBLOCK

// hardLinked reports a regular file with more than one link: another name
// for it may be outside the workspace, where a write or read would reach.
func hardLinked(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && fi.Mode().IsRegular() && st.Nlink > 1
}

// fdPath returns the path the OS holds for an open file, where it can say
// (Linux's /proc/self/fd); ok is false elsewhere, and when /proc is not
// mounted.
func fdPath(f *os.File) (string, bool) {
	if runtime.GOOS != "linux" {
		return "", false
	}
	// SyscallConn rather than Fd, which would switch the file to
	// blocking mode.
	rc, err := f.SyscallConn()
	if err != nil {
		return "", false
	}
	var p string
	cerr := rc.Control(func(fd uintptr) {
		p, err = os.Readlink("/proc/self/fd/" + strconv.FormatUint(uint64(fd), 10))
	})
	if cerr != nil || err != nil || len(p) == 0 || p[0] != '/' {
		return "", false
	}
	return p, true
}
