package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboardhq/switchboard/internal/pgtest"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/migrations"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}

func newest(t *testing.T) int {
	t.Helper()
	migs, err := store.LoadMigrations(migrations.Postgres, migrations.PostgresDir)
	if err != nil {
		t.Fatal(err)
	}
	return migs[len(migs)-1].Version
}

// exec runs one statement on url's database outside the store.
func exec(t *testing.T, url, sql string) {
	t.Helper()
	c, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	if _, err := c.Exec(t.Context(), sql); err != nil {
		t.Fatal(err)
	}
}

// Instances starting together on an empty database apply each migration
// once: every Open succeeds, and schema_version has one row per migration.
func TestInstancesStartingTogetherMigrateOnce(t *testing.T) {
	url := pgtest.Database(t)
	const n = 6
	var wg sync.WaitGroup
	errs := make([]error, n)
	stores := make([]*Store, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stores[i], errs[i] = Open(t.Context(), url, Options{MaxConns: 2})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("instance %d: %v", i, err)
		}
		defer stores[i].Close()
	}
	var rows, distinct int
	if err := stores[0].pool.QueryRow(t.Context(), `SELECT count(*), count(DISTINCT version) FROM schema_version`).Scan(&rows, &distinct); err != nil {
		t.Fatal(err)
	}
	if want := newest(t); rows != want || distinct != want {
		t.Fatalf("schema_version has %d rows (%d versions), want %d", rows, distinct, want)
	}
	for i, s := range stores {
		if v, err := s.SchemaVersion(t.Context()); err != nil || v != newest(t) {
			t.Errorf("instance %d: SchemaVersion = %d, %v", i, v, err)
		}
		if err := s.Ping(t.Context()); err != nil {
			t.Errorf("instance %d: Ping: %v", i, err)
		}
	}
	if err := stores[0].Close(); err != nil || stores[0].Close() != nil {
		t.Error("Close twice")
	}
}

// A database migrated by a newer Switchboard is refused and left as it is;
// so is one that holds tables of something else.
func TestOpenRefusesADatabaseItDoesNotKnow(t *testing.T) {
	url := pgtest.Database(t)
	s, err := Open(t.Context(), url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	exec(t, url, `INSERT INTO schema_version (version, name, applied_at) VALUES (9999, 'future', 0)`)
	if _, err := Open(t.Context(), url, Options{}); !errors.Is(err, store.ErrSchemaTooNew) || !strings.Contains(err.Error(), "9999") {
		t.Fatalf("newer schema: %v, want ErrSchemaTooNew naming 9999", err)
	}

	other := pgtest.Database(t)
	exec(t, other, `CREATE TABLE customers (id int)`)
	if _, err := Open(t.Context(), other, Options{}); err == nil || !strings.Contains(err.Error(), "not a Switchboard store") {
		t.Fatalf("foreign database: %v", err)
	}
}

// No error shows the URL's password, whether the URL does not parse or
// the server cannot be reached.
func TestOpenErrorsKeepThePasswordOut(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for _, url := range []string{
		"postgres://switchboard:hunter2-secret@127.0.0.1:1/db?sslmode=disable&connect_timeout=2",
		"host=127.0.0.1 port=1 user=switchboard password=hunter2-secret dbname=db sslmode=disable connect_timeout=2",
		"postgres://switchboard:hunter2-secret@127.0.0.1:notaport/db",
		"host=127.0.0.1 password=hunter2-secret port=notaport",
	} {
		_, err := Open(ctx, url, Options{})
		if err == nil {
			t.Fatalf("%s: opened", url)
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("the error shows the password: %v", err)
		}
		if strings.Contains(url, "notaport") && !strings.Contains(err.Error(), "port") {
			t.Errorf("the error does not say what is wrong: %v", err)
		}
	}
}

// Two instances on one database race for the same cron instants, many
// times: each instant has exactly one winner, whichever instance it is.
func TestTwoInstancesClaimACronInstantOnce(t *testing.T) {
	url := pgtest.Database(t)
	var inst [2]*Store
	for i := range inst {
		s, err := Open(t.Context(), url, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		inst[i] = s
	}
	ctx := t.Context()
	if err := inst[0].PutCronJob(ctx, store.CronJob{ID: "every-minute", Spec: []byte(`{}`), NextRunAt: 60000}); err != nil {
		t.Fatal(err)
	}
	wins := [2]int{}
	for n := range 50 {
		at := int64(n+1) * 60000
		var wg sync.WaitGroup
		var mu sync.Mutex
		winners := 0
		for i, s := range inst {
			for g := range 3 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ok, err := s.ClaimCronRun(ctx, store.CronClaim{JobID: "every-minute", ExpectNextRunAt: at, NextRunAt: at + 60000,
						Run: store.CronRun{RunID: fmt.Sprintf("i%d-g%d-%d", i, g, n), ScheduledAt: at, Status: "running"}})
					if err != nil {
						t.Errorf("instance %d: %v", i, err)
					}
					if ok {
						mu.Lock()
						winners++
						wins[i]++
						mu.Unlock()
					}
				}()
			}
		}
		wg.Wait()
		if winners != 1 {
			t.Fatalf("instant %d: %d winners", at, winners)
		}
	}
	runs, err := inst[1].CronRuns(ctx, "every-minute", 100)
	if err != nil || len(runs) != 50 {
		t.Fatalf("%d runs recorded for 50 instants (%v)", len(runs), err)
	}
	t.Logf("wins per instance: %v", wins)
}
