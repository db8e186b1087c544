package main

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/switchboardhq/switchboard/internal/pgtest"
)

// TestMain runs the real main when the test binary is started as a child
// process by the signal tests, and otherwise checks for goroutine leaks.
func TestMain(m *testing.M) {
	if os.Getenv("SWITCHBOARD_TEST_MAIN") == "1" {
		os.Args = append([]string{"switchboard"}, os.Args[1:]...)
		main()
		return
	}
	// The PostgreSQL tests' cluster, if one started, goes after the leak
	// check.
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { pgtest.Stop() }))
}
