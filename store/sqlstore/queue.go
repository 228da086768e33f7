package sqlstore

import (
	"context"
	"strings"
	"time"

	"github.com/paykit/paykit"
)

// queue is the Store's paykit.JobQueue: statements of their own, outside
// any transaction.
type queue struct{ tx }

// Queue implements paykit.Store.
func (s *Store) Queue() paykit.JobQueue { return queue{s.tx} }

// Subscribe implements paykit.JobQueue: a transaction of this process
// that writes a job due at once, or expedites one, signals at its commit;
// on PostgreSQL, so does another instance's, through LISTEN/NOTIFY unless
// Options.PollOnly.
func (q queue) Subscribe() (<-chan struct{}, func()) {
	if !q.store.pollOnly {
		q.store.listen.Do(q.store.startListening)
	}
	return q.store.wakes.Subscribe()
}

// RenewJobLeases implements paykit.JobQueue with one UPDATE of the runs
// still leased, which returns their ids.
func (q queue) RenewJobLeases(ctx context.Context, owner string, runs []paykit.JobRun, until time.Time) ([]paykit.JobRun, error) {
	if len(runs) == 0 {
		return nil, nil
	}
	var b strings.Builder
	args := make([]any, 0, 2*len(runs)+2)
	args = append(args, until.UTC(), owner)
	for i, r := range runs {
		if i > 0 {
			b.WriteString(" OR ")
		}
		b.WriteString("(id = ? AND attempts = ?)")
		args = append(args, r.ID, r.Attempts)
	}
	var held []string
	err := q.db.NewRaw(`UPDATE jobs SET lease_until = ? WHERE lease_owner = ? AND `+pendingJob+` AND (`+b.String()+`) RETURNING id`,
		args...).Scan(ctx, &held)
	if err != nil {
		return nil, mapError("renew job leases", err)
	}
	return notIn(runs, held), nil
}

// FinishJobs implements paykit.JobQueue with one UPDATE from a VALUES list
// of the ends, which returns the ids of the runs that still held their
// lease.
func (q queue) FinishJobs(ctx context.Context, owner string, ends []paykit.JobEnd) ([]paykit.JobRun, error) {
	if len(ends) == 0 {
		return nil, nil
	}
	// PostgreSQL types a VALUES list from its text, SQLite keeps times as
	// text.
	row := "(?, ?, ?, ?, ?, ?)"
	if q.pg {
		row = "(?, ?::integer, ?, ?::timestamptz, ?::timestamptz, ?)"
	}
	var b strings.Builder
	args := make([]any, 0, 6*len(ends)+1)
	runs := make([]paykit.JobRun, len(ends))
	for i, e := range ends {
		runs[i] = e.JobRun
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(row)
		var completedAt, runAt any
		if e.Status == paykit.JobCompleted {
			completedAt = e.At.UTC()
		} else {
			runAt = e.RunAt.UTC()
		}
		args = append(args, e.ID, e.Attempts, string(e.Status), completedAt, runAt, e.LastError)
	}
	args = append(args, owner)
	var held []string
	err := q.db.NewRaw(`WITH ends (id, attempts, state, completed_at, run_at, last_error) AS (VALUES `+b.String()+`)
		UPDATE jobs SET state = ends.state, completed_at = ends.completed_at,
			run_at = COALESCE(ends.run_at, jobs.run_at),
			last_error = CASE WHEN ends.completed_at IS NULL THEN ends.last_error ELSE jobs.last_error END,
			lease_owner = '', lease_until = NULL, version = jobs.version + 1
		FROM ends WHERE jobs.id = ends.id AND jobs.attempts = ends.attempts AND jobs.lease_owner = ? AND jobs.`+pendingJob+`
		RETURNING jobs.id`, args...).Scan(ctx, &held)
	if err != nil {
		return nil, mapError("finish jobs", err)
	}
	return notIn(runs, held), nil
}

// notIn returns the runs whose ids are not in ids.
func notIn(runs []paykit.JobRun, ids []string) []paykit.JobRun {
	if len(ids) == len(runs) {
		return nil
	}
	in := make(map[string]bool, len(ids))
	for _, id := range ids {
		in[id] = true
	}
	var out []paykit.JobRun
	for _, r := range runs {
		if !in[r.ID] {
			out = append(out, r)
		}
	}
	return out
}
