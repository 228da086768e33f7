package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"github.com/paykit/paykit"
)

// jobRow is a row of jobs. An empty DedupKey is stored as NULL, so only set
// keys are unique, and only among jobs not completed. Version counts claims
// and retries.
type jobRow struct {
	bun.BaseModel `bun:"table:jobs"`

	ID          string     `bun:"id,pk"`
	Kind        string     `bun:"kind"`
	MerchantID  string     `bun:"merchant_id"`
	Environment string     `bun:"environment"`
	TargetID    string     `bun:"target_id"`
	Payload     []byte     `bun:"payload"`
	DedupKey    string     `bun:"dedup_key,nullzero"`
	RunAt       time.Time  `bun:"run_at"`
	Attempts    int        `bun:"attempts"`
	LeaseOwner  string     `bun:"lease_owner"`
	LeaseUntil  *time.Time `bun:"lease_until"`
	LastError   string     `bun:"last_error"`
	CreatedAt   time.Time  `bun:"created_at"`
	Version     int64      `bun:"version"`
	State       string     `bun:"state"`
	AttemptedAt *time.Time `bun:"attempted_at"`
	CompletedAt *time.Time `bun:"completed_at"`
}

func (r *jobRow) job() paykit.Job {
	return paykit.Job{
		ID: r.ID, Kind: r.Kind, Scope: paykit.Scope{MerchantID: r.MerchantID, Environment: paykit.Environment(r.Environment)},
		TargetID: r.TargetID, Payload: r.Payload, DedupKey: r.DedupKey, RunAt: r.RunAt.UTC(), Attempts: r.Attempts,
		LeaseOwner: r.LeaseOwner, LeaseUntil: utcPtr(r.LeaseUntil), LastError: r.LastError, CreatedAt: r.CreatedAt.UTC(),
		Status: paykit.JobState(r.State), AttemptedAt: utcPtr(r.AttemptedAt), CompletedAt: utcPtr(r.CompletedAt),
	}
}

// pendingJob is the condition of a job not completed. It reads
// completed_at, not state, so that the indexes it qualifies do not make
// every claim (which changes state) a non-HOT update on PostgreSQL.
const pendingJob = "completed_at IS NULL"

// EnqueueJob implements paykit.JobStore.
func (t tx) EnqueueJob(ctx context.Context, j *paykit.Job) error {
	return t.insertJob(ctx, j, toJobRow(j))
}

// insertJob inserts row, the row of j, reporting a conflict as EnqueueJob.
func (t tx) insertJob(ctx context.Context, j *paykit.Job, row *jobRow) error {
	keys := []uniqueKey{{"id", "id = ?", []any{j.ID}}}
	if j.DedupKey != "" {
		keys = append(keys, uniqueKey{"dedup_key", "dedup_key = ? AND " + pendingJob, []any{j.DedupKey}})
	}
	return t.insert(ctx, "jobs", row, keys...)
}

// toJobRow is the row of j.
func toJobRow(j *paykit.Job) *jobRow {
	row := &jobRow{
		ID: j.ID, Kind: j.Kind, MerchantID: j.Scope.MerchantID, Environment: string(j.Scope.Environment),
		TargetID: j.TargetID, Payload: j.Payload, DedupKey: j.DedupKey, RunAt: j.RunAt.UTC(), Attempts: j.Attempts,
		LeaseOwner: j.LeaseOwner, LeaseUntil: utcPtr(j.LeaseUntil), LastError: j.LastError, CreatedAt: j.CreatedAt.UTC(),
		State: string(j.Status), AttemptedAt: utcPtr(j.AttemptedAt), CompletedAt: utcPtr(j.CompletedAt),
	}
	if row.State == "" {
		row.State = string(paykit.JobAvailable)
	}
	return row
}

