package bridgetest_test

import (
	"strconv"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/bridgetest"
)

// Eventually is woken by what the sink records, whichever goroutine
// records it; FailNext refuses that many Submits and records none of them.
func TestSinkEventuallyAndFailNext(t *testing.T) {
	s := &bridgetest.Sink{}
	s.FailNext(2)
	var wg sync.WaitGroup
	refused := make(chan error, 5)
	for i := range 5 {
		wg.Go(func() {
			in := bridges.Inbound{DedupeKey: strconv.Itoa(i)}
			if err := s.Submit(t.Context(), in); err != nil {
				refused <- err
			}
		})
	}
	wg.Go(func() { s.State(bridges.StateConnected, nil) })
	if !s.Eventually(func() bool { return len(s.Inbound()) == 3 && len(s.States()) == 1 }) {
		t.Fatalf("%d messages and %d states recorded, want 3 and 1", len(s.Inbound()), len(s.States()))
	}
	wg.Wait()
	close(refused)
	if n := len(refused); n != 2 {
		t.Errorf("%d Submits refused, want 2", n)
	}
	s.Wait(t, "the recorded state", func() bool { return s.States()[0].State == bridges.StateConnected })
}
