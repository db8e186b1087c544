package cluster_test

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/cluster"
)

// What one instance publishes reaches the other in order, small ones
// batched inline and a large one (over NOTIFY's 8,000 bytes) through the
// spill table; an instance never receives its own.
func TestRelayCarriesObservationsInOrderAndSpillsLargeOnes(t *testing.T) {
	stores := openStores(t, 2)
	ma := cluster.New(cluster.Options{Store: stores[0], Name: "a", TTL: time.Hour})
	mb := cluster.New(cluster.Options{Store: stores[1], Name: "b", TTL: time.Hour})
	gotA, gotB := make(chan string, 64), make(chan string, 64)
	ra := cluster.NewRelay(ma, stores[0], stores[0], func(p []byte) { gotA <- string(p) })
	rb := cluster.NewRelay(mb, stores[1], stores[1], func(p []byte) { gotB <- string(p) })
	for _, r := range []*cluster.Relay{ra, rb} {
		if err := r.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.Stop)
	}
	big := `"` + strings.Repeat("x", 20000) + `"`
	want := []string{`{"n":1}`, `{"n":2}`, big, `{"n":3}`}
	for _, p := range want {
		ra.Publish([]byte(p))
	}
	for i, w := range want {
		select {
		case got := <-gotB:
			if got != w {
				t.Fatalf("observation %d = %.40s (%d bytes); want %.40s (%d bytes)", i, got, len(got), w, len(w))
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("observation %d never arrived", i)
		}
	}
	rb.Publish([]byte(`{"from":"b"}`))
	select {
	case got := <-gotA:
		if got != `{"from":"b"}` {
			t.Fatalf("a got %s", got)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("b's observation never reached a")
	}
	select {
	case got := <-gotA:
		t.Fatalf("a received %s, one of its own", got)
	case got := <-gotB:
		t.Fatalf("b received %s, one of its own", got)
	default:
	}
}
