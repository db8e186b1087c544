package queue

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

var testEpoch = time.UnixMilli(1_740_000_000_000)

func TestRecentIDsTTL(t *testing.T) {
	c := NewRecentIDs()
	if c.Seen("k", testEpoch) {
		t.Fatal("first sighting reported as a redelivery")
	}
	if !c.Seen("k", testEpoch.Add(time.Second)) || !c.Contains("k", testEpoch.Add(time.Second)) {
		t.Fatal("redelivery not recognised")
	}
	// A redelivery does not refresh the key: it expires five minutes after
	// it was first recorded, not after it was last seen.
	if !c.Seen("k", testEpoch.Add(4*time.Minute)) {
		t.Fatal("redelivery at 4 min not recognised")
	}
	if c.Contains("k", testEpoch.Add(5*time.Minute)) {
		t.Fatal("still remembered at exactly the TTL")
	}
	if c.Seen("k", testEpoch.Add(5*time.Minute)) {
		t.Fatal("expired key reported as a redelivery")
	}
	if !c.Seen("k", testEpoch.Add(9*time.Minute)) {
		t.Fatal("the key recorded again at 5 min was forgotten at 9 min")
	}
	if c.Seen("k", testEpoch.Add(10*time.Minute)) {
		t.Fatal("the key recorded again at 5 min is remembered at 10 min")
	}
}

func TestRecentIDsContainsDoesNotRecord(t *testing.T) {
	c := NewRecentIDs()
	for range 2 {
		if c.Contains("k", testEpoch) {
			t.Fatal("Contains recorded the key")
		}
	}
	if c.Len() != 0 {
		t.Fatalf("Len = %d", c.Len())
	}
}

func TestRecentIDsExpireLazily(t *testing.T) {
	c := NewRecentIDs()
	for i := range 100 {
		c.Seen(strconv.Itoa(i), testEpoch.Add(time.Duration(i)*time.Second))
	}
	if c.Len() != 100 {
		t.Fatalf("Len = %d", c.Len())
	}
	// At testEpoch+5m30s the first 31 keys (0..30 s) have expired; the next
	// recording drops them.
	c.Seen("new", testEpoch.Add(5*time.Minute+30*time.Second))
	if got := c.Len(); got != 100-31+1 {
		t.Errorf("Len after expiry = %d, want %d", got, 100-31+1)
	}
	if c.Contains("30", testEpoch.Add(5*time.Minute+30*time.Second)) || !c.Contains("31", testEpoch.Add(5*time.Minute+30*time.Second)) {
		t.Error("wrong keys expired")
	}
}

func TestRecentIDsCapacity(t *testing.T) {
	c := newRecentIDs(time.Hour, 3)
	for _, k := range []string{"a", "b", "c", "d"} {
		c.Seen(k, testEpoch)
	}
	if c.Len() != 3 || c.Contains("a", testEpoch) || !c.Contains("b", testEpoch) || !c.Contains("d", testEpoch) {
		t.Errorf("after 4 keys with capacity 3: len %d, a %v, b %v, d %v", c.Len(), c.Contains("a", testEpoch), c.Contains("b", testEpoch), c.Contains("d", testEpoch))
	}

	// The default capacity: 10,000 entries, the oldest evicted first.
	big := NewRecentIDs()
	for i := range RecentIDCapacity + 1 {
		big.Seen("id-"+strconv.Itoa(i), testEpoch)
	}
	if big.Len() != RecentIDCapacity {
		t.Errorf("Len = %d, want %d", big.Len(), RecentIDCapacity)
	}
	if big.Contains("id-0", testEpoch) || !big.Contains("id-1", testEpoch) || !big.Contains("id-10000", testEpoch) {
		t.Error("the oldest key should be the one evicted")
	}
}

func TestRecentIDsRingWraps(t *testing.T) {
	c := newRecentIDs(time.Hour, 100)
	for i := range 250 {
		c.Seen(strconv.Itoa(i), testEpoch.Add(time.Duration(i)*time.Millisecond))
	}
	now := testEpoch.Add(time.Second)
	for i := range 250 {
		if got, want := c.Contains(strconv.Itoa(i), now), i >= 150; got != want {
			t.Fatalf("key %d remembered = %v, want %v", i, got, want)
		}
	}
}

func TestRecentIDsForget(t *testing.T) {
	c := newRecentIDs(time.Hour, 2)
	c.Seen("a", testEpoch)
	c.Forget("a")
	if c.Contains("a", testEpoch) || c.Seen("a", testEpoch) {
		t.Fatal("a forgotten key is still remembered")
	}
	if !c.Seen("a", testEpoch) {
		t.Fatal("the key recorded after Forget was lost")
	}
	c.Seen("b", testEpoch) // at capacity: drops the stale slot of the forgotten "a"
	c.Seen("c", testEpoch) // drops the live "a"
	if c.Len() > 2 {
		t.Errorf("Len = %d, over capacity", c.Len())
	}
	if !c.Contains("c", testEpoch) || !c.Contains("b", testEpoch) || c.Contains("a", testEpoch) {
		t.Error("wrong keys kept")
	}
	c.Forget("never seen")
}

