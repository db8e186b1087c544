package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/store"
)

// Journal asserts store.Journal: appends get increasing ids, the accepted
// state and timestamps from the store's clock (a given CreatedAt kept);
// JournalEntries returns what was stored, by id, leaving unknown ids out;
// dedupe keys catch a redelivery of an earlier batch and of an earlier entry
// of the same batch, reporting the existing entry's id and state, while ""
// never collides; marks move entries between states, resolve within one
// batch as if applied one by one (the last running mark wins) and are
// guarded (final states never move, and that is no error); a batch larger
// than one statement keeps every accept on its entry; an unknown entry id
// (ErrUnknownJournalEntry), an undelivered unknown run (ErrUnknownRun), a run
// completed again (ErrDuplicateRun) or an invalid batch fails with a
// one-line error and applies nothing; outcomes are listed undelivered
// oldest first until marked delivered, and every done entry's run has one;
// pruning deletes old done and dropped entries and delivered outcomes,
// counts them, keeps the rest, and frees their dedupe keys and run ids; and
// batches applied from several goroutines at once lose nothing, hand out no
// id twice and still dedupe. open's store takes its time from now (nil:
// the real clock).
func Journal(t *testing.T, open func(t *testing.T, now func() time.Time) store.Journal) {
	t.Run("append", func(t *testing.T) { journalAppend(t, open) })
	t.Run("dedupe", func(t *testing.T) { journalDedupe(t, open(t, nil)) })
	t.Run("transitions", func(t *testing.T) { journalTransitions(t, open) })
	t.Run("marks in one batch", func(t *testing.T) { journalMarksInOneBatch(t, open(t, nil)) })
	t.Run("large batch", func(t *testing.T) { journalLargeBatch(t, open(t, nil)) })
	t.Run("errors apply nothing", func(t *testing.T) { journalErrorsApplyNothing(t, open(t, nil)) })
	t.Run("outcomes", func(t *testing.T) { journalOutcomes(t, open) })
	t.Run("prune", func(t *testing.T) { journalPrune(t, open) })
	t.Run("concurrent", func(t *testing.T) { journalConcurrent(t, open(t, nil)) })
}

// journalEntry is an entry to append, with a small inbound document.
func journalEntry(key core.SessionKey, dedupe, body string) store.JournalEntry {
	inbound, _ := json.Marshal(map[string]string{"sessionKey": string(key), "body": body})
	return store.JournalEntry{SessionKey: key, DedupeKey: dedupe, Inbound: inbound}
}

// runOutcome is a run's outcome with a small delivery document.
func runOutcome(runID string, key core.SessionKey, created int64) store.RunOutcome {
	return store.RunOutcome{RunID: runID, SessionKey: key, CreatedAt: created,
		Delivery: json.RawMessage(`{"route":{"channel":"telegram","to":"1"},"replies":[{"text":"hi ` + runID + `"}]}`)}
}

// applyJournal applies b and fails the test on error.
func applyJournal(t *testing.T, s store.Journal, b store.JournalBatch) []store.JournalAccept {
	t.Helper()
	acc, err := s.ApplyJournal(t.Context(), &b)
	if err != nil {
		t.Fatalf("ApplyJournal: %v", err)
	}
	if len(acc) != len(b.Append) {
		t.Fatalf("ApplyJournal returned %d accepts for %d appends", len(acc), len(b.Append))
	}
	return acc
}

// journalEntries returns the entries with ids, failing the test unless all
// exist.
func journalEntries(t *testing.T, s store.Journal, ids ...int64) []store.JournalEntry {
	t.Helper()
	es, err := s.JournalEntries(t.Context(), ids...)
	if err != nil {
		t.Fatalf("JournalEntries: %v", err)
	}
	if len(es) != len(ids) {
		t.Fatalf("JournalEntries(%v) returned %d entries: %+v", ids, len(es), es)
	}
	return es
}

// journalStates returns the state of each id, in the order given.
func journalStates(t *testing.T, s store.Journal, ids ...int64) []store.JournalState {
	t.Helper()
	byID := map[int64]store.JournalState{}
	for _, e := range journalEntries(t, s, ids...) {
		byID[e.ID] = e.State
	}
	out := make([]store.JournalState, len(ids))
	for i, id := range ids {
		out[i] = byID[id]
	}
	return out
}

// pendingIDs returns the ids PendingJournal lists, in its order.
func pendingIDs(t *testing.T, s store.Journal) []int64 {
	t.Helper()
	es, err := s.PendingJournal(t.Context())
	if err != nil {
		t.Fatalf("PendingJournal: %v", err)
	}
	var ids []int64
	for _, e := range es {
		ids = append(ids, e.ID)
	}
	return ids
}

