package postgres_test

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/pgtest"
	"github.com/switchboardhq/switchboard/store/postgres"
)

// Notify reaches every Listen on the channel, from another pool too, in
// order; a payload PostgreSQL would refuse is refused with the limit named.
func TestNotifyReachesEveryListener(t *testing.T) {
	url := pgtest.Database(t)
	var stores []*postgres.Store
	for range 2 {
		s, err := postgres.Open(t.Context(), url, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		stores = append(stores, s)
	}
	got := make(chan string, 16)
	for _, s := range stores {
		stop, err := s.Listen(t.Context(), "sb_test", func(p string) { got <- p })
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
	}
	for _, p := range []string{"one", "two"} {
		if err := stores[0].Notify(t.Context(), "sb_test", p); err != nil {
			t.Fatal(err)
		}
	}
	counts := map[string]int{}
	for range 4 {
		select {
		case p := <-got:
			counts[p]++
		case <-time.After(20 * time.Second):
			t.Fatalf("notifications received: %v", counts)
		}
	}
	if counts["one"] != 2 || counts["two"] != 2 {
		t.Fatalf("each listener should get each payload once: %v", counts)
	}
	big := strings.Repeat("x", postgres.MaxNotifyPayload+1)
	if err := stores[0].Notify(t.Context(), "sb_test", big); err == nil || !strings.Contains(err.Error(), "7999") {
		t.Fatalf("oversized payload: %v", err)
	}
}
