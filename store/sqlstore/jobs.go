package sqlstore

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
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
	Priority    int        `bun:"priority"`
	Partition   string     `bun:"partition_key,nullzero"`
	TraceParent string     `bun:"trace_parent,nullzero"`
}

func (r *jobRow) job() paykit.Job {
	return paykit.Job{
		ID: r.ID, Kind: r.Kind, Scope: paykit.Scope{MerchantID: r.MerchantID, Environment: paykit.Environment(r.Environment)},
		TargetID: r.TargetID, Payload: r.Payload, DedupKey: r.DedupKey, RunAt: r.RunAt.UTC(), Attempts: r.Attempts,
		LeaseOwner: r.LeaseOwner, LeaseUntil: utcPtr(r.LeaseUntil), LastError: r.LastError, CreatedAt: r.CreatedAt.UTC(),
		Status: paykit.JobState(r.State), AttemptedAt: utcPtr(r.AttemptedAt), CompletedAt: utcPtr(r.CompletedAt),
		Priority: r.Priority, Partition: r.Partition, TraceParent: r.TraceParent,
	}
}

// pendingJob is the condition of a job not completed. It reads
// completed_at, not state, so that the indexes it qualifies do not make
// every claim (which changes state) a non-HOT update on PostgreSQL.
const pendingJob = "completed_at IS NULL"

// EnqueueJob implements paykit.Tx.
func (t tx) EnqueueJob(ctx context.Context, j *paykit.Job) error {
	return t.insertJob(ctx, j, toJobRow(j))
}

// insertJob inserts row, the row of j, reporting a conflict as EnqueueJob.
func (t tx) insertJob(ctx context.Context, j *paykit.Job, row *jobRow) error {
	keys := []uniqueKey{{"id", "id = ?", []any{j.ID}}}
	if j.DedupKey != "" {
		keys = append(keys, uniqueKey{"dedup_key", "dedup_key = ? AND " + pendingJob, []any{j.DedupKey}})
	}
	if err := t.insert(ctx, "jobs", row, keys...); err != nil {
		return err
	}
	if !j.RunAt.After(j.CreatedAt) {
		t.jobDue()
	}
	return nil
}

// toJobRow is the row of j.
func toJobRow(j *paykit.Job) *jobRow {
	row := &jobRow{
		ID: j.ID, Kind: j.Kind, MerchantID: j.Scope.MerchantID, Environment: string(j.Scope.Environment),
		TargetID: j.TargetID, Payload: j.Payload, DedupKey: j.DedupKey, RunAt: j.RunAt.UTC(), Attempts: j.Attempts,
		LeaseOwner: j.LeaseOwner, LeaseUntil: utcPtr(j.LeaseUntil), LastError: j.LastError, CreatedAt: j.CreatedAt.UTC(),
		State: string(j.Status), AttemptedAt: utcPtr(j.AttemptedAt), CompletedAt: utcPtr(j.CompletedAt),
		Priority: j.Priority, Partition: j.Partition, TraceParent: j.TraceParent,
	}
	if row.State == "" {
		row.State = string(paykit.JobAvailable)
	}
	return row
}

