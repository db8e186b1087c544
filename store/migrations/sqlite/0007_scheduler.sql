-- Scheduled work: cron jobs, their runs, and the heartbeat runner's state.
--
-- cron_jobs holds each job's definition (spec, JSON opaque to the store) and
-- scheduler state (state, JSON). next_run_at is a column of its own because
-- claiming a run compares and advances it in one statement: the instant a
-- run serves is claimed exactly once, even across a crash.
CREATE TABLE cron_jobs (
    id          TEXT    PRIMARY KEY,
    spec        BLOB    NOT NULL,
    state       BLOB,
    next_run_at INTEGER NOT NULL DEFAULT 0,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);

-- cron_runs records every run, including skipped ones. scheduled_at is the
-- instant a scheduled run serves (0 for a manual run); the unique index
-- refuses a second run for the same instant.
CREATE TABLE cron_runs (
    run_id       TEXT    PRIMARY KEY,
    job_id       TEXT    NOT NULL,
    scheduled_at INTEGER NOT NULL DEFAULT 0,
    started_at   INTEGER NOT NULL,
    finished_at  INTEGER NOT NULL DEFAULT 0,
    status       TEXT    NOT NULL,
    detail       BLOB
);
CREATE UNIQUE INDEX cron_runs_instant ON cron_runs (job_id, scheduled_at) WHERE scheduled_at > 0;
CREATE INDEX cron_runs_job ON cron_runs (job_id, started_at);
CREATE INDEX cron_runs_unfinished ON cron_runs (finished_at) WHERE finished_at = 0;

-- scheduler_state keeps small named values of the heartbeat runner (last
-- event, last alert for the duplicate check, task run times, the on/off
-- switch), JSON opaque to the store.
CREATE TABLE scheduler_state (
    key        TEXT    PRIMARY KEY,
    value      BLOB    NOT NULL,
    updated_at INTEGER NOT NULL
);
