package gateway

import (
	"container/list"
	"sync"
	"time"
)

// Idempotency limits (openclaw-facts §1.2: DEDUPE_TTL_MS, DEDUPE_MAX).
const (
	dedupeTTL = 5 * time.Minute
	dedupeMax = 1000
)

// dedupe remembers the answers of idempotent requests (chat.send, agent,
// send) by "<method>:<idempotencyKey>" for dedupeTTL, at most dedupeMax
// entries, so a client retrying after a lost response gets the first answer
// instead of a second run. An entry is first stored when the request is
// accepted (status in_flight) and replaced when it completes.
type dedupe struct {
	now func() time.Time

	mu    sync.Mutex
	byKey map[string]*list.Element
	order *list.List // oldest first
}

type dedupeEntry struct {
	key     string
	payload any
	at      time.Time
}

func newDedupe(now func() time.Time) *dedupe {
	return &dedupe{now: now, byKey: map[string]*list.Element{}, order: list.New()}
}

// get returns the stored answer for key, if it is fresh.
func (d *dedupe) get(key string) (any, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	el, ok := d.byKey[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*dedupeEntry)
	if d.now().Sub(e.at) > dedupeTTL {
		d.order.Remove(el)
		delete(d.byKey, key)
		return nil, false
	}
	return e.payload, true
}

// put stores or replaces the answer for key, evicting the oldest entries
// beyond dedupeMax.
func (d *dedupe) put(key string, payload any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if el, ok := d.byKey[key]; ok {
		e := el.Value.(*dedupeEntry)
		e.payload = payload
		return
	}
	d.byKey[key] = d.order.PushBack(&dedupeEntry{key: key, payload: payload, at: d.now()})
	for d.order.Len() > dedupeMax {
		el := d.order.Front()
		d.order.Remove(el)
		delete(d.byKey, el.Value.(*dedupeEntry).key)
	}
}

// update replaces the answer for key if it is still remembered.
func (d *dedupe) update(key string, payload any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if el, ok := d.byKey[key]; ok {
		el.Value.(*dedupeEntry).payload = payload
	}
}

// forget removes key: the request failed before it was accepted, so a retry
// must run it.
func (d *dedupe) forget(key string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if el, ok := d.byKey[key]; ok {
		d.order.Remove(el)
		delete(d.byKey, key)
	}
}

// prune drops expired entries.
func (d *dedupe) prune() {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.now()
	for el := d.order.Front(); el != nil; {
		e := el.Value.(*dedupeEntry)
		if now.Sub(e.at) <= dedupeTTL {
			return
		}
		next := el.Next()
		d.order.Remove(el)
		delete(d.byKey, e.key)
		el = next
	}
}
