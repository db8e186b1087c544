package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/store"
)

var _ store.Journal = (*Store)(nil)

// How ApplyJournal writes: a batch is one transaction of a handful of
// statements however many messages it carries. Appends take their ids
// from the sequence first (so each entry's id is known in batch order, and
// an entry skipped as a duplicate leaves its id unused, as SQLite's do),
// then one INSERT over arrays with ON CONFLICT DO NOTHING on the dedupe
// key. Each kind of mark is one UPDATE over arrays of id and argument,
// guarded by the entry's state; outcomes one INSERT; Delivered one UPDATE.
// Counts tell a statement that skipped rows, and only then is the cause
// looked up. Two instances appending one dedupe key at once: the second
// INSERT waits for the first's commit and skips, then finds its holder.

// ApplyJournal applies b in one transaction; see store.Journal.
func (s *Store) ApplyJournal(ctx context.Context, b *store.JournalBatch) ([]store.JournalAccept, error) {
	if b == nil || b.Empty() {
		return nil, nil
	}
	if err := b.Validate(); err != nil {
		return nil, err
	}
	now := s.nowMilli()
	var accepts []store.JournalAccept
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := checkFences(ctx, tx, b.Fences); err != nil {
			return err
		}
		var err error
		if len(b.Append) > 0 {
			if accepts, err = appendEntries(ctx, tx, b.Append, now); err != nil {
				return fmt.Errorf("store: apply journal: append: %w", err)
			}
		}
		if len(b.Running) > 0 {
			var p markPairs
			for _, m := range b.Running {
				p.add(m.IDs, m.RunID, true) // the last mark of an entry wins
			}
			if err := mark(ctx, tx, sqlRunning, &p, now, "running"); err != nil {
				return err
			}
		}
		if len(b.Complete) > 0 {
			if err := complete(ctx, tx, b.Complete, now); err != nil {
				return err
			}
		}
		if len(b.Dropped) > 0 {
			var p markPairs
			for _, d := range b.Dropped {
				p.add(d.IDs, d.Note, false)
			}
			if err := mark(ctx, tx, sqlDropped, &p, now, "dropped"); err != nil {
				return err
			}
		}
		if len(b.Delivered) > 0 {
			if err := delivered(ctx, tx, b.Delivered, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return accepts, nil
}

// appendEntries inserts entries with ids drawn from the sequence in batch
// order and reports each as accepted or as a duplicate of the entry
// holding its dedupe key (an earlier batch's, or an earlier entry of this
// one).
func appendEntries(ctx context.Context, tx pgx.Tx, entries []store.JournalEntry, now int64) ([]store.JournalAccept, error) {
	rows, err := tx.Query(ctx, `SELECT nextval('journal_id_seq') FROM generate_series(1, $1)`, len(entries))
	if err != nil {
		return nil, err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("draw ids: %w", err)
	}
	slices.Sort(ids)
	var (
		keys, dedupes, inbounds = make([]string, len(entries)), make([]*string, len(entries)), make([]string, len(entries))
		created                 = make([]int64, len(entries))
		accepts                 = make([]store.JournalAccept, len(entries))
	)
	for i := range entries {
		e := &entries[i]
		keys[i], inbounds[i] = string(e.SessionKey), string(e.Inbound)
		if e.DedupeKey != "" { // "" is stored as NULL: no key, never a collision
			dedupes[i] = &e.DedupeKey
		}
		created[i] = e.CreatedAt
		if created[i] == 0 {
			created[i] = now
		}
		accepts[i] = store.JournalAccept{ID: ids[i], State: store.JournalAccepted}
	}
	rows, err = tx.Query(ctx, `INSERT INTO journal (id, session_key, state, dedupe_key, inbound, created_at, updated_at)
		SELECT u.id, u.k, 'accepted', u.d, u.i, u.c, $6
		FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::bigint[]) WITH ORDINALITY AS u(id, k, d, i, c, n)
		ORDER BY u.n
		ON CONFLICT (dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING
		RETURNING id`, ids, keys, dedupes, inbounds, created, now)
	if err != nil {
		return nil, err
	}
	inserted, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, err
	}
	if len(inserted) == len(entries) {
		return accepts, nil
	}
	// Some rows were skipped: find what holds their keys.
	got := make(map[int64]bool, len(inserted))
	for _, id := range inserted {
		got[id] = true
	}
	var skipped []string
	for i := range entries {
		if !got[ids[i]] {
			if entries[i].DedupeKey == "" {
				return nil, fmt.Errorf("entry %d of session %s was not stored", i, entries[i].SessionKey)
			}
			skipped = append(skipped, entries[i].DedupeKey)
		}
	}
	rows, err = tx.Query(ctx, `SELECT dedupe_key, id, state FROM journal WHERE dedupe_key = ANY($1)`, skipped)
	if err != nil {
		return nil, fmt.Errorf("look up dedupe keys: %w", err)
	}
	type holder struct {
		id    int64
		state string
	}
	holders := map[string]holder{}
	var (
		key string
		h   holder
	)
	if _, err := pgx.ForEachRow(rows, []any{&key, &h.id, &h.state}, func() error { holders[key] = h; return nil }); err != nil {
		return nil, fmt.Errorf("look up dedupe keys: %w", err)
	}
	for i := range entries {
		if got[ids[i]] {
			continue
		}
		h, ok := holders[entries[i].DedupeKey]
		if !ok {
			return nil, fmt.Errorf("entry %d of session %s was not stored", i, entries[i].SessionKey)
		}
		accepts[i] = store.JournalAccept{ID: h.id, Duplicate: true, State: store.JournalState(h.state)}
	}
	return accepts, nil
}

// markPairs are the id → argument pairs of one kind of mark, one per id.
type markPairs struct {
	ids  []int64
	args []string
	at   map[int64]int
}

// add records arg for ids; an id seen before keeps its argument, or takes
// arg if last wins.
func (p *markPairs) add(ids []int64, arg string, lastWins bool) {
	if p.at == nil {
		p.at = map[int64]int{}
	}
	for _, id := range ids {
		if k, ok := p.at[id]; ok {
			if lastWins {
				p.args[k] = arg
			}
			continue
		}
		p.at[id] = len(p.ids)
		p.ids = append(p.ids, id)
		p.args = append(p.args, arg)
	}
}

// The marks: $1 is now, $2 and $3 the ids and their arguments. Entries
// already past the transition are left alone.
const (
	sqlRunning = `UPDATE journal SET state = 'running', run_id = m.arg, updated_at = $1
		FROM unnest($2::bigint[], $3::text[]) AS m(id, arg)
		WHERE journal.id = m.id AND journal.state IN ('accepted', 'running')`
	sqlDone = `UPDATE journal SET state = 'done', run_id = m.arg, updated_at = $1
		FROM unnest($2::bigint[], $3::text[]) AS m(id, arg)
		WHERE journal.id = m.id AND journal.state IN ('accepted', 'running')`
	sqlDropped = `UPDATE journal SET state = 'dropped', note = m.arg, updated_at = $1
		FROM unnest($2::bigint[], $3::text[]) AS m(id, arg)
		WHERE journal.id = m.id AND journal.state IN ('accepted', 'running')`
)

// mark runs a guarded state update; an id that does not exist is an error
// naming it.
func mark(ctx context.Context, tx pgx.Tx, query string, p *markPairs, now int64, kind string) error {
	if len(p.ids) == 0 {
		return nil
	}
	tag, err := tx.Exec(ctx, query, now, p.ids, p.args)
	if err != nil {
		return fmt.Errorf("store: apply journal: mark %s: %w", kind, err)
	}
	if tag.RowsAffected() == int64(len(p.ids)) {
		return nil
	}
	rows, err := tx.Query(ctx, `SELECT u.id FROM unnest($1::bigint[]) AS u(id)
		WHERE NOT EXISTS (SELECT 1 FROM journal WHERE journal.id = u.id) ORDER BY u.id`, p.ids)
	if err != nil {
		return fmt.Errorf("store: apply journal: mark %s: %w", kind, err)
	}
	missing, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return fmt.Errorf("store: apply journal: mark %s: %w", kind, err)
	}
	if len(missing) > 0 {
		list := make([]string, len(missing))
		for i, id := range missing {
			list[i] = strconv.FormatInt(id, 10)
		}
		return fmt.Errorf("%w: id %s, marked %s", store.ErrUnknownJournalEntry, strings.Join(list, ", "), kind)
	}
	return nil
}