// ClaimJobs implements paykit.JobQueue with one UPDATE ... RETURNING of
// the jobs claimQuery picks.
func (t tx) ClaimJobs(ctx context.Context, p paykit.ClaimParams) ([]paykit.Job, error) {
	var rows []jobRow
	if err := t.claimQuery(p).Scan(ctx, &rows); err != nil {
		return nil, mapError("claim jobs", err)
	}
	out := make([]paykit.Job, len(rows))
	for i := range rows {
		out[i] = rows[i].job()
	}
	// RETURNING keeps no order.
	slices.SortFunc(out, func(a, b paykit.Job) int {
		return cmp.Or(cmp.Compare(a.Priority, b.Priority), a.RunAt.Compare(b.RunAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// claimQuery leases the jobs p asks for. Each priority's due jobs are read
// apart, each a range of the claim index (a scan in (priority, run_at)
// order would walk the jobs of a higher priority that are not due yet);
// with a PartitionLimit, four times as many as wanted are read, and the
// first PartitionLimit of each partition kept. On PostgreSQL the reads lock
// their rows with FOR UPDATE SKIP LOCKED, so concurrent claimers pass over
// each other's picks instead of waiting, and the update goes through the
// primary key. On SQLite the statement holds the database's write lock
// from its first read, so claimers take turns.
func (t tx) claimQuery(p paykit.ClaimParams) *bun.RawQuery {
	now := p.Now.UTC()
	limit := p.Limit
	if limit <= 0 {
		limit = math.MaxInt32
	}
	read := limit
	if p.PartitionLimit > 0 {
		read = min(4*limit, math.MaxInt32)
	}
	var cond strings.Builder
	args := []any{}
	cond.WriteString(pendingJob + " AND run_at <= ? AND (lease_until IS NULL OR lease_until <= ?)")
	args = append(args, now, now)
	if len(p.Skip) > 0 {
		cond.WriteString(" AND (partition_key IS NULL OR partition_key NOT IN (?))")
		args = append(args, bun.List(p.Skip))
	}
	lock := ""
	if t.pg {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	var q strings.Builder
	var all []any
	q.WriteString("WITH ")
	for i, prio := range []int{paykit.JobPriorityMoney, paykit.JobPriorityDefault} {
		fmt.Fprintf(&q, "c%d AS (SELECT id, priority, run_at, partition_key FROM jobs WHERE %s AND priority = ? ORDER BY run_at, id LIMIT ?%s), ",
			i, cond.String(), lock)
		all = append(all, args...)
		all = append(all, prio, read)
	}
	q.WriteString(`cand AS (SELECT * FROM c0 UNION ALL SELECT * FROM c1),
		pick AS (SELECT id FROM (SELECT id, priority, run_at, partition_key,
			row_number() OVER (PARTITION BY partition_key ORDER BY priority, run_at, id) AS n FROM cand) c
			WHERE partition_key IS NULL OR ? = 0 OR n <= ? ORDER BY priority, run_at, id LIMIT ?)
		UPDATE jobs SET lease_owner = ?, lease_until = ?, attempts = attempts + 1, version = version + 1,
			attempted_at = ?, state = CASE WHEN state = 'needs_attention' THEN state ELSE 'running' END
		WHERE `)
	all = append(all, p.PartitionLimit, p.PartitionLimit, limit, p.Owner, p.LeaseUntil.UTC(), now)
	if t.pg {
		q.WriteString("id = ANY(ARRAY(SELECT id FROM pick))")
	} else {
		q.WriteString("id IN (SELECT id FROM pick)")
	}
	q.WriteString(" RETURNING *")
	return t.db.NewRaw(q.String(), all...)
}

// DeferJobs implements paykit.Tx.
func (t tx) DeferJobs(ctx context.Context, partition string, until time.Time) error {
	until = until.UTC()
	_, err := t.db.NewUpdate().Table("jobs").Set("run_at = ?", until).Set("version = version + 1").
		Where("partition_key = ?", partition).Where(pendingJob).Where("run_at < ?", until).Exec(ctx)
	return mapError("defer jobs", err)
}

// ResumeJobs implements paykit.Tx.
func (t tx) ResumeJobs(ctx context.Context, partition string, until, now time.Time) error {
	now = now.UTC()
	_, err := t.db.NewUpdate().Table("jobs").Set("run_at = ?", now).Set("version = version + 1").
		Where("partition_key = ?", partition).Where(pendingJob).Where("run_at > ?", now).Where("run_at <= ?", until.UTC()).Exec(ctx)
	if err != nil {
		return mapError("resume jobs", err)
	}
	t.jobDue()
	return nil
}

// purgeJobsQuery deletes the jobs completed before before.
func (t tx) purgeJobsQuery(before time.Time) *bun.DeleteQuery {
	return t.db.NewDelete().Table("jobs").Where("completed_at < ?", before.UTC())
}

// PurgeCompletedJobs implements paykit.JobQueue.
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

// ExpediteJob implements paykit.Tx.
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
	t.jobDue()
	return nil
}

// CompleteJobByDedupKey implements paykit.Tx with one UPDATE, which
// a batched transaction holds: it needs no answer.
func (t tx) CompleteJobByDedupKey(ctx context.Context, dedupKey string, at time.Time) error {
	at = at.UTC()
	q := t.db.NewUpdate().Table("jobs").
		Set("state = ?", string(paykit.JobCompleted)).Set("completed_at = ?", at).
		Set("lease_owner = ''").Set("lease_until = NULL").Set("version = version + 1").
		Where("dedup_key = ?", dedupKey).Where(pendingJob).Where(notLeased, at)
	if t.b != nil {
		t.b.hold(q.String())
		return nil
	}
	_, err := q.Exec(ctx)
	return mapError("complete job", err)
}

// GetJob implements paykit.Tx.
func (t tx) GetJob(ctx context.Context, id string) (*paykit.Job, error) {
	var row jobRow
	if err := t.db.NewSelect().Model(&row).Where("id = ?", id).Scan(ctx); err != nil {
		return nil, mapError("get job", err)
	}
	j := row.job()
	return &j, nil
}
