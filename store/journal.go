package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// JournalState is where an accepted inbound message is in its life.
type JournalState string

// The states of a journal entry. An entry starts accepted and ends done or
// dropped; done and dropped are final.
const (
	// JournalAccepted means durably accepted: the platform may now be acked.
	JournalAccepted JournalState = "accepted"
	// JournalRunning means part of a run that has started (RunID set).
	JournalRunning JournalState = "running"
	// JournalDone means its run completed and the run's outcome is stored.
	JournalDone JournalState = "done"
	// JournalDropped means refused by policy (drop:new, /stop, a busy
	// heartbeat); Note says why, and the sender was told.
	JournalDropped JournalState = "dropped"
)

// JournalEntry is one accepted inbound message.
type JournalEntry struct {
	// ID is assigned on append and increases: it is the acceptance order.
	ID int64
	// SessionKey is the session the message belongs to.
	SessionKey core.SessionKey
	// State is where the message is in its life.
	State JournalState
	// DedupeKey is the platform's identity of the message
	// (channel|to|account|thread|messageId); "" means none. No two entries
	// have the same non-empty key while both exist.
	DedupeKey string
	// Inbound is the core.Inbound as JSON, stored and returned as given.
	Inbound json.RawMessage
	// RunID is the run the entry is or was part of; "" until it runs.
	RunID string
	// Note says why a dropped entry was dropped.
	Note string
	// CreatedAt is when the message was accepted, UpdatedAt when its state
	// last changed, both in unix milliseconds.
	CreatedAt, UpdatedAt int64
}

// JournalAccept is the result of appending one entry.
type JournalAccept struct {
	// ID is the new entry's id or, when Duplicate, the existing entry's.
	ID int64
	// Duplicate reports that an entry with the same DedupeKey already
	// existed (possibly appended earlier in the same batch); nothing was
	// inserted.
	Duplicate bool
	// State is the existing entry's state when Duplicate, else
	// JournalAccepted.
	State JournalState
}

// RunOutcome is what a completed run produced. It is stored atomically with
// marking the run's entries done, so a crash after the run but before
// delivery redelivers the stored replies instead of running the model again.
type RunOutcome struct {
	// RunID names the run; it is unique among stored outcomes.
	RunID string
	// SessionKey is the session the run belonged to.
	SessionKey core.SessionKey
	// Delivery is the route and replies as JSON, stored and returned as given.
	Delivery json.RawMessage
	// Delivered reports whether the replies have been delivered.
	Delivered bool
	// CreatedAt is when the run completed, in unix milliseconds; zero means
	// the store's clock at the time of the write.
	CreatedAt int64
}

// RunMark moves entries into a run that has started.
type RunMark struct {
	// IDs are the journal entries the run takes.
	IDs []int64
	// RunID names the run; it is required.
	RunID string
}

// Completion marks the entries of a completed run done and stores its
// outcome.
type Completion struct {
	// IDs are the journal entries the run answered.
	IDs []int64
	// Outcome is what the run produced; its RunID becomes the entries'.
	Outcome RunOutcome
}

// DropMark marks entries dropped.
type DropMark struct {
	// IDs are the journal entries refused.
	IDs []int64
	// Note says why, for operators and tools.
	Note string
}

// JournalBatch is a set of journal writes applied in one transaction, so the
// dispatcher can group-commit many messages' writes together. ApplyJournal
// does not modify it.
type JournalBatch struct {
	// Append holds new entries. The store sets ID, State (always accepted)
	// and UpdatedAt; a zero CreatedAt is set to the store's clock. Results
	// come back in the same order.
	Append []JournalEntry
	// Running moves accepted or running entries to running, setting RunID.
	Running []RunMark
	// Complete moves accepted or running entries to done, setting RunID to
	// Outcome.RunID, and inserts each outcome.
	Complete []Completion
	// Dropped moves accepted or running entries to dropped, setting Note.
	Dropped []DropMark
	// Delivered holds run ids whose outcome has been delivered.
	Delivered []string
	// Fences are the leases the writes depend on: unless every one still
	// holds, nothing of the batch is applied and ApplyJournal returns an
	// error wrapping [ErrFenced]. A fence alone is not a write.
	Fences []Fence
}

// Empty reports whether b has nothing to write.
func (b *JournalBatch) Empty() bool {
	return len(b.Append) == 0 && len(b.Running) == 0 && len(b.Complete) == 0 &&
		len(b.Dropped) == 0 && len(b.Delivered) == 0
}

