package telegram

import (
	"sync"
	"time"
)

// Telegram's send limits (Bot FAQ): at most one message per second in a
// chat and twenty per minute in a group (reliability matrix row 20). Each
// chat gets a token bucket of one token, refilled at that rate, so sends
// are spread out instead of refused with 429.
const (
	chatBurst    = 1
	chatInterval = time.Second
	groupBurst   = 1
	groupPerMin  = 20
	maxBuckets   = 10_000
)

// pacer holds a token bucket per chat. Safe for concurrent use.
type pacer struct {
	mu      sync.Mutex
	now     func() time.Time
	buckets map[int64]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

// reserve takes a token for one message to chat and returns how long to
// wait before sending it (0 when a token was free). Group chats have
// negative ids.
func (p *pacer) reserve(chat int64) time.Duration {
	burst, every := float64(chatBurst), chatInterval
	if chat < 0 {
		burst, every = groupBurst, time.Minute/groupPerMin
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if p.buckets == nil {
		p.buckets = map[int64]*bucket{}
	}
	b := p.buckets[chat]
	if b == nil {
		if len(p.buckets) >= maxBuckets {
			p.pruneLocked(now)
		}
		b = &bucket{tokens: burst, last: now}
		p.buckets[chat] = b
	}
	b.tokens = min(burst, b.tokens+float64(now.Sub(b.last))/float64(every))
	b.last = now
	b.tokens--
	if b.tokens >= 0 {
		return 0
	}
	return time.Duration(-b.tokens * float64(every))
}

// pruneLocked forgets chats whose buckets have refilled (idle chats).
func (p *pacer) pruneLocked(now time.Time) {
	for id, b := range p.buckets {
		if now.Sub(b.last) > time.Minute {
			delete(p.buckets, id)
		}
	}
}
