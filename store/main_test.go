package store

import (
	"testing"

	"go.uber.org/goleak"
)

// database/sql runs a goroutine per pool; a store a test forgets to close
// shows up here.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