// Journal is the durable inbound journal: every message the dispatcher
// accepted, the run it became part of, and what that run produced. The
// dispatcher acks a platform only after the Append that holds its message
// returned, and a restart resumes from PendingJournal and
// UndeliveredOutcomes, so no accepted message is lost and none is answered
// twice.
//
// State transitions are guarded rather than checked: a mark whose entry is
// already past the transition (done or dropped entries for any mark) leaves
// that entry alone and is not an error, because a run finishing after a
// /stop, or a redelivered mark after a crash, is normal. A mark naming an
// entry that does not exist at all is an error (wrapping
// [ErrUnknownJournalEntry]), and so is a Delivered run id with no stored
// outcome ([ErrUnknownRun]) and a Completion whose RunID already has an
// outcome ([ErrDuplicateRun]); each fails the whole batch.
type Journal interface {
	// ApplyJournal applies b in one write transaction, in the order Append,
	// Running, Complete, Dropped, Delivered, and returns one JournalAccept per
	// appended entry. Either all of b is applied or, on error, none of it.
	ApplyJournal(ctx context.Context, b *JournalBatch) ([]JournalAccept, error)
	// PendingJournal returns the accepted and running entries, ordered by ID:
	// what a restart must run again.
	PendingJournal(ctx context.Context) ([]JournalEntry, error)
	// UndeliveredOutcomes returns the outcomes not yet marked delivered,
	// oldest first: what a restart must deliver again, without running the
	// model.
	UndeliveredOutcomes(ctx context.Context) ([]RunOutcome, error)
	// JournalEntries returns the entries with the given ids, ordered by ID;
	// ids that do not exist (never did, or pruned) are left out. It is meant
	// for tests, tools and the crash harness.
	JournalEntries(ctx context.Context, ids ...int64) ([]JournalEntry, error)
	// PruneJournal deletes done and dropped entries, and delivered outcomes,
	// last updated before the cutoff (unix ms), and returns how many rows
	// went. Entries must stay at least as long as the platform may redeliver
	// ([Maintenance] keeps them 24 h by default), so DedupeKey still catches
	// redeliveries; once an entry is pruned its dedupe key can be appended
	// again.
	PruneJournal(ctx context.Context, before int64) (int64, error)
}

// ErrUnknownJournalEntry is wrapped by the error ApplyJournal returns when a
// mark names a journal entry id that does not exist.
var ErrUnknownJournalEntry = errors.New("store: no such journal entry")

// ErrUnknownRun is wrapped by the error ApplyJournal returns when Delivered
// names a run with no stored outcome.
var ErrUnknownRun = errors.New("store: no such run outcome")

// ErrDuplicateRun is wrapped by the error ApplyJournal returns when a
// Completion's RunID already has a stored outcome.
var ErrDuplicateRun = errors.New("store: run outcome already stored")

var _ Journal = (*SQLite)(nil)