// acceptIDs returns the ids of acc, in order.
func acceptIDs(acc []store.JournalAccept) []int64 {
	out := make([]int64, len(acc))
	for i, a := range acc {
		out[i] = a.ID
	}
	return out
}

// assertOneLineError checks that err is one line starting with "store: ".
func assertOneLineError(t *testing.T, err error) {
	t.Helper()
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "store: ") {
		t.Errorf("error %q: want one line starting with \"store: \"", msg)
	}
}

// assertOutcomeStored checks that runID has a stored outcome, delivered or
// not: completing the run again must fail with store.ErrDuplicateRun, which
// applies nothing. (If the check fails, the probe's outcome was stored.)
func assertOutcomeStored(t *testing.T, s store.Journal, runID, why string) {
	t.Helper()
	probe := runOutcome(runID, sessA, 0)
	_, err := s.ApplyJournal(t.Context(), &store.JournalBatch{Complete: []store.Completion{{Outcome: probe}}})
	switch {
	case err == nil:
		t.Errorf("%s: run %q has no stored outcome (completing it again succeeded)", why, runID)
	case !errors.Is(err, store.ErrDuplicateRun):
		t.Errorf("%s: completing run %q again: %v; want store.ErrDuplicateRun, as its outcome is stored", why, runID, err)
	}
}

// assertDoneHaveOutcomes checks that every done entry among ids has the
// outcome of its run stored.
func assertDoneHaveOutcomes(t *testing.T, s store.Journal, ids ...int64) {
	t.Helper()
	es, err := s.JournalEntries(t.Context(), ids...)
	if err != nil {
		t.Fatalf("JournalEntries: %v", err)
	}
	checked := map[string]bool{}
	for _, e := range es {
		if e.State != store.JournalDone || checked[e.RunID] {
			continue
		}
		checked[e.RunID] = true
		assertOutcomeStored(t, s, e.RunID, fmt.Sprintf("done entry %d", e.ID))
	}
}

func journalAppend(t *testing.T, open func(t *testing.T, now func() time.Time) store.Journal) {
	clock := &Clock{}
	clock.Set(5000)
	s := open(t, clock.Now)

	first := journalEntry(sessA, "telegram|1|default||10", "one")
	first.CreatedAt = 1234
	acc := applyJournal(t, s, store.JournalBatch{Append: []store.JournalEntry{first, journalEntry(sessB, "", "two"), journalEntry(sessA, "telegram|1|default||11", "three")}})
	for i, a := range acc {
		if a.Duplicate || a.State != store.JournalAccepted || a.ID <= 0 || (i > 0 && a.ID <= acc[i-1].ID) {
			t.Fatalf("accepts %+v: want new, accepted, increasing ids", acc)
		}
	}

	got := journalEntries(t, s, acceptIDs(acc)...)
	want := []store.JournalEntry{
		{ID: acc[0].ID, SessionKey: sessA, State: store.JournalAccepted, DedupeKey: first.DedupeKey, Inbound: first.Inbound, CreatedAt: 1234, UpdatedAt: 5000},
		{ID: acc[1].ID, SessionKey: sessB, State: store.JournalAccepted, Inbound: journalEntry(sessB, "", "two").Inbound, CreatedAt: 5000, UpdatedAt: 5000},
		{ID: acc[2].ID, SessionKey: sessA, State: store.JournalAccepted, DedupeKey: "telegram|1|default||11", Inbound: journalEntry(sessA, "", "three").Inbound, CreatedAt: 5000, UpdatedAt: 5000},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("JournalEntries =\n%+v\nwant\n%+v", got, want)
	}
	// The order in which ids are asked for does not matter, unknown ids are
	// left out.
	if got, _ := s.JournalEntries(t.Context(), acc[2].ID, 9999, acc[0].ID); len(got) != 2 || got[0].ID != acc[0].ID || got[1].ID != acc[2].ID {
		t.Errorf("JournalEntries(reversed, unknown) = %+v", got)
	}
	if got, err := s.JournalEntries(t.Context()); got != nil || err != nil {
		t.Errorf("JournalEntries() = %v, %v; want nothing", got, err)
	}

	// The next batch continues the order.
	next := applyJournal(t, s, store.JournalBatch{Append: []store.JournalEntry{journalEntry(sessB, "", "four")}})
	if next[0].ID <= acc[2].ID {
		t.Errorf("next id %d not after %d", next[0].ID, acc[2].ID)
	}
}

