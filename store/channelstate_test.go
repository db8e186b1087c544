package store

import "testing"

func TestChannelOffsetSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := s.ChannelOffset(t.Context(), "telegram", "default"); v != "" || err != nil {
		t.Fatalf("fresh offset = %q, %v", v, err)
	}
	for _, v := range []string{"11", "12"} {
		if err := s.SetChannelOffset(t.Context(), "telegram", "default", v); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	s = openStore(t, dir)
	if v, _ := s.ChannelOffset(t.Context(), "telegram", "default"); v != "12" {
		t.Errorf("offset after reopen = %q, want 12", v)
	}
	if v, _ := s.ChannelOffset(t.Context(), "telegram", "other"); v != "" {
		t.Errorf("another account's offset = %q", v)
	}
}

// Offsets by prefix, the ledger and its pruning are in the conformance
// suite (store/storetest), which runs on this store too.

// TestPruneLedgerChunks prunes more ledger rows than one chunk deletes and
// keeps the rows recorded at or after the cutoff.
func TestPruneLedgerChunks(t *testing.T) {
	ctx := t.Context()
	s := openStore(t, t.TempDir())
	const total = 2*pruneChunk + 17
	// One statement, not total Records: the rows' age is what matters here.
	if _, err := s.writer.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		INSERT INTO outbound_ledger (key, message_id, created_at) SELECT 'old:' || i, 'm', 1000 FROM n`, total); err != nil {
		t.Fatal(err)
	}
	fixedClock(s, 2000)
	if err := s.Record(ctx, "new:0:0", "m"); err != nil {
		t.Fatal(err)
	}
	if n, err := s.PruneLedger(ctx, 2000); n != total || err != nil {
		t.Fatalf("PruneLedger = %d, %v; want %d", n, err, total)
	}
	if _, ok, _ := s.Sent(ctx, "new:0:0"); !ok {
		t.Error("the row recorded at the cutoff was pruned")
	}
	if _, ok, _ := s.Sent(ctx, "old:1"); ok {
		t.Error("an old row survived")
	}
}