// How ApplyJournal writes, and why.
//
// A batch is a handful of statements however many messages it carries: with
// modernc.org/sqlite each statement costs around ten microseconds of fixed
// overhead (database/sql, binding, cursors, the statement's own journal), as
// much as the row work itself, and the dispatcher's throughput target leaves
// no room for one statement per message and step.
//
//   - Appends are multi-row INSERTs of up to 128 rows; a batch is cut into
//     statements of the sizes in chunkSizes (powers of two), each prepared
//     once. The ids are assigned by the store inside the transaction,
//     continuing AUTOINCREMENT's sequence, so each entry's id is known
//     without RETURNING (which costs a temporary table per statement).
//   - Each kind of mark (running, done, dropped) is one UPDATE over a JSON
//     object of id → argument expanded with json_each, so one prepared
//     statement serves any number of marks and SQLite's variable limit never
//     applies. Outcomes are multi-row INSERTs like appends; Delivered is one
//     UPDATE over a JSON array of run ids.
//   - Every write is OR IGNORE: a row that would violate a constraint is
//     skipped instead of aborting the statement half way. The store tells
//     skipped rows from written ones by the counts: an append whose dedupe
//     key is taken is the expected case (a Duplicate accept); anything else
//     fails the batch.
//
// The statements are prepared once on the writer pool by Open and bound to
// each batch's transaction with Tx.StmtContext, which reuses the
// connection's prepared statement: a batch pays no SQL parsing.
const (
	// The highest id ever handed out: AUTOINCREMENT's record, or a higher
	// row if one was inserted behind its back.
	sqlLastID = `SELECT max(
		coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'journal'), 0),
		coalesce((SELECT max(id) FROM journal), 0))`
	sqlAppendHead = `INSERT OR IGNORE INTO journal
		(id, session_key, state, dedupe_key, inbound, created_at, updated_at) VALUES `
	sqlAppendRow   = `(?, ?, 'accepted', ?, ?, ?, ?)`
	appendArgs     = 6 // parameters per row of sqlAppendRow
	sqlOutcomeHead = `INSERT OR IGNORE INTO run_outcomes
		(run_id, session_key, delivery, delivered, created_at, updated_at) VALUES `
	sqlOutcomeRow = `(?, ?, ?, ?, ?, ?)`
	outcomeArgs   = 6

	// What holds a dedupe key, for an append that was skipped.
	sqlDuplicate = `SELECT id, state FROM journal WHERE dedupe_key = ?1`
	// Which of a JSON array of ids are not in the journal: run only when a
	// write touched fewer rows than it named.
	sqlMissing = `SELECT value FROM json_each(?1)
		WHERE NOT EXISTS (SELECT 1 FROM journal WHERE id = value)`

	// The marks. ?2 is a JSON object mapping each id, as a string, to the
	// argument for it (run id or note): json_each yields both as columns,
	// with no JSON path to evaluate per row.
	// NOT INDEXED keeps the planner from walking journal_pending, whose WHERE
	// matches the state term, over every pending row instead of looking the
	// ids up by rowid, which it still may.
	sqlRunning = `UPDATE OR IGNORE journal NOT INDEXED
		SET state = 'running', run_id = m.arg, updated_at = ?1
		FROM (SELECT CAST(key AS INTEGER) AS id, value AS arg FROM json_each(?2)) AS m
		WHERE journal.id = m.id AND journal.state IN ('accepted', 'running')`
	sqlDone = `UPDATE OR IGNORE journal NOT INDEXED
		SET state = 'done', run_id = m.arg, updated_at = ?1
		FROM (SELECT CAST(key AS INTEGER) AS id, value AS arg FROM json_each(?2)) AS m
		WHERE journal.id = m.id AND journal.state IN ('accepted', 'running')`
	sqlDropped = `UPDATE OR IGNORE journal NOT INDEXED
		SET state = 'dropped', note = m.arg, updated_at = ?1
		FROM (SELECT CAST(key AS INTEGER) AS id, value AS arg FROM json_each(?2)) AS m
		WHERE journal.id = m.id AND journal.state IN ('accepted', 'running')`

	// ?2 is a JSON array of distinct run ids. updated_at becomes the time of
	// delivery, which pruning counts from; marking an outcome delivered again
	// keeps it. Every existing row counts as changed, so fewer rows than run
	// ids means some have no outcome.
	sqlDelivered = `UPDATE OR IGNORE run_outcomes
		SET updated_at = CASE delivered WHEN 1 THEN updated_at ELSE ?1 END, delivered = 1
		WHERE run_id IN (SELECT value FROM json_each(?2))`
	sqlMissingRuns = `SELECT value FROM json_each(?1)
		WHERE NOT EXISTS (SELECT 1 FROM run_outcomes WHERE run_id = value)`
	sqlExistingRuns = `SELECT run_id FROM run_outcomes
		WHERE run_id IN (SELECT value FROM json_each(?1)) ORDER BY run_id`
)

// chunkSizes are the row counts of the prepared multi-row INSERTs, largest
// first; any count is a sum of them. 128 rows of 6 parameters stay far below
// SQLite's variable limit (32766), and larger statements gain little.
var chunkSizes = []int{128, 64, 32, 16, 8, 4, 2, 1}

// chunk returns the index in chunkSizes of the largest statement that fits
// in n > 0 rows.
func chunk(n int) int {
	for i, size := range chunkSizes {
		if size <= n {
			return i
		}
	}
	panic("store: chunk of no rows")
}

// multiRow builds an INSERT of n rows from its head and the row template.
func multiRow(head, row string, n int) string {
	var sb strings.Builder
	sb.Grow(len(head) + n*(len(row)+1))
	sb.WriteString(head)
	for i := range n {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(row)
	}
	return sb.String()
}

// journalStmts are the prepared writer statements of the journal.
type journalStmts struct {
	lastID, duplicate, missing *sql.Stmt
	appendN, outcomeN          []*sql.Stmt // by index in chunkSizes
	running, done, dropped     *sql.Stmt
	delivered, missingRuns     *sql.Stmt
}

