package memory

import (
	"context"
	"time"

	"github.com/paykit/paykit"
)

// queue is the Store's paykit.JobQueue: each call is one transaction.
type queue struct{ s *Store }

// Queue implements paykit.Store.
func (s *Store) Queue() paykit.JobQueue { return queue{s} }

// Subscribe implements paykit.JobQueue: a transaction that writes a job due
// at once, or expedites one, signals at its commit.
func (q queue) Subscribe() (<-chan struct{}, func()) { return q.s.wakes.Subscribe() }

// ClaimJobs implements paykit.JobQueue.
func (q queue) ClaimJobs(ctx context.Context, p paykit.ClaimParams) ([]paykit.Job, error) {
	return call(q.s, ctx, func(t *txn) ([]paykit.Job, error) { return t.claimJobs(p), nil })
}

// RenewJobLeases implements paykit.JobQueue.
func (q queue) RenewJobLeases(ctx context.Context, owner string, runs []paykit.JobRun, until time.Time) ([]paykit.JobRun, error) {
	return call(q.s, ctx, func(t *txn) ([]paykit.JobRun, error) { return t.renewJobLeases(owner, runs, until), nil })
}

// FinishJobs implements paykit.JobQueue.
func (q queue) FinishJobs(ctx context.Context, owner string, ends []paykit.JobEnd) ([]paykit.JobRun, error) {
	return call(q.s, ctx, func(t *txn) ([]paykit.JobRun, error) { return t.finishJobs(owner, ends), nil })
}

// PurgeCompletedJobs implements paykit.JobQueue.
func (q queue) PurgeCompletedJobs(ctx context.Context, before time.Time) (int, error) {
	return call(q.s, ctx, func(t *txn) (int, error) { return t.purgeCompletedJobs(before), nil })
}

// ListJobs implements paykit.JobQueue.
func (q queue) ListJobs(ctx context.Context, jq paykit.ListQuery[paykit.JobListParams], now time.Time) ([]paykit.Job, error) {
	return call(q.s, ctx, func(t *txn) ([]paykit.Job, error) { return t.ListJobs(ctx, jq, now) })
}

// JobStats implements paykit.JobQueue.
func (q queue) JobStats(ctx context.Context, now time.Time) ([]paykit.JobKindStats, error) {
	return call(q.s, ctx, func(t *txn) ([]paykit.JobKindStats, error) { return t.JobStats(ctx, now) })
}