// ClaimJobs implements paykit.JobStore with one UPDATE ... RETURNING whose
// subquery picks the due jobs. On PostgreSQL the subquery locks them with
// FOR UPDATE SKIP LOCKED, so concurrent claimers pass over each other's
// picks instead of waiting; it runs once, as an ARRAY, and the update then
// goes through the primary key. On SQLite the statement holds the
// database's write lock from its first read, so claimers take turns.
func (t tx) ClaimJobs(ctx context.Context, p paykit.ClaimParams) ([]paykit.Job, error) {
	now := p.Now.UTC()
	due := t.dueJobsQuery(now, p.Limit)
	pick := "id IN (?)"
	if t.pg {
		due = due.For("UPDATE SKIP LOCKED")
		pick = "id = ANY(ARRAY(?))"
	}
	var rows []jobRow
	err := t.db.NewRaw(`UPDATE jobs SET lease_owner = ?, lease_until = ?, attempts = attempts + 1, version = version + 1,
		attempted_at = ?, state = CASE WHEN state = 'needs_attention' THEN state ELSE 'running' END
		WHERE `+pick+` RETURNING *`, p.Owner, p.LeaseUntil.UTC(), now, due).Scan(ctx, &rows)
	if err != nil {
		return nil, mapError("claim jobs", err)
	}
	out := make([]paykit.Job, len(rows))
	for i := range rows {
		out[i] = rows[i].job()
	}
	// RETURNING keeps no order.
	slices.SortFunc(out, func(a, b paykit.Job) int {
		return cmp.Or(a.RunAt.Compare(b.RunAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// dueJobsQuery selects the ids of up to limit jobs due at now, oldest
// run_at first: a scan of the partial index of pending jobs.
func (t tx) dueJobsQuery(now time.Time, limit int) *bun.SelectQuery {
	due := t.db.NewSelect().Table("jobs").Column("id").Where(pendingJob).
		Where("run_at <= ?", now).Where("(lease_until IS NULL OR lease_until <= ?)", now).
		OrderExpr("run_at, id")
	if limit > 0 {
		due = due.Limit(int64(limit))
	}
	return due
}

// CompleteJob implements paykit.JobStore.
func (t tx) CompleteJob(ctx context.Context, id, owner string, at time.Time) error {
	res, err := t.execBookkeeping(ctx, t.db.NewUpdate().Table("jobs").
		Set("state = 'completed'").Set("completed_at = ?", at.UTC()).
		Set("lease_owner = ''").Set("lease_until = NULL").Set("version = version + 1").
		Where("id = ?", id).Where("lease_owner = ?", owner).Where(pendingJob))
	if err != nil {
		return mapError("complete job", err)
	}
	return checkUpdated(ctx, "complete job", res, nil)
}

// RetryJob implements paykit.JobStore.
func (t tx) RetryJob(ctx context.Context, id, owner string, runAt time.Time, lastError string) error {
	return t.reschedule(ctx, "retry job", id, owner, runAt, lastError, paykit.JobRetrying)
}

// FlagJob implements paykit.JobStore.
func (t tx) FlagJob(ctx context.Context, id, owner string, runAt time.Time, lastError string) error {
	return t.reschedule(ctx, "flag job", id, owner, runAt, lastError, paykit.JobNeedsAttention)
}

func (t tx) reschedule(ctx context.Context, op, id, owner string, runAt time.Time, lastError string, state paykit.JobState) error {
	res, err := t.execBookkeeping(ctx, t.db.NewUpdate().Table("jobs").
		Set("lease_owner = ''").Set("lease_until = NULL").Set("run_at = ?", runAt.UTC()).
		Set("last_error = ?", lastError).Set("state = ?", string(state)).Set("version = version + 1").
		Where("id = ?", id).Where("lease_owner = ?", owner).Where(pendingJob))
	if err != nil {
		return mapError(op, err)
	}
	return checkUpdated(ctx, op, res, nil)
}

// execBookkeeping runs q, a worker's update of a job it holds. Outside a
// transaction on PostgreSQL, q commits without waiting for the disk
// (synchronous_commit off for its own implicit transaction): losing it in
// a crash of the database's machine only runs the job again once its
// lease lapses, which every job must bear, and any later commit that does
// wait makes it durable too, since the log is written in order. Elsewhere
// q runs as it is.
func (t tx) execBookkeeping(ctx context.Context, q *bun.UpdateQuery) (sql.Result, error) {
	if !t.pg || t.store == nil {
		return q.Exec(ctx)
	}
	b, err := q.AppendQuery(q.DB().QueryGen(), []byte("SET LOCAL synchronous_commit = off; "))
	if err != nil {
		return nil, err
	}
	return t.db.ExecContext(ctx, string(b))
}

// purgeJobsQuery deletes the jobs completed before before.
func (t tx) purgeJobsQuery(before time.Time) *bun.DeleteQuery {
	return t.db.NewDelete().Table("jobs").Where("completed_at < ?", before.UTC())
}

// PurgeCompletedJobs implements paykit.JobStore.
func (t tx) PurgeCompletedJobs(ctx context.Context, before time.Time) (int, error) {
	res, err := t.purgeJobsQuery(before).Exec(ctx)
	if err != nil {
		return 0, mapError("purge completed jobs", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, mapError("purge completed jobs", err)
	}
	return int(n), nil
}

// ExpediteJob implements paykit.JobStore.
func (t tx) ExpediteJob(ctx context.Context, dedupKey string, runAt time.Time) error {
	runAt = runAt.UTC()
	_, err := t.db.NewUpdate().Table("jobs").
		Set("run_at = ?", runAt).Set("version = version + 1").
		Where("dedup_key = ?", dedupKey).Where(pendingJob).Where("run_at > ?", runAt).
		Exec(ctx)
	if err != nil {
		return mapError("expedite job", err)
	}
	found, err := exists(ctx, t.db.NewSelect().Table("jobs").Where("dedup_key = ?", dedupKey).Where(pendingJob))
	if err != nil {
		return mapError("expedite job", err)
	}
	if !found {
		return paykit.ErrNotFound
	}
	return nil
}

// GetJob implements paykit.JobStore.
func (t tx) GetJob(ctx context.Context, id string) (*paykit.Job, error) {
	var row jobRow
	if err := t.db.NewSelect().Model(&row).Where("id = ?", id).Scan(ctx); err != nil {
		return nil, mapError("get job", err)
	}
	j := row.job()
	return &j, nil
}
