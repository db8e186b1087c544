//go:build !unix

package exectool

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// supported reports that exec cannot run programs on this OS.
const supported = false

func fileIdentity(fi fs.FileInfo, content bool) string {
	if content {
		return fmt.Sprintf("size=%d mtime=%d", fi.Size(), fi.ModTime().UnixNano())
	}
	return ""
}

func sysProcAttr() *syscall.SysProcAttr { return nil }

func signalGroup(p *os.Process, _ syscall.Signal) { _ = p.Kill() }

var (
	terminate = syscall.SIGTERM
	kill      = syscall.SIGKILL
)
