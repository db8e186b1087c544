package channels

import (
	"fmt"
	"testing"

	"github.com/switchboardhq/switchboard/bridges"

	"github.com/switchboardhq/switchboard/core"
)

func TestGroupHistoryLimitsAndLRU(t *testing.T) {
	h := &GroupHistory{MaxGroups: 2}
	for i := range 60 {
		h.Add("a", core.HistoryEntry{Body: fmt.Sprint(i)}, bridges.DefaultHistoryLimit)
	}
	all, truncated := h.Peek("a", 0)
	if len(all) != bridges.DefaultHistoryLimit || all[0].Body != "10" || truncated {
		t.Fatalf("kept %d entries from %q, want the newest %d", len(all), all[0].Body, bridges.DefaultHistoryLimit)
	}
	h.Add("b", core.HistoryEntry{Body: "b"}, 5)
	h.Peek("a", 1) // peeking does not refresh; adding does
	h.Add("a", core.HistoryEntry{Body: "a2"}, bridges.DefaultHistoryLimit)
	h.Add("c", core.HistoryEntry{Body: "c"}, 5) // evicts b, the least recently used
	if got, _ := h.Peek("b", 0); len(got) != 0 {
		t.Errorf("group b kept %v after eviction", got)
	}
	if got, _ := h.Peek("a", 0); len(got) == 0 {
		t.Error("group a was evicted although used more recently")
	}
	h.Add("d", core.HistoryEntry{Body: "x"}, 0)
	if h.Len() != 2 {
		t.Errorf("%d groups kept, want 2 (limit 0 keeps nothing)", h.Len())
	}
}

func TestPairingCodeAlphabet(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		c := NewPairingCode()
		if len(c) != PairingCodeLength {
			t.Fatalf("code %q has length %d", c, len(c))
		}
		for _, r := range c {
			if !containsRune(PairingAlphabet, r) {
				t.Fatalf("code %q has %q, outside the alphabet", c, r)
			}
		}
		seen[c] = true
	}
	if len(seen) < 199 {
		t.Errorf("only %d distinct codes in 200", len(seen))
	}
}

func containsRune(s string, r rune) bool {
	for _, c := range s {
		if c == r {
			return true
		}
	}
	return false
}