func journalDedupe(t *testing.T, s store.Journal) {
	first := applyJournal(t, s, store.JournalBatch{Append: []store.JournalEntry{
		journalEntry(sessA, "k1", "one"),
		journalEntry(sessA, "", "no key"),
	}})
	applyJournal(t, s, store.JournalBatch{Running: []store.RunMark{{IDs: []int64{first[0].ID}, RunID: "r1"}}})

	acc := applyJournal(t, s, store.JournalBatch{Append: []store.JournalEntry{
		journalEntry(sessA, "k2", "new"),
		journalEntry(sessA, "k1", "redelivered"), // of an earlier batch
		journalEntry(sessA, "", "no key again"),  // "" never collides
		journalEntry(sessA, "k2", "twice"),       // of an entry earlier in this batch
		journalEntry(sessA, "", "no key, third"),
	}})
	want := []store.JournalAccept{
		{ID: acc[0].ID, State: store.JournalAccepted},
		{ID: first[0].ID, Duplicate: true, State: store.JournalRunning},
		{ID: acc[2].ID, State: store.JournalAccepted},
		{ID: acc[0].ID, Duplicate: true, State: store.JournalAccepted},
		{ID: acc[4].ID, State: store.JournalAccepted},
	}
	if !reflect.DeepEqual(acc, want) {
		t.Fatalf("accepts = %+v, want %+v", acc, want)
	}
	if acc[2].ID == first[1].ID || acc[4].ID == acc[2].ID || acc[0].ID <= first[1].ID {
		t.Errorf("entries without a dedupe key were merged: %+v after %+v", acc, first)
	}
	// A duplicate inserted nothing: the stored inbound is the first copy's.
	if e := journalEntries(t, s, first[0].ID)[0]; !strings.Contains(string(e.Inbound), `"one"`) {
		t.Errorf("inbound of k1 = %s, want the first copy", e.Inbound)
	}
	if got := pendingIDs(t, s); len(got) != 5 {
		t.Errorf("pending %v, want 5 entries (duplicates not inserted)", got)
	}
}

func journalTransitions(t *testing.T, open func(t *testing.T, now func() time.Time) store.Journal) {
	clock := &Clock{}
	clock.Set(1000)
	s := open(t, clock.Now)
	acc := applyJournal(t, s, store.JournalBatch{Append: []store.JournalEntry{
		journalEntry(sessA, "", "0"), journalEntry(sessA, "", "1"), journalEntry(sessA, "", "2"),
		journalEntry(sessB, "", "3"), journalEntry(sessB, "", "4"), journalEntry(sessB, "", "5"),
	}})
	id := acceptIDs(acc)

	// accepted → running, one id and several (with a repeat), then running →
	// running again under a new run (a run restarted after a crash).
	clock.Set(2000)
	applyJournal(t, s, store.JournalBatch{Running: []store.RunMark{
		{IDs: []int64{id[0]}, RunID: "r0"},
		{IDs: []int64{id[1], id[2], id[1]}, RunID: "r1"},
	}})
	applyJournal(t, s, store.JournalBatch{Running: []store.RunMark{{IDs: []int64{id[0]}, RunID: "r0b"}}})
	if got := journalEntries(t, s, id[0], id[1]); got[0].RunID != "r0b" || got[1].RunID != "r1" || got[1].UpdatedAt != 2000 || got[1].State != store.JournalRunning {
		t.Errorf("after running marks: %+v", got)
	}

	// running → done, accepted → done (a run the dispatcher never marked
	// running), accepted → dropped, running → dropped.
	clock.Set(3000)
	applyJournal(t, s, store.JournalBatch{
		Running:  []store.RunMark{{IDs: []int64{id[4]}, RunID: "r4"}},
		Complete: []store.Completion{{IDs: []int64{id[0]}, Outcome: runOutcome("r0b", sessA, 0)}, {IDs: []int64{id[3]}, Outcome: runOutcome("r3", sessB, 0)}},
		Dropped:  []store.DropMark{{IDs: []int64{id[5], id[4]}, Note: "drop:new (cap 1)"}},
	})
	want := []store.JournalState{store.JournalDone, store.JournalRunning, store.JournalRunning, store.JournalDone, store.JournalDropped, store.JournalDropped}
	if got := journalStates(t, s, id...); !slices.Equal(got, want) {
		t.Fatalf("states = %v, want %v", got, want)
	}
	es := journalEntries(t, s, id...)
	if es[3].RunID != "r3" || es[5].Note != "drop:new (cap 1)" || es[4].RunID != "r4" || es[5].UpdatedAt != 3000 {
		t.Errorf("entries after complete/drop: %+v", es)
	}

	// Guarded: final states never move, and that is not an error. Here a
	// late running mark, a /stop after the run finished, and a run that
	// finishes after its entries were dropped.
	clock.Set(4000)
	applyJournal(t, s, store.JournalBatch{
		Running:  []store.RunMark{{IDs: []int64{id[0], id[4]}, RunID: "late"}},
		Dropped:  []store.DropMark{{IDs: []int64{id[3]}, Note: "/stop"}},
		Complete: []store.Completion{{IDs: []int64{id[5], id[1]}, Outcome: runOutcome("r5", sessB, 0)}},
	})
	want = []store.JournalState{store.JournalDone, store.JournalDone, store.JournalRunning, store.JournalDone, store.JournalDropped, store.JournalDropped}
	if got := journalStates(t, s, id...); !slices.Equal(got, want) {
		t.Fatalf("after guarded marks, states = %v, want %v", got, want)
	}
	es = journalEntries(t, s, id...)
	for _, i := range []int{0, 3, 4, 5} {
		if es[i].UpdatedAt == 4000 {
			t.Errorf("entry %d in a final state was touched: %+v", i, es[i])
		}
	}
	if es[0].RunID != "r0b" || es[3].Note != "" || es[5].RunID != "" || es[1].RunID != "r5" {
		t.Errorf("guarded marks changed final entries: %+v", es)
	}
	if got := pendingIDs(t, s); !slices.Equal(got, []int64{id[2]}) {
		t.Errorf("pending = %v, want [%d]", got, id[2])
	}
}