// prepareJournal prepares the journal's statements on db, the writer pool.
func prepareJournal(ctx context.Context, db *sql.DB) (*journalStmts, error) {
	js := &journalStmts{
		appendN:  make([]*sql.Stmt, len(chunkSizes)),
		outcomeN: make([]*sql.Stmt, len(chunkSizes)),
	}
	prep := func(st **sql.Stmt, query string) error {
		var err error
		*st, err = db.PrepareContext(ctx, query)
		return err
	}
	err := errors.Join(
		prep(&js.lastID, sqlLastID), prep(&js.duplicate, sqlDuplicate), prep(&js.missing, sqlMissing),
		prep(&js.running, sqlRunning), prep(&js.done, sqlDone), prep(&js.dropped, sqlDropped),
		prep(&js.delivered, sqlDelivered), prep(&js.missingRuns, sqlMissingRuns),
	)
	for i, n := range chunkSizes {
		if err != nil {
			break
		}
		err = errors.Join(
			prep(&js.appendN[i], multiRow(sqlAppendHead, sqlAppendRow, n)),
			prep(&js.outcomeN[i], multiRow(sqlOutcomeHead, sqlOutcomeRow, n)),
		)
	}
	if err != nil {
		js.close()
		return nil, fmt.Errorf("store: prepare journal statements: %w", err)
	}
	return js, nil
}

// close closes every statement prepared so far. It is safe on nil.
func (js *journalStmts) close() {
	if js == nil {
		return
	}
	all := []*sql.Stmt{js.lastID, js.duplicate, js.missing, js.running, js.done, js.dropped, js.delivered, js.missingRuns}
	all = append(append(all, js.appendN...), js.outcomeN...)
	for _, st := range all {
		if st != nil {
			st.Close()
		}
	}
}

// nowMilli is the store's clock in unix milliseconds.
func (s *SQLite) nowMilli() int64 {
	if s.now != nil {
		return s.now().UnixMilli()
	}
	return time.Now().UnixMilli()
}

// ApplyJournal applies b in one BEGIN IMMEDIATE transaction on the writer
// connection; see [Journal]. Concurrent calls are serialized. An empty batch
// returns at once without a transaction.
func (s *SQLite) ApplyJournal(ctx context.Context, b *JournalBatch) (accepts []JournalAccept, err error) {
	if b == nil || b.Empty() {
		return nil, nil
	}
	if err := b.Validate(); err != nil {
		return nil, err
	}

	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("store: apply journal: begin: %w", err)
	}
	w := journalTx{ctx: ctx, tx: tx, js: s.js, now: s.nowMilli()}
	if err = checkFences(ctx, tx, b.Fences); err == nil {
		accepts, err = w.apply(b)
	}
	if err == nil {
		err = tx.Commit()
		if err != nil {
			err = fmt.Errorf("store: apply journal: commit: %w", err)
		}
	}
	if err != nil {
		tx.Rollback()
		var dup *duplicateRunsError
		if errors.As(err, &dup) {
			// Named after the rollback, when only the outcomes stored
			// before this batch are left.
			err = s.nameDuplicateRuns(ctx, dup.runIDs)
		}
		return nil, err
	}
	return accepts, nil
}

// Validate rejects what the schema would reject, or what would only fail
// later and less clearly, before a transaction is begun: an append without
// session key or inbound, a mark or completion without run id, a
// completion without session key or delivery, one run completed twice in
// the batch. Every store implementation calls it first.
func (b *JournalBatch) Validate() error {
	for i := range b.Append {
		e := &b.Append[i]
		if e.SessionKey == "" || len(e.Inbound) == 0 {
			return fmt.Errorf("store: apply journal: append entry %d: session key and inbound are required (got %q, %d bytes)", i, e.SessionKey, len(e.Inbound))
		}
	}
	for i, m := range b.Running {
		if m.RunID == "" {
			return fmt.Errorf("store: apply journal: running mark %d (entries %v): run id is required", i, m.IDs)
		}
	}
	var runs map[string]bool
	if len(b.Complete) > 1 {
		runs = make(map[string]bool, len(b.Complete))
	}
	for i, c := range b.Complete {
		o := &c.Outcome
		if o.RunID == "" || o.SessionKey == "" || len(o.Delivery) == 0 {
			return fmt.Errorf("store: apply journal: completion %d (entries %v): run id, session key and delivery are required (got %q, %q, %d bytes)",
				i, c.IDs, o.RunID, o.SessionKey, len(o.Delivery))
		}
		if runs != nil {
			if runs[o.RunID] {
				return fmt.Errorf("%w: run %s, completed twice in one batch", ErrDuplicateRun, o.RunID)
			}
			runs[o.RunID] = true
		}
	}
	for i, runID := range b.Delivered {
		if runID == "" {
			return fmt.Errorf("store: apply journal: delivered run %d: run id is required", i)
		}
	}
	return nil
}

