//go:build !unix

package telegram

import "os"

// Without flock the poll lock is not enforced; Telegram's 409 still shows
// the conflict.
func tryFlock(*os.File) (bool, error) { return true, nil }

func unflock(*os.File) error { return nil }