// complete stores the outcomes of completed runs, then marks their entries
// done. A run whose outcome is already stored fails the batch, naming it.
func complete(ctx context.Context, tx pgx.Tx, cs []store.Completion, now int64) error {
	runIDs := make([]string, len(cs))
	keys, deliveries := make([]string, len(cs)), make([]string, len(cs))
	delivered, created := make([]bool, len(cs)), make([]int64, len(cs))
	for i, c := range cs {
		o := &c.Outcome
		runIDs[i], keys[i], deliveries[i], delivered[i] = o.RunID, string(o.SessionKey), string(o.Delivery), o.Delivered
		created[i] = o.CreatedAt
		if created[i] == 0 {
			created[i] = now
		}
	}
	tag, err := tx.Exec(ctx, `INSERT INTO run_outcomes (run_id, session_key, delivery, delivered, created_at, updated_at)
		SELECT r, k, d, v, c, $6 FROM unnest($1::text[], $2::text[], $3::text[], $4::bool[], $5::bigint[]) WITH ORDINALITY AS u(r, k, d, v, c, n)
		ORDER BY u.n
		ON CONFLICT (run_id) DO NOTHING`, runIDs, keys, deliveries, delivered, created, now)
	if err != nil {
		return fmt.Errorf("store: apply journal: store run outcomes: %w", err)
	}
	if tag.RowsAffected() != int64(len(cs)) {
		return duplicateRuns(ctx, tx, runIDs)
	}
	var p markPairs
	for _, c := range cs {
		p.add(c.IDs, c.Outcome.RunID, false)
	}
	return mark(ctx, tx, sqlDone, &p, now, "done")
}