// duplicateRunsError reports that some of runIDs already had an outcome; it
// never leaves ApplyJournal, which replaces it with one naming them.
type duplicateRunsError struct{ runIDs []string }

func (e *duplicateRunsError) Error() string { return ErrDuplicateRun.Error() }

// nameDuplicateRuns returns the error for completions of runIDs of which
// some were already stored.
func (s *SQLite) nameDuplicateRuns(ctx context.Context, runIDs []string) error {
	rows, err := s.reader.QueryContext(ctx, sqlExistingRuns, jsonStrings(runIDs))
	if err == nil {
		defer rows.Close()
		var have []string
		for rows.Next() {
			var r string
			if rows.Scan(&r) == nil {
				have = append(have, r)
			}
		}
		if len(have) > 0 {
			return fmt.Errorf("%w: run %s, completed again", ErrDuplicateRun, strings.Join(have, ", "))
		}
	}
	return fmt.Errorf("%w: one of runs %s, completed again", ErrDuplicateRun, strings.Join(runIDs, ", "))
}

// journalTx is one ApplyJournal transaction. It binds each prepared
// statement to the transaction the first time the batch needs it.
type journalTx struct {
	ctx   context.Context
	tx    *sql.Tx
	js    *journalStmts // prepared on the writer pool
	bound journalStmts  // the same, bound to tx; nil until first used
	now   int64
	args  []any // reused between multi-row statements
}

// stmt returns *bound, binding prepared to the transaction first if needed.
func (w *journalTx) stmt(bound **sql.Stmt, prepared *sql.Stmt) *sql.Stmt {
	if *bound == nil {
		*bound = w.tx.StmtContext(w.ctx, prepared)
	}
	return *bound
}

// chunkStmt is stmt for the multi-row statement of chunkSizes[i] rows.
func (w *journalTx) chunkStmt(bound *[]*sql.Stmt, prepared []*sql.Stmt, i int) *sql.Stmt {
	if *bound == nil {
		*bound = make([]*sql.Stmt, len(chunkSizes))
	}
	return w.stmt(&(*bound)[i], prepared[i])
}

// apply writes b, in the order the Journal contract gives.
func (w *journalTx) apply(b *JournalBatch) ([]JournalAccept, error) {
	var accepts []JournalAccept
	if len(b.Append) > 0 {
		var err error
		if accepts, err = w.append(b.Append); err != nil {
			return nil, fmt.Errorf("store: apply journal: append: %w", err)
		}
	}
	if len(b.Running) > 0 {
		pairs := newMarkPairs(len(b.Running))
		for _, m := range b.Running {
			// running → running is allowed: the last mark of an entry wins,
			// as if the marks were applied one by one.
			pairs.add(m.IDs, m.RunID, true)
		}
		if err := w.mark(&w.bound.running, w.js.running, pairs, "running"); err != nil {
			return nil, err
		}
	}
	if len(b.Complete) > 0 {
		if err := w.complete(b.Complete); err != nil {
			return nil, err
		}
	}
	if len(b.Dropped) > 0 {
		pairs := newMarkPairs(len(b.Dropped))
		for _, d := range b.Dropped {
			pairs.add(d.IDs, d.Note, false)
		}
		if err := w.mark(&w.bound.dropped, w.js.dropped, pairs, "dropped"); err != nil {
			return nil, err
		}
	}
	if len(b.Delivered) > 0 {
		if err := w.delivered(b.Delivered); err != nil {
			return nil, err
		}
	}
	return accepts, nil
}

