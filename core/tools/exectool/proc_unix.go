//go:build unix

package exectool

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// supported reports that exec can run programs on this OS.
const supported = true

// fileIdentity names a file by device and inode, and for an executable
// also by size and modification time, so a replaced or rewritten file
// (or a retargeted symlink) gets a new identity.
func fileIdentity(fi fs.FileInfo, content bool) string {
	id := ""
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id = fmt.Sprintf("dev=%d ino=%d", st.Dev, st.Ino)
	}
	if content {
		id += fmt.Sprintf(" size=%d mtime=%d mode=%o", fi.Size(), fi.ModTime().UnixNano(), fi.Mode())
	}
	return id
}

// sysProcAttr puts the command in its own process group, so stopping it
// stops everything it started.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// signalGroup sends sig to the process group of p.
func signalGroup(p *os.Process, sig syscall.Signal) {
	if err := syscall.Kill(-p.Pid, sig); err != nil {
		_ = p.Signal(sig)
	}
}

// terminate is the polite stop signal; kill the final one.
var (
	terminate = syscall.SIGTERM
	kill      = syscall.SIGKILL
)
