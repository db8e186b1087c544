package main

import (
	"context"
	"database/sql"
	"slices"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/bridges/slack/slacktest"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/store"
)

// The daemon prunes the outbound ledger whatever bridges run: with only
// Slack configured, rows recorded more than 7 days before the daemon
// starts are gone soon after, and the recent ones stay.
func TestRunPrunesTheLedgerWithOnlySlack(t *testing.T) {
	const day = 24 * time.Hour
	ages := map[string]time.Duration{
		"old-30d":    30 * day,
		"old-8d":     8 * day,
		"old-7d1h":   7*day + time.Hour,
		"recent-6d":  6*day + 23*time.Hour,
		"recent-now": 0,
	}
	want := []string{"recent-6d", "recent-now"}
	state := t.TempDir()
	path := seedLedger(t, state, ages)
	if got := ledgerKeys(t, path); len(got) != len(ages) {
		t.Fatalf("the seeded ledger holds %q", got)
	}

	srv := slacktest.New(t)
	d := startDaemon(t, llmtest.NewAnthropicServer(t), map[string]string{
		"SWITCHBOARD_STATE_DIR": state, "SLACK_BOT": srv.BotToken, "SLACK_APP": srv.AppToken,
	}, `channels:
  slack:
    enabled: true
    botToken: ${SLACK_BOT}
    appToken: ${SLACK_APP}
    apiUrl: `+srv.APIURL+`
    dmPolicy: open
    allowFrom: ["*"]
`)
	d.waitChannel(t, "slack", "connected")
	var got []string
	if !eventually(10*time.Second, func() bool {
		got = ledgerKeys(t, path)
		return slices.Equal(got, want)
	}) {
		t.Fatalf("the ledger holds %q, want %q\n%s", got, want, d.tc.err.String())
	}
	d.stop(t)
	if got := ledgerKeys(t, path); !slices.Equal(got, want) {
		t.Errorf("after stopping, the ledger holds %q, want %q", got, want)
	}
}

// seedLedger records one outbound ledger row per key of ages in the
// state store in dir, dated that long ago, and returns the database's
// path. The store dates rows itself (now), so the dates are set in SQL.
func seedLedger(t *testing.T, dir string, ages map[string]time.Duration) string {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	for key := range ages {
		if err := st.Record(ctx, key, "msg-"+key); err != nil {
			t.Fatal(err)
		}
	}
	path := st.Path()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	db := openStateDB(t, path)
	defer db.Close()
	now := time.Now()
	for key, age := range ages {
		if _, err := db.Exec(`UPDATE outbound_ledger SET created_at = ? WHERE key = ?`, now.Add(-age).UnixMilli(), key); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// ledgerKeys returns the outbound ledger's keys, sorted, read beside the
// daemon (SQLite's WAL lets a reader in while the daemon writes).
func ledgerKeys(t *testing.T, path string) []string {
	t.Helper()
	db := openStateDB(t, path)
	defer db.Close()
	rows, err := db.Query(`SELECT key FROM outbound_ledger ORDER BY key`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return keys
}

// openStateDB opens the state database at path directly, for the caller
// to close; busy_timeout waits out the daemon's checkpoints.
func openStateDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	return db
}