func TestRecentIDsEdgeCases(t *testing.T) {
	var zero RecentIDs // the zero value works, with the default bounds
	if zero.Seen("k", testEpoch) || !zero.Seen("k", testEpoch.Add(4*time.Minute)) || zero.Seen("k", testEpoch.Add(5*time.Minute)) {
		t.Error("zero value does not behave like NewRecentIDs")
	}
	c := NewRecentIDs()
	for range 2 {
		if c.Seen("", testEpoch) {
			t.Error("the empty key was seen")
		}
	}
	if c.Contains("", testEpoch) || c.Len() != 0 {
		t.Error("the empty key was recorded")
	}
	// A clock that steps back must not lose or corrupt entries.
	c.Seen("a", testEpoch.Add(10*time.Minute))
	c.Seen("b", testEpoch)
	if !c.Contains("a", testEpoch.Add(11*time.Minute)) || !c.Contains("b", testEpoch.Add(time.Minute)) {
		t.Error("entries lost when time stepped back")
	}
	c.Seen("c", testEpoch.Add(20*time.Minute)) // a expired, b long expired
	if c.Contains("a", testEpoch.Add(20*time.Minute)) || c.Len() != 1 {
		t.Errorf("expired entries kept: len %d", c.Len())
	}
}

func TestRecentIDsConcurrent(t *testing.T) {
	c := NewRecentIDs()
	var fresh atomic.Int64
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				if !c.Seen("k"+strconv.Itoa(i), testEpoch.Add(time.Duration(g)*time.Millisecond)) {
					fresh.Add(1)
				}
				c.Contains("k"+strconv.Itoa(i), testEpoch)
			}
		}()
	}
	wg.Wait()
	if fresh.Load() != 500 {
		t.Errorf("%d first sightings, want exactly 500", fresh.Load())
	}
}

func TestDedupeKey(t *testing.T) {
	r := core.Route{Channel: "telegram", To: "-100123", AccountID: "default", ThreadID: "42"}
	if got := DedupeKey(r, "m1"); got != "telegram|-100123|default|42|m1" {
		t.Errorf("DedupeKey = %q", got)
	}
	if got := DedupeKey(core.Route{Channel: "slack", To: "C1"}, "m1"); got != "slack|C1|||m1" {
		t.Errorf("DedupeKey without account and thread = %q", got)
	}
	if got := DedupeKey(r, ""); got != "" {
		t.Errorf("no message id: %q, want empty", got)
	}
	// OpenClaw: "does not collide recent message-id keys when routing
	// contains delimiters".
	a := DedupeKey(core.Route{Channel: "signal|group", To: "peer"}, "same-id")
	b := DedupeKey(core.Route{Channel: "signal", To: "group|peer"}, "same-id")
	if a == b {
		t.Errorf("routes with delimiters collide: %q", a)
	}
	c := DedupeKey(core.Route{Channel: `signal\`, To: "peer"}, "same-id")
	d := DedupeKey(core.Route{Channel: "signal", To: `\peer`}, "same-id")
	if c == d || a == c {
		t.Errorf("escapes collide: %q %q %q", a, c, d)
	}
	if DedupeKey(r, "m1") == DedupeKey(core.Route{Channel: "telegram", To: "-100123", AccountID: "default", ThreadID: "43"}, "m1") {
		t.Error("different threads share a key")
	}
}

func BenchmarkRecentIDs(b *testing.B) {
	keys := make([]string, 20_000)
	for i := range keys {
		keys[i] = DedupeKey(core.Route{Channel: "telegram", To: core.ChatID("-100" + strconv.Itoa(i%50))}, core.MessageID(strconv.Itoa(i)))
	}
	b.Run("seen new keys at capacity", func(b *testing.B) {
		c := NewRecentIDs()
		now := testEpoch
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			c.Seen(keys[i%len(keys)], now)
			i++
			now = now.Add(time.Millisecond) // keys recur after 20 s: still remembered
		}
	})
	b.Run("contains", func(b *testing.B) {
		c := NewRecentIDs()
		for _, k := range keys[:RecentIDCapacity] {
			c.Seen(k, testEpoch)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			c.Contains(keys[i%len(keys)], testEpoch)
			i++
		}
	})
	b.Run("dedupe key", func(b *testing.B) {
		r := core.Route{Channel: "telegram", To: "-1001234567890", AccountID: "default", ThreadID: "42"}
		b.ReportAllocs()
		for b.Loop() {
			_ = DedupeKey(r, "123456")
		}
	})
}
