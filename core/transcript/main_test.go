package transcript_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Open decodes long files on several goroutines; every one of them must be
// done when Open returns.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
