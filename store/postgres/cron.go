package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/switchboardhq/switchboard/store"
)

var _ store.Cron = (*Store)(nil)

const cronJobColumns = `id, spec, state, next_run_at, created_at, updated_at`

func scanCronJob(r pgx.Row) (store.CronJob, error) {
	var j store.CronJob
	var spec string
	var state *string
	if err := r.Scan(&j.ID, &spec, &state, &j.NextRunAt, &j.CreatedAt, &j.UpdatedAt); err != nil {
		return store.CronJob{}, err
	}
	j.Spec = json.RawMessage(spec)
	if state != nil && *state != "" {
		j.State = json.RawMessage(*state)
	}
	return j, nil
}

// CronJobs returns every job, ordered by id.
func (s *Store) CronJobs(ctx context.Context) ([]store.CronJob, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+cronJobColumns+` FROM cron_jobs ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("store: list cron jobs: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.CronJob, error) { return scanCronJob(r) })
	if err != nil {
		return nil, fmt.Errorf("store: list cron jobs: %w", err)
	}
	return out, nil
}

// CronJob returns one job.
func (s *Store) CronJob(ctx context.Context, id string) (store.CronJob, bool, error) {
	j, err := scanCronJob(s.pool.QueryRow(ctx, `SELECT `+cronJobColumns+` FROM cron_jobs WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.CronJob{}, false, nil
	}
	if err != nil {
		return store.CronJob{}, false, fmt.Errorf("store: read cron job %s: %w", id, err)
	}
	return j, true, nil
}

// PutCronJob stores a job, keeping the CreatedAt of one it replaces.
func (s *Store) PutCronJob(ctx context.Context, j store.CronJob) error {
	if strings.TrimSpace(j.ID) == "" {
		return errors.New("store: put cron job: id is required")
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
	_, err := s.pool.Exec(ctx, `INSERT INTO cron_jobs (`+cronJobColumns+`) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (id) DO UPDATE SET spec = excluded.spec, state = excluded.state,
			next_run_at = excluded.next_run_at, updated_at = excluded.updated_at`,
		j.ID, string(j.Spec), nullJSON(j.State), j.NextRunAt, j.CreatedAt, j.UpdatedAt)
	if err != nil {
		return fmt.Errorf("store: put cron job %s: %w", j.ID, err)
	}
	return nil
}

// DeleteCronJob deletes a job, reporting whether it existed.
func (s *Store) DeleteCronJob(ctx context.Context, id string) (bool, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM cron_jobs WHERE id = $1`, id)
	if err != nil {
		return false, fmt.Errorf("store: delete cron job %s: %w", id, err)
	}
	return tag.RowsAffected() > 0, nil
}

// errClaimed rolls a claim back: someone else has the instant.
var errClaimed = errors.New("claimed")

// ClaimCronRun advances the job's next run time and records the run in one
// transaction, or reports false when someone else claimed the instant. Of
// instances racing, the first UPDATE holds the job's row; the others wait
// for it, then find next_run_at moved and update nothing.
func (s *Store) ClaimCronRun(ctx context.Context, c store.CronClaim) (bool, error) {
	now := s.nowMilli()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE cron_jobs SET next_run_at = $1, state = COALESCE($2, state), updated_at = $3
			WHERE id = $4 AND next_run_at = $5`, c.NextRunAt, nullJSON(c.State), now, c.JobID, c.ExpectNextRunAt)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return errClaimed
		}
		if c.Run.RunID == "" {
			return nil
		}
		r := c.Run
		if r.StartedAt == 0 {
			r.StartedAt = now
		}
		tag, err = tx.Exec(ctx, `INSERT INTO cron_runs (run_id, job_id, scheduled_at, started_at, finished_at, status, detail)
			VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
			r.RunID, c.JobID, r.ScheduledAt, r.StartedAt, r.FinishedAt, r.Status, nullJSON(r.Detail))
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return errClaimed // this instant (or this run id) was claimed before
		}
		return nil
	})
	switch {
	case errors.Is(err, errClaimed):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("store: claim cron run of %s: %w", c.JobID, err)
	}
	return true, nil
}

// FinishCronRun records a run's end and the job's new state.
func (s *Store) FinishCronRun(ctx context.Context, f store.CronFinish) error {
	now := s.nowMilli()
	if f.FinishedAt == 0 {
		f.FinishedAt = now
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE cron_runs SET finished_at = $1, status = $2, detail = COALESCE($3, detail) WHERE run_id = $4`,
			f.FinishedAt, f.Status, nullJSON(f.Detail), f.RunID); err != nil {
			return err
		}
		switch {
		case f.DeleteJob:
			_, err := tx.Exec(ctx, `DELETE FROM cron_jobs WHERE id = $1`, f.JobID)
			return err
		case f.State != nil:
			_, err := tx.Exec(ctx, `UPDATE cron_jobs SET state = $1, updated_at = $2 WHERE id = $3`, string(f.State), now, f.JobID)
			return err
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: finish cron run %s: %w", f.RunID, err)
	}
	return nil
}

const cronRunColumns = `run_id, job_id, scheduled_at, started_at, finished_at, status, detail`

func (s *Store) queryCronRuns(ctx context.Context, q string, args ...any) ([]store.CronRun, error) {
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list cron runs: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.CronRun, error) {
		var run store.CronRun
		var detail *string
		err := r.Scan(&run.RunID, &run.JobID, &run.ScheduledAt, &run.StartedAt, &run.FinishedAt, &run.Status, &detail)
		if detail != nil && *detail != "" {
			run.Detail = json.RawMessage(*detail)
		}
		return run, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: list cron runs: %w", err)
	}
	return out, nil
}

// CronRuns returns up to limit runs (0: 50), newest first; jobID "" means
// all jobs.
func (s *Store) CronRuns(ctx context.Context, jobID string, limit int) ([]store.CronRun, error) {
	if limit <= 0 {
		limit = 50
	}
	return s.queryCronRuns(ctx, `SELECT `+cronRunColumns+` FROM cron_runs WHERE ($1 = '' OR job_id = $1)
		ORDER BY started_at DESC, seq DESC LIMIT $2`, jobID, limit)
}

// UnfinishedCronRuns returns the runs claimed but not finished, oldest
// first.
func (s *Store) UnfinishedCronRuns(ctx context.Context) ([]store.CronRun, error) {
	return s.queryCronRuns(ctx, `SELECT `+cronRunColumns+` FROM cron_runs WHERE finished_at = 0 ORDER BY started_at, seq`)
}

// nullJSON is v for a text column, or NULL when v is empty.
func nullJSON(v json.RawMessage) any {
	if len(v) == 0 {
		return nil
	}
	return string(v)
}