// duplicateRuns is the error for completions of which some were stored
// before this batch: the ones whose rows this transaction did not write.
func duplicateRuns(ctx context.Context, tx pgx.Tx, runIDs []string) error {
	rows, err := tx.Query(ctx, `SELECT run_id FROM run_outcomes
		WHERE run_id = ANY($1) AND xmin <> pg_current_xact_id()::xid ORDER BY run_id`, runIDs)
	if err == nil {
		if have, err := pgx.CollectRows(rows, pgx.RowTo[string]); err == nil && len(have) > 0 {
			return fmt.Errorf("%w: run %s, completed again", store.ErrDuplicateRun, strings.Join(have, ", "))
		}
	}
	return fmt.Errorf("%w: one of runs %s, completed again", store.ErrDuplicateRun, strings.Join(runIDs, ", "))
}

// delivered marks the outcomes of runIDs delivered; updated_at becomes the
// time of delivery, which pruning counts from, and marking again keeps it.
// A run without a stored outcome is an error naming it.
func delivered(ctx context.Context, tx pgx.Tx, runIDs []string, now int64) error {
	distinct := slices.Clone(runIDs)
	slices.Sort(distinct)
	distinct = slices.Compact(distinct)
	tag, err := tx.Exec(ctx, `UPDATE run_outcomes SET updated_at = CASE WHEN delivered THEN updated_at ELSE $1 END, delivered = true
		WHERE run_id = ANY($2)`, now, distinct)
	if err != nil {
		return fmt.Errorf("store: apply journal: mark delivered: %w", err)
	}
	if tag.RowsAffected() == int64(len(distinct)) {
		return nil
	}
	rows, err := tx.Query(ctx, `SELECT u.r FROM unnest($1::text[]) AS u(r)
		WHERE NOT EXISTS (SELECT 1 FROM run_outcomes WHERE run_id = u.r) ORDER BY u.r`, distinct)
	if err != nil {
		return fmt.Errorf("store: apply journal: mark delivered: %w", err)
	}
	missing, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("store: apply journal: mark delivered: %w", err)
	}
	return fmt.Errorf("%w: run %s, marked delivered", store.ErrUnknownRun, strings.Join(missing, ", "))
}