// journalMarksInOneBatch checks that marks of one kind that name the same
// entry resolve as if applied one by one, with run ids and notes that need
// JSON escaping, over more ids than a short list.
func journalMarksInOneBatch(t *testing.T, s store.Journal) {
	var b store.JournalBatch
	for i := range 20 {
		b.Append = append(b.Append, journalEntry(sessA, "", strconv.Itoa(i)))
	}
	id := acceptIDs(applyJournal(t, s, b))

	odd := "run \"quoted\"\n\u00e9\u2028<&>\x01"
	applyJournal(t, s, store.JournalBatch{
		Running: []store.RunMark{
			{IDs: id[:12], RunID: "first"},
			{IDs: []int64{id[3], id[3], id[11]}, RunID: odd}, // last wins: running → running
		},
		Complete: []store.Completion{
			{IDs: id[10:14], Outcome: runOutcome("c1", sessA, 0)},
			{IDs: id[12:16], Outcome: runOutcome("c2", sessA, 0)}, // 12, 13 are done by c1 already
		},
		Dropped: []store.DropMark{
			{IDs: id[16:19], Note: odd},
			{IDs: id[17:20], Note: "second"}, // 17, 18 are dropped already
			{IDs: id[0:1], Note: "stop"},
		},
		Delivered: []string{"c1", "c2", "c1"},
	})
	es := journalEntries(t, s, id...)
	want := func(i int, state store.JournalState, runID, note string) {
		t.Helper()
		if e := es[i]; e.State != state || e.RunID != runID || e.Note != note {
			t.Errorf("entry %d = %s run %q note %q; want %s run %q note %q", i, e.State, e.RunID, e.Note, state, runID, note)
		}
	}
	want(0, store.JournalDropped, "first", "stop")
	want(1, store.JournalRunning, "first", "")
	want(3, store.JournalRunning, odd, "")
	want(10, store.JournalDone, "c1", "")
	want(11, store.JournalDone, "c1", "")
	want(13, store.JournalDone, "c1", "")
	want(14, store.JournalDone, "c2", "")
	want(16, store.JournalDropped, "", odd)
	want(18, store.JournalDropped, "", odd)
	want(19, store.JournalDropped, "", "second")
	if got, _ := s.UndeliveredOutcomes(t.Context()); len(got) != 0 {
		t.Errorf("undelivered = %+v", got)
	}
}

