package channels

import (
	"container/list"
	"sync"

	"github.com/switchboardhq/switchboard/core"
)

// Group history buffer limits (openclaw-facts §4.3).
const (
	// HistoryShown is how many of them the next turn shows the model.
	HistoryShown = 20
	// MaxHistoryGroups is how many groups keep a buffer; the least
	// recently used one is forgotten beyond it.
	MaxHistoryGroups = 1000
)

// GroupHistory is the per-group buffer of messages "since the last reply":
// group messages the gate skipped because they did not address the bot.
// The next message that does gets them as untrusted history. It lives in
// memory (as OpenClaw's does). Safe for concurrent use; the zero value is
// ready and uses the default limits.
type GroupHistory struct {
	// MaxGroups caps the buffers kept; zero means MaxHistoryGroups.
	MaxGroups int

	mu     sync.Mutex
	groups map[string]*list.Element // key → element of lru holding *groupBuf
	lru    list.List                // front = most recently used
}

type groupBuf struct {
	key     string
	entries []core.HistoryEntry
}

// Add appends a skipped message to the group's buffer, keeping the newest
// limit entries; limit ≤ 0 keeps nothing.
func (h *GroupHistory) Add(key string, e core.HistoryEntry, limit int) {
	if limit <= 0 || key == "" {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.groups == nil {
		h.groups = map[string]*list.Element{}
	}
	el, ok := h.groups[key]
	if !ok {
		el = h.lru.PushFront(&groupBuf{key: key})
		h.groups[key] = el
		maxGroups := h.MaxGroups
		if maxGroups <= 0 {
			maxGroups = MaxHistoryGroups
		}
		for h.lru.Len() > maxGroups {
			old := h.lru.Back()
			h.lru.Remove(old)
			delete(h.groups, old.Value.(*groupBuf).key)
		}
	} else {
		h.lru.MoveToFront(el)
	}
	buf := el.Value.(*groupBuf)
	buf.entries = append(buf.entries, e)
	if over := len(buf.entries) - limit; over > 0 {
		buf.entries = append(buf.entries[:0], buf.entries[over:]...)
	}
}

// Peek returns the newest n entries of the group's buffer (n ≤ 0: all)
// and whether older ones were left out, without clearing it.
func (h *GroupHistory) Peek(key string, n int) (entries []core.HistoryEntry, truncated bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	el, ok := h.groups[key]
	if !ok {
		return nil, false
	}
	all := el.Value.(*groupBuf).entries
	if n > 0 && len(all) > n {
		return append([]core.HistoryEntry(nil), all[len(all)-n:]...), true
	}
	return append([]core.HistoryEntry(nil), all...), false
}

// Clear empties the group's buffer (after a turn took it).
func (h *GroupHistory) Clear(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if el, ok := h.groups[key]; ok {
		h.lru.Remove(el)
		delete(h.groups, key)
	}
}

// Len returns how many groups have a buffer.
func (h *GroupHistory) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lru.Len()
}
