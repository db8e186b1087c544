package agent

import (
	"container/list"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/transcript"
)

// cachedSession is a session the runner keeps warm between turns: its index
// entry and its open transcript, so a busy session neither reloads its
// history from disk nor re-reads the index every turn. Only the session's
// active run uses it (Run refuses a second run), so it needs no lock of its
// own; the runner's mutex guards the cache structure.
type cachedSession struct {
	key   core.SessionKey
	entry core.SessionEntry
	file  transcript.Log
	elem  *list.Element
	// held is file.Held() when the session was checked in, counted in
	// Runner.cachedBytes while it is in the cache.
	held int64
}

// checkout removes the session from the cache and returns it, or nil. The
// run owns it until checkin.
func (r *Runner) checkout(key core.SessionKey) *cachedSession {
	r.mu.Lock()
	defer r.mu.Unlock()
	cs := r.cache[key]
	if cs == nil {
		return nil
	}
	delete(r.cache, key)
	r.lru.Remove(cs.elem)
	r.cachedBytes -= cs.held
	return cs
}

// checkin returns a session to the cache after a run, evicting (and closing)
// the least recently used ones beyond the cap.
func (r *Runner) checkin(cs *cachedSession) {
	if r.cfg.MaxCachedSessions < 0 {
		cs.file.Close()
		return
	}
	cs.held = cs.file.Held()
	r.mu.Lock()
	cs.elem = r.lru.PushFront(cs)
	r.cache[cs.key] = cs
	r.cachedBytes += cs.held
	var evicted []*cachedSession
	for r.lru.Len() > r.cfg.MaxCachedSessions || r.cachedBytes > r.cfg.MaxCachedBytes && r.lru.Len() > 1 {
		old := r.lru.Remove(r.lru.Back()).(*cachedSession)
		delete(r.cache, old.key)
		r.cachedBytes -= old.held
		evicted = append(evicted, old)
	}
	r.mu.Unlock()
	for _, old := range evicted {
		old.file.Close()
	}
}

// Forget drops the session from the runner's cache, so its next turn
// re-reads the sessions index and the transcript. Call it after changing a
// session's index entry or transcript outside the runner (sessions.patch,
// sessions.reset). It waits for nothing: an active run of the session keeps
// what it has and writes its entry back when it ends.
func (r *Runner) Forget(key core.SessionKey) {
	if cs := r.checkout(key); cs != nil {
		cs.file.Close()
	}
}

// Close closes every cached transcript. The runner must not be used after.
func (r *Runner) Close() error {
	r.mu.Lock()
	all := make([]*cachedSession, 0, len(r.cache))
	for _, cs := range r.cache {
		all = append(all, cs)
	}
	r.cache = map[core.SessionKey]*cachedSession{}
	r.lru.Init()
	r.cachedBytes = 0
	r.mu.Unlock()
	for _, cs := range all {
		cs.file.Close()
	}
	return nil
}