// journalLargeBatch appends more entries than one statement takes in some
// implementations, with duplicates of earlier batches and of entries far
// apart in the same batch, and checks that every accept names the right
// entry.
func journalLargeBatch(t *testing.T, s store.Journal) {
	earlier := applyJournal(t, s, store.JournalBatch{Append: []store.JournalEntry{journalEntry(sessA, "k-5", "earlier"), journalEntry(sessA, "k-290", "earlier")}})

	const n = 300 // SQLite: statements of 128 + 128 + 32 + 8 + 4 rows
	var b store.JournalBatch
	for i := range n {
		key := "k-" + strconv.Itoa(i)
		switch {
		case i == 200 || i == 299: // duplicates of entries 7 and 130, far back in the batch
			key = "k-" + strconv.Itoa(map[int]int{200: 7, 299: 130}[i])
		case i%10 == 1:
			key = ""
		}
		b.Append = append(b.Append, journalEntry(sessB, key, strconv.Itoa(i)))
	}
	acc := applyJournal(t, s, b)

	var fresh []int64
	for i, a := range acc {
		e := b.Append[i]
		switch {
		case e.DedupeKey == "k-5" || e.DedupeKey == "k-290":
			if !a.Duplicate || a.State != store.JournalAccepted || (a.ID != earlier[0].ID && a.ID != earlier[1].ID) {
				t.Errorf("entry %d (%s): %+v; want a duplicate of an earlier batch", i, e.DedupeKey, a)
			}
		case i == 200 || i == 299:
			first := map[int]int{200: 7, 299: 130}[i]
			if !a.Duplicate || a.ID != acc[first].ID {
				t.Errorf("entry %d: %+v; want a duplicate of entry %d (%+v)", i, a, first, acc[first])
			}
		default:
			if a.Duplicate || a.State != store.JournalAccepted {
				t.Errorf("entry %d: %+v; want new", i, a)
			}
			fresh = append(fresh, a.ID)
		}
	}
	if !slices.IsSorted(fresh) || fresh[0] <= earlier[1].ID {
		t.Errorf("new ids not increasing after %d: %v", earlier[1].ID, fresh)
	}
	stored := journalEntries(t, s, fresh...)
	byID := map[int64]store.JournalEntry{}
	for _, e := range stored {
		byID[e.ID] = e
	}
	for i, a := range acc {
		if a.Duplicate {
			continue
		}
		got := byID[a.ID]
		if got.DedupeKey != b.Append[i].DedupeKey || string(got.Inbound) != string(b.Append[i].Inbound) {
			t.Fatalf("entry %d stored as id %d = %+v; want key %q inbound %s", i, a.ID, got, b.Append[i].DedupeKey, b.Append[i].Inbound)
		}
	}

	// Ids never go back, even when the batch ended with a duplicate.
	next := applyJournal(t, s, store.JournalBatch{Append: []store.JournalEntry{journalEntry(sessA, "", "next")}})
	if next[0].ID <= slices.Max(fresh) {
		t.Errorf("next id %d not after %d", next[0].ID, slices.Max(fresh))
	}
}

