-- Scheduled work (see migrations/sqlite/0007_scheduler.sql): cron jobs and
-- their runs. Definitions, state and details are JSON opaque to the store
-- (text). next_run_at is a column because claiming a run compares and
-- advances it in one statement: the instant a run serves is claimed once,
-- also by instances racing for it (the UPDATE's row lock orders them, and
-- the loser finds next_run_at moved).
CREATE TABLE cron_jobs (
    id          TEXT   PRIMARY KEY,
    spec        TEXT   NOT NULL,
    state       TEXT,
    next_run_at BIGINT NOT NULL DEFAULT 0,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);

-- cron_runs records every run, including skipped ones; scheduled_at is the
-- instant a scheduled run serves (0 for a manual run), and the unique
-- index refuses a second run for the same instant. seq is the insertion
-- order, which breaks ties between runs started in the same millisecond.
CREATE TABLE cron_runs (
    seq          BIGINT GENERATED ALWAYS AS IDENTITY,
    run_id       TEXT   PRIMARY KEY,
    job_id       TEXT   NOT NULL,
    scheduled_at BIGINT NOT NULL DEFAULT 0,
    started_at   BIGINT NOT NULL,
    finished_at  BIGINT NOT NULL DEFAULT 0,
    status       TEXT   NOT NULL,
    detail       TEXT
);
CREATE UNIQUE INDEX cron_runs_instant ON cron_runs (job_id, scheduled_at) WHERE scheduled_at > 0;
CREATE INDEX cron_runs_job ON cron_runs (job_id, started_at);
CREATE INDEX cron_runs_unfinished ON cron_runs (finished_at) WHERE finished_at = 0;
