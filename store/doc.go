// Package store owns Switchboard's durable state: everything that has to
// survive a restart other than the session transcripts, which are JSONL files
// of their own. Today that is the sessions index, the inbound journal with
// the outcomes of runs, per-session queue settings, and the gateway's device
// identity state (paired devices, pairing requests, device tokens) with its
// generated shared token, chat platforms' DM pairing codes and approved
// senders, the bridges' stream positions (channel offsets) and outbound
// delivery ledger, and cron and scheduler state.
//
// # Where it lives
//
// The embedded default, [SQLite], keeps everything in the state directory
// (config stateDir, env SWITCHBOARD_STATE_DIR, default ~/.switchboard):
//
//	<stateDir>/state.db          the SQLite database (created mode 0600)
//	<stateDir>/state.db-wal      its write-ahead log, present while open
//	<stateDir>/state.db-shm      the WAL index, present while open
//	<stateDir>/switchboard.lock  held by the one process that has the store open; holds its pid
//	<stateDir>/gateway.token     the gateway's generated shared token (mode 0600; see [GatewayToken])
//
// [Open] creates the directory with mode 0700 if it is missing. One process
// at a time: Open takes an exclusive lock on switchboard.lock (flock, so the
// kernel drops it when the process dies, however it dies) and fails with
// [ErrLocked] while someone else holds it. On platforms without flock the lock
// is not enforced.
//
// Back up a running store with SQLite's online backup (sqlite3 state.db
// ".backup copy.db"), not by copying state.db alone: recent commits may still
// be only in state.db-wal.
//
// # Durability
//
// The database runs in WAL mode with synchronous=NORMAL. A transaction that
// has committed survives the Switchboard process crashing or being killed, so
// "journal the inbound, then ack the platform" is safe against crashes. After
// a power loss or an OS crash the last few transactions may be rolled back;
// the database stays consistent. Writes go through a single connection, in
// BEGIN IMMEDIATE transactions; reads go through a separate read-only pool
// and never wait for writers.
//
// # Migrations
//
// The schema is a numbered series of SQL files embedded in the binary,
// migrations/sqlite/0001_meta.sql, 0002_....sql and so on: four digits,
// starting at 0001, no gaps, a lower-case name. Applied versions are recorded
// in the schema_version table (version, name, applied_at in unix
// milliseconds). Open applies the missing migrations in order, each in its own
// transaction together with its schema_version row, so a failed migration
// leaves the database at the previous version and the next Open retries it.
// A migration is never edited once released; a change is a new file.
// Statements that cannot run inside a transaction (VACUUM, journal_mode) do
// not belong in a migration.
//
// A database whose schema_version is newer than the newest embedded migration
// was written by a newer Switchboard; Open refuses it with [ErrSchemaTooNew]
// rather than run old code against a schema it does not know.
//
// # The inbound journal
//
// [Journal] is how the dispatcher keeps its promise, across crashes and
// restarts, that an accepted message is never lost and that a run that
// completed is never run again (see migrations/sqlite/0003_journal.sql for
// the schema and why each index exists). A run cut short by a crash runs
// again; a crash between sending replies and marking them delivered sends
// them again once, which the outbound ledger is there to stop.
//
//	journal                 one row per accepted inbound message: session key,
//	                        state, the platform's dedupe key, the core.Inbound as
//	                        JSON, run id, note, created_at and updated_at (unix ms)
//	run_outcomes            one row per completed run: its route and replies as
//	                        JSON, and whether they have been delivered
//	session_queue_settings  per-session queue overrides from a /queue directive,
//	                        as JSON
//
// A message's life: the dispatcher appends it (state accepted) and only then
// acks the platform; a run takes it (running); the run's outcome is stored in
// the same transaction that marks it done; delivery marks the outcome
// delivered. A message refused by policy is dropped instead, with a note. On
// restart, [Journal.PendingJournal] lists what must run again and
// [Journal.UndeliveredOutcomes] what must be delivered again without running
// the model. A non-empty dedupe key is unique among the rows that exist, so a
// platform redelivery is reported as a duplicate instead of accepted twice;
// [Journal.PruneJournal] removes finished rows once redelivery is no longer
// possible ([Maintenance] keeps them 24 hours).
//
// All of a [JournalBatch] is one transaction, so the dispatcher can commit
// many messages' writes together (group commit); that, not the speed of one
// transaction, is what makes thousands of messages a second possible.
//
// # Maintenance
//
// Rows that have served their purpose are deleted by one job, [Maintenance],
// which the daemon runs whatever bridges are configured: finished journal
// entries (and with them their dedupe keys) and delivered outcomes after a
// day, outbound ledger rows after a week. It prunes once when it starts and
// then every hour, through the [Pruner] interface, in transactions of at
// most a thousand rows so the dispatcher's commits interleave with it. A
// pass that fails is logged and retried at the next one.
//
// # Devices and pairing
//
// [Devices] is the durable half of the gateway's device identity (OpenClaw
// protocol v3: Ed25519 device keys, pairing, device tokens); the gateway does
// the signatures, the policy and the scope checks (see
// migrations/sqlite/0004_devices.sql for the schema and why):
//
//	devices           one row per paired device: id (sha256 hex of its public
//	                  key), public key, role, granted scopes as JSON, client
//	                  metadata, paired_at and last_seen_at (unix ms)
//	pairing_requests  devices waiting for approval, at most one per device
//	                  (a reconnect finds its pending request), pruned by age
//	device_tokens     the sha256 of each device token handed out in hello-ok,
//	                  with the role and scopes it grants; never the token
//
// The store enforces two rules for every caller. A token never grants more than
// its device: issuing one beyond the device's role or scopes fails with
// [ErrExceedsGrant], and checking one clamps it to the device's current role
// and scopes, so narrowing a device narrows its live tokens. And a device's
// tokens die with it: unpairing cascades to them in the same statement.
// Whether a caller may grant something is the gateway's to check before it
// asks; the store grants exactly what it is told.
//
// The gateway's own shared token is not in the database but in
// <stateDir>/gateway.token, so the CLI can print it while the server holds
// the store open. [GatewayToken] creates it on first use and refuses a file
// others may read.
//
// # The boundary
//
// [Store] is the interface the rest of Switchboard programs against. SQL stays
// inside the implementation, so a Postgres implementation, for several
// instances sharing one database, can follow with its own migrations under
// migrations/postgres and without changes to the callers. See [Store] for the
// rules that keep that possible.
package store
