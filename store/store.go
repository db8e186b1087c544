package store

import (
	"context"
	"errors"

	"github.com/switchboardhq/switchboard/core"
)

// Store is the boundary between Switchboard and its durable state. Everything
// that must survive a restart, or that several Switchboard processes must agree
// on, goes through it.
//
// Besides its own lifetime, Store is made of one small interface per concern
// (today core.SessionIndex, Journal, QueueSettings and Devices; later Dedupe,
// Ledger, Pairing for DM senders, Cron), which it embeds, so a caller that needs only the dedupe keys
// can ask for a Dedupe and a test can fake just that. SQL lives only in the
// implementations; no interface method takes or returns SQL, rows or driver
// types.
//
// [SQLite] is the embedded default and assumes one process per state
// directory, which it enforces with a lock file. A Postgres implementation is
// planned for running several instances behind a load balancer: it implements
// the same interfaces with its own migrations under migrations/postgres, and
// turns the per-session lanes into row leases so that only one instance runs a
// session at a time. For that to work, no caller may assume it is the only
// Switchboard process except through these interfaces: no in-memory cache of
// state another instance could change, no "I started it, so it is mine".
type Store interface {
	// Ping reports whether the store can currently be reached. It is cheap
	// enough for a readiness probe and honours ctx.
	Ping(ctx context.Context) error

	// SchemaVersion returns the highest migration applied to the store.
	SchemaVersion(ctx context.Context) (int, error)

	// Close releases every resource of the store: connections, locks. It is
	// safe to call more than once; calls after the first return nil.
	Close() error

	// SessionIndex maps session keys to their current transcript and
	// metadata.
	core.SessionIndex

	// Journal is the durable inbound journal and the outcomes of runs: what
	// the dispatcher accepted, ran and delivered.
	Journal

	// QueueSettings holds the per-session queue overrides.
	QueueSettings

	// Devices holds the gateway's paired devices, pending pairing requests
	// and device tokens.
	Devices

	// Cron holds scheduled jobs and their runs.
	Cron

	// SchedulerState holds the heartbeat runner's small persistent values.
	SchedulerState
}

// Full is everything a running Switchboard keeps in its store: Store, the
// bridges' delivery state, DM pairing, and the maintenance job's pruning.
// *SQLite and store/postgres's Store implement it; the daemon holds one.
type Full interface {
	Store
	ChannelState
	ChannelAccess
	Pruner
	Leases
	Instances
}

var _ Full = (*SQLite)(nil)

// ErrLocked is wrapped by the error [Open] returns when another process, or
// another Open in this process, already holds the state directory's lock.
// Callers branch on it with errors.Is to tell "already running" from other
// failures.
var ErrLocked = errors.New("store: state dir locked")

// ErrSchemaTooNew is wrapped by the error [Open] returns when the database was
// last migrated by a newer Switchboard than this one. Nothing in the database
// is changed in that case.
var ErrSchemaTooNew = errors.New("store: schema too new")
