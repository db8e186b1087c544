//go:build !unix

package gateway

// openFileLimit returns 0: the platform has no RLIMIT_NOFILE, and the
// connection cap takes the default for an unknown limit.
func openFileLimit() uint64 { return 0 }
