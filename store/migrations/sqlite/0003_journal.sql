-- journal is the durable inbound journal: one row per accepted inbound
-- message, written before the platform is acked, so a crash or restart never
-- loses a message the platform considers delivered. The id is the acceptance
-- order; AUTOINCREMENT keeps ids from being reused after the newest rows are
-- pruned, so an id a tool or log line names never points at a later message.
--
-- A row moves accepted -> running -> done, or to dropped from accepted or
-- running; done and dropped are final. inbound is the core.Inbound as JSON,
-- opaque to the store. dedupe_key is the platform's identity of the message;
-- '' is stored as NULL (no key), never as ''.
CREATE TABLE journal (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    session_key TEXT    NOT NULL,
    state       TEXT    NOT NULL CHECK (state IN ('accepted', 'running', 'done', 'dropped')),
    dedupe_key  TEXT    CHECK (dedupe_key <> ''),
    inbound     TEXT    NOT NULL,
    run_id      TEXT,
    note        TEXT,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);

-- A platform redelivery (Telegram replay after a restart, a Slack retry, a
-- webhook retried by a proxy) carries the same dedupe key and must not be
-- accepted twice while the first copy's row exists. Partial: most rows of some
-- surfaces (heartbeats, system events) have no key and need no index entry.
CREATE UNIQUE INDEX journal_dedupe ON journal (dedupe_key) WHERE dedupe_key IS NOT NULL;

-- What a restart must run again: the accepted and running rows, in acceptance
-- order. Only rows still in flight are in the index, so it stays small however
-- long the finished history is. Queries must repeat the WHERE term verbatim
-- for SQLite to use a partial index.
CREATE INDEX journal_pending ON journal (id) WHERE state IN ('accepted', 'running');

-- Pruning deletes finished (done, dropped) rows by age without scanning the
-- table. Partial, on updated_at alone rather than (state, updated_at): rows
-- enter it once, when they finish, so appends and running marks, the hot
-- writes, never touch it.
CREATE INDEX journal_prune ON journal (updated_at) WHERE state IN ('done', 'dropped');

-- run_outcomes holds what each completed run produced (route and replies as
-- JSON, opaque to the store). It is written in the same transaction that marks
-- the run's journal rows done, so after a crash between the run and its
-- delivery the replies are delivered again from here instead of running the
-- model a second time. delivered is 0 until the dispatcher has delivered it.
CREATE TABLE run_outcomes (
    run_id      TEXT    PRIMARY KEY,
    session_key TEXT    NOT NULL,
    delivery    TEXT    NOT NULL,
    delivered   INTEGER NOT NULL DEFAULT 0 CHECK (delivered IN (0, 1)),
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);

-- What a restart must deliver again, oldest first (rowid breaks ties in
-- insertion order). Partial, so delivered history costs it nothing.
CREATE INDEX run_outcomes_undelivered ON run_outcomes (created_at) WHERE delivered = 0;

-- Pruning deletes delivered outcomes by age without scanning the table.
CREATE INDEX run_outcomes_prune ON run_outcomes (updated_at) WHERE delivered = 1;

-- session_queue_settings holds per-session queue overrides set with a
-- standalone /queue directive (mode, debounce, cap, drop), as JSON opaque to
-- the store, so they survive a restart. No row: the configured defaults apply.
CREATE TABLE session_queue_settings (
    session_key TEXT    PRIMARY KEY,
    settings    TEXT    NOT NULL,
    updated_at  INTEGER NOT NULL
);
