package agent

import (
	"context"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
)

// Session operations for the gateway (chat.history, sessions.*): each takes
// the session's run slot, so it never races a turn; a session with an active
// run answers ErrBusy.

// History returns the session's index entry and its current transcript,
// read without repairing anything. ok is false for an unknown session.
func (r *Runner) History(ctx context.Context, key core.SessionKey) (core.SessionEntry, []core.Message, bool, error) {
	return r.HistoryOf(ctx, key, "")
}

// HistoryOf is History of one of the session's transcripts: sessionID
// names the current one or one of entry.Earlier; "" or any other id reads
// the current one. It returns the id it read as the entry's SessionID.
// Safe for concurrent use; reads the store and a transcript.
func (r *Runner) HistoryOf(ctx context.Context, key core.SessionKey, sessionID string) (core.SessionEntry, []core.Message, bool, error) {
	entry, ok, err := r.entryOf(ctx, key)
	if err != nil || !ok {
		return entry, nil, ok, err
	}
	for _, t := range entry.Earlier {
		if sessionID != "" && t.SessionID == sessionID {
			entry.SessionID = sessionID
			break
		}
	}
	msgs, err := r.deps.transcripts(r.cfg.StateDir).Read(ctx, r.cfg.AgentID, entry.SessionID)
	return entry, msgs, true, err
}

// entryOf returns the session's entry, from the warm cache when there is
// one.
func (r *Runner) entryOf(ctx context.Context, key core.SessionKey) (core.SessionEntry, bool, error) {
	r.mu.Lock()
	if cs := r.cache[key]; cs != nil {
		e := cs.entry
		r.mu.Unlock()
		return e, true, nil
	}
	r.mu.Unlock()
	return r.deps.Sessions.GetSession(ctx, key)
}

// exclusive runs fn holding the session's run slot.
func (r *Runner) exclusive(key core.SessionKey, fn func(cached *cachedSession) (*cachedSession, error)) error {
	run, err := r.begin(key, "session-op", func(error) {})
	if err != nil {
		return err
	}
	defer r.end(key, run)
	cs := r.checkout(key)
	back, err := fn(cs)
	if back != nil {
		r.checkin(back)
	}
	return err
}

// Reset starts a new transcript for the session, as /new does (the old
// file stays on disk), and returns the new entry.
func (r *Runner) Reset(ctx context.Context, key core.SessionKey) (core.SessionEntry, error) {
	var out core.SessionEntry
	err := r.exclusive(key, func(cs *cachedSession) (*cachedSession, error) {
		old, found := core.SessionEntry{}, false
		if cs != nil {
			old, found = cs.entry, true
			cs.file.Close()
		} else {
			var err error
			if old, found, err = r.deps.Sessions.GetSession(ctx, key); err != nil {
				return nil, err
			}
		}
		now := r.deps.Now().UnixMilli()
		out = core.SessionEntry{Key: key, AgentID: r.cfg.AgentID, SessionID: r.deps.NewID(), CreatedAt: now, UpdatedAt: now}
		if found {
			out.Label, out.LastRoute, out.ThinkingLevel = old.Label, old.LastRoute, old.ThinkingLevel
			out.Earlier = core.Retired(old, now)
		}
		return nil, r.deps.Sessions.PutSession(ctx, out)
	})
	return out, err
}

// Patch changes the session's index entry with fn (label, thinking level),
// creating the session if it does not exist yet.
func (r *Runner) Patch(ctx context.Context, key core.SessionKey, fn func(*core.SessionEntry)) (core.SessionEntry, error) {
	var out core.SessionEntry
	err := r.exclusive(key, func(cs *cachedSession) (*cachedSession, error) {
		if cs != nil {
			out = cs.entry
		} else {
			e, found, err := r.deps.Sessions.GetSession(ctx, key)
			if err != nil {
				return nil, err
			}
			if !found {
				now := r.deps.Now().UnixMilli()
				e = core.SessionEntry{Key: key, AgentID: r.cfg.AgentID, SessionID: r.deps.NewID(), CreatedAt: now, UpdatedAt: now}
			}
			out = e
		}
		fn(&out)
		out.Key = key
		if err := r.deps.Sessions.PutSession(ctx, out); err != nil {
			return cs, err
		}
		if cs != nil {
			cs.entry = out
		}
		return cs, nil
	})
	return out, err
}

// Delete removes the session from the index; its transcripts stay on disk.
func (r *Runner) Delete(ctx context.Context, key core.SessionKey) error {
	return r.exclusive(key, func(cs *cachedSession) (*cachedSession, error) {
		if cs != nil {
			cs.file.Close()
		}
		return nil, r.deps.Sessions.DeleteSession(ctx, key)
	})
}

// Inject appends messages to the session's transcript outside a turn
// (chat.inject), creating the session if needed.
func (r *Runner) Inject(ctx context.Context, key core.SessionKey, msgs ...core.Message) error {
	return r.exclusive(key, func(cs *cachedSession) (*cachedSession, error) {
		tr := &turnRun{Runner: r, t: Turn{Inbound: core.Inbound{SessionKey: key}}, res: &Result{}}
		if _, _, err := tr.resolveSession(ctx, &core.Inbound{SessionKey: key}, cs); err != nil {
			return cs, err
		}
		if cs != nil {
			tr.file = cs.file
		} else if err := tr.openTranscript(key); err != nil {
			return nil, err
		}
		if err := tr.file.Append(msgs...); err != nil {
			tr.file.Close()
			return nil, fmt.Errorf("agent: inject: %w", err)
		}
		tr.entry.UpdatedAt = r.deps.Now().UnixMilli()
		if err := r.deps.Sessions.PutSession(ctx, tr.entry); err != nil {
			tr.file.Close()
			return nil, err
		}
		return &cachedSession{key: key, entry: tr.entry, file: tr.file}, nil
	})
}

// Compact summarises the session's older history now (sessions.compact,
// /compact), whatever the context size.
func (r *Runner) Compact(ctx context.Context, key core.SessionKey, onCompaction func(CompactionEvent)) error {
	return r.exclusive(key, func(cs *cachedSession) (*cachedSession, error) {
		tr := &turnRun{Runner: r, t: Turn{Inbound: core.Inbound{SessionKey: key}, OnCompaction: onCompaction}, res: &Result{}, run: &activeRun{}}
		if cs == nil {
			e, found, err := r.deps.Sessions.GetSession(ctx, key)
			if err != nil {
				return nil, err
			}
			if !found {
				return nil, fmt.Errorf("agent: no session %s", key)
			}
			tr.entry = e
			if err := tr.openTranscript(key); err != nil {
				return nil, err
			}
		} else {
			tr.entry, tr.file = cs.entry, cs.file
		}
		if err := tr.resolveModel(); err != nil {
			return &cachedSession{key: key, entry: tr.entry, file: tr.file}, err
		}
		tr.history = tr.contextHistory(tr.file.Messages(), true)
		err := tr.compactIfNeeded(ctx, "manual", true)
		if err == nil {
			if perr := r.deps.Sessions.PutSession(ctx, tr.entry); perr != nil {
				err = perr
			}
		}
		return &cachedSession{key: key, entry: tr.entry, file: tr.file}, err
	})
}
