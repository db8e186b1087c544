package store

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// fixedClock makes s's clock return ms (unix milliseconds) until changed
// through the returned setter.
func fixedClock(s *SQLite, ms int64) func(int64) {
	var mu sync.Mutex
	s.now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return time.UnixMilli(ms)
	}
	return func(v int64) {
		mu.Lock()
		ms = v
		mu.Unlock()
	}
}

// entry is a journal entry to append, with a small inbound document.
func entry(key core.SessionKey, dedupe, body string) JournalEntry {
	inbound, _ := json.Marshal(map[string]string{"sessionKey": string(key), "body": body})
	return JournalEntry{SessionKey: key, DedupeKey: dedupe, Inbound: inbound}
}

// apply applies b and fails the test on error.
func apply(t *testing.T, s *SQLite, b JournalBatch) []JournalAccept {
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

// entries returns the entries with ids, failing the test unless all exist.
func entries(t *testing.T, s *SQLite, ids ...int64) []JournalEntry {
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

// states returns the state of each id, in the order given.
func states(t *testing.T, s *SQLite, ids ...int64) []JournalState {
	t.Helper()
	byID := map[int64]JournalState{}
	for _, e := range entries(t, s, ids...) {
		byID[e.ID] = e.State
	}
	out := make([]JournalState, len(ids))
	for i, id := range ids {
		out[i] = byID[id]
	}
	return out
}

func pendingIDs(t *testing.T, s *SQLite) []int64 {
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

func ids(acc []JournalAccept) []int64 {
	out := make([]int64, len(acc))
	for i, a := range acc {
		out[i] = a.ID
	}
	return out
}

func outcome(runID string, key core.SessionKey, created int64) RunOutcome {
	return RunOutcome{RunID: runID, SessionKey: key, CreatedAt: created,
		Delivery: json.RawMessage(`{"route":{"channel":"telegram","to":"1"},"replies":[{"text":"hi ` + runID + `"}]}`)}
}

const (
	sessA core.SessionKey = "agent:main:telegram:direct:1"
	sessB core.SessionKey = "agent:main:slack:channel:c1"
)

func TestJournalAppend(t *testing.T) {
	s := openStore(t, t.TempDir())
	fixedClock(s, 5000)

	first := entry(sessA, "telegram|1|default||10", "one")
	first.CreatedAt = 1234
	acc := apply(t, s, JournalBatch{Append: []JournalEntry{first, entry(sessB, "", "two"), entry(sessA, "telegram|1|default||11", "three")}})
	for i, a := range acc {
		if a.Duplicate || a.State != JournalAccepted || a.ID <= 0 || (i > 0 && a.ID <= acc[i-1].ID) {
			t.Fatalf("accepts %+v: want new, accepted, increasing ids", acc)
		}
	}

	got := entries(t, s, ids(acc)...)
	want := []JournalEntry{
		{ID: acc[0].ID, SessionKey: sessA, State: JournalAccepted, DedupeKey: first.DedupeKey, Inbound: first.Inbound, CreatedAt: 1234, UpdatedAt: 5000},
		{ID: acc[1].ID, SessionKey: sessB, State: JournalAccepted, Inbound: entry(sessB, "", "two").Inbound, CreatedAt: 5000, UpdatedAt: 5000},
		{ID: acc[2].ID, SessionKey: sessA, State: JournalAccepted, DedupeKey: "telegram|1|default||11", Inbound: entry(sessA, "", "three").Inbound, CreatedAt: 5000, UpdatedAt: 5000},
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
	next := apply(t, s, JournalBatch{Append: []JournalEntry{entry(sessB, "", "four")}})
	if next[0].ID <= acc[2].ID {
		t.Errorf("next id %d not after %d", next[0].ID, acc[2].ID)
	}
}

func TestJournalAppendDedupe(t *testing.T) {
	s := openStore(t, t.TempDir())
	first := apply(t, s, JournalBatch{Append: []JournalEntry{
		entry(sessA, "k1", "one"),
		entry(sessA, "", "no key"),
	}})
	apply(t, s, JournalBatch{Running: []RunMark{{IDs: []int64{first[0].ID}, RunID: "r1"}}})

	acc := apply(t, s, JournalBatch{Append: []JournalEntry{
		entry(sessA, "k2", "new"),
		entry(sessA, "k1", "redelivered"), // of an earlier batch
		entry(sessA, "", "no key again"),  // "" never collides
		entry(sessA, "k2", "twice"),       // of an entry earlier in this batch
		entry(sessA, "", "no key, third"),
	}})
	want := []JournalAccept{
		{ID: acc[0].ID, State: JournalAccepted},
		{ID: first[0].ID, Duplicate: true, State: JournalRunning},
		{ID: acc[2].ID, State: JournalAccepted},
		{ID: acc[0].ID, Duplicate: true, State: JournalAccepted},
		{ID: acc[4].ID, State: JournalAccepted},
	}
	if !reflect.DeepEqual(acc, want) {
		t.Fatalf("accepts = %+v, want %+v", acc, want)
	}
	if acc[2].ID == first[1].ID || acc[4].ID == acc[2].ID || acc[0].ID <= first[1].ID {
		t.Errorf("entries without a dedupe key were merged: %+v after %+v", acc, first)
	}
	// A duplicate inserted nothing: the stored inbound is the first copy's.
	if e := entries(t, s, first[0].ID)[0]; !strings.Contains(string(e.Inbound), `"one"`) {
		t.Errorf("inbound of k1 = %s, want the first copy", e.Inbound)
	}
	if got := pendingIDs(t, s); len(got) != 5 {
		t.Errorf("pending %v, want 5 entries (duplicates not inserted)", got)
	}
}

func TestJournalTransitions(t *testing.T) {
	s := openStore(t, t.TempDir())
	setClock := fixedClock(s, 1000)
	acc := apply(t, s, JournalBatch{Append: []JournalEntry{
		entry(sessA, "", "0"), entry(sessA, "", "1"), entry(sessA, "", "2"),
		entry(sessB, "", "3"), entry(sessB, "", "4"), entry(sessB, "", "5"),
	}})
	id := ids(acc)

	// accepted → running, one id and several (with a repeat), then running →
	// running again under a new run (a run restarted after a crash).
	setClock(2000)
	apply(t, s, JournalBatch{Running: []RunMark{
		{IDs: []int64{id[0]}, RunID: "r0"},
		{IDs: []int64{id[1], id[2], id[1]}, RunID: "r1"},
	}})
	apply(t, s, JournalBatch{Running: []RunMark{{IDs: []int64{id[0]}, RunID: "r0b"}}})
	if got := entries(t, s, id[0], id[1]); got[0].RunID != "r0b" || got[1].RunID != "r1" || got[1].UpdatedAt != 2000 || got[1].State != JournalRunning {
		t.Errorf("after running marks: %+v", got)
	}

	// running → done, accepted → done (a run the dispatcher never marked
	// running), accepted → dropped, running → dropped.
	setClock(3000)
	apply(t, s, JournalBatch{
		Running:  []RunMark{{IDs: []int64{id[4]}, RunID: "r4"}},
		Complete: []Completion{{IDs: []int64{id[0]}, Outcome: outcome("r0b", sessA, 0)}, {IDs: []int64{id[3]}, Outcome: outcome("r3", sessB, 0)}},
		Dropped:  []DropMark{{IDs: []int64{id[5], id[4]}, Note: "drop:new (cap 1)"}},
	})
	want := []JournalState{JournalDone, JournalRunning, JournalRunning, JournalDone, JournalDropped, JournalDropped}
	if got := states(t, s, id...); !slices.Equal(got, want) {
		t.Fatalf("states = %v, want %v", got, want)
	}
	es := entries(t, s, id...)
	if es[3].RunID != "r3" || es[5].Note != "drop:new (cap 1)" || es[4].RunID != "r4" || es[5].UpdatedAt != 3000 {
		t.Errorf("entries after complete/drop: %+v", es)
	}

	// Guarded: final states never move, and that is not an error. Here a
	// late running mark, a /stop after the run finished, and a run that
	// finishes after its entries were dropped.
	setClock(4000)
	apply(t, s, JournalBatch{
		Running:  []RunMark{{IDs: []int64{id[0], id[4]}, RunID: "late"}},
		Dropped:  []DropMark{{IDs: []int64{id[3]}, Note: "/stop"}},
		Complete: []Completion{{IDs: []int64{id[5], id[1]}, Outcome: outcome("r5", sessB, 0)}},
	})
	want = []JournalState{JournalDone, JournalDone, JournalRunning, JournalDone, JournalDropped, JournalDropped}
	if got := states(t, s, id...); !slices.Equal(got, want) {
		t.Fatalf("after guarded marks, states = %v, want %v", got, want)
	}
	es = entries(t, s, id...)
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

// TestJournalMarksInOneBatch checks that marks of one kind that name the
// same entry resolve as if applied one by one, with run ids and notes that
// need JSON escaping, over more ids than the short-list path handles.
func TestJournalMarksInOneBatch(t *testing.T) {
	s := openStore(t, t.TempDir())
	var b JournalBatch
	for i := range 20 {
		b.Append = append(b.Append, entry(sessA, "", strconv.Itoa(i)))
	}
	id := ids(apply(t, s, b))

	odd := "run \"quoted\"\n\u00e9\u2028<&>\x01"
	apply(t, s, JournalBatch{
		Running: []RunMark{
			{IDs: id[:12], RunID: "first"},
			{IDs: []int64{id[3], id[3], id[11]}, RunID: odd}, // last wins: running → running
		},
		Complete: []Completion{
			{IDs: id[10:14], Outcome: outcome("c1", sessA, 0)},
			{IDs: id[12:16], Outcome: outcome("c2", sessA, 0)}, // 12, 13 are done by c1 already
		},
		Dropped: []DropMark{
			{IDs: id[16:19], Note: odd},
			{IDs: id[17:20], Note: "second"}, // 17, 18 are dropped already
			{IDs: id[0:1], Note: "stop"},
		},
		Delivered: []string{"c1", "c2", "c1"},
	})
	es := entries(t, s, id...)
	want := func(i int, state JournalState, runID, note string) {
		t.Helper()
		if e := es[i]; e.State != state || e.RunID != runID || e.Note != note {
			t.Errorf("entry %d = %s run %q note %q; want %s run %q note %q", i, e.State, e.RunID, e.Note, state, runID, note)
		}
	}
	want(0, JournalDropped, "first", "stop")
	want(1, JournalRunning, "first", "")
	want(3, JournalRunning, odd, "")
	want(10, JournalDone, "c1", "")
	want(11, JournalDone, "c1", "")
	want(13, JournalDone, "c1", "")
	want(14, JournalDone, "c2", "")
	want(16, JournalDropped, "", odd)
	want(18, JournalDropped, "", odd)
	want(19, JournalDropped, "", "second")
	if got, _ := s.UndeliveredOutcomes(t.Context()); len(got) != 0 {
		t.Errorf("undelivered = %+v", got)
	}
}

// TestJournalAppendLargeBatch appends more entries than one statement
// takes, with duplicates of earlier batches and of entries in other
// statements of the same batch, and checks that every accept names the
// right entry.
func TestJournalAppendLargeBatch(t *testing.T) {
	s := openStore(t, t.TempDir())
	earlier := apply(t, s, JournalBatch{Append: []JournalEntry{entry(sessA, "k-5", "earlier"), entry(sessA, "k-290", "earlier")}})

	const n = 300 // 128 + 128 + 32 + 8 + 4
	var b JournalBatch
	for i := range n {
		key := "k-" + strconv.Itoa(i)
		switch {
		case i == 200 || i == 299: // duplicates of entries 7 and 130, in other statements
			key = "k-" + strconv.Itoa(map[int]int{200: 7, 299: 130}[i])
		case i%10 == 1:
			key = ""
		}
		b.Append = append(b.Append, entry(sessB, key, strconv.Itoa(i)))
	}
	acc := apply(t, s, b)

	var fresh []int64
	for i, a := range acc {
		e := b.Append[i]
		switch {
		case e.DedupeKey == "k-5" || e.DedupeKey == "k-290":
			if !a.Duplicate || a.State != JournalAccepted || (a.ID != earlier[0].ID && a.ID != earlier[1].ID) {
				t.Errorf("entry %d (%s): %+v; want a duplicate of an earlier batch", i, e.DedupeKey, a)
			}
		case i == 200 || i == 299:
			first := map[int]int{200: 7, 299: 130}[i]
			if !a.Duplicate || a.ID != acc[first].ID {
				t.Errorf("entry %d: %+v; want a duplicate of entry %d (%+v)", i, a, first, acc[first])
			}
		default:
			if a.Duplicate || a.State != JournalAccepted {
				t.Errorf("entry %d: %+v; want new", i, a)
			}
			fresh = append(fresh, a.ID)
		}
	}
	if !slices.IsSorted(fresh) || fresh[0] <= earlier[1].ID {
		t.Errorf("new ids not increasing after %d: %v", earlier[1].ID, fresh)
	}
	stored := entries(t, s, fresh...)
	byID := map[int64]JournalEntry{}
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
	next := apply(t, s, JournalBatch{Append: []JournalEntry{entry(sessA, "", "next")}})
	if next[0].ID <= slices.Max(fresh) {
		t.Errorf("next id %d not after %d", next[0].ID, slices.Max(fresh))
	}
}

func TestJournalErrorsApplyNothing(t *testing.T) {
	ctx := t.Context()
	s := openStore(t, t.TempDir())
	acc := apply(t, s, JournalBatch{Append: []JournalEntry{entry(sessA, "", "x"), entry(sessA, "", "y")}})
	x, y := acc[0].ID, acc[1].ID
	apply(t, s, JournalBatch{Complete: []Completion{{IDs: []int64{y}, Outcome: outcome("done-run", sessA, 0)}}})
	const missing = 424242

	cases := []struct {
		name string
		b    JournalBatch
		is   error  // errors.Is target, if any
		says string // the error must mention it
	}{
		{"running unknown id", JournalBatch{Running: []RunMark{{IDs: []int64{x, missing}, RunID: "r"}}}, ErrUnknownJournalEntry, "424242"},
		{"running unknown single id", JournalBatch{Running: []RunMark{{IDs: []int64{missing}, RunID: "r"}}}, ErrUnknownJournalEntry, "424242"},
		{"complete unknown id", JournalBatch{Complete: []Completion{{IDs: []int64{x, missing}, Outcome: outcome("r-new", sessA, 0)}}}, ErrUnknownJournalEntry, "424242"},
		{"dropped unknown id", JournalBatch{Dropped: []DropMark{{IDs: []int64{missing, missing + 1}, Note: "n"}}}, ErrUnknownJournalEntry, "424242, 424243"},
		{"unknown id with others past their transition", JournalBatch{Dropped: []DropMark{{IDs: []int64{y, missing}}}}, ErrUnknownJournalEntry, "424242"},
		{"duplicate run id", JournalBatch{Complete: []Completion{{IDs: []int64{x}, Outcome: outcome("done-run", sessA, 0)}}}, ErrDuplicateRun, "done-run"},
		{"duplicate run id in one batch", JournalBatch{Complete: []Completion{
			{IDs: []int64{x}, Outcome: outcome("twice", sessA, 0)}, {Outcome: outcome("twice", sessA, 0)},
		}}, ErrDuplicateRun, "twice"},
		{"delivered unknown run", JournalBatch{Delivered: []string{"done-run", "nope"}}, ErrUnknownRun, "nope"},
		{"running without run id", JournalBatch{Running: []RunMark{{IDs: []int64{x}}}}, nil, "run id is required"},
		{"append without session key", JournalBatch{Append: []JournalEntry{{Inbound: json.RawMessage(`{}`)}}}, nil, "session key"},
		{"append without inbound", JournalBatch{Append: []JournalEntry{{SessionKey: sessA}}}, nil, "inbound"},
		{"outcome without delivery", JournalBatch{Complete: []Completion{{IDs: []int64{x}, Outcome: RunOutcome{RunID: "r", SessionKey: sessA}}}}, nil, "delivery"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Every failing batch also appends, so a partial apply shows.
			b := tc.b
			b.Append = append(b.Append, entry(sessB, "must-not-exist", "rolled back"))
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
			assertOneLine(t, err)

			if got := pendingIDs(t, s); !slices.Equal(got, []int64{x}) {
				t.Errorf("pending = %v, want only [%d]: the batch was partly applied", got, x)
			}
			if got := entries(t, s, x)[0]; got.State != JournalAccepted || got.RunID != "" {
				t.Errorf("entry x = %+v, want untouched", got)
			}
			outs, err := s.UndeliveredOutcomes(ctx)
			if err != nil || len(outs) != 1 || outs[0].RunID != "done-run" {
				t.Errorf("undelivered = %+v, %v; want only done-run", outs, err)
			}
		})
	}
	// The rolled-back dedupe key was never taken.
	if acc := apply(t, s, JournalBatch{Append: []JournalEntry{entry(sessB, "must-not-exist", "now")}}); acc[0].Duplicate {
		t.Errorf("dedupe key of a rolled-back append is taken: %+v", acc)
	}
	if acc, err := s.ApplyJournal(ctx, &JournalBatch{}); acc != nil || err != nil {
		t.Errorf("empty batch: %v, %v", acc, err)
	}
}

func TestJournalOutcomes(t *testing.T) {
	ctx := t.Context()
	s := openStore(t, t.TempDir())
	fixedClock(s, 7000)
	acc := apply(t, s, JournalBatch{Append: []JournalEntry{entry(sessA, "", "a"), entry(sessA, "", "b"), entry(sessB, "", "c"), entry(sessB, "", "d")}})
	id := ids(acc)

	// Outcomes come back oldest first by CreatedAt, not by run id or
	// insertion order; a run stored already delivered (nothing to send) is
	// never listed.
	quiet := outcome("r-quiet", sessB, 100)
	quiet.Delivered = true
	apply(t, s, JournalBatch{
		Running: []RunMark{{IDs: id[:2], RunID: "r-b"}},
		Complete: []Completion{
			{IDs: id[:2], Outcome: outcome("r-b", sessA, 300)},
			{IDs: id[2:3], Outcome: outcome("r-a", sessB, 200)},
			{IDs: id[3:], Outcome: quiet},
			{Outcome: outcome("r-c", sessA, 0)}, // no entries (a heartbeat run); CreatedAt from the clock
		},
	})
	got, err := s.UndeliveredOutcomes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []RunOutcome{outcome("r-a", sessB, 200), outcome("r-b", sessA, 300), outcome("r-c", sessA, 7000)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("UndeliveredOutcomes =\n%+v\nwant\n%+v", got, want)
	}
	assertDoneHaveOutcomes(t, s)

	apply(t, s, JournalBatch{Delivered: []string{"r-a", "r-quiet"}})
	apply(t, s, JournalBatch{Delivered: []string{"r-a"}}) // again: harmless
	got, _ = s.UndeliveredOutcomes(ctx)
	if len(got) != 2 || got[0].RunID != "r-b" || got[1].RunID != "r-c" {
		t.Errorf("after delivering r-a: %+v", got)
	}

	// Complete and Delivered in one batch (a run whose delivery finished
	// before its completion was committed) leaves nothing to redeliver.
	more := apply(t, s, JournalBatch{Append: []JournalEntry{entry(sessA, "", "e")}})
	apply(t, s, JournalBatch{
		Complete:  []Completion{{IDs: ids(more), Outcome: outcome("r-e", sessA, 400)}},
		Delivered: []string{"r-e", "r-b", "r-c"},
	})
	if got, _ := s.UndeliveredOutcomes(ctx); len(got) != 0 {
		t.Errorf("undelivered after delivering all: %+v", got)
	}
	assertDoneHaveOutcomes(t, s)
}

// assertDoneHaveOutcomes checks that no entry is done without the outcome of
// its run.
func assertDoneHaveOutcomes(t *testing.T, s *SQLite) {
	t.Helper()
	var orphans int
	err := s.reader.QueryRowContext(t.Context(), `SELECT count(*) FROM journal j WHERE state = 'done'
		AND NOT EXISTS (SELECT 1 FROM run_outcomes o WHERE o.run_id = j.run_id)`).Scan(&orphans)
	if err != nil || orphans != 0 {
		t.Errorf("%d done entries without an outcome (%v)", orphans, err)
	}
}

func TestJournalSurvivesReopen(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := openStore(t, dir)
	acc := apply(t, s, JournalBatch{Append: []JournalEntry{entry(sessA, "k1", "a"), entry(sessB, "k2", "b"), entry(sessB, "", "c")}})
	id := ids(acc)
	apply(t, s, JournalBatch{
		Running:  []RunMark{{IDs: id[1:2], RunID: "r1"}},
		Complete: []Completion{{IDs: id[2:], Outcome: outcome("r2", sessB, 10)}},
	})
	if err := s.PutQueueSettings(ctx, sessA, json.RawMessage(`{"mode":"collect"}`)); err != nil {
		t.Fatal(err)
	}
	pending, _ := s.PendingJournal(ctx)
	closeStore(t, s)

	s = openStore(t, dir)
	if got, err := s.PendingJournal(ctx); err != nil || !reflect.DeepEqual(got, pending) {
		t.Errorf("after reopen PendingJournal = %+v, %v; want %+v", got, err, pending)
	}
	if got, _ := s.UndeliveredOutcomes(ctx); len(got) != 1 || !reflect.DeepEqual(got[0], outcome("r2", sessB, 10)) {
		t.Errorf("after reopen UndeliveredOutcomes = %+v", got)
	}
	if got, _ := s.AllQueueSettings(ctx); string(got[sessA]) != `{"mode":"collect"}` {
		t.Errorf("after reopen queue settings = %s", got)
	}
	// Dedupe keys and the id sequence survive too.
	acc2 := apply(t, s, JournalBatch{Append: []JournalEntry{entry(sessA, "k1", "again"), entry(sessA, "", "new")}})
	if !acc2[0].Duplicate || acc2[0].ID != id[0] || acc2[1].ID <= id[2] {
		t.Errorf("after reopen appends = %+v (before: %v)", acc2, id)
	}
}

func TestPruneJournal(t *testing.T) {
	ctx := t.Context()
	s := openStore(t, t.TempDir())
	setClock := fixedClock(s, 1000)

	old := ids(apply(t, s, JournalBatch{Append: []JournalEntry{
		entry(sessA, "old-done", ""), entry(sessA, "old-dropped", ""), entry(sessA, "old-accepted", ""),
		entry(sessA, "old-running", ""), entry(sessA, "old-undelivered", ""),
	}}))
	apply(t, s, JournalBatch{
		Running:  []RunMark{{IDs: old[3:4], RunID: "r-running"}},
		Complete: []Completion{{IDs: old[:1], Outcome: outcome("r-old", sessA, 0)}, {IDs: old[4:5], Outcome: outcome("r-old-undelivered", sessA, 0)}},
		Dropped:  []DropMark{{IDs: old[1:2], Note: "drop:new"}},
	})
	apply(t, s, JournalBatch{Delivered: []string{"r-old"}})

	setClock(5000)
	recent := ids(apply(t, s, JournalBatch{Append: []JournalEntry{entry(sessB, "new-done", ""), entry(sessB, "new-dropped", "")}}))
	apply(t, s, JournalBatch{
		Complete:  []Completion{{IDs: recent[:1], Outcome: outcome("r-new", sessB, 0)}},
		Dropped:   []DropMark{{IDs: recent[1:], Note: "/stop"}},
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
	var outcomes []string
	rows, err := s.reader.QueryContext(ctx, `SELECT run_id FROM run_outcomes ORDER BY run_id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var r string
		rows.Scan(&r)
		outcomes = append(outcomes, r)
	}
	rows.Close()
	if want := []string{"r-new", "r-old-undelivered"}; !slices.Equal(outcomes, want) {
		t.Errorf("outcomes after prune: %v, want %v", outcomes, want)
	}

	// A pruned dedupe key can be accepted again; one still stored cannot.
	acc := apply(t, s, JournalBatch{Append: []JournalEntry{entry(sessA, "old-done", "again"), entry(sessB, "new-done", "again")}})
	if acc[0].Duplicate || !acc[1].Duplicate || acc[1].State != JournalDone {
		t.Errorf("appends after prune: %+v", acc)
	}
	if n, err := s.PruneJournal(ctx, 5000); err != nil || n != 0 {
		t.Errorf("second prune = %d, %v; want 0", n, err)
	}
}

// TestPruneJournalChunks prunes more rows than one chunk deletes.
func TestPruneJournalChunks(t *testing.T) {
	ctx := t.Context()
	s := openStore(t, t.TempDir())
	setClock := fixedClock(s, 1000)
	const total = 2*pruneChunk + 17
	var all []int64
	for len(all) < total {
		b := JournalBatch{}
		for range min(500, total-len(all)) {
			b.Append = append(b.Append, entry(sessA, "", "x"))
		}
		acc := apply(t, s, b)
		all = append(all, ids(acc)...)
		apply(t, s, JournalBatch{Dropped: []DropMark{{IDs: ids(acc), Note: "n"}}})
	}
	keep := ids(apply(t, s, JournalBatch{Append: []JournalEntry{entry(sessA, "", "pending")}}))
	setClock(2000)
	n, err := s.PruneJournal(ctx, 2000)
	if err != nil || n != total {
		t.Fatalf("PruneJournal = %d, %v; want %d", n, err, total)
	}
	if got := pendingIDs(t, s); !slices.Equal(got, keep) {
		t.Errorf("pending after prune = %v, want %v", got, keep)
	}
}

// TestJournalQueryPlans checks that the hot and the large queries use their
// indexes, so none turns into a table scan as the journal (or the outbound
// ledger) grows.
func TestJournalQueryPlans(t *testing.T) {
	s := openStore(t, t.TempDir())
	for _, tc := range []struct {
		query, index string
		args         []any
	}{
		{sqlLastID, "journal", nil},
		{sqlDuplicate, "journal_dedupe", []any{"k"}},
		{sqlMissing, "INTEGER PRIMARY KEY", []any{"[1]"}},
		{sqlRunning, "INTEGER PRIMARY KEY", []any{1, `{"1":"r"}`}},
		{sqlDone, "INTEGER PRIMARY KEY", []any{1, `{"1":"r"}`}},
		{sqlDropped, "INTEGER PRIMARY KEY", []any{1, `{"1":"r"}`}},
		{sqlDelivered, "sqlite_autoindex_run_outcomes", []any{1, `["r"]`}},
		{sqlMissingRuns, "sqlite_autoindex_run_outcomes", []any{`["r"]`}},
		{sqlExistingRuns, "sqlite_autoindex_run_outcomes", []any{`["r"]`}},
		{sqlEntries, "INTEGER PRIMARY KEY", []any{"[1]"}},
		{sqlPending, "journal_pending", nil},
		{sqlUndelivered, "run_outcomes_undelivered", nil},
		{sqlPruneEntries, "journal_prune", []any{1, 5}},
		{sqlPruneOutcomes, "run_outcomes_prune", []any{1, 5}},
		{sqlPruneLedger, "outbound_ledger_created", []any{1, 5}},
	} {
		q := tc.query
		rows, err := s.reader.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+q, tc.args...)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		joined := strings.Join(plan, "; ")
		tableScan := slices.Contains(plan, "SCAN journal") || slices.Contains(plan, "SCAN run_outcomes") ||
			slices.Contains(plan, "SCAN outbound_ledger")
		if !strings.Contains(joined, tc.index) || strings.Contains(joined, "TEMP B-TREE") || tableScan {
			t.Errorf("plan of %s:\n  %s\nwant index %s, no table scan, no sort", q, joined, tc.index)
		}
	}
}

// TestJournalConcurrentApply runs the dispatcher's whole write cycle from
// several goroutines at once: every id must be unique, every write applied.
func TestJournalConcurrentApply(t *testing.T) {
	ctx := t.Context()
	s := openStore(t, t.TempDir())
	const workers, rounds, per = 6, 30, 4

	idsOf := make([][]int64, workers)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			key := core.SessionKey(fmt.Sprintf("agent:main:w%d", w))
			for r := range rounds {
				b := JournalBatch{}
				for i := range per {
					b.Append = append(b.Append, entry(key, fmt.Sprintf("w%d|r%d|%d", w, r, i), "x"))
				}
				// Marks for the previous round ride along, as in a group
				// commit.
				if r > 0 {
					prev := idsOf[w][len(idsOf[w])-per:]
					runID := fmt.Sprintf("w%d-r%d", w, r-1)
					b.Running = []RunMark{{IDs: prev[per/2:], RunID: runID}}
					b.Complete = []Completion{{IDs: prev, Outcome: outcome(runID, key, 0)}}
					b.Delivered = []string{runID}
				}
				acc, err := s.ApplyJournal(ctx, &b)
				if err != nil {
					errs <- fmt.Errorf("worker %d round %d: %w", w, r, err)
					return
				}
				for _, a := range acc {
					if a.Duplicate {
						errs <- fmt.Errorf("worker %d round %d: unexpected duplicate %+v", w, r, a)
						return
					}
					idsOf[w] = append(idsOf[w], a.ID)
				}
				// Readers run concurrently with the writers.
				if _, err := s.PendingJournal(ctx); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
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
	if len(seen) != workers*rounds*per {
		t.Errorf("%d ids, want %d", len(seen), workers*rounds*per)
	}
	if got := pendingIDs(t, s); len(got) != workers*per {
		t.Errorf("%d pending, want the last round of each worker (%d)", len(got), workers*per)
	}
	if got, _ := s.UndeliveredOutcomes(ctx); len(got) != 0 {
		t.Errorf("%d undelivered outcomes, want 0", len(got))
	}
	assertDoneHaveOutcomes(t, s)
}

const (
	journalCrashDirEnv = "SWITCHBOARD_STORE_TEST_JOURNAL_DIR"
	// crashBatch is the entries per batch in the crash test: 8+4+1, so each
	// batch takes three INSERT statements and a kill can land between them.
	crashBatch = 13
)

// TestHelperJournalWriter is not a test: run as a child process by
// TestJournalCrashSafety, it appends batches of crashBatch entries as fast as
// it can and prints "<tag> <batch> <id>..." for each batch after
// ApplyJournal returned, until it is killed.
func TestHelperJournalWriter(t *testing.T) {
	dir := os.Getenv(journalCrashDirEnv)
	if dir == "" {
		t.Skip("helper process only")
	}
	s, err := Open(context.Background(), dir)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	tag := strconv.Itoa(os.Getpid())
	out := make([]byte, 0, 256)
	for batch := 0; ; batch++ {
		b := JournalBatch{Append: make([]JournalEntry, crashBatch)}
		for i := range b.Append {
			b.Append[i] = entry("agent:main:crash", crashKey(tag, batch, i), strings.Repeat("x", 200))
		}
		acc, err := s.ApplyJournal(context.Background(), &b)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		out = fmt.Appendf(out[:0], "%s %d", tag, batch)
		for _, a := range acc {
			out = fmt.Appendf(out, " %d", a.ID)
		}
		out = append(out, '\n')
		if _, err := os.Stdout.Write(out); err != nil {
			os.Exit(1) // the parent is gone
		}
	}
}

func crashKey(tag string, batch, i int) string {
	return fmt.Sprintf("crash|%s|%d|%d", tag, batch, i)
}

// TestJournalCrashSafety SIGKILLs a process that is appending to the journal
// at a random point, several times over one state dir, and checks after each
// kill that every batch the process saw committed is there, accepted, and
// that no batch is there in part.
func TestJournalCrashSafety(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("needs SIGKILL")
	}
	dir := t.TempDir()
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 0))
	t.Logf("seed %d", seed)

	for iter := range 4 {
		// Kill after a random number of batches was reported, while the
		// child keeps writing (and is usually inside a transaction).
		killAfter := 1 + rng.IntN(200)
		printed := runAndKillWriter(t, dir, killAfter)
		if len(printed) < killAfter {
			t.Fatalf("iteration %d: child reported %d batches before dying, want at least %d", iter, len(printed), killAfter)
		}
		checkCrashJournal(t, dir, printed)
	}
}

// reportedBatch is one line of the helper's output.
type reportedBatch struct {
	tag   string
	batch int
	ids   []int64
}

// runAndKillWriter starts the helper, SIGKILLs it once it reported
// killAfter batches, and returns every batch it reported before it died.
func runAndKillWriter(t *testing.T, dir string, killAfter int) []reportedBatch {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperJournalWriter$", "-test.count=1")
	cmd.Env = append(os.Environ(), journalCrashDirEnv+"="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()

	var out []reportedBatch
	r := bufio.NewReader(stdout)
	for {
		line, err := r.ReadString('\n')
		if err == io.EOF {
			break // a line cut short by the kill is not a report
		}
		if err != nil {
			t.Fatalf("reading the helper: %v", err)
		}
		fields := strings.Fields(line)
		if len(fields) != 2+crashBatch {
			t.Fatalf("helper said %q", line)
		}
		rb := reportedBatch{tag: fields[0]}
		rb.batch, _ = strconv.Atoi(fields[1])
		for _, f := range fields[2:] {
			id, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				t.Fatalf("helper said %q", line)
			}
			rb.ids = append(rb.ids, id)
		}
		out = append(out, rb)
		if len(out) == killAfter && !killed {
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			killed = true
			// Keep reading: what the child printed before the signal landed
			// was committed too.
		}
	}
	if !killed {
		t.Fatalf("helper exited after %d batches without being killed", len(out))
	}
	cmd.Wait() // "signal: killed"
	return out
}

// checkCrashJournal opens dir after a kill and checks the reported batches
// against it.
func checkCrashJournal(t *testing.T, dir string, printed []reportedBatch) {
	t.Helper()
	ctx := t.Context()
	s, err := Open(ctx, dir)
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	defer s.Close()

	var all []int64
	for _, rb := range printed {
		all = append(all, rb.ids...)
	}
	got, err := s.JournalEntries(ctx, all...)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[int64]JournalEntry{}
	for _, e := range got {
		byID[e.ID] = e
	}
	for _, rb := range printed {
		for i, id := range rb.ids {
			e, ok := byID[id]
			switch {
			case !ok:
				t.Fatalf("batch %s/%d: committed id %d is lost", rb.tag, rb.batch, id)
			case e.State != JournalAccepted || e.DedupeKey != crashKey(rb.tag, rb.batch, i):
				t.Fatalf("batch %s/%d: id %d is %+v, want accepted with key %s", rb.tag, rb.batch, id, e, crashKey(rb.tag, rb.batch, i))
			}
		}
	}

	// All or nothing: each batch has every entry or none.
	counts := map[string]int{}
	rows, err := s.reader.QueryContext(ctx, `SELECT dedupe_key FROM journal WHERE dedupe_key LIKE 'crash|%'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var key string
		if err := rows.Scan(&key); err != nil {
			t.Fatal(err)
		}
		counts[key[:strings.LastIndexByte(key, '|')]]++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d batches reported by the killed writer; %d stored by all writers so far", len(printed), len(counts))
	if len(counts) < len(printed) {
		t.Errorf("%d batches stored, fewer than the %d reported", len(counts), len(printed))
	}
	for batch, n := range counts {
		if n != crashBatch {
			t.Errorf("batch %s has %d of its %d entries: a partial commit", batch, n, crashBatch)
		}
	}
}
