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

func TestChannelOffsetsByPrefix(t *testing.T) {
	s := openStore(t, t.TempDir())
	ctx := t.Context()
	for k, v := range map[string]string{"default/c1": "10", "default/c2": "20", "other/c1": "30", "default": "x"} {
		if err := s.SetChannelOffset(ctx, "discord", k, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetChannelOffset(ctx, "telegram", "default/c1", "40"); err != nil {
		t.Fatal(err)
	}
	got, err := s.ChannelOffsets(ctx, "discord", "default/")
	if err != nil || len(got) != 2 || got["default/c1"] != "10" || got["default/c2"] != "20" {
		t.Fatalf("offsets = %v, %v", got, err)
	}
	// A prefix with LIKE's wildcards matches literally.
	if got, err := s.ChannelOffsets(ctx, "discord", "def%"); err != nil || len(got) != 0 {
		t.Fatalf("wildcard prefix = %v, %v", got, err)
	}
}

func TestOutboundLedger(t *testing.T) {
	s := openStore(t, t.TempDir())
	ctx := t.Context()
	if _, ok, err := s.Sent(ctx, "run-1:0:0"); ok || err != nil {
		t.Fatalf("unknown key: %v %v", ok, err)
	}
	if err := s.Record(ctx, "run-1:0:0", "501"); err != nil {
		t.Fatal(err)
	}
	if err := s.Record(ctx, "run-1:0:0", "999"); err != nil {
		t.Fatal(err)
	}
	if id, ok, _ := s.Sent(ctx, "run-1:0:0"); !ok || id != "501" {
		t.Errorf("Sent = %q %v, want the first id", id, ok)
	}
	if n, err := s.PruneLedger(ctx, 1<<49); n != 1 || err != nil {
		t.Errorf("prune = %d, %v", n, err)
	}
}

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
