package bridgetest

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

// TB is what a platform fake needs of its owner: report a problem and
// register cleanups. *testing.T satisfies it; a program that runs fakes
// outside tests (a load tool, an embedding program's demo) uses Host.
// Implementations are safe for concurrent use.
type TB interface {
	// Helper marks the caller as a helper (a no-op outside tests).
	Helper()
	// Errorf reports a problem without stopping.
	Errorf(format string, args ...any)
	// Cleanup registers f to run when the owner is done.
	Cleanup(f func())
}

// Host is a TB for programs: errors go to W (and are counted), cleanups
// run in reverse order on Close.
type Host struct {
	// W receives error lines; nil discards them.
	W io.Writer

	errors   atomic.Int64
	mu       sync.Mutex
	cleanups []func()
}

var _ TB = (*Host)(nil)

// Helper does nothing.
func (*Host) Helper() {}

// Errorf writes the problem to W and counts it.
func (h *Host) Errorf(format string, args ...any) {
	h.errors.Add(1)
	if h.W != nil {
		fmt.Fprintf(h.W, format+"\n", args...)
	}
}

// Cleanup registers f for Close.
func (h *Host) Cleanup(f func()) {
	h.mu.Lock()
	h.cleanups = append(h.cleanups, f)
	h.mu.Unlock()
}

// Errors returns how many problems were reported.
func (h *Host) Errors() int64 { return h.errors.Load() }

// Close runs the cleanups, last registered first.
func (h *Host) Close() {
	h.mu.Lock()
	fs := h.cleanups
	h.cleanups = nil
	h.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}