// append inserts entries with ids following the highest ever handed out. An
// entry whose dedupe key is taken, by an earlier batch or an earlier entry of
// this one, is skipped by OR IGNORE and reported as a Duplicate of the entry
// holding the key; its id is left unused.
func (w *journalTx) append(entries []JournalEntry) ([]JournalAccept, error) {
	var last int64
	if err := w.stmt(&w.bound.lastID, w.js.lastID).QueryRowContext(w.ctx).Scan(&last); err != nil {
		return nil, fmt.Errorf("read last id: %w", err)
	}
	accepts := make([]JournalAccept, len(entries))
	var inserted int64
	for off := 0; off < len(entries); {
		i := chunk(len(entries) - off)
		n := chunkSizes[i]
		args := w.argsFor(n * appendArgs)
		for j := off; j < off+n; j++ {
			e := &entries[j]
			id := last + 1 + int64(j)
			accepts[j] = JournalAccept{ID: id, State: JournalAccepted}
			var dedupe any // "" is stored as NULL: no key, never a collision
			if e.DedupeKey != "" {
				dedupe = e.DedupeKey
			}
			created := e.CreatedAt
			if created == 0 {
				created = w.now
			}
			args = append(args, id, string(e.SessionKey), dedupe, string(e.Inbound), created, w.now)
		}
		res, err := w.chunkStmt(&w.bound.appendN, w.js.appendN, i).ExecContext(w.ctx, args...)
		if err != nil {
			return nil, err
		}
		k, err := res.RowsAffected()
		if err != nil {
			return nil, err
		}
		inserted += k
		off += n
	}
	if inserted == int64(len(entries)) {
		return accepts, nil
	}

	// Some rows were skipped: find them and what holds their keys.
	ids := make([]int64, len(accepts))
	for j, a := range accepts {
		ids[j] = a.ID
	}
	skipped, err := w.missingIDs(ids)
	if err != nil {
		return nil, err
	}
	for _, id := range skipped {
		j := int(id - last - 1)
		e := &entries[j]
		if e.DedupeKey == "" {
			return nil, fmt.Errorf("entry %d of session %s was not stored", j, e.SessionKey)
		}
		var state string
		err := w.stmt(&w.bound.duplicate, w.js.duplicate).QueryRowContext(w.ctx, e.DedupeKey).Scan(&accepts[j].ID, &state)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("entry %d of session %s was not stored", j, e.SessionKey)
		}
		if err != nil {
			return nil, fmt.Errorf("look up dedupe key %q: %w", e.DedupeKey, err)
		}
		accepts[j].Duplicate, accepts[j].State = true, JournalState(state)
	}
	return accepts, nil
}

// argsFor returns w.args emptied, with room for n arguments.
func (w *journalTx) argsFor(n int) []any {
	if cap(w.args) < n {
		w.args = make([]any, 0, n)
	}
	return w.args[:0]
}

// complete stores the outcomes of completed runs, then marks their entries
// done. A run whose outcome is already stored fails the batch.
func (w *journalTx) complete(cs []Completion) error {
	var inserted int64
	for off := 0; off < len(cs); {
		i := chunk(len(cs) - off)
		n := chunkSizes[i]
		args := w.argsFor(n * outcomeArgs)
		for _, c := range cs[off : off+n] {
			o := &c.Outcome
			created := o.CreatedAt
			if created == 0 {
				created = w.now
			}
			args = append(args, o.RunID, string(o.SessionKey), string(o.Delivery), o.Delivered, created, w.now)
		}
		res, err := w.chunkStmt(&w.bound.outcomeN, w.js.outcomeN, i).ExecContext(w.ctx, args...)
		if err != nil {
			return fmt.Errorf("store: apply journal: store run outcomes: %w", err)
		}
		k, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("store: apply journal: store run outcomes: %w", err)
		}
		inserted += k
		off += n
	}
	if inserted != int64(len(cs)) {
		runIDs := make([]string, len(cs))
		for i, c := range cs {
			runIDs[i] = c.Outcome.RunID
		}
		return &duplicateRunsError{runIDs: runIDs}
	}

	pairs := newMarkPairs(len(cs))
	for _, c := range cs {
		pairs.add(c.IDs, c.Outcome.RunID, false)
	}
	return w.mark(&w.bound.done, w.js.done, pairs, "done")
}

// markPairs collects the id → argument pairs of one kind of mark, one per
// id, as the JSON object the mark statements expand.
type markPairs struct {
	ids  []int64
	args []string
	at   map[int64]int // index of each id in ids; made once there are more than a few
}

func newMarkPairs(marks int) *markPairs {
	return &markPairs{ids: make([]int64, 0, marks), args: make([]string, 0, marks)}
}

// add records arg for ids. An id seen before keeps its argument, or takes
// arg if last wins.
func (p *markPairs) add(ids []int64, arg string, lastWins bool) {
	for _, id := range ids {
		if p.at == nil && len(p.ids) < 8 {
			// Few pairs: a scan is cheaper than a map.
			if k := slices.Index(p.ids, id); k >= 0 {
				if lastWins {
					p.args[k] = arg
				}
				continue
			}
		} else {
			if p.at == nil {
				p.at = make(map[int64]int, 2*len(p.ids))
				for k, id := range p.ids {
					p.at[id] = k
				}
			}
			if k, ok := p.at[id]; ok {
				if lastWins {
					p.args[k] = arg
				}
				continue
			}
			p.at[id] = len(p.ids)
		}
		p.ids = append(p.ids, id)
		p.args = append(p.args, arg)
	}
}

