package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// evictPageCache asks the kernel to drop the file at path from its page
// cache (pages some process has mapped stay). Resident file pages depend
// on how the cache holds a file: the same binary measured 30 to 48 MB of
// file-backed RSS on one kernel depending on whether the linker, cp or a
// sequential read had put it there (large folios are mapped whole). After
// this, a run pages the binary in by its own faults, the same way for any
// build. Blocking file IO; safe from any goroutine.
func evictPageCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}
