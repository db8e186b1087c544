//go:build !unix

package tools

import (
	"io/fs"
	"os"
)

// openNonBlock is zero where there is no O_NONBLOCK.
const openNonBlock = 0

// hardLinked cannot tell the link count here, so it reports none; os.Root
// still confines every lookup.
func hardLinked(fs.FileInfo) bool { return false }

// fdPath cannot ask the OS for an open file's path here.
func fdPath(*os.File) (string, bool) { return "", false }