func journalErrorsApplyNothing(t *testing.T, s store.Journal) {
	ctx := t.Context()
	acc := applyJournal(t, s, store.JournalBatch{Append: []store.JournalEntry{journalEntry(sessA, "", "x"), journalEntry(sessA, "", "y")}})
	x, y := acc[0].ID, acc[1].ID
	applyJournal(t, s, store.JournalBatch{Complete: []store.Completion{{IDs: []int64{y}, Outcome: runOutcome("done-run", sessA, 0)}}})
	yBefore := journalEntries(t, s, y)[0]
	const missing = 424242

	cases := []struct {
		name string
		b    store.JournalBatch
		is   error  // errors.Is target, if any
		says string // the error must mention it
	}{
		{"running unknown id", store.JournalBatch{Running: []store.RunMark{{IDs: []int64{x, missing}, RunID: "r"}}}, store.ErrUnknownJournalEntry, "424242"},
		{"running unknown single id", store.JournalBatch{Running: []store.RunMark{{IDs: []int64{missing}, RunID: "r"}}}, store.ErrUnknownJournalEntry, "424242"},
		{"complete unknown id", store.JournalBatch{Complete: []store.Completion{{IDs: []int64{x, missing}, Outcome: runOutcome("r-new", sessA, 0)}}}, store.ErrUnknownJournalEntry, "424242"},
		{"dropped unknown id", store.JournalBatch{Dropped: []store.DropMark{{IDs: []int64{missing, missing + 1}, Note: "n"}}}, store.ErrUnknownJournalEntry, "424242, 424243"},
		{"unknown id with others past their transition", store.JournalBatch{Dropped: []store.DropMark{{IDs: []int64{y, missing}}}}, store.ErrUnknownJournalEntry, "424242"},
		{"duplicate run id", store.JournalBatch{Complete: []store.Completion{{IDs: []int64{x}, Outcome: runOutcome("done-run", sessA, 0)}}}, store.ErrDuplicateRun, "done-run"},
		{"duplicate run id in one batch", store.JournalBatch{Complete: []store.Completion{
			{IDs: []int64{x}, Outcome: runOutcome("twice", sessA, 0)}, {Outcome: runOutcome("twice", sessA, 0)},
		}}, store.ErrDuplicateRun, "twice"},
		{"delivered unknown run", store.JournalBatch{Delivered: []string{"done-run", "nope"}}, store.ErrUnknownRun, "nope"},
		{"running without run id", store.JournalBatch{Running: []store.RunMark{{IDs: []int64{x}}}}, nil, "run id is required"},
		{"append without session key", store.JournalBatch{Append: []store.JournalEntry{{Inbound: json.RawMessage(`{}`)}}}, nil, "session key"},
		{"append without inbound", store.JournalBatch{Append: []store.JournalEntry{{SessionKey: sessA}}}, nil, "inbound"},
		{"outcome without delivery", store.JournalBatch{Complete: []store.Completion{{IDs: []int64{x}, Outcome: store.RunOutcome{RunID: "r", SessionKey: sessA}}}}, nil, "delivery"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Every failing batch also appends, so a partial apply shows.
			b := tc.b
			b.Append = append(b.Append, journalEntry(sessB, "must-not-exist", "rolled back"))
			acc, err := s.ApplyJournal(ctx, &b)
			if err == nil {
				t.Fatalf("ApplyJournal succeeded with %+v", acc)
			}
			if acc != nil {
				t.Errorf("accepts %+v returned with an error", acc)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %q does not wrap %v", err, tc.is)
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %q does not mention %q", err, tc.says)
			}
			assertOneLineError(t, err)

			if got := pendingIDs(t, s); !slices.Equal(got, []int64{x}) {
				t.Errorf("pending = %v, want only [%d]: the batch was partly applied", got, x)
			}
			if got := journalEntries(t, s, x)[0]; got.State != store.JournalAccepted || got.RunID != "" || got.Note != "" {
				t.Errorf("entry x = %+v, want untouched", got)
			}
			if got := journalEntries(t, s, y)[0]; !reflect.DeepEqual(got, yBefore) {
				t.Errorf("entry y = %+v, want untouched %+v", got, yBefore)
			}
			outs, err := s.UndeliveredOutcomes(ctx)
			if err != nil || len(outs) != 1 || outs[0].RunID != "done-run" {
				t.Errorf("undelivered = %+v, %v; want only done-run", outs, err)
			}
		})
	}
	// The rolled-back dedupe key was never taken.
	if acc := applyJournal(t, s, store.JournalBatch{Append: []store.JournalEntry{journalEntry(sessB, "must-not-exist", "now")}}); acc[0].Duplicate {
		t.Errorf("dedupe key of a rolled-back append is taken: %+v", acc)
	}
	if acc, err := s.ApplyJournal(ctx, &store.JournalBatch{}); acc != nil || err != nil {
		t.Errorf("empty batch: %v, %v", acc, err)
	}
}

func journalOutcomes(t *testing.T, open func(t *testing.T, now func() time.Time) store.Journal) {
	ctx := t.Context()
	clock := &Clock{}
	clock.Set(7000)
	s := open(t, clock.Now)
	acc := applyJournal(t, s, store.JournalBatch{Append: []store.JournalEntry{journalEntry(sessA, "", "a"), journalEntry(sessA, "", "b"), journalEntry(sessB, "", "c"), journalEntry(sessB, "", "d")}})
	id := acceptIDs(acc)

	// Outcomes come back oldest first by CreatedAt, not by run id or
	// insertion order; a run stored already delivered (nothing to send) is
	// never listed.
	quiet := runOutcome("r-quiet", sessB, 100)
	quiet.Delivered = true
	applyJournal(t, s, store.JournalBatch{
		Running: []store.RunMark{{IDs: id[:2], RunID: "r-b"}},
		Complete: []store.Completion{
			{IDs: id[:2], Outcome: runOutcome("r-b", sessA, 300)},
			{IDs: id[2:3], Outcome: runOutcome("r-a", sessB, 200)},
			{IDs: id[3:], Outcome: quiet},
			{Outcome: runOutcome("r-c", sessA, 0)}, // no entries (a heartbeat run); CreatedAt from the clock
		},
	})
	got, err := s.UndeliveredOutcomes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.RunOutcome{runOutcome("r-a", sessB, 200), runOutcome("r-b", sessA, 300), runOutcome("r-c", sessA, 7000)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("UndeliveredOutcomes =\n%+v\nwant\n%+v", got, want)
	}
	assertDoneHaveOutcomes(t, s, id...)

	applyJournal(t, s, store.JournalBatch{Delivered: []string{"r-a", "r-quiet"}})
	applyJournal(t, s, store.JournalBatch{Delivered: []string{"r-a"}}) // again: harmless
	got, _ = s.UndeliveredOutcomes(ctx)
	if len(got) != 2 || got[0].RunID != "r-b" || got[1].RunID != "r-c" {
		t.Errorf("after delivering r-a: %+v", got)
	}

	// Complete and Delivered in one batch (a run whose delivery finished
	// before its completion was committed) leaves nothing to redeliver.
	more := applyJournal(t, s, store.JournalBatch{Append: []store.JournalEntry{journalEntry(sessA, "", "e")}})
	applyJournal(t, s, store.JournalBatch{
		Complete:  []store.Completion{{IDs: acceptIDs(more), Outcome: runOutcome("r-e", sessA, 400)}},
		Delivered: []string{"r-e", "r-b", "r-c"},
	})
	if got, _ := s.UndeliveredOutcomes(ctx); len(got) != 0 {
		t.Errorf("undelivered after delivering all: %+v", got)
	}
	assertDoneHaveOutcomes(t, s, append(id, acceptIDs(more)...)...)
}