const journalColumns = `id, session_key, state, coalesce(dedupe_key, ''), inbound,
	coalesce(run_id, ''), coalesce(note, ''), created_at, updated_at`

func (s *Store) queryEntries(ctx context.Context, query string, args ...any) ([]store.JournalEntry, error) {
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.JournalEntry, error) {
		var (
			e                   store.JournalEntry
			key, state, inbound string
		)
		err := r.Scan(&e.ID, &key, &state, &e.DedupeKey, &inbound, &e.RunID, &e.Note, &e.CreatedAt, &e.UpdatedAt)
		e.SessionKey, e.State, e.Inbound = core.SessionKey(key), store.JournalState(state), json.RawMessage(inbound)
		return e, err
	})
}

// PendingJournal returns the accepted and running entries, ordered by ID.
func (s *Store) PendingJournal(ctx context.Context) ([]store.JournalEntry, error) {
	out, err := s.queryEntries(ctx, `SELECT `+journalColumns+` FROM journal WHERE state IN ('accepted', 'running') ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("store: pending journal: %w", err)
	}
	return out, nil
}

// JournalEntries returns the entries with the given ids that exist,
// ordered by ID.
func (s *Store) JournalEntries(ctx context.Context, ids ...int64) ([]store.JournalEntry, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	out, err := s.queryEntries(ctx, `SELECT `+journalColumns+` FROM journal WHERE id = ANY($1) ORDER BY id`, ids)
	if err != nil {
		return nil, fmt.Errorf("store: journal entries: %w", err)
	}
	return out, nil
}

// UndeliveredOutcomes returns the outcomes not yet marked delivered,
// oldest first.
func (s *Store) UndeliveredOutcomes(ctx context.Context) ([]store.RunOutcome, error) {
	rows, err := s.pool.Query(ctx, `SELECT run_id, session_key, delivery, created_at FROM run_outcomes
		WHERE NOT delivered ORDER BY created_at, seq`)
	if err != nil {
		return nil, fmt.Errorf("store: undelivered outcomes: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.RunOutcome, error) {
		var (
			o             store.RunOutcome
			key, delivery string
		)
		err := r.Scan(&o.RunID, &key, &delivery, &o.CreatedAt)
		o.SessionKey, o.Delivery = core.SessionKey(key), json.RawMessage(delivery)
		return o, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: undelivered outcomes: %w", err)
	}
	return out, nil
}

// PruneJournal deletes done and dropped entries, and delivered outcomes,
// last updated before the cutoff (unix ms), in statements of at most
// pruneChunk rows, and returns how many rows went.
func (s *Store) PruneJournal(ctx context.Context, before int64) (int64, error) {
	entries, err := s.pruneChunked(ctx, "journal entries", `DELETE FROM journal WHERE id IN (
		SELECT id FROM journal WHERE state IN ('done', 'dropped') AND updated_at < $1 LIMIT $2)`, before)
	if err != nil {
		return entries, err
	}
	outcomes, err := s.pruneChunked(ctx, "run outcomes", `DELETE FROM run_outcomes WHERE run_id IN (
		SELECT run_id FROM run_outcomes WHERE delivered AND updated_at < $1 LIMIT $2)`, before)
	return entries + outcomes, err
}
