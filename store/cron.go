package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Cron stores scheduled jobs and their runs. Definitions and state are
// JSON opaque to the store (the heartbeat package owns their shape); the
// store owns the one rule that must hold across processes and crashes: a
// scheduled instant is claimed at most once (ClaimCronRun).
type Cron interface {
	// CronJobs returns every job, ordered by id.
	CronJobs(ctx context.Context) ([]CronJob, error)
	// CronJob returns one job.
	CronJob(ctx context.Context, id string) (CronJob, bool, error)
	// PutCronJob stores a job, replacing one with the same id (its
	// CreatedAt is kept).
	PutCronJob(ctx context.Context, job CronJob) error
	// DeleteCronJob deletes a job, reporting whether it existed. Its runs
	// stay in the history.
	DeleteCronJob(ctx context.Context, id string) (bool, error)
	// ClaimCronRun advances a job's next run time from c.ExpectNextRunAt to
	// c.NextRunAt, stores c.State and records c.Run (when it has a RunID),
	// in one transaction. It reports false, changing nothing, when the
	// job's next run time is no longer ExpectNextRunAt, the job is gone, or
	// a run for the same scheduled instant exists: someone else claimed it.
	ClaimCronRun(ctx context.Context, c CronClaim) (bool, error)
	// FinishCronRun records a run's end and, when f.State is set, the job's
	// new state (a job deleted meanwhile is left deleted). With f.DeleteJob
	// the job is deleted (a one-shot job that succeeded).
	FinishCronRun(ctx context.Context, f CronFinish) error
	// CronRuns returns up to limit runs, newest first; jobID "" means all
	// jobs.
	CronRuns(ctx context.Context, jobID string, limit int) ([]CronRun, error)
	// UnfinishedCronRuns returns the runs claimed but not finished, oldest
	// first: after a crash, the ones whose turn must be resumed.
	UnfinishedCronRuns(ctx context.Context) ([]CronRun, error)
}

// CronJob is one stored job.
type CronJob struct {
	// ID is the job's id.
	ID string
	// Spec is the job's definition (JSON).
	Spec json.RawMessage
	// State is the scheduler's state of the job (JSON); nil when none.
	State json.RawMessage
	// NextRunAt is the next scheduled instant in Unix ms; 0 means none.
	NextRunAt int64
	// CreatedAt and UpdatedAt are Unix ms; zero CreatedAt means now.
	CreatedAt, UpdatedAt int64
}

// CronRun is one run of a job.
type CronRun struct {
	// RunID is the run's id.
	RunID string
	// JobID is the job it belongs to.
	JobID string
	// ScheduledAt is the instant a scheduled run serves, Unix ms; 0 for a
	// run started by hand.
	ScheduledAt int64
	// StartedAt and FinishedAt are Unix ms; FinishedAt is 0 while running.
	StartedAt, FinishedAt int64
	// Status is "running", "ok", "error" or "skipped".
	Status string
	// Detail is the run's details (JSON): error, summary, delivery.
	Detail json.RawMessage
}

// CronClaim is what ClaimCronRun does.
type CronClaim struct {
	// JobID is the job.
	JobID string
	// ExpectNextRunAt is the next run time the caller saw.
	ExpectNextRunAt int64
	// NextRunAt is the next run time after this claim; 0 means none.
	NextRunAt int64
	// State is the job's new state; nil leaves it.
	State json.RawMessage
	// Run is recorded with the claim when it has a RunID.
	Run CronRun
}

// CronFinish is what FinishCronRun records.
type CronFinish struct {
	// RunID and JobID name the run.
	RunID, JobID string
	// FinishedAt is Unix ms; zero means now.
	FinishedAt int64
	// Status is "ok", "error" or "skipped".
	Status string
	// Detail replaces the run's details when set.
	Detail json.RawMessage
	// State is the job's new state; nil leaves it.
	State json.RawMessage
	// DeleteJob deletes the job.
	DeleteJob bool
}

