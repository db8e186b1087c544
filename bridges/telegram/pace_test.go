package telegram

import (
	"testing"
	"time"
)

func TestPacerBurstsThenSpreads(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	p := &pacer{now: func() time.Time { return now }}
	for i := range chatBurst {
		if d := p.reserve(42); d != 0 {
			t.Fatalf("message %d of a burst waits %v", i, d)
		}
	}
	if d := p.reserve(42); d != chatInterval {
		t.Errorf("message after the burst waits %v, want %v", d, chatInterval)
	}
	if d := p.reserve(42); d != 2*chatInterval {
		t.Errorf("next one waits %v, want %v", d, 2*chatInterval)
	}
	// Another chat is not held up.
	if d := p.reserve(43); d != 0 {
		t.Errorf("another chat waits %v", d)
	}
	// Groups: one every 3 s (20 a minute).
	for range groupBurst {
		p.reserve(-100)
	}
	if d := p.reserve(-100); d != 3*time.Second {
		t.Errorf("group message after the burst waits %v, want 3s", d)
	}
	// Time refills the bucket.
	now = now.Add(time.Minute)
	if d := p.reserve(42); d != 0 {
		t.Errorf("after a minute idle the chat waits %v", d)
	}
}