func journalPrune(t *testing.T, open func(t *testing.T, now func() time.Time) store.Journal) {
	ctx := t.Context()
	clock := &Clock{}
	clock.Set(1000)
	s := open(t, clock.Now)

	old := acceptIDs(applyJournal(t, s, store.JournalBatch{Append: []store.JournalEntry{
		journalEntry(sessA, "old-done", ""), journalEntry(sessA, "old-dropped", ""), journalEntry(sessA, "old-accepted", ""),
		journalEntry(sessA, "old-running", ""), journalEntry(sessA, "old-undelivered", ""),
	}}))
	applyJournal(t, s, store.JournalBatch{
		Running:  []store.RunMark{{IDs: old[3:4], RunID: "r-running"}},
		Complete: []store.Completion{{IDs: old[:1], Outcome: runOutcome("r-old", sessA, 0)}, {IDs: old[4:5], Outcome: runOutcome("r-old-undelivered", sessA, 0)}},
		Dropped:  []store.DropMark{{IDs: old[1:2], Note: "drop:new"}},
	})
	applyJournal(t, s, store.JournalBatch{Delivered: []string{"r-old"}})

	clock.Set(5000)
	recent := acceptIDs(applyJournal(t, s, store.JournalBatch{Append: []store.JournalEntry{journalEntry(sessB, "new-done", ""), journalEntry(sessB, "new-dropped", "")}}))
	applyJournal(t, s, store.JournalBatch{
		Complete:  []store.Completion{{IDs: recent[:1], Outcome: runOutcome("r-new", sessB, 0)}},
		Dropped:   []store.DropMark{{IDs: recent[1:], Note: "/stop"}},
		Delivered: []string{"r-new"},
	})

	// Cutoff between: old done + dropped entries and the old delivered
	// outcome go; the entry with an undelivered outcome goes too (it is
	// done), but its outcome stays.
	n, err := s.PruneJournal(ctx, 5000)
	if err != nil || n != 4 {
		t.Fatalf("PruneJournal = %d, %v; want 4 (3 entries, 1 outcome)", n, err)
	}
	left, _ := s.JournalEntries(ctx, append(old, recent...)...)
	var leftIDs []int64
	for _, e := range left {
		leftIDs = append(leftIDs, e.ID)
	}
	if want := []int64{old[2], old[3], recent[0], recent[1]}; !slices.Equal(leftIDs, want) {
		t.Errorf("left after prune: %v, want %v", leftIDs, want)
	}
	if got, _ := s.UndeliveredOutcomes(ctx); len(got) != 1 || got[0].RunID != "r-old-undelivered" {
		t.Errorf("undelivered after prune = %+v", got)
	}
	// The recent delivered outcome stays (so one outcome went: r-old's).
	assertOutcomeStored(t, s, "r-new", "after prune, the recent delivered outcome")

	// A pruned dedupe key can be accepted again; one still stored cannot.
	acc := applyJournal(t, s, store.JournalBatch{Append: []store.JournalEntry{journalEntry(sessA, "old-done", "again"), journalEntry(sessB, "new-done", "again")}})
	if acc[0].Duplicate || !acc[1].Duplicate || acc[1].State != store.JournalDone {
		t.Errorf("appends after prune: %+v", acc)
	}
	if n, err := s.PruneJournal(ctx, 5000); err != nil || n != 0 {
		t.Errorf("second prune = %d, %v; want 0", n, err)
	}

	// Likewise a pruned outcome's run id can be completed again.
	if _, err := s.ApplyJournal(ctx, &store.JournalBatch{Complete: []store.Completion{{Outcome: runOutcome("r-old", sessA, 0)}}}); err != nil {
		t.Errorf("completing the pruned run r-old again: %v", err)
	}
	if got, _ := s.UndeliveredOutcomes(ctx); len(got) != 2 || got[0].RunID != "r-old-undelivered" || got[1].RunID != "r-old" {
		t.Errorf("undelivered after completing r-old again = %+v", got)
	}
}

