package store

import (
	"bufio"
	"context"
	"encoding/json"
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

// store.Journal's promises are asserted by storetest.Journal (store/storetest); here is what only SQLite shows.

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
