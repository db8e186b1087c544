package store

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// benchInbound is a typical core.Inbound as JSON: a short message with its
// route, sender and trusted metadata, about 400 bytes.
var benchInbound = json.RawMessage(`{"sessionKey":"agent:main:telegram:direct:123456789","route":{"channel":"telegram","accountId":"default","to":"123456789","chatType":"direct"},"chatType":"direct","body":"Hey, can you summarise the thread from this morning and tell me what is still open?","sender":{"id":"123456789","name":"Ada Lovelace","username":"ada"},"messageId":"4711","trusted":{"provider":"telegram","surface":"telegram","chatId":"123456789"},"receivedAt":1763700000000}`)

// benchDelivery is a typical stored outcome: route plus one reply.
var benchDelivery = json.RawMessage(`{"route":{"channel":"telegram","accountId":"default","to":"123456789"},"replies":[{"text":"Two things are still open: the release date and who reviews the store migration. Everything else was settled before noon."}]}`)

// openBenchStore opens a store in a temporary directory for b.
func openBenchStore(b *testing.B) *SQLite {
	b.Helper()
	s, err := Open(b.Context(), b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// benchEntries returns n entries with unique dedupe keys starting at seq.
func benchEntries(n, seq int) []JournalEntry {
	es := make([]JournalEntry, n)
	for i := range es {
		es[i] = JournalEntry{
			SessionKey: core.SessionKey("agent:main:telegram:direct:" + strconv.Itoa((seq+i)%1000)),
			DedupeKey:  "telegram|123456789|default||" + strconv.Itoa(seq+i),
			Inbound:    benchInbound,
		}
	}
	return es
}

// reportPerEntry reports the time per entry (message) and the rate, given
// how many were written.
func reportPerEntry(b *testing.B, entries int) {
	ns := float64(b.Elapsed().Nanoseconds()) / float64(entries)
	b.ReportMetric(ns, "ns/entry")
	b.ReportMetric(1e9/ns, "entries/s")
}

// BenchmarkJournalAppend measures appending: one ApplyJournal (one
// transaction) per op, with batch entries each.
func BenchmarkJournalAppend(b *testing.B) {
	for _, batch := range []int{1, 64, 512} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			s := openBenchStore(b)
			ctx := b.Context()
			seq, ops := 0, 0
			b.ReportAllocs()
			for b.Loop() {
				jb := JournalBatch{Append: benchEntries(batch, seq)}
				seq += batch
				if _, err := s.ApplyJournal(ctx, &jb); err != nil {
					b.Fatal(err)
				}
				ops++
			}
			reportPerEntry(b, ops*batch)
		})
	}
}

// BenchmarkJournalComplete measures completing 64 runs of one message each
// in one ApplyJournal: each marks its entry done and stores its outcome.
// Appending and starting the runs is not timed.
func BenchmarkJournalComplete(b *testing.B) {
	const runs = 64
	s := openBenchStore(b)
	ctx := b.Context()
	seq, ops := 0, 0
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		jb := JournalBatch{Append: benchEntries(runs, seq)}
		acc, err := s.ApplyJournal(ctx, &jb)
		if err != nil {
			b.Fatal(err)
		}
		running := JournalBatch{Running: make([]RunMark, runs)}
		done := JournalBatch{Complete: make([]Completion, runs)}
		for i, a := range acc {
			runID := "run-" + strconv.Itoa(seq+i)
			running.Running[i] = RunMark{IDs: []int64{a.ID}, RunID: runID}
			done.Complete[i] = Completion{IDs: []int64{a.ID}, Outcome: RunOutcome{
				RunID: runID, SessionKey: jb.Append[i].SessionKey, Delivery: benchDelivery,
			}}
		}
		if _, err := s.ApplyJournal(ctx, &running); err != nil {
			b.Fatal(err)
		}
		seq += runs
		b.StartTimer()

		if _, err := s.ApplyJournal(ctx, &done); err != nil {
			b.Fatal(err)
		}
		ops++
	}
	reportPerEntry(b, ops*runs)
}

// BenchmarkJournalMessageCycle measures the journal's whole share of the
// dispatcher's work per message at steady state, group-committed: each op is
// one transaction that appends batch new messages, marks the previous op's
// messages running, completes the ones before that (done + outcome) and marks
// the ones before that delivered; one run per message. entries/s is
// messages per second. The no-running variants leave out the running mark,
// which restart does not need (accepted and running entries both run again),
// to show what it costs.
func BenchmarkJournalMessageCycle(b *testing.B) {
	for _, v := range []struct {
		batch   int
		running bool
	}{{64, true}, {512, true}, {64, false}, {512, false}} {
		batch := v.batch
		name := fmt.Sprintf("batch=%d", batch)
		if !v.running {
			name += "/no-running"
		}
		b.Run(name, func(b *testing.B) {
			s := openBenchStore(b)
			ctx := b.Context()
			runID := func(id int64) string { return "run-" + strconv.FormatInt(id, 10) }
			// Ids appended one, two and three ops ago.
			var toRun, toComplete, toDeliver []int64
			seq, ops := 0, 0
			b.ReportAllocs()
			for b.Loop() {
				jb := JournalBatch{Append: benchEntries(batch, seq)}
				for _, id := range toRun {
					if v.running {
						jb.Running = append(jb.Running, RunMark{IDs: []int64{id}, RunID: runID(id)})
					}
				}
				for _, id := range toComplete {
					jb.Complete = append(jb.Complete, Completion{IDs: []int64{id}, Outcome: RunOutcome{
						RunID: runID(id), SessionKey: "agent:main:telegram:direct:1", Delivery: benchDelivery,
					}})
				}
				for _, id := range toDeliver {
					jb.Delivered = append(jb.Delivered, runID(id))
				}
				acc, err := s.ApplyJournal(ctx, &jb)
				if err != nil {
					b.Fatal(err)
				}
				toDeliver, toComplete, toRun = toComplete, toRun, ids(acc)
				seq += batch
				ops++
			}
			reportPerEntry(b, ops*batch)
		})
	}
}

// BenchmarkPendingJournal measures reading 10,000 pending entries, what a
// restart after a backlog does first.
func BenchmarkPendingJournal(b *testing.B) {
	const pending = 10_000
	s := openBenchStore(b)
	ctx := b.Context()
	// Finished history before and between the pending rows, as in a real
	// journal; the partial index skips it.
	for seq := 0; seq < 3*pending; seq += 500 {
		jb := JournalBatch{Append: benchEntries(500, seq)}
		acc, err := s.ApplyJournal(ctx, &jb)
		if err != nil {
			b.Fatal(err)
		}
		if (seq/500)%3 != 0 {
			if _, err := s.ApplyJournal(ctx, &JournalBatch{Dropped: []DropMark{{IDs: ids(acc), Note: "bench"}}}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		es, err := s.PendingJournal(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if len(es) != pending {
			b.Fatalf("%d pending, want %d", len(es), pending)
		}
	}
}
