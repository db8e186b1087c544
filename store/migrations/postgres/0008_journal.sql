-- The durable inbound journal and the outcomes of runs (see
-- migrations/sqlite/0003_journal.sql for the reasons of each rule). The id
-- is the acceptance order: ids come from a sequence, never reused, so an
-- id a tool or log line names never points at a later message; an append
-- skipped as a duplicate leaves its id unused.
CREATE TABLE journal (
    id          BIGINT PRIMARY KEY,
    session_key TEXT   NOT NULL,
    state       TEXT   NOT NULL CHECK (state IN ('accepted', 'running', 'done', 'dropped')),
    dedupe_key  TEXT   CHECK (dedupe_key <> ''),
    inbound     TEXT   NOT NULL,
    run_id      TEXT,
    note        TEXT,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);
CREATE SEQUENCE journal_id_seq OWNED BY journal.id;

-- A redelivery carries the same dedupe key and must not be accepted twice
-- while the first copy's row exists, also when two instances receive it at
-- once: the second insert waits for the first to commit, then skips.
CREATE UNIQUE INDEX journal_dedupe ON journal (dedupe_key) WHERE dedupe_key IS NOT NULL;
-- What a restart must run again, in acceptance order.
CREATE INDEX journal_pending ON journal (id) WHERE state IN ('accepted', 'running');
-- Pruning finished rows by age.
CREATE INDEX journal_prune ON journal (updated_at) WHERE state IN ('done', 'dropped');

-- What each completed run produced (route and replies as JSON, opaque),
-- written in the transaction that marks the run's entries done. seq is the
-- insertion order, for ties between outcomes of the same millisecond.
CREATE TABLE run_outcomes (
    seq         BIGINT  GENERATED ALWAYS AS IDENTITY,
    run_id      TEXT    PRIMARY KEY,
    session_key TEXT    NOT NULL,
    delivery    TEXT    NOT NULL,
    delivered   BOOLEAN NOT NULL DEFAULT false,
    created_at  BIGINT  NOT NULL,
    updated_at  BIGINT  NOT NULL
);
CREATE INDEX run_outcomes_undelivered ON run_outcomes (created_at, seq) WHERE NOT delivered;
CREATE INDEX run_outcomes_prune ON run_outcomes (updated_at) WHERE delivered;