// json renders the pairs as {"id":"arg",...}.
func (p *markPairs) json() string {
	buf := make([]byte, 0, 2+len(p.ids)*32)
	buf = append(buf, '{')
	for i, id := range p.ids {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, '"')
		buf = strconv.AppendInt(buf, id, 10)
		buf = append(buf, '"', ':')
		buf = appendJSONString(buf, p.args[i])
	}
	return string(append(buf, '}'))
}

// mark runs a guarded state update over pairs; kind names the target state
// in errors. Entries already past the transition are skipped; an id that
// does not exist is an error naming it.
func (w *journalTx) mark(bound **sql.Stmt, prepared *sql.Stmt, pairs *markPairs, kind string) error {
	if len(pairs.ids) == 0 {
		return nil
	}
	res, err := w.stmt(bound, prepared).ExecContext(w.ctx, w.now, pairs.json())
	if err != nil {
		return fmt.Errorf("store: apply journal: mark %s: %w", kind, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: apply journal: mark %s: %w", kind, err)
	}
	if n == int64(len(pairs.ids)) {
		return nil
	}
	missing, err := w.missingIDs(pairs.ids)
	if err != nil {
		return fmt.Errorf("store: apply journal: mark %s: %w", kind, err)
	}
	if len(missing) > 0 {
		list := make([]string, len(missing))
		for i, id := range missing {
			list[i] = strconv.FormatInt(id, 10)
		}
		return fmt.Errorf("%w: id %s, marked %s", ErrUnknownJournalEntry, strings.Join(list, ", "), kind)
	}
	return nil
}

// missingIDs returns those of ids that are not in the journal.
func (w *journalTx) missingIDs(ids []int64) ([]int64, error) {
	rows, err := w.stmt(&w.bound.missing, w.js.missing).QueryContext(w.ctx, idList(ids))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var missing []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		missing = append(missing, id)
	}
	return missing, rows.Err()
}

// delivered marks the outcomes of runIDs delivered; a run without a stored
// outcome is an error naming it.
func (w *journalTx) delivered(runIDs []string) error {
	distinct := runIDs
	if len(runIDs) > 1 {
		distinct = slices.Clone(runIDs)
		slices.Sort(distinct)
		distinct = slices.Compact(distinct)
	}
	list := jsonStrings(distinct)
	missing, err := w.markDelivered(list, len(distinct))
	if err != nil {
		return fmt.Errorf("store: apply journal: mark delivered: %w", err)
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: run %s, marked delivered", ErrUnknownRun, strings.Join(missing, ", "))
	}
	return nil
}

// markDelivered runs the delivered update over list, a JSON array of n
// distinct run ids, and returns those that have no outcome.
func (w *journalTx) markDelivered(list string, n int) ([]string, error) {
	res, err := w.stmt(&w.bound.delivered, w.js.delivered).ExecContext(w.ctx, w.now, list)
	if err != nil {
		return nil, err
	}
	if k, err := res.RowsAffected(); err != nil || k == int64(n) {
		return nil, err
	}
	rows, err := w.stmt(&w.bound.missingRuns, w.js.missingRuns).QueryContext(w.ctx, list)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var missing []string
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			return nil, err
		}
		missing = append(missing, r)
	}
	return missing, rows.Err()
}

// idList renders ids as a JSON array for json_each.
func idList(ids []int64) string {
	buf := make([]byte, 0, 2+len(ids)*8)
	buf = append(buf, '[')
	for i, id := range ids {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = strconv.AppendInt(buf, id, 10)
	}
	return string(append(buf, ']'))
}

// jsonStrings renders ss as a JSON array of strings for json_each.
func jsonStrings(ss []string) string {
	buf := make([]byte, 0, 2+len(ss)*24)
	buf = append(buf, '[')
	for i, s := range ss {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendJSONString(buf, s)
	}
	return string(append(buf, ']'))
}

// appendJSONString appends s as a JSON string. Run ids and notes are almost
// always plain ASCII, which is copied as is; anything else goes through
// encoding/json.
func appendJSONString(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			quoted, _ := json.Marshal(s) // a string always marshals
			return append(buf, quoted...)
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"')
}

// The journal's read and pruning statements. INDEXED BY pins the partial
// index that holds exactly the rows asked for, already in order, and makes a
// schema change that loses it an error at once instead of a slow restart.
const (
	journalColumns = `id, session_key, state, coalesce(dedupe_key, ''), inbound,
		coalesce(run_id, ''), coalesce(note, ''), created_at, updated_at`
	sqlPending = `SELECT ` + journalColumns + ` FROM journal INDEXED BY journal_pending
		WHERE state IN ('accepted', 'running') ORDER BY id`
	sqlEntries = `SELECT ` + journalColumns + ` FROM journal
		WHERE id IN (SELECT value FROM json_each(?1)) ORDER BY id`
	sqlUndelivered = `SELECT run_id, session_key, delivery, created_at
		FROM run_outcomes INDEXED BY run_outcomes_undelivered
		WHERE delivered = 0 ORDER BY created_at, rowid`
	sqlPruneEntries = `DELETE FROM journal WHERE id IN (
		SELECT id FROM journal WHERE state IN ('done', 'dropped') AND updated_at < ?1 LIMIT ?2)`
	sqlPruneOutcomes = `DELETE FROM run_outcomes WHERE rowid IN (
		SELECT rowid FROM run_outcomes WHERE delivered = 1 AND updated_at < ?1 LIMIT ?2)`
)

