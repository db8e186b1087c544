package storetest_test

import (
	"os"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/transcript"
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

// openSQLite is a fresh SQLite store in a temporary state directory,
// with the clock now (nil: time.Now).
func openSQLite(t *testing.T, now func() time.Time) *store.SQLite {
	t.Helper()
	s, err := store.OpenWith(t.Context(), t.TempDir(), store.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// openPostgres is a fresh PostgreSQL store in a new database of the test
// cluster (skipped without PostgreSQL, except under CI=true), with the
// clock now (nil: time.Now).
func openPostgres(t *testing.T, now func() time.Time) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(t.Context(), pgtest.Database(t), postgres.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// impl is what both stores implement: the whole store.
type impl interface {
	store.Store
	store.ChannelState
	store.ChannelAccess
	store.Leases
	store.Instances
}

// The suites, on both stores.
func TestConformance(t *testing.T) {
	for _, impl := range []struct {
		name string
		open func(*testing.T, func() time.Time) impl
	}{
		{"sqlite", func(t *testing.T, now func() time.Time) impl { return openSQLite(t, now) }},
		{"postgres", func(t *testing.T, now func() time.Time) impl { return openPostgres(t, now) }},
	} {
		t.Run(impl.name, func(t *testing.T) {
			t.Run("QueueSettings", func(t *testing.T) {
				storetest.QueueSettings(t, func(t *testing.T) store.QueueSettings { return impl.open(t, nil) })
			})
			t.Run("SchedulerState", func(t *testing.T) {
				storetest.SchedulerState(t, func(t *testing.T) store.SchedulerState { return impl.open(t, nil) })
			})
			t.Run("Cron", func(t *testing.T) {
				storetest.Cron(t, func(t *testing.T) store.Cron { return impl.open(t, nil) })
			})
			t.Run("Sessions", func(t *testing.T) {
				storetest.Sessions(t, func(t *testing.T) core.SessionIndex { return impl.open(t, nil) })
			})
			t.Run("ChannelAccess", func(t *testing.T) {
				storetest.ChannelAccess(t, func(t *testing.T) store.ChannelAccess { return impl.open(t, nil) })
			})
			t.Run("ChannelState", func(t *testing.T) {
				storetest.ChannelState(t, func(t *testing.T, now func() time.Time) store.ChannelState { return impl.open(t, now) })
			})
			t.Run("Devices", func(t *testing.T) {
				storetest.Devices(t, func(t *testing.T, now func() time.Time) store.Devices { return impl.open(t, now) })
			})
			t.Run("Leases", func(t *testing.T) {
				storetest.Leases(t, func(t *testing.T, now func() time.Time) storetest.LeaseStore { return impl.open(t, now) })
			})
			t.Run("Instances", func(t *testing.T) {
				storetest.Instances(t, func(t *testing.T, now func() time.Time) store.Instances { return impl.open(t, now) })
			})
			t.Run("Transcripts", func(t *testing.T) {
				storetest.Transcripts(t, func(t *testing.T) transcript.Store {
					if pg, ok := impl.open(t, nil).(*postgres.Store); ok {
						return pg.Transcripts()
					}
					return transcript.Files{StateDir: t.TempDir(), Options: transcript.Options{NoSync: true}}
				})
			})
			t.Run("Journal", func(t *testing.T) {
				storetest.Journal(t, func(t *testing.T, now func() time.Time) store.Journal { return impl.open(t, now) })
			})
		})
	}
}