var _ Cron = (*SQLite)(nil)

const cronJobColumns = `id, spec, state, next_run_at, created_at, updated_at`

func scanCronJob(sc interface{ Scan(...any) error }) (CronJob, error) {
	var j CronJob
	var state []byte
	if err := sc.Scan(&j.ID, &j.Spec, &state, &j.NextRunAt, &j.CreatedAt, &j.UpdatedAt); err != nil {
		return CronJob{}, err
	}
	if len(state) > 0 {
		j.State = state
	}
	return j, nil
}

// CronJobs returns every job, ordered by id.
func (s *SQLite) CronJobs(ctx context.Context) ([]CronJob, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT `+cronJobColumns+` FROM cron_jobs ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("store: list cron jobs: %w", err)
	}
	defer rows.Close()
	var out []CronJob
	for rows.Next() {
		j, err := scanCronJob(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list cron jobs: %w", err)
		}
		out = append(out, j)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list cron jobs: %w", err)
	}
	return out, nil
}

// CronJob returns one job.
func (s *SQLite) CronJob(ctx context.Context, id string) (CronJob, bool, error) {
	j, err := scanCronJob(s.reader.QueryRowContext(ctx, `SELECT `+cronJobColumns+` FROM cron_jobs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return CronJob{}, false, nil
	}
	if err != nil {
		return CronJob{}, false, fmt.Errorf("store: read cron job %s: %w", id, err)
	}
	return j, true, nil
}

// PutCronJob stores a job, keeping the CreatedAt of one it replaces.
func (s *SQLite) PutCronJob(ctx context.Context, j CronJob) error {
	if strings.TrimSpace(j.ID) == "" {
		return fmt.Errorf("store: put cron job: id is required")
	}
	if !json.Valid(j.Spec) {
		return fmt.Errorf("store: put cron job %s: spec is not valid JSON", j.ID)
	}
	now := s.nowMilli()
	if j.CreatedAt == 0 {
		j.CreatedAt = now
	}
	if j.UpdatedAt == 0 {
		j.UpdatedAt = now
	}
	_, err := s.writer.ExecContext(ctx, `INSERT INTO cron_jobs (`+cronJobColumns+`) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET spec = excluded.spec, state = excluded.state,
			next_run_at = excluded.next_run_at, updated_at = excluded.updated_at`,
		j.ID, []byte(j.Spec), nullJSON(j.State), j.NextRunAt, j.CreatedAt, j.UpdatedAt)
	if err != nil {
		return fmt.Errorf("store: put cron job %s: %w", j.ID, err)
	}
	return nil
}

// DeleteCronJob deletes a job, reporting whether it existed.
func (s *SQLite) DeleteCronJob(ctx context.Context, id string) (bool, error) {
	res, err := s.writer.ExecContext(ctx, `DELETE FROM cron_jobs WHERE id = ?`, id)
	if err != nil {
		return false, fmt.Errorf("store: delete cron job %s: %w", id, err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// ClaimCronRun advances the job's next run time and records the run in one
// transaction, or reports false when someone else claimed the instant.
func (s *SQLite) ClaimCronRun(ctx context.Context, c CronClaim) (bool, error) {
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("store: claim cron run of %s: %w", c.JobID, err)
	}
	defer tx.Rollback() // a no-op after Commit
	now := s.nowMilli()
	res, err := tx.ExecContext(ctx, `UPDATE cron_jobs SET next_run_at = ?, state = COALESCE(?, state), updated_at = ?
		WHERE id = ? AND next_run_at = ?`, c.NextRunAt, nullJSON(c.State), now, c.JobID, c.ExpectNextRunAt)
	if err != nil {
		return false, fmt.Errorf("store: claim cron run of %s: %w", c.JobID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	if c.Run.RunID != "" {
		r := c.Run
		if r.StartedAt == 0 {
			r.StartedAt = now
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO cron_runs (run_id, job_id, scheduled_at, started_at, finished_at, status, detail)
			VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			r.RunID, c.JobID, r.ScheduledAt, r.StartedAt, r.FinishedAt, r.Status, nullJSON(r.Detail))
		if err != nil {
			return false, fmt.Errorf("store: record cron run %s: %w", r.RunID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return false, nil // this instant (or this run id) was claimed before
		}
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("store: claim cron run of %s: %w", c.JobID, err)
	}
	return true, nil
}

// FinishCronRun records a run's end and the job's new state.
func (s *SQLite) FinishCronRun(ctx context.Context, f CronFinish) error {
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: finish cron run %s: %w", f.RunID, err)
	}
	defer tx.Rollback() // a no-op after Commit
	now := s.nowMilli()
	if f.FinishedAt == 0 {
		f.FinishedAt = now
	}
	if _, err := tx.ExecContext(ctx, `UPDATE cron_runs SET finished_at = ?, status = ?, detail = COALESCE(?, detail) WHERE run_id = ?`,
		f.FinishedAt, f.Status, nullJSON(f.Detail), f.RunID); err != nil {
		return fmt.Errorf("store: finish cron run %s: %w", f.RunID, err)
	}
	switch {
	case f.DeleteJob:
		if _, err := tx.ExecContext(ctx, `DELETE FROM cron_jobs WHERE id = ?`, f.JobID); err != nil {
			return fmt.Errorf("store: delete cron job %s: %w", f.JobID, err)
		}
	case f.State != nil:
		if _, err := tx.ExecContext(ctx, `UPDATE cron_jobs SET state = ?, updated_at = ? WHERE id = ?`, []byte(f.State), now, f.JobID); err != nil {
			return fmt.Errorf("store: update cron job %s: %w", f.JobID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: finish cron run %s: %w", f.RunID, err)
	}
	return nil
}

const cronRunColumns = `run_id, job_id, scheduled_at, started_at, finished_at, status, detail`

func (s *SQLite) queryCronRuns(ctx context.Context, q string, args ...any) ([]CronRun, error) {
	rows, err := s.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list cron runs: %w", err)
	}
	defer rows.Close()
	var out []CronRun
	for rows.Next() {
		var r CronRun
		var detail []byte
		if err := rows.Scan(&r.RunID, &r.JobID, &r.ScheduledAt, &r.StartedAt, &r.FinishedAt, &r.Status, &detail); err != nil {
			return nil, fmt.Errorf("store: list cron runs: %w", err)
		}
		if len(detail) > 0 {
			r.Detail = detail
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list cron runs: %w", err)
	}
	return out, nil
}

// CronRuns returns up to limit runs, newest first.
func (s *SQLite) CronRuns(ctx context.Context, jobID string, limit int) ([]CronRun, error) {
	if limit <= 0 {
		limit = 50
	}
	if jobID == "" {
		return s.queryCronRuns(ctx, `SELECT `+cronRunColumns+` FROM cron_runs ORDER BY started_at DESC, rowid DESC LIMIT ?`, limit)
	}
	return s.queryCronRuns(ctx, `SELECT `+cronRunColumns+` FROM cron_runs WHERE job_id = ? ORDER BY started_at DESC, rowid DESC LIMIT ?`, jobID, limit)
}

// UnfinishedCronRuns returns the runs claimed but not finished, oldest
// first.
func (s *SQLite) UnfinishedCronRuns(ctx context.Context) ([]CronRun, error) {
	return s.queryCronRuns(ctx, `SELECT `+cronRunColumns+` FROM cron_runs WHERE finished_at = 0 ORDER BY started_at, rowid`)
}

// nullJSON is v for a BLOB column, or NULL when v is empty.
func nullJSON(v json.RawMessage) any {
	if len(v) == 0 {
		return nil
	}
	return []byte(v)
}