// PendingJournal returns the accepted and running entries, ordered by ID.
func (s *SQLite) PendingJournal(ctx context.Context) ([]JournalEntry, error) {
	// INDEXED BY makes a query plan that stops using the partial index an
	// error at once instead of a slow restart.
	out, err := s.queryEntries(ctx, sqlPending)
	if err != nil {
		return nil, fmt.Errorf("store: pending journal: %w", err)
	}
	return out, nil
}

// JournalEntries returns the entries with the given ids that exist, ordered
// by ID.
func (s *SQLite) JournalEntries(ctx context.Context, ids ...int64) ([]JournalEntry, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	out, err := s.queryEntries(ctx, sqlEntries, idList(ids))
	if err != nil {
		return nil, fmt.Errorf("store: journal entries: %w", err)
	}
	return out, nil
}

func (s *SQLite) queryEntries(ctx context.Context, query string, args ...any) ([]JournalEntry, error) {
	rows, err := s.reader.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []JournalEntry
	for rows.Next() {
		var (
			e          JournalEntry
			key, state string
			inbound    []byte
		)
		if err := rows.Scan(&e.ID, &key, &state, &e.DedupeKey, &inbound, &e.RunID, &e.Note, &e.CreatedAt, &e.UpdatedAt); err != nil {
			return nil, err
		}
		e.SessionKey, e.State, e.Inbound = core.SessionKey(key), JournalState(state), inbound
		out = append(out, e)
	}
	return out, rows.Err()
}

// UndeliveredOutcomes returns the outcomes not yet marked delivered, oldest
// first.
func (s *SQLite) UndeliveredOutcomes(ctx context.Context) ([]RunOutcome, error) {
	rows, err := s.reader.QueryContext(ctx, sqlUndelivered)
	if err != nil {
		return nil, fmt.Errorf("store: undelivered outcomes: %w", err)
	}
	defer rows.Close()
	var out []RunOutcome
	for rows.Next() {
		var (
			o        RunOutcome
			key      string
			delivery []byte
		)
		if err := rows.Scan(&o.RunID, &key, &delivery, &o.CreatedAt); err != nil {
			return nil, fmt.Errorf("store: undelivered outcomes: %w", err)
		}
		o.SessionKey, o.Delivery = core.SessionKey(key), delivery
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: undelivered outcomes: %w", err)
	}
	return out, nil
}

// pruneChunk is how many rows one pruning transaction deletes at most. The
// writer is shared with the dispatcher's group commits and the bridges'
// ledger writes, so a large prune is cut into short transactions they can
// interleave with.
const pruneChunk = 1000

// PruneJournal deletes done and dropped entries, and delivered outcomes, last
// updated before the cutoff (unix ms), and returns how many rows went. It
// deletes in short transactions of at most pruneChunk rows, so it never holds
// the writer for long; if it fails or ctx ends part way, what it deleted so
// far stays deleted and is counted.
func (s *SQLite) PruneJournal(ctx context.Context, before int64) (int64, error) {
	entries, err := s.pruneChunked(ctx, "journal entries", sqlPruneEntries, before)
	if err != nil {
		return entries, err
	}
	outcomes, err := s.pruneChunked(ctx, "run outcomes", sqlPruneOutcomes, before)
	return entries + outcomes, err
}

// pruneChunked runs query, a DELETE of at most ?2 rows older than ?1, until
// it deletes fewer than pruneChunk rows, and returns how many went in all.
// Each run is its own transaction; what a failed run leaves is counted.
func (s *SQLite) pruneChunked(ctx context.Context, what, query string, before int64) (int64, error) {
	var total int64
	for {
		res, err := s.writer.ExecContext(ctx, query, before, pruneChunk)
		if err != nil {
			return total, fmt.Errorf("store: prune %s: %w", what, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, fmt.Errorf("store: prune %s: %w", what, err)
		}
		total += n
		if n < pruneChunk {
			return total, nil
		}
	}
}
