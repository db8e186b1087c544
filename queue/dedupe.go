package queue

import (
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// The bounds of the recent message id cache (openclaw-facts §3.3, OpenClaw's
// queue/recent-message-ids.ts).
const (
	// RecentIDTTL is how long a message id is remembered.
	RecentIDTTL = 5 * time.Minute
	// RecentIDCapacity is how many message ids are remembered at most; the
	// oldest are forgotten first.
	RecentIDCapacity = 10_000
)

// RecentIDs remembers recently queued message keys so that a platform's
// redelivery of a message is recognised: the process-wide cache of
// openclaw-facts §3.3 (5 minutes, 10,000 entries). Each call costs O(1) and
// memory is bounded by the capacity; no goroutine runs: expired entries are
// dropped lazily, when new ones arrive. It is safe for concurrent use, and
// the zero value is ready to use with the default bounds. The durable,
// restart-proof dedupe of inbound messages is the store's; this cache saves
// it a round trip for a redelivery within the window.
type RecentIDs struct {
	mu       sync.Mutex
	ttl      time.Duration
	capacity int
	seq      uint64
	byKey    map[string]recentEntry
	// ring holds the entries in insertion order, oldest at head.
	ring       []recentSlot
	head, size int
}

type recentEntry struct {
	at  time.Time
	seq uint64
}

// recentSlot is an entry in insertion order. A slot whose seq no longer
// matches byKey[key] belongs to a forgotten or re-recorded key.
type recentSlot struct {
	key string
	at  time.Time
	seq uint64
}

// NewRecentIDs returns an empty cache with the bounds of openclaw-facts:
// RecentIDTTL and RecentIDCapacity.
func NewRecentIDs() *RecentIDs { return newRecentIDs(RecentIDTTL, RecentIDCapacity) }

func newRecentIDs(ttl time.Duration, capacity int) *RecentIDs {
	return &RecentIDs{ttl: ttl, capacity: max(capacity, 1), byKey: map[string]recentEntry{}}
}

// Seen records key at now and reports whether it was already recorded
// within the TTL, that is, whether this is a redelivery. A redelivery does
// not refresh the key: it stays remembered until RecentIDTTL after it was
// first recorded (OpenClaw peeks before it records, and records only what
// it admits). An empty key is never recorded or seen.
func (c *RecentIDs) Seen(key string, now time.Time) bool {
	if key == "" {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byKey == nil { // the zero value: the default bounds
		c.ttl, c.capacity, c.byKey = RecentIDTTL, RecentIDCapacity, map[string]recentEntry{}
	}
	if e, ok := c.byKey[key]; ok {
		if now.Sub(e.at) < c.ttl {
			return true
		}
		delete(c.byKey, key)
	}
	c.expire(now)
	if c.size == c.capacity {
		c.pop()
	}
	c.seq++
	c.byKey[key] = recentEntry{at: now, seq: c.seq}
	c.push(recentSlot{key: key, at: now, seq: c.seq})
	return false
}

// Contains reports whether key was recorded within the TTL before now,
// without recording or refreshing it (OpenClaw's peek): a caller that
// records a key only once the message is durable asks Contains first and
// calls Seen after.
func (c *RecentIDs) Contains(key string, now time.Time) bool {
	if key == "" {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[key]
	return ok && now.Sub(e.at) < c.ttl
}

// Forget removes key, so that a message whose admission failed can be
// retried without being mistaken for a redelivery.
func (c *RecentIDs) Forget(key string) {
	c.mu.Lock()
	delete(c.byKey, key)
	c.mu.Unlock()
}

// Len returns how many keys are remembered, expired ones not yet dropped
// included.
func (c *RecentIDs) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byKey)
}

// expire drops the expired entries at the head of the ring. Entries are
// recorded in time order, so the expired ones come first.
func (c *RecentIDs) expire(now time.Time) {
	for c.size > 0 {
		s := c.ring[c.head]
		if now.Sub(s.at) < c.ttl {
			return
		}
		c.pop()
	}
}

// pop removes the oldest slot and, unless the key was recorded again since,
// its entry.
func (c *RecentIDs) pop() {
	s := c.ring[c.head]
	c.ring[c.head] = recentSlot{}
	c.head = (c.head + 1) % len(c.ring)
	c.size--
	if e, ok := c.byKey[s.key]; ok && e.seq == s.seq {
		delete(c.byKey, s.key)
	}
}

// push appends a slot, growing the ring by doubling up to the capacity.
func (c *RecentIDs) push(s recentSlot) {
	if c.size == len(c.ring) {
		n := min(max(2*len(c.ring), 64), c.capacity)
		ring := make([]recentSlot, n)
		for i := 0; i < c.size; i++ {
			ring[i] = c.ring[(c.head+i)%len(c.ring)]
		}
		c.ring, c.head = ring, 0
	}
	c.ring[(c.head+c.size)%len(c.ring)] = s
	c.size++
}

// DedupeKey returns the RecentIDs key of a message: its route's channel,
// to, account id and thread id and the message id, joined by "|", with "\"
// and "|" inside a part escaped by a backslash so that different routes can
// never share a key. It returns "" when messageID is empty: a message
// without an id cannot be recognised again.
func DedupeKey(route core.Route, messageID core.MessageID) string {
	if messageID == "" {
		return ""
	}
	parts := [...]string{string(route.Channel), string(route.To), string(route.AccountID), route.ThreadID, string(messageID)}
	n, escapes := len(parts)-1, 0
	for _, part := range parts {
		n += len(part)
		escapes += strings.Count(part, `\`) + strings.Count(part, "|")
	}
	var b strings.Builder
	b.Grow(n + escapes)
	for i, part := range parts {
		if i > 0 {
			b.WriteByte('|')
		}
		if escapes == 0 {
			b.WriteString(part)
			continue
		}
		for j := 0; j < len(part); j++ {
			if c := part[j]; c == '\\' || c == '|' {
				b.WriteByte('\\')
			}
			b.WriteByte(part[j])
		}
	}
	return b.String()
}
