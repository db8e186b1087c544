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
