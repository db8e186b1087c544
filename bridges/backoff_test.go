package bridges

import (
	"testing"
	"time"
)

func TestBackoffGrowsAndCaps(t *testing.T) {
	lo := Backoff{Initial: time.Second, Max: time.Minute, Rand: func() float64 { return 0 }}
	hi := lo
	hi.Rand = func() float64 { return 0.999999 }
	for attempt, step := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, time.Minute, time.Minute} {
		if got := lo.Delay(attempt); got != step/2 {
			t.Errorf("Delay(%d) low = %v, want %v", attempt, got, step/2)
		}
		if got := hi.Delay(attempt); got < step*99/100 || got > step {
			t.Errorf("Delay(%d) high = %v, want about %v", attempt, got, step)
		}
	}
	if got := lo.Delay(1000); got != 30*time.Second {
		t.Errorf("Delay(1000) = %v, want the cap's half", got)
	}
	var zero Backoff
	if d := zero.Delay(0); d < 500*time.Millisecond || d > time.Second {
		t.Errorf("zero Backoff Delay(0) = %v", d)
	}
}

func TestStateTerminal(t *testing.T) {
	for s, want := range map[State]bool{
		StateStarting: false, StateConnected: false, StateTransientDisconnect: false, StateConflict: false,
		StateBadCredentials: true, StateLoggedOut: true, StateStopped: true,
	} {
		if s.Terminal() != want {
			t.Errorf("%s.Terminal() = %v", s, !want)
		}
	}
}