// journalConcurrent runs the dispatcher's whole write cycle from several
// goroutines at once (instances, or one process's group commits): every
// id must be unique, every write applied; all of them appending one dedupe
// key per round, exactly one stores it and the others get its id.
func journalConcurrent(t *testing.T, s store.Journal) {
	ctx := t.Context()
	const workers, rounds, per = 6, 30, 4

	idsOf := make([][]int64, workers)
	shared := make([][]store.JournalAccept, rounds) // [round][worker]
	for r := range shared {
		shared[r] = make([]store.JournalAccept, workers)
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			key := core.SessionKey(fmt.Sprintf("agent:main:w%d", w))
			for r := range rounds {
				b := store.JournalBatch{}
				for i := range per {
					b.Append = append(b.Append, journalEntry(key, fmt.Sprintf("w%d|r%d|%d", w, r, i), "x"))
				}
				// The same message through every worker: one keeps it.
				b.Append = append(b.Append, journalEntry("agent:main:shared", fmt.Sprintf("shared|r%d", r), "x"))
				// Marks for the previous round ride along, as in a group
				// commit.
				if r > 0 {
					prev := idsOf[w][len(idsOf[w])-per:]
					runID := fmt.Sprintf("w%d-r%d", w, r-1)
					b.Running = []store.RunMark{{IDs: prev[per/2:], RunID: runID}}
					b.Complete = []store.Completion{{IDs: prev, Outcome: runOutcome(runID, key, 0)}}
					b.Delivered = []string{runID}
				}
				acc, err := s.ApplyJournal(ctx, &b)
				if err != nil {
					t.Errorf("worker %d round %d: %v", w, r, err)
					return
				}
				if len(acc) != len(b.Append) {
					t.Errorf("worker %d round %d: %d accepts for %d appends", w, r, len(acc), len(b.Append))
					return
				}
				for _, a := range acc[:per] {
					if a.Duplicate {
						t.Errorf("worker %d round %d: unexpected duplicate %+v", w, r, a)
						return
					}
					idsOf[w] = append(idsOf[w], a.ID)
				}
				shared[r][w] = acc[per]
				// Readers run concurrently with the writers.
				if _, err := s.PendingJournal(ctx); err != nil {
					t.Errorf("worker %d round %d: PendingJournal: %v", w, r, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	seen := map[int64]bool{}
	for w, list := range idsOf {
		if !slices.IsSorted(list) {
			t.Errorf("worker %d got ids out of order: %v", w, list)
		}
		for _, id := range list {
			if seen[id] {
				t.Fatalf("id %d handed out twice", id)
			}
			seen[id] = true
		}
	}
	var all []int64
	for id := range seen {
		all = append(all, id)
	}
	for r, accs := range shared {
		var kept []store.JournalAccept
		for _, a := range accs {
			if !a.Duplicate {
				kept = append(kept, a)
			}
		}
		if len(kept) != 1 {
			t.Errorf("round %d: the shared key was stored %d times: %+v", r, len(kept), accs)
			continue
		}
		if seen[kept[0].ID] {
			t.Fatalf("id %d handed out twice", kept[0].ID)
		}
		seen[kept[0].ID] = true
		for w, a := range accs {
			if a.Duplicate && (a.ID != kept[0].ID || a.State != store.JournalAccepted) {
				t.Errorf("round %d worker %d: %+v; want a duplicate of %d, accepted", r, w, a, kept[0].ID)
			}
		}
	}
	if len(seen) != workers*rounds*per+rounds {
		t.Errorf("%d ids, want %d", len(seen), workers*rounds*per+rounds)
	}
	if got := pendingIDs(t, s); len(got) != workers*per+rounds {
		t.Errorf("%d pending, want the last round of each worker and the shared entries (%d)", len(got), workers*per+rounds)
	}
	if got, _ := s.UndeliveredOutcomes(ctx); len(got) != 0 {
		t.Errorf("%d undelivered outcomes, want 0", len(got))
	}
	assertDoneHaveOutcomes(t, s, all...)
}
