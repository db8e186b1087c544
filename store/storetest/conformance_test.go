package storetest_test

import (
	"os"
	"testing"

	"github.com/switchboardhq/switchboard/internal/pgtest"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres"
	"github.com/switchboardhq/switchboard/store/storetest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}

// openSQLite is a fresh SQLite store in a temporary state directory.
func openSQLite(t *testing.T) *store.SQLite {
	t.Helper()
	s, err := store.Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// openPostgres is a fresh PostgreSQL store in a new database of the test
// cluster (skipped without PostgreSQL, except under CI=true).
func openPostgres(t *testing.T) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(t.Context(), pgtest.Database(t), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// The suites, on both stores.
func TestConformance(t *testing.T) {
	for _, impl := range []struct {
		name           string
		queueSettings  func(*testing.T) store.QueueSettings
		schedulerState func(*testing.T) store.SchedulerState
	}{
		{"sqlite",
			func(t *testing.T) store.QueueSettings { return openSQLite(t) },
			func(t *testing.T) store.SchedulerState { return openSQLite(t) }},
		{"postgres",
			func(t *testing.T) store.QueueSettings { return openPostgres(t) },
			func(t *testing.T) store.SchedulerState { return openPostgres(t) }},
	} {
		t.Run(impl.name, func(t *testing.T) {
			t.Run("QueueSettings", func(t *testing.T) { storetest.QueueSettings(t, impl.queueSettings) })
			t.Run("SchedulerState", func(t *testing.T) { storetest.SchedulerState(t, impl.schedulerState) })
		})
	}
}
