package whatsapp

import (
	"strings"
	"sync"

	"go.mau.fi/whatsmeow/types"
)

// recentLimit bounds the messages remembered for quoting and reactions.
const recentLimit = 2000

// recentMessage is what a reply needs to quote a message or react to it.
type recentMessage struct {
	chat, sender types.JID
	text         string
}

// recentMessages remembers the latest inbound messages by id, oldest
// forgotten first. Safe for concurrent use.
type recentMessages struct {
	mu    sync.Mutex
	limit int
	order []types.MessageID
	next  int
	byID  map[types.MessageID]recentMessage
}

func newRecentMessages(limit int) *recentMessages {
	return &recentMessages{limit: limit, byID: make(map[types.MessageID]recentMessage, limit)}
}

func (r *recentMessages) add(id types.MessageID, m recentMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(m.text) > 1024 {
		m.text = strings.ToValidUTF8(m.text[:1024], "")
	}
	if _, ok := r.byID[id]; ok {
		r.byID[id] = m
		return
	}
	if len(r.order) < r.limit {
		r.order = append(r.order, id)
	} else {
		delete(r.byID, r.order[r.next])
		r.order[r.next] = id
		r.next = (r.next + 1) % r.limit
	}
	r.byID[id] = m
}

func (r *recentMessages) get(id types.MessageID) (recentMessage, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m, ok := r.byID[id]
	return m, ok
}
